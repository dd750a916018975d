rule replay:
    """Replay a batch of recordings through the current code; a mismatch fails, names its run and writes nothing."""
    input:
        recordings=batch_recordings,
        code=code("replay", "lab", data=["schemas/recording.schema.json"]),
    output:
        transcripts=directory("results/{lesson}/transcripts/{batch}"),
    log:
        "logs/{lesson}/replay/{batch}.log",
    benchmark:
        "benchmarks/{lesson}/replay/{batch}.tsv"
    params:
        tolerance=TOLERANCE,
    message:
        "Replaying the recordings of {wildcards.lesson}, {wildcards.batch}, through the current code"
    run:
        run_job("replay", log[0], wildcards, input, output, params)
