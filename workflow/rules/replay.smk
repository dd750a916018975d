rule replay:
    """Replay a batch of recordings through the current code; a mismatch fails, names its run and writes nothing."""
    input:
        recordings=batch_recordings,
        code=code("replay", data=["schemas/recording.schema.json"]),
    output:
        transcripts=directory("results/{lesson}/transcripts/{batch}"),
    log:
        "logs/{lesson}/replay/{batch}.log",
    benchmark:
        "benchmarks/{lesson}/replay/{batch}.tsv"
    conda:
        "../envs/replaylab.yaml"
    params:
        python=PYTHON,
        script=stage_script("replay"),
        tolerance=TOLERANCE,
    shell:
        "{params.python} {params.script} --log {log} --tolerance {params.tolerance}"
        " --out {output.transcripts} {input.recordings}"
