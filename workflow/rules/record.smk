# Recording a new run: only when targeted (`snakemake --cores 1 record`), never part of `all`.
# No rule writes under recordings/: `replaylab promote` moves a new run there deliberately.
# A recorded run is a source: record_run makes only files that do not exist yet (NOT_RECORDED).


rule record_run:
    """One variant of the new run, recorded with the configured provider, in a process of its own (local: it may read a key)."""
    output:
        recording=f"results/live/{RECORD_LESSON}/{{name}}.json",
    log:
        f"logs/live/{RECORD_LESSON}/{{name}}.record.log",
    benchmark:
        f"benchmarks/live/{RECORD_LESSON}/{{name}}.record.tsv"
    wildcard_constraints:
        name=NOT_RECORDED_PATTERN,
    localrule: True
    params:
        variant=lambda wildcards: RECORD_FILES[wildcards.name],
        provider=config["provider"],
        model=campaign.model_option(config["provider"], config["model"]),
        seed=config["seed"],
        group=RECORD_RUN,
    message:
        "Recording {output.recording} with the {params.provider} provider"
    run:
        record_job(
            log[0],
            RECORD_LESSON,
            params.variant,
            output.recording,
            provider=params.provider,
            model=params.model,
            seed=params.seed,
            group=params.group,
        )


rule live_page:
    """The page of the new run, next to the reference ones: replayed, judged and drawn like them."""
    input:
        recordings=[
            f"results/live/{RECORD_LESSON}/{name}.json" for name in RECORD_FILES
        ],
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
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
    params:
        tolerance=TOLERANCE,
    message:
        f"Replaying, judging and drawing the new run {RECORD_RUN} of {RECORD_LESSON}"
    run:
        run_job("live", log[0], wildcards, input, output, params)


rule record:
    """Target: record each variant of a new run of `record_lesson`, replay, judge and render it."""
    input:
        record_target,
    localrule: True
