"""Rule `exercises`: the lesson's exercises (code only, no recording)."""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.exercise_lesson, snakemake.wildcards.lesson, snakemake.output.exercises)
