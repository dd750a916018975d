"""Rule `figure`: one PNG figure of a lesson, from its results.json."""

from _job import run
from replaylab import pipeline

run(
    snakemake,
    pipeline.write_figure,
    snakemake.wildcards.lesson,
    snakemake.wildcards.name,
    snakemake.input.results,
    snakemake.output.figure,
)
