"""Rule `scan`: the lesson's independent computations and its exercises (code only, no recording)."""

from replaylab.pipeline import Scan, scan_lesson


def main(wildcards, input, output, params):
    scan_lesson(Scan(lesson=wildcards.lesson, scans=output.scans, exercises=output.exercises))
