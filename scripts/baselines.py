"""Rule `baselines`: the careful and the trivial program on every instance of a lesson's family,
judged and scored against the build's answers (a careful program wrong anywhere stops the build)."""

from replaylab.baselines import Baselines, run_baselines
from replaylab.jobs import run, settings


def main(job, log):
    run_baselines(Baselines(lesson=job.wildcards.lesson, answers=job.input.answers, baselines=job.output.baselines,
                            tolerance=settings(job)["tolerance"]))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
