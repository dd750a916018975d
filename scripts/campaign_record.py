"""Rule `campaign_record`: the runs of one block of a campaign that are not on disk, recorded
concurrently (as many at once as the job holds connections), then the block's list: its output,
the input of the block's replay. A recording is never recorded again, nor an output Snakemake may
remove (replaylab.campaign)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab.campaign import Campaign, record_block  # noqa: E402
from replaylab.jobs import run  # noqa: E402


def main(job, log):
    plan = Campaign(job.config["campaign"], job.config["batch_size"])
    record_block(plan, job.wildcards.lesson, job.wildcards.batch, job.output.listing, job.resources.provider_connections, log)


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
