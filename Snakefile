# The replaylab workflow: replay the committed recordings, judge them, scan, draw and write the pages.
# `snakemake --cores 1` builds everything; `snakemake --cores 1 LESSON` builds one lesson.
# Rules are in workflow/rules/, each job a script of scripts/ (a process Snakemake starts), helpers
# in workflow/rules/common.smk (the configuration and the input functions).
# No rule writes under recordings/: they are sources. `replaylab record` writes a new run to
# results/live/, and `replaylab promote` moves it into recordings/.

from snakemake.utils import min_version

min_version("9.19")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# Validates the configuration (workflow/schemas/config.schema.yaml) and every recording.
include: "workflow/rules/common.smk"
include: "workflow/rules/replay.smk"
include: "workflow/rules/scan.smk"
include: "workflow/rules/page.smk"
include: "workflow/rules/record.smk"
include: "workflow/rules/campaign.smk"


rule all:
    default_target: True
    input:
        all_outputs,


for _lesson in LESSONS:

    rule:
        name:
            _lesson
        input:
            lesson_target(_lesson),
