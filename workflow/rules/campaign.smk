# A campaign (the `campaign` section of the configuration): only when targeted
# (`snakemake campaign`), never part of `all`. Its runs are recorded in blocks of consecutive
# indices, a job per block, earlier blocks first; each block is replayed and judged as soon as its
# runs are in, by the lessons' own rules (`use rule`), rendered into
# results/campaigns/<name>/<lesson>/, and the models are compared. Nothing is planned until a rule
# of the campaign asks (src/replaylab/campaign.py): a target that is not the campaign never pays
# for it.

CAMPAIGN = campaign.Campaign(
    config["campaign"], config["batch_size"], stop=stop, source=config_files()
)
# Requests in flight, per endpoint (a server, or a provider with none): a resource each,
# provider_connections_<n>, of max_connections units; each recording job holds CAMPAIGN.connections
# of every endpoint's while it runs (a block has runs of every model), so that never more than
# max_connections requests are in flight to one endpoint, whatever --cores says.
for name in campaign.resource_names(config["campaign"]).values():
    workflow.register_resource(name, config["campaign"]["max_connections"])


wildcard_constraints:
    campaign=re.escape(CAMPAIGN.name),


rule campaign_record:
    """The runs of one block of the campaign that are not on disk, recorded concurrently; then the block's list, with each recording's digest. A recorded run is never recorded, nor sent to the provider, again."""
    output:
        listing="results/campaigns/{campaign}/{lesson}/recorded/{batch}.json",
    log:
        "logs/campaigns/{campaign}/{lesson}/record/{batch}.log",
    benchmark:
        "benchmarks/campaigns/{campaign}/{lesson}/record/{batch}.tsv"
    priority: CAMPAIGN.priority
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    resources:
        **CAMPAIGN.resources,
    message:
        "Recording the campaign {wildcards.campaign}'s runs of {wildcards.lesson}, {wildcards.batch}"
    script:
        "../../scripts/campaign_record.py"


use rule replay as campaign_replay with:
    input:
        batch=CAMPAIGN.batch_list,
        settings=SETTINGS,
        code=rules.replay.input.code,
    output:
        transcripts="results/campaigns/{campaign}/{lesson}/transcripts/{batch}.jsonl",
        judged="results/campaigns/{campaign}/{lesson}/judged/{batch}.json",
    log:
        "logs/campaigns/{campaign}/{lesson}/replay/{batch}.log",
    benchmark:
        "benchmarks/campaigns/{campaign}/{lesson}/replay/{batch}.tsv"
    group:
        CAMPAIGN.batch_group
    message:
        "Replaying and judging the campaign's runs of {wildcards.lesson}, {wildcards.batch}, through the current code"


use rule render as campaign_render with:
    input:
        transcripts=CAMPAIGN.transcripts,
        judged=CAMPAIGN.judged,
        answers="results/{lesson}/answers.json",
        baselines="results/{lesson}/baselines.json",
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
        settings=SETTINGS,
        code=rules.render.input.code,
    output:
        results="results/campaigns/{campaign}/{lesson}/results.json",
        scorecard_csv="results/campaigns/{campaign}/{lesson}/scorecard.csv",
        scorecard_json="results/campaigns/{campaign}/{lesson}/scorecard.json",
        runs_table="results/campaigns/{campaign}/{lesson}/runs.csv.gz",
        tables=directory("results/campaigns/{campaign}/{lesson}/tables"),
        figures=directory("results/campaigns/{campaign}/{lesson}/figures"),
        page="results/campaigns/{campaign}/{lesson}/index.md",
        runs=directory("results/campaigns/{campaign}/{lesson}/runs"),
        html="results/campaigns/{campaign}/{lesson}/index.html",
    log:
        "logs/campaigns/{campaign}/{lesson}/render.log",
    benchmark:
        "benchmarks/campaigns/{campaign}/{lesson}/render.tsv"
    message:
        "Writing what the campaign's runs of {wildcards.lesson} show"


rule campaign_compare:
    """The comparison of the campaign's models: a group-by of the lessons' per-run tables."""
    input:
        tables=CAMPAIGN.lesson_files("runs.csv.gz"),
        transcripts=CAMPAIGN.all_transcripts,
        unfinished=CAMPAIGN.unfinished,
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
    conda:
        "../envs/replaylab.yaml"
    params:
        settings=CAMPAIGN.shown,
        detect=config["campaign"].get("detect", 0.2),
        lessons=CAMPAIGN.lessons,
    message:
        "Comparing the models of the campaign {wildcards.campaign}"
    script:
        "../../scripts/compare.py"


rule campaign:
    """Target: record what is missing of the campaign, then replay, judge, score and compare it."""
    input:
        campaign_targets,
    localrule: True
