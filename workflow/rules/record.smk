# Recording a new run: only when targeted (`snakemake --cores 1 record`), never part of `all`.
# No rule writes under recordings/: `replaylab promote` moves a new run there deliberately.
# A recorded run is a source: record_run makes only files that do not exist yet (NOT_RECORDED).


rule record_run:
    """One variant of the new run, recorded with the configured provider (local: it may read a key)."""
    output:
        recording=f"results/live/{RECORD_LESSON}/{{name}}.json",
    log:
        f"logs/live/{RECORD_LESSON}/{{name}}.record.log",
    benchmark:
        f"benchmarks/live/{RECORD_LESSON}/{{name}}.record.tsv"
    wildcard_constraints:
        name=NOT_RECORDED_PATTERN,
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    params:
        lesson=RECORD_LESSON,
        variant=lambda wildcards: RECORD_FILES[wildcards.name],
        provider=config["provider"],
        model=campaign_settings.model_option(config["provider"], config["model"]),
        seed=config["seed"],
        group=RECORD_RUN,
    message:
        "Recording {output.recording} with the {params.provider} provider"
    script:
        "../../scripts/record.py"


rule live_page:
    """The page of the new run, next to the reference ones: replayed, judged and drawn like them."""
    input:
        recordings=[
            f"results/live/{RECORD_LESSON}/{name}.json" for name in RECORD_FILES
        ],
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
        answers="results/{lesson}/answers.json",
        baselines="results/{lesson}/baselines.json",
        settings=SETTINGS,
        code=code(
            "live",
            "judge",
            "tables",
            "figures",
            "page",
            data=["schemas/recording.schema.json", *TEMPLATES],
        ),
    output:
        page=directory(f"results/live/{{lesson}}/{RECORD_RUN}"),
    log:
        f"logs/live/{{lesson}}/{RECORD_RUN}.page.log",
    benchmark:
        f"benchmarks/live/{{lesson}}/{RECORD_RUN}.page.tsv"
    wildcard_constraints:
        lesson=re.escape(RECORD_LESSON),
    conda:
        "../envs/replaylab.yaml"
    message:
        f"Replaying, judging and drawing the new run {RECORD_RUN} of {RECORD_LESSON}"
    script:
        "../../scripts/live.py"


rule record:
    """Target: record each variant of a new run of `record_lesson`, replay, judge and render it."""
    input:
        record_target,
    localrule: True
