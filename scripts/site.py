"""Rule `site`: results/site/, the pages and every file they link, as one folder for the report."""

from replaylab.jobs import run
from replaylab.site import write_site


def main(job, log):
    return f"{write_site(job.input.index, job.output.site)} files copied"


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
