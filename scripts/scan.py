"""Rule `scan`: the lesson's independent computations and its exercises (code only, no recording)."""

from _job import arguments, run
from replaylab import pipeline

args = arguments(
    __doc__,
    (["--lesson"], {"required": True}),
    (["--scans"], {"required": True}),
    (["--exercises"], {"required": True}),
)


def scan_and_exercises():
    pipeline.scan_lesson(args.lesson, args.scans)
    pipeline.exercise_lesson(args.lesson, args.exercises)


run(args.log, scan_and_exercises)
