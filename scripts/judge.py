"""Rule `judge`: the verdicts of a lesson, from the recomputed transcripts of all its runs."""

from _job import run
from replaylab import pipeline

run(
    snakemake,
    pipeline.judge_lesson,
    snakemake.wildcards.lesson,
    list(snakemake.input.transcripts),
    snakemake.output.verdicts,
    snakemake.params.tolerance,
)
