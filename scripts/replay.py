"""Rule `replay`: a batch of recordings, replayed through the current code, into a folder of transcripts.

A mismatch fails the job with the message that names the run and the command re-recording it;
the folder is then not written.
"""

from replaylab import pipeline


def main(recordings, out, tolerance):
    pipeline.replay_batch(recordings, out, tolerance)
