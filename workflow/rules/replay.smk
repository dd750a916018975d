rule replay:
    """Replay a batch of recordings through the current code and judge it; a mismatch fails, names its run and writes nothing."""
    input:
        batch=batch_list,
        code=code("replay", "lab", "judge", data=["schemas/recording.schema.json"]),
    output:
        transcripts=directory("results/{lesson}/transcripts/{batch}"),
        judged="results/{lesson}/judged/{batch}.json",
    log:
        "logs/{lesson}/replay/{batch}.log",
    group:
        batch_group
    params:
        tolerance=TOLERANCE,
        apart=several_batches,
    message:
        "Replaying and judging the recordings of {wildcards.lesson}, {wildcards.batch}, through the current code"
    run:
        run_job("replay", log[0], wildcards, input, output, params, apart=params.apart)
