# Recording a new run: only when targeted (`snakemake --cores 1 record`), never part of `all`.
# No rule writes under recordings/: `replaylab promote` copies a new run there deliberately.


rule record_run:
    """One variant of a new run, recorded with the configured provider (local: it may read a key)."""
    output:
        recording="results/live/{lesson}/{name}.json",
    log:
        "logs/live/{lesson}/{name}.record.log",
    benchmark:
        "benchmarks/live/{lesson}/{name}.record.tsv"
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    params:
        python=PYTHON,
        src=SRC,
        variant=record_variant,
        provider=config["provider"],
        model=campaign.model_option(config["provider"], config["model"]),
        seed=config["seed"],
        group=config["record_run"],
    message:
        "Recording {output.recording} with the {params.provider} provider"
    shell:
        "PYTHONPATH={params.src} {params.python} -m replaylab record {wildcards.lesson} --variant {params.variant}"
        " --provider {params.provider} --model={params.model} --seed {params.seed}"
        " --group {params.group} --out {output.recording} 2>&1 | tee {log}"


rule live_page:
    """The page of a new run, next to the reference ones: replayed, judged and drawn like them."""
    input:
        recordings=live_recordings,
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
        page=directory("results/live/{lesson}/{run}"),
    log:
        "logs/live/{lesson}/{run}.page.log",
    benchmark:
        "benchmarks/live/{lesson}/{run}.page.tsv"
    wildcard_constraints:
        run=r"[A-Za-z0-9][A-Za-z0-9_.]*",
    params:
        tolerance=TOLERANCE,
    message:
        "Replaying, judging and drawing the new run {wildcards.run} of {wildcards.lesson}"
    run:
        run_job("live", log[0], wildcards, input, output, params)


rule record:
    """Target: record each variant of a new run of `record_lesson`, replay, judge and render it."""
    input:
        f"results/live/{config['record_lesson']}/{config['record_run']}",
    localrule: True
