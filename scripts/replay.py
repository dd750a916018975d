"""Rule `replay`: a batch of recordings, replayed through the current code, into a folder of transcripts.

A mismatch fails the job with the message that names the run and the command re-recording it;
the folder is then not written.
"""

from _job import run
from replaylab import pipeline

run(
    snakemake,
    pipeline.replay_batch,
    list(snakemake.input.recordings),
    snakemake.output.transcripts,
    snakemake.params.tolerance,
)
