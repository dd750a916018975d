rule replay:
    """Replay a batch of recordings through the current code and judge it; a mismatch fails, names its run and writes nothing."""
    input:
        batch=batch_list,
        settings=SETTINGS,
        code=code(
            "replay", "family", "lab", "judge", data=["schemas/recording.schema.json"]
        ),
    output:
        transcripts="results/{lesson}/transcripts/{batch}.jsonl",
        judged="results/{lesson}/judged/{batch}.json",
    log:
        "logs/{lesson}/replay/{batch}.log",
    benchmark:
        "benchmarks/{lesson}/replay/{batch}.tsv"
    group:
        batch_group
    conda:
        "../envs/replaylab.yaml"
    message:
        "Replaying and judging the recordings of {wildcards.lesson}, {wildcards.batch}, through the current code"
    script:
        "../../scripts/replay.py"
