"""Rule `index`: results/index.md, the summary of every lesson, from their results.json files."""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.write_index, list(snakemake.input.results), snakemake.output.index)
