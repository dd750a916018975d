"""Rule `index`: results/index.md and index.html, the summary of every lesson, from their results.json files."""

from pathlib import Path

from replaylab.index_page import Index, write_index
from replaylab.jobs import run


def main(job, log):
    folder = Path(job.output.index).parent / "campaigns"
    seconds = write_index(Index(results=list(job.input.results), index=job.output.index, campaigns=folder))
    return f"HTML page: {seconds:.3f} s"


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
