rule figure:
    """One figure of a lesson, drawn from its results.json."""
    input:
        results="results/{lesson}/results.json",
        code=code("figure", "figures"),
    output:
        figure=report(
            "results/{lesson}/figures/{name}.png",
            caption="../report/figure.rst",
            category="{lesson}",
            subcategory="figures",
            labels={"lesson": "{lesson}", "figure": "{name}"},
        ),
    log:
        "logs/{lesson}/figures/{name}.log",
    benchmark:
        "benchmarks/{lesson}/figures/{name}.tsv"
    conda:
        "../envs/replaylab.yaml"
    script:
        "../../scripts/figure.py"
