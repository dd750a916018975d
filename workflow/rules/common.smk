"""Helpers of the workflow, and no rules: the configuration, validated; the recordings, found and
checked; the batches' lists; the input functions of the rules.

A malformed configuration stops the run, a dry run too, with one line naming the file, the JSON
path of the field and what is wrong (replaylab.settings); so does a malformed recording in a
dry run, which validates every recording (replaylab.inputs), and in a run the replay job of its
batch. Paths to the
workflow's own files (scripts/, src/, workflow/) come from this file's place, so that the workflow
also runs as a module of a user's Snakefile; paths to the user's data (config/, recordings/,
results/) are relative to the working directory.
"""

import json
import os
import re
import sys
from functools import cache
from pathlib import Path

RULES = Path(str(workflow.current_basedir))
ROOT = RULES.parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
SCRIPTS = ROOT / "scripts"

# The workflow's own library first, before any installed copy: here, in Snakemake's process, and
# in every job it starts, whose PYTHONPATH starts with SRC (jobs.mark_this_process, below); the
# scripts of scripts/ import replaylab plainly (docs/workflow.md: why not the installed copy).
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab import (
    campaign,
    campaign_settings,
    inputs,
    jobs,
    settings,
)  # noqa: E402
from replaylab.agents import recording as recording_io  # noqa: E402
from replaylab.agents.recording import RecordingError, printable  # noqa: E402
from replaylab.batches import batches, write_if_changed, write_list  # noqa: E402
from replaylab.import_graph import ImportGraph, ImportGraphError  # noqa: E402
from replaylab.lessons import registry  # noqa: E402


def stop(message, code=1):
    """End the run while the DAG is built: `message` alone on stderr (its control characters
    escaped: it stays one line), no traceback, exit code 1."""
    print(printable(str(message)), file=sys.stderr)
    sys.exit(code)


def relative(path):
    """A path as the rules name files: relative to the working directory."""
    return os.path.relpath(path)


def config_files():
    """Where the configuration came from, to name it in an error."""
    names = [relative(f) for f in workflow.configfiles]
    if workflow.config_settings.config:
        names.append("--config")
    return " + ".join(names) or "the configuration"


# The configuration, checked once (replaylab.settings): `config` keeps Snakemake's merged values,
# typed as the schema says; CONFIGURED is the same, as one frozen object, paths resolved against
# the working directory (the project's folder, .test/, or a user's).
try:
    CONFIGURED = settings.of(
        config,
        config_files(),
        folder=Path.cwd(),
        schema=RULES.parent / "schemas" / "config.schema.yaml",
    )
except settings.InputError as error:
    stop(error)

# the jobs end when this Snakemake is gone, and import this clone's library first (replaylab.jobs)
jobs.mark_this_process(library=SRC)
LESSONS = CONFIGURED.lessons
# The settings the replay and render jobs read, as a file they take as input rather than as
# params: a changed tolerance reruns them all the same, and a start that finds everything up to
# date does not import pandas (Snakemake's comparison of params imports it, about 0.4 s).
SETTINGS = ".snakemake/replaylab/settings.json"
write_if_changed(SETTINGS, json.dumps({"tolerance": CONFIGURED.tolerance}) + "\n")
# The campaigns the summary page lists, as found on disk (each scorecard's digest): a file the
# index job takes as input, so that the first run after a campaign is compared anew rewrites the
# summary, while the index never depends on a campaign's jobs (`snakemake` never records).
CAMPAIGNS_FOUND = ".snakemake/replaylab/campaigns.json"
write_if_changed(
    CAMPAIGNS_FOUND,
    json.dumps(campaign.scorecard_digests("results/campaigns"), sort_keys=True) + "\n",
)


# ---------------------------------------------------------------------------------------------
# Recordings: found now; in a lesson judged per group, each read for its group (validated too in
# a dry run); in the others, only looked at (size and time)


