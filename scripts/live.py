"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans and exercises from the main build."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab.build import build_lesson  # noqa: E402
from replaylab.jobs import run, settings  # noqa: E402


def main(job, log):
    build_lesson(
        job.wildcards.lesson,
        recordings=list(job.input.recordings),
        folder=job.output.page,
        tolerance=settings(job)["tolerance"],
        scans=job.input.scans,
        exercises=job.input.exercises,
        progress=lambda text: None,
    )


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
