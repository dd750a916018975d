"""Rule `page`: the readable page of a lesson (results/<lesson>/index.md), from its results.json."""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.write_page, snakemake.wildcards.lesson, snakemake.input.results, snakemake.output.page)
