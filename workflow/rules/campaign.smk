# A campaign (the `campaign` section of the configuration): only when targeted
# (`snakemake --cores 4 campaign`), never part of `all`. Each run is recorded by a job of its own,
# in a process of its own, earlier indices first; the campaign's lessons are replayed and judged
# (a job per block of indices, as soon as its runs are in: Campaign._batches) and rendered by the
# lessons' own rules (`use rule`) into results/campaigns/<name>/<lesson>/, and compared.
# Helpers: src/replaylab/campaign.py (the plan, one run's recording) and comparison.py.

import re

CAMPAIGN = campaign.Campaign(config["campaign"], config["batch_size"])
_kept = campaign.keep_interrupted_runs(CAMPAIGN.all_recordings())
if _kept:
    print(
        f"campaign {CAMPAIGN.name}: {len(_kept)} run(s) written just as Snakemake was interrupted "
        "are whole: kept, not recorded again",
        file=sys.stderr,
    )
# A recorded run is a source (protected, and never an output again): campaign_record makes only
# the files that are not there yet, "<lesson>/<run>" each, so that no change of the rule, its
# settings or the configuration records a run again. A run is recorded again only when its file
# is deleted by hand.
CAMPAIGN_NOT_RECORDED = "|".join(map(re.escape, CAMPAIGN.not_recorded())) or "(?!)"
try:  # a folder of the campaign's results changed by hand is not trusted
    inputs.check_results(CAMPAIGN.lessons, CAMPAIGN.folder)
except inputs.DamagedResult as error:
    stop(error)
# Requests in flight: a recording job makes one request at a time and holds one of these while it
# runs, so that never more than max_connections requests are in flight, whatever --cores says.
workflow.register_resource(
    "provider_connections", config["campaign"]["max_connections"]
)


wildcard_constraints:
    campaign=re.escape(CAMPAIGN.name),


rule campaign_record:
    """One run of a campaign not recorded yet ("<lesson>/<run>"), recorded by `replaylab record`
    in a process of its own. A recorded run is never recorded, nor sent to the provider, again.
    """
    output:
        recording=protected("results/campaigns/{campaign}/recordings/{unrecorded}.json"),
    log:
        "logs/campaigns/{campaign}/record/{unrecorded}.log",
    # no benchmark: Snakemake's reads the memory of every process of the run twice a second per
    # job, as many jobs as connections (2 s of a processor in a campaign of 20 runs, measured);
    # the log ends with the job's time
    wildcard_constraints:
        unrecorded=CAMPAIGN_NOT_RECORDED,
    priority: CAMPAIGN.priority
    localrule: True
    resources:
        provider_connections=1,
    message:
        "Recording {wildcards.unrecorded} for the campaign {wildcards.campaign}"
    run:
        record_campaign_run(wildcards.unrecorded, output.recording, log[0])


use rule replay as campaign_replay with:
    input:
        recordings=CAMPAIGN.batch_recordings,
        code=rules.replay.input.code,
    output:
        transcripts=directory(
            "results/campaigns/{campaign}/{lesson}/transcripts/{batch}"
        ),
        judged="results/campaigns/{campaign}/{lesson}/judged/{batch}.json",
    log:
        "logs/campaigns/{campaign}/{lesson}/replay/{batch}.log",
    group:
        CAMPAIGN.batch_group
    params:
        apart=CAMPAIGN.several_batches,
    message:
        "Replaying and judging the campaign's runs of {wildcards.lesson}, {wildcards.batch}, through the current code"


use rule render as campaign_render with:
    input:
        transcripts=CAMPAIGN.transcripts,
        judged=CAMPAIGN.judged,
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
        code=rules.render.input.code,
    output:
        results="results/campaigns/{campaign}/{lesson}/results.json",
        scorecard_csv="results/campaigns/{campaign}/{lesson}/scorecard.csv",
        scorecard_json="results/campaigns/{campaign}/{lesson}/scorecard.json",
        runs_table="results/campaigns/{campaign}/{lesson}/runs.csv.gz",
        tables=directory("results/campaigns/{campaign}/{lesson}/tables"),
        figures=directory("results/campaigns/{campaign}/{lesson}/figures"),
        page="results/campaigns/{campaign}/{lesson}/index.md",
        html="results/campaigns/{campaign}/{lesson}/index.html",
    log:
        "logs/campaigns/{campaign}/{lesson}/render.log",
    benchmark:
        "benchmarks/campaigns/{campaign}/{lesson}/render.tsv"
    params:
        tolerance=TOLERANCE,
        runs=lambda wildcards: sorted(CAMPAIGN.runs(wildcards.lesson)),
    message:
        "Writing what the campaign's runs of {wildcards.lesson} show"


rule campaign_compare:
    """The comparison of the campaign's models: a group-by of the lessons' per-run tables."""
    input:
        tables=CAMPAIGN.lesson_files("runs.csv.gz"),
        transcripts=CAMPAIGN.all_transcripts,
        code=code("compare", data=TEMPLATES),
    output:
        page="results/campaigns/{campaign}/index.md",
        html="results/campaigns/{campaign}/index.html",
        scorecard="results/campaigns/{campaign}/scorecard.csv",
        scorecard_json="results/campaigns/{campaign}/scorecard.json",
        figure="results/campaigns/{campaign}/figures/comparison.png",
    log:
        "logs/campaigns/{campaign}/compare.log",
    benchmark:
        "benchmarks/campaigns/{campaign}/compare.tsv"
    params:
        settings=CAMPAIGN.shown,
        lessons=CAMPAIGN.lessons,
    message:
        "Comparing the models of the campaign {wildcards.campaign}"
    run:
        run_job("compare", log[0], wildcards, input, output, params)


rule campaign:
    """Target: record what is missing of the campaign, then replay, judge, score and compare it."""
    input:
        lambda wildcards: CAMPAIGN.comparison_page(starting=not workflow.dryrun),
    localrule: True
