"""Rule `answers`: the build's answer of every instance of a lesson's family, and its table of
instances (code only, no recording)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab.jobs import run  # noqa: E402
from replaylab.pipeline import Answers, answer_lesson  # noqa: E402


def main(job, log):
    answer_lesson(Answers(lesson=job.wildcards.lesson, answers=job.output.answers, instances=job.output.instances))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
