"""Rule `scan`: the lesson's independent computations (simulation code only, no recording)."""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.scan_lesson, snakemake.wildcards.lesson, snakemake.output.scans)
