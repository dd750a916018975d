"""Rule `replay`: a batch of recordings, replayed through the current code, into a folder of transcripts.

A mismatch fails the job with the message that names the run and the command re-recording it;
the folder is then not written.
"""

from replaylab.pipeline import Replay, replay_batch


def main(wildcards, input, output, params):
    replay_batch(Replay(recordings=list(input.recordings), transcripts=output.transcripts, tolerance=params.tolerance))
