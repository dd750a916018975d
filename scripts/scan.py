"""Rule `scan`: the lesson's independent computations and its exercises (code only, no recording)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab.jobs import run  # noqa: E402
from replaylab.pipeline import Scan, scan_lesson  # noqa: E402


def main(job, log):
    scan_lesson(Scan(lesson=job.wildcards.lesson, scans=job.output.scans, exercises=job.output.exercises))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
