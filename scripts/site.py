"""Rule `site`: results/site/, the pages and every file they link, as one folder for the report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab.jobs import run  # noqa: E402
from replaylab.site import write_site  # noqa: E402


def main(job, log):
    return f"{write_site(job.input.index, job.output.site)} files copied"


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
