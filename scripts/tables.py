"""Rule `tables`: the lesson's CSV tables, from its results.json."""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.write_tables, snakemake.wildcards.lesson, snakemake.input.results, snakemake.output.tables)
