rule render:
    """What a lesson shows, from the verdicts of its batches: results.json (the summaries and a bounded sample of runs), the per-run table, the scorecard, the tables, the figures and the page (Markdown and HTML)."""
    input:
        transcripts=transcripts,
        judged=judged,
        answers="results/{lesson}/answers.json",
        baselines="results/{lesson}/baselines.json",
        scans="results/{lesson}/scans.json",
        exercises="results/{lesson}/exercises.json",
        settings=SETTINGS,
        code=code(
            "render",
            "family",
            "judge",
            "tables",
            "figures",
            "page",
            data=["schemas/recording.schema.json", *TEMPLATES],
        ),
    output:
        results="results/{lesson}/results.json",
        scorecard_csv=report(
            "results/{lesson}/scorecard.csv",
            caption="../report/scorecard.rst",
            category="{lesson}",
            subcategory="scorecard",
            labels={"lesson": "{lesson}", "table": "scorecard"},
        ),
        scorecard_json="results/{lesson}/scorecard.json",
        runs_table="results/{lesson}/runs.csv.gz",
        tables=report(
            directory("results/{lesson}/tables"),
            caption="../report/tables.rst",
            category="{lesson}",
            subcategory="tables",
            patterns=["{table}.csv"],
            labels={"lesson": "{lesson}", "table": "{table}"},
        ),
        figures=report(
            directory("results/{lesson}/figures"),
            caption="../report/figure.rst",
            category="{lesson}",
            subcategory="figures",
            patterns=["{name}.png"],
            labels={"lesson": "{lesson}", "figure": "{name}"},
        ),
        page="results/{lesson}/index.md",
        runs=directory("results/{lesson}/runs"),
        html="results/{lesson}/index.html",
    log:
        "logs/{lesson}/render.log",
    benchmark:
        "benchmarks/{lesson}/render.tsv"
    conda:
        "../envs/replaylab.yaml"
    message:
        "Writing what {wildcards.lesson} shows: results.json, scorecard, tables, figures, page (Markdown and HTML)"
    script:
        "../../scripts/render.py"


rule index:
    """The summary of every lesson, results/index.md and index.html, and of every campaign found in results/campaigns/."""
    input:
        results=expand("results/{lesson}/results.json", lesson=LESSONS),
        campaigns=CAMPAIGNS_FOUND,
        code=code("index", "page", every_lesson=True, data=TEMPLATES),
    output:
        index="results/index.md",
        html="results/index.html",
    log:
        "logs/index.log",
    benchmark:
        "benchmarks/index.tsv"
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    message:
        "Writing results/index.md and index.html, the summary of every lesson"
    script:
        "../../scripts/index.py"


rule site:
    """The pages as one folder for `snakemake --report` (results/site/): the summary and every file a chain of links from it reaches, so that every link works inside the report."""
    input:
        index="results/index.html",
        pages=expand("results/{lesson}/index.html", lesson=LESSONS),
        code=code("site"),
    output:
        site=report(
            directory("results/site"),
            htmlindex="index.html",
            caption="../report/site.rst",
            category="site",
            labels={"page": "every page, linked"},
        ),
    log:
        "logs/site.log",
    benchmark:
        "benchmarks/site.tsv"
    localrule: True
    conda:
        "../envs/replaylab.yaml"
    message:
        "Copying every page and what it links into results/site/, for the report"
    script:
        "../../scripts/site.py"
