"""Rule `record_run`: `replaylab record` in a process of its own (it may read a key, and the
provider's SDK is never imported into Snakemake's process), with this clone's library first.

Started with an argument list, never through a shell: a configuration value is an argument of
`replaylab record`, which checks it, and never part of a command line.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from replaylab.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["record", *sys.argv[1:]]))
