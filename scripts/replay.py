"""Rule `replay`: a batch of recordings, replayed through the current code into a folder of
transcripts, and judged (judged/<batch>.json).

A mismatch fails the job with the message that names the run and the command re-recording it;
then nothing is written.
"""

from replaylab.pipeline import Replay, replay_batch


def main(wildcards, input, output, params):
    replay_batch(
        Replay(
            lesson=wildcards.lesson,
            recordings=list(input.recordings),
            transcripts=output.transcripts,
            judged=output.judged,
            tolerance=params.tolerance,
        )
    )
