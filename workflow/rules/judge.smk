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
    conda:
        "../envs/replaylab.yaml"
    params:
        tolerance=TOLERANCE,
    script:
        "../../scripts/judge.py"
