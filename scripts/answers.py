"""Rule `answers`: the build's answer of every instance of a lesson's family, and its table of
instances (code only, no recording)."""

from replaylab.jobs import run
from replaylab.pipeline import Answers, answer_lesson


def main(job, log):
    answer_lesson(Answers(lesson=job.wildcards.lesson, answers=job.output.answers, instances=job.output.instances))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
