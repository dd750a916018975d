"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans and exercises from the main build."""

from _job import arguments, run
from replaylab import pipeline

args = arguments(
    __doc__,
    (["--lesson"], {"required": True}),
    (["--tolerance"], {"type": float, "required": True}),
    (["--scans"], {"required": True}),
    (["--exercises"], {"required": True}),
    (["--out"], {"required": True}),
    (["recordings"], {"nargs": "+"}),
)
run(args.log, pipeline.build_lesson, args.lesson, args.recordings, args.out, args.tolerance, args.scans, args.exercises, print)
