# Scans and exercises depend on the simulation code only, never on a recording.


rule scan:
    """The lesson's independent computation of the question the agent was asked, and its exercises."""
    input:
        code=code("scan", "scans", "exercises"),
    output:
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
    log:
        "logs/{lesson}/scan.log",
    benchmark:
        "benchmarks/{lesson}/scan.tsv"
    # first: it needs no recording, so it runs beside the replays, not after them
    priority: 1
    conda:
        "../envs/replaylab.yaml"
    message:
        "Scanning {wildcards.lesson}: its independent computations and exercises"
    script:
        "../../scripts/scan.py"