def found_runs():
    """{lesson: {run: recording}} of every run folder, paths as the rules name them (a file name
    that is not a run name, a run name used twice or a malformed recording stops the run with its
    line); and {lesson: {run: group}} (of a lesson judged per group), {lesson: {run: what its
    batch's list holds of it}}: the digest of its content where the file was read, else its size
    and time (`signature`), so that the start of a lesson of many runs reads none of them.
    """
    try:
        runs = {
            lesson: {
                run: relative(path)
                for run, path in inputs.find_runs(
                    lesson, ("recordings", *config["run_folders"])
                ).items()
            }
            for lesson in LESSONS
        }
        grouped = {
            l: found
            for l, found in runs.items()
            if registry.lesson(l).judged == "group"
        }
        if DRY_RUN:  # every recording validated, each lesson's read as before
            groups, digests = inputs.check_recordings(runs, CHECKED, validate=True)
        else:
            groups, digests = inputs.check_recordings(grouped, GROUPED, validate=False)
        for lesson, found in runs.items():
            if lesson not in grouped:
                digests[lesson] = {run: signature(path) for run, path in found.items()}
    except RecordingError as error:
        stop(error)
    # Ctrl-C during the longest part of the start, with many runs: one line
    except KeyboardInterrupt:
        stop(
            "snakemake: interrupted while the recordings were checked; nothing was run",
            130,
        )
    return runs, groups, digests


def signature(path):
    """What a batch's list holds of a recording that the start does not read: its size and time
    (a changed, added or removed recording changes its batch's list, and reruns that batch only;
    a recording touched or copied without its time reruns its batch too)."""
    # a pipe, a folder or a dangling link: refused here
    found = recording_io.regular_file(path)
    return f"{found.st_size}:{found.st_mtime_ns}"


CHECKED = ".snakemake/replaylab/checked-recordings.json"
GROUPED = ".snakemake/replaylab/grouped-recordings.json"
# A dry run validates every recording before it shows anything (a malformed one stops it with its
# line); a run leaves that to the replay jobs, which validate each recording they replay, side by
# side on the cores, and reads here only the recordings of a lesson judged per group that it has
# not seen, for their groups (GROUPED): the start's work grows with the batches, not the runs.
DRY_RUN = bool(workflow.output_settings and workflow.output_settings.dryrun)
RUNS, GROUPS, DIGESTS = found_runs()


BATCH_LISTS = Path(".snakemake/replaylab/batches")


def lesson_batches(lesson):
    """{batch: [recordings]} of a lesson, about `batch_size` runs a batch (in a lesson judged per
    group, the runs of a group in one batch); each batch's list, the one input of its replay job,
    written now if it changed (replaylab.batches)."""
    per_group = registry.lesson(lesson).judged == "group"
    found = batches(
        RUNS[lesson], config["batch_size"], GROUPS[lesson] if per_group else None
    )
    paths = {path: run for run, path in RUNS[lesson].items()}
    for batch, recordings in found.items():
        entries = [[path, DIGESTS[lesson][paths[path]]] for path in recordings]
        write_list(BATCH_LISTS / lesson / f"{batch}.json", lesson, batch, entries)
    return found


BATCHES = {lesson: lesson_batches(lesson) for lesson in LESSONS}


wildcard_constraints:
    lesson="|".join(LESSONS),
    batch=r"batch[0-9]+of[0-9]+|runs[0-9]+to[0-9]+",  # a lesson's, a campaign's


# ---------------------------------------------------------------------------------------------
# Recording a new run (the `record` target): the files it would write, known now

RECORD_LESSON = config["record_lesson"]
RECORD_RUN = config["record_run"]
RECORD_PAGE = f"results/live/{RECORD_LESSON}/{RECORD_RUN}"
# {file name: variant}: each variant of the lesson is recorded as <record_run>-<variant>.json
RECORD_FILES = {f"{RECORD_RUN}-{v}": v for v in registry.lesson(RECORD_LESSON).variants}
# A recorded run is a source, never remade: rule record_run can only make a file that is not
# there yet, so that with run_folders: [results/live] no run found there is ever recorded again.
NOT_RECORDED = [
    name
    for name in RECORD_FILES
    if not os.path.lexists(f"results/live/{RECORD_LESSON}/{name}.json")
]
NOT_RECORDED_PATTERN = "|".join(map(re.escape, NOT_RECORDED)) or "(?!)"


def record_target(wildcards):
    """The page of the new run; its files must not exist yet (never overwritten)."""
    recorded = [name for name in RECORD_FILES if name not in NOT_RECORDED]
    if recorded:
        stop(
            f"results/live/{RECORD_LESSON}/{recorded[0]}.json: already exists, and a recorded run is never "
            "overwritten: choose another name (--config record_run=NAME), or move its files away"
        )
    return [RECORD_PAGE]


