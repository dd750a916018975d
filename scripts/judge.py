"""Rule `judge`: the verdicts of a lesson, from the recomputed transcripts of all its runs."""

from replaylab.pipeline import Judge, judge_lesson


def main(wildcards, input, output, params):
    judge_lesson(
        Judge(
            lesson=wildcards.lesson,
            transcripts=list(input.transcripts),
            verdicts=output.verdicts,
            tolerance=params.tolerance,
            runs=list(params.runs),
        )
    )
