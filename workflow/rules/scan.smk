# Scans, exercises and the build's answers depend on the simulation code only, never on a recording.


rule answers:
    """The build's answer of every instance of the lesson's family, and the table of its instances."""
    input:
        code=code("answers", "family", "answers"),
    output:
        answers="results/{lesson}/answers.json",
        instances="results/{lesson}/instances.csv",
    log:
        "logs/{lesson}/answers.log",
    benchmark:
        "benchmarks/{lesson}/answers.tsv"
    # first: it needs no recording, so it runs beside the replays, not after them
    priority: 1
    conda:
        "../envs/replaylab.yaml"
    message:
        "Computing the build's answer of every instance of {wildcards.lesson}"
    script:
        "../../scripts/answers.py"


rule baselines:
    """The careful and the trivial program on every instance of the family, judged against the build's answers; a careful program wrong anywhere is a defect of the family and stops the build."""
    input:
        answers="results/{lesson}/answers.json",
        settings=SETTINGS,
        code=code("baselines", "family", "lab", "judge", "agent"),
    output:
        baselines="results/{lesson}/baselines.json",
    log:
        "logs/{lesson}/baselines.log",
    benchmark:
        "benchmarks/{lesson}/baselines.tsv"
    # first: it needs no recording, so it runs beside the replays, not after them
    priority: 1
    conda:
        "../envs/replaylab.yaml"
    message:
        "Running the careful and the trivial program on every instance of {wildcards.lesson}"
    script:
        "../../scripts/baselines.py"


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
