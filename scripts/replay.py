"""Rule `replay`: a batch of recordings, replayed through the current code, into a folder of transcripts.

A mismatch fails the job with the message that names the run and the command re-recording it;
the folder is then not written.
"""

from _job import arguments, run
from replaylab import pipeline

args = arguments(
    __doc__,
    (["--tolerance"], {"type": float, "required": True}),
    (["--out"], {"required": True}),
    (["recordings"], {"nargs": "+"}),
)
run(args.log, pipeline.replay_batch, args.recordings, args.out, args.tolerance)
