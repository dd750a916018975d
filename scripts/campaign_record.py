"""Rule `campaign_record`: the runs of one block of a campaign that are not on disk, recorded
concurrently (as many at once as the job holds connections), then the block's list: its output,
the input of the block's replay. A recording is never recorded again, nor an output Snakemake may
remove (replaylab.campaign)."""

from replaylab.campaign import Campaign, resource_names
from replaylab.campaign_recording import progress_file, record_block
from replaylab.jobs import run


def main(job, log):
    settings = job.config["campaign"]
    plan = Campaign(settings, job.config["batch_size"])
    connections = {endpoint: getattr(job.resources, name) for endpoint, name in resource_names(settings).items()}
    progress = progress_file(plan.name, job.wildcards.lesson, job.wildcards.batch)
    record_block(plan, job.wildcards.lesson, job.wildcards.batch, job.output.listing, connections, log, progress)


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
