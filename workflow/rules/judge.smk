rule judge:
    """The verdicts of a lesson, decided from its recomputed transcripts only."""
    input:
        transcripts=transcripts,
        code=code("judge", "judge", data=["schemas/recording.schema.json"]),
    output:
        verdicts="results/{lesson}/verdicts.json",
    log:
        "logs/{lesson}/judge.log",
    benchmark:
        "benchmarks/{lesson}/judge.tsv"
    params:
        tolerance=TOLERANCE,
        runs=run_names,
    message:
        "Judging the runs of {wildcards.lesson} from their recomputed numbers"
    run:
        run_job("judge", log[0], wildcards, input, output, params)
