"""Rule `render`: everything a lesson shows, from its verdicts, scans and transcripts: results.json
(every number), the scorecard, the CSV tables, the figures and the page. One job, because each of
these is too small to be worth a process of its own."""

from _job import arguments, run
from replaylab import pipeline

args = arguments(
    __doc__,
    (["--lesson"], {"required": True}),
    (["--tolerance"], {"type": float, "required": True}),
    (["--verdicts"], {"required": True}),
    (["--scans"], {"required": True}),
    (["--exercises"], {"required": True}),
    (["--folder"], {"required": True, "help": "results/<lesson>"}),
    (["transcripts"], {"nargs": "+"}),
)
run(
    args.log,
    pipeline.render_lesson,
    args.lesson,
    args.transcripts,
    args.verdicts,
    args.scans,
    args.exercises,
    args.folder,
    args.tolerance,
)
