"""Rule `replay`: a batch of recordings (those of its list, `input.batch`), replayed through the
current code into one file of transcripts (transcripts/<batch>.jsonl, a line per run), and judged
(judged/<batch>.json). A mismatch fails the job with the line that names the run and the command
that records it again; then nothing is written."""

from replaylab.jobs import run, settings
from replaylab.pipeline import Replay, batch_listed, replay_batch


def main(job, log):
    replay_batch(
        Replay(
            lesson=job.wildcards.lesson,
            recordings=batch_listed(job.input.batch),
            transcripts=job.output.transcripts,
            judged=job.output.judged,
            tolerance=settings(job)["tolerance"],
        )
    )


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
