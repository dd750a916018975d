"""Rule `judge`: the verdicts of a lesson, from the recomputed transcripts of all its runs."""

from _job import arguments, run
from replaylab import pipeline

args = arguments(
    __doc__,
    (["--lesson"], {"required": True}),
    (["--tolerance"], {"type": float, "required": True}),
    (["--out"], {"required": True}),
    (["transcripts"], {"nargs": "+"}),
)
run(args.log, pipeline.judge_lesson, args.lesson, args.transcripts, args.out, args.tolerance)
