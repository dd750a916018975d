"""Rule `replay`: one recording, replayed through the current code, into its transcript.

A mismatch fails the job with the message that names the command re-recording the run; the
transcript is then not written.
"""

from _job import run
from replaylab import pipeline

run(snakemake, pipeline.replay_run, snakemake.input.recording, snakemake.output.transcript, snakemake.params.tolerance)