# ---------------------------------------------------------------------------------------------
# Input functions

IMPORTS = ImportGraph([SCRIPTS, SRC], ".snakemake/replaylab/imports.json")


@cache
def code_files(script, lessons, parts):
    """The files a job's script imports (read from the code with `ast`: Snakemake does not follow
    Python imports), and the `parts` of the `lessons` that it imports by a name computed at run
    time (through the registry), which no reading of the code can see."""
    roots = [registry.lesson(l).package for l in lessons]
    roots += [f"{registry.lesson(l).package}.{part}" for l in lessons for part in parts]
    try:
        found = IMPORTS.files(scripts=[SCRIPTS / f"{script}.py"], modules=roots)
    except ImportGraphError as error:
        stop(str(error))
    return [relative(path) for path in found]


# What the jobs that write pages read of the package: the HTML page's template and style sheet.
TEMPLATES = ["templates/page.html", "templates/page.css"]


def code(script, *parts, every_lesson=False, data=()):
    """Input function for `code=`: the files of scripts/ and src/replaylab that the job imports,
    and the package data it reads (`data`, e.g. the recording schema). `parts`: the modules of
    the job's lesson that it uses (of every configured lesson, with `every_lesson`)."""

    def files(wildcards):
        lesson = getattr(wildcards, "lesson", None)  # none for a campaign's comparison
        lessons = LESSONS if every_lesson else (lesson,) if lesson else ()
        return code_files(script, lessons, parts) + [
            relative(PACKAGE / name) for name in data
        ]

    files.__name__ = f"code_of_{script}"
    return files


def transcripts(wildcards):
    """The replayed batches of a lesson: a file of transcripts each."""
    return expand(
        "results/{lesson}/transcripts/{batch}.jsonl",
        lesson=wildcards.lesson,
        batch=BATCHES[wildcards.lesson],
    )


def judged(wildcards):
    """The verdicts of each replayed batch of a lesson (`replay` judges its batch)."""
    return expand(
        "results/{lesson}/judged/{batch}.json",
        lesson=wildcards.lesson,
        batch=BATCHES[wildcards.lesson],
    )


def batch_list(wildcards):
    """The list of a batch's recordings, the input file of its replay job."""
    return str(BATCH_LISTS / wildcards.lesson / f"{wildcards.batch}.json")


def batch_group(wildcards):
    """The group of a replay job on a cluster (groups are inactive in a local run): a lesson of
    one batch stays one SLURM job with its other jobs (group `lesson`); the batches of a larger
    lesson are jobs of group `batches`, which a profile's `group-components` bundles by so many
    per SLURM job."""
    return "batches" if len(BATCHES[wildcards.lesson]) > 1 else "lesson"


def lesson_outputs(lesson):
    """Every file of one lesson (its page, figures, tables and results)."""
    return [
        f"results/{lesson}/index.md",
        f"results/{lesson}/index.html",
        f"results/{lesson}/results.json",
        f"results/{lesson}/instances.csv",
        f"results/{lesson}/baselines.json",
        f"results/{lesson}/scorecard.csv",
        f"results/{lesson}/tables",
        f"results/{lesson}/figures",
    ]


def lesson_target(lesson):
    """Input function of the target rule of one lesson."""

    def files(wildcards):
        return lesson_outputs(lesson)

    files.__name__ = f"outputs_of_{lesson}"
    return files


def all_outputs(wildcards):
    return [file for lesson in LESSONS for file in lesson_outputs(lesson)] + [
        "results/index.md",
        "results/index.html",
        "results/site",
    ]


def campaign_targets(wildcards):
    """The campaign's targets; first, for a provider whose runs are imported (inspect_ai), the one
    line that names a run no rule can record, if one is missing; and the one line that names a
    key or server variable that is not set for a model with runs to record."""
    problem = campaign.missing_imports(CAMPAIGN)  # CAMPAIGN: campaign.smk
    if problem:
        stop(problem)
    # a key or a server's URL not set: before any job
    unset = campaign.unset_for_missing_runs(CAMPAIGN)
    if unset and DRY_RUN:
        print(printable(unset), file=sys.stderr)  # a dry run shows it, and the plan
    elif unset:
        stop(unset)
    return CAMPAIGN.targets(wildcards)
