"""What every rule script shares.

Rules run these scripts with `shell:` (`python scripts/<stage>.py --log LOG ...`): a plain Python
process starts faster than a `script:` job, which first imports Snakemake.

- The workflow's own src/ comes first on sys.path, so a job imports the library of the clone it
  belongs to (a temporary copy imports its own copy), before any installed replaylab.
- `run` sends the job's stdout and stderr into its log. A replay mismatch or a malformed input
  ends the job with its one-line message on stderr (Snakemake shows it) and exit code 1, without
  a traceback; any other error leaves its traceback in the log.
"""

import argparse
import sys
import traceback
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab.agents.recording import RecordingError  # noqa: E402
from replaylab.agents.replay import ReplayMismatch  # noqa: E402
from replaylab.lessons import UnknownLesson  # noqa: E402

EXPECTED = (ReplayMismatch, RecordingError, UnknownLesson)


def arguments(description, *options):
    """Parse the job's command line: --log always, then `options` as (flags, keywords) pairs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--log", required=True)
    for flags, keywords in options:
        parser.add_argument(*flags, **keywords)
    return parser.parse_args()


def run(log_path, stage, *args):
    """Call one stage of replaylab.pipeline with its output in the job's log."""
    stdout, stderr = sys.stdout, sys.stderr
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        sys.stdout = sys.stderr = log
        try:
            stage(*args)
        except EXPECTED as error:
            print(f"{type(error).__name__}: {error}", file=log)
            print(error, file=stderr)
            code = 1
        except Exception as error:
            traceback.print_exc(file=log)
            print(f"{type(error).__name__}: {error} (the traceback is in {log_path})", file=stderr)
            code = 1
        else:
            code = 0
        finally:
            sys.stdout, sys.stderr = stdout, stderr
    if code:
        sys.exit(code)
