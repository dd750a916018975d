"""Rule `results`: every number of a lesson in one file (results/<lesson>/results.json), and its scorecard."""

from _job import run
from replaylab import pipeline

run(
    snakemake,
    pipeline.collect_results,
    snakemake.wildcards.lesson,
    list(snakemake.input.transcripts),
    snakemake.input.verdicts,
    snakemake.input.scans,
    snakemake.input.exercises,
    snakemake.output.results,
    snakemake.params.tolerance,
    snakemake.output.scorecard_json,
    snakemake.output.scorecard,
)
