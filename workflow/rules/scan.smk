# Scans and exercises depend on the simulation code only, never on a recording.


rule scan:
    """The lesson's independent computation of the question the agent was asked."""
    input:
        code=code("scan", "scans"),
    output:
        scans="results/{lesson}/scans.json",
    log:
        "logs/{lesson}/scan.log",
    benchmark:
        "benchmarks/{lesson}/scan.tsv"
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/scan.py"


rule exercises:
    """The lesson's exercises, computed without any recording."""
    input:
        code=code("exercises", "exercises"),
    output:
        exercises="results/{lesson}/exercises.json",
    log:
        "logs/{lesson}/exercises.log",
    benchmark:
        "benchmarks/{lesson}/exercises.tsv"
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/exercises.py"
