"""Rule `scan`: the lesson's independent computations and its exercises (code only, no recording)."""

from replaylab import pipeline


def main(lesson, scans, exercises):
    pipeline.scan_lesson(lesson, scans)
    pipeline.exercise_lesson(lesson, exercises)
