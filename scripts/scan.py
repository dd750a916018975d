"""Rule `scan`: the lesson's independent computations and its exercises (code only, no recording)."""

from replaylab.jobs import run
from replaylab.pipeline import Scan, scan_lesson


def main(job, log):
    scan_lesson(Scan(lesson=job.wildcards.lesson, scans=job.output.scans, exercises=job.output.exercises))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
