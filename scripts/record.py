"""Rule `record_run`: one variant of a new run, recorded by `replaylab record` (it may read a key,
and the provider's SDK is imported in this job only). The configuration's values are arguments of
`replaylab record`, which checks them, never part of a command line. What it prints goes to the log
and to Snakemake's output; its error line fails the job."""

import contextlib
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this clone's library first

from replaylab import cli  # noqa: E402
from replaylab.campaign import RecordFailed  # noqa: E402
from replaylab.jobs import run  # noqa: E402


class Both(io.TextIOBase):
    """A stream that writes to two."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)


def main(job, log):
    p = job.params
    arguments = ["record", p.lesson, "--variant", p.variant, "--provider", p.provider, f"--model={p.model}",
                 "--seed", str(p.seed), "--group", p.group, "--out", job.output.recording]
    errors = io.StringIO()
    with contextlib.redirect_stdout(Both(sys.stdout, log)), contextlib.redirect_stderr(errors):
        code = cli.main(arguments)
    said = errors.getvalue().strip().splitlines()
    if code != 0:
        raise RecordFailed(said[-1] if said else f"replaylab record ended with exit code {code}")
    print("\n".join(said), file=log)


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
