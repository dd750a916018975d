"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans, exercises, answers and baselines from the main build."""

from replaylab.build import build_lesson
from replaylab.jobs import run, settings


def main(job, log):
    build_lesson(
        job.wildcards.lesson,
        recordings=list(job.input.recordings),
        folder=job.output.page,
        tolerance=settings(job)["tolerance"],
        scans=job.input.scans,
        exercises=job.input.exercises,
        answers=job.input.answers,
        baselines=job.input.baselines,
        progress=lambda text: None,
    )


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
