"""Rule `campaign_compare`: the comparison of a campaign's models (results/campaigns/<name>/),
a group-by of the per-run tables of its lessons."""

import os

from replaylab import comparison
from replaylab.jobs import run


def main(job, log):
    comparison.write({**job.params.settings, "detect": job.params.detect}, list(job.params.lessons), list(job.input.tables), list(job.input.transcripts),
                     os.path.dirname(job.output.page))


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
