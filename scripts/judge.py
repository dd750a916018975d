"""Rule `judge`: the verdicts of a lesson, from the recomputed transcripts of all its runs."""

from replaylab import pipeline


def main(lesson, transcripts, out, tolerance, runs):
    pipeline.judge_lesson(lesson, transcripts, out, tolerance, runs)
