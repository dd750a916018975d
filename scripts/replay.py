"""Rule `replay`: a batch of recordings, replayed through the current code into a folder of
transcripts, and judged (judged/<batch>.json). The recordings are those of the batch's list
(input `batch`, written while the workflow starts), or those given (input `recordings`: a
campaign's, recorded by the jobs before).

A mismatch fails the job with the message that names the run and the command re-recording it;
then nothing is written.
"""

from replaylab.pipeline import Replay, batch_listed, replay_batch


def main(wildcards, input, output, params):
    replay_batch(
        Replay(
            lesson=wildcards.lesson,
            recordings=list(input.recordings) if hasattr(input, "recordings") else batch_listed(input.batch),
            transcripts=output.transcripts,
            judged=output.judged,
            tolerance=params.tolerance,
        )
    )
