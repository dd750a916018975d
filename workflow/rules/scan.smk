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
    # first: it needs no recording, so it runs in this process while the replay batches run in
    # the workers, not after them (where it would add its time to the end of a large build)
    priority: 1
    message:
        "Scanning {wildcards.lesson}: its independent computations and exercises"
    run:
        run_job("scan", log[0], wildcards, input, output, params)
