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
        python=PYTHON,
        script=stage_script("judge"),
        tolerance=TOLERANCE,
    shell:
        "{params.python} {params.script} --log {log} --lesson {wildcards.lesson}"
        " --tolerance {params.tolerance} --out {output.verdicts} {input.transcripts}"
