rule replay:
    """Replay one recording through the current code; a mismatch fails and writes nothing."""
    input:
        recording="recordings/{lesson}/{run}.json",
        code=code("replay", data=["schemas/recording.schema.json"]),
    output:
        transcript="results/{lesson}/transcripts/{run}.json",
    log:
        "logs/{lesson}/replay/{run}.log",
    benchmark:
        "benchmarks/{lesson}/replay/{run}.tsv"
    conda:
        "../envs/replaylab.yaml"
    params:
        tolerance=TOLERANCE,
    script:
        "../../scripts/replay.py"
