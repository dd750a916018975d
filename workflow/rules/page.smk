rule results:
    """Every number and table of a lesson in one file, and its scorecard."""
    input:
        transcripts=transcripts,
        verdicts="results/{lesson}/verdicts.json",
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
        code=code("results", data=["schemas/recording.schema.json"]),
    output:
        results="results/{lesson}/results.json",
        scorecard=report(
            "results/{lesson}/scorecard.csv",
            caption="../report/scorecard.rst",
            category="{lesson}",
            subcategory="scorecard",
            labels={"lesson": "{lesson}", "table": "scorecard"},
        ),
        scorecard_json="results/{lesson}/scorecard.json",
    log:
        "logs/{lesson}/results.log",
    benchmark:
        "benchmarks/{lesson}/results.tsv"
    conda:
        "../envs/replaylab.yaml"
    params:
        tolerance=TOLERANCE,
    script:
        "../../scripts/results.py"


rule tables:
    """The lesson's tables as CSV files, one per table, in results/<lesson>/tables/."""
    input:
        results="results/{lesson}/results.json",
        code=code("tables", "tables"),
    output:
        tables=report(
            directory("results/{lesson}/tables"),
            caption="../report/tables.rst",
            category="{lesson}",
            subcategory="tables",
            patterns=["{table}.csv"],
            labels={"lesson": "{lesson}", "table": "{table}"},
        ),
    log:
        "logs/{lesson}/tables.log",
    benchmark:
        "benchmarks/{lesson}/tables.tsv"
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/tables.py"


rule page:
    """The readable page of a lesson; it shows its figures and links its tables."""
    input:
        results="results/{lesson}/results.json",
        figures=figures,
        tables="results/{lesson}/tables",
        code=code("page", "page"),
    output:
        page=report(
            "results/{lesson}/index.md",
            caption="../report/page.rst",
            category="{lesson}",
            subcategory="page",
            labels={"lesson": "{lesson}", "page": "index.md"},
        ),
    log:
        "logs/{lesson}/page.log",
    benchmark:
        "benchmarks/{lesson}/page.tsv"
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/page.py"


rule index:
    """The summary of every lesson, results/index.md."""
    input:
        results=expand("results/{lesson}/results.json", lesson=LESSONS),
        code=code("index", "page", every_lesson=True),
    output:
        index=report(
            "results/index.md",
            caption="../report/index.rst",
            category="summary",
            labels={"page": "index.md"},
        ),
    log:
        "logs/index.log",
    benchmark:
        "benchmarks/index.tsv"
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/index.py"
