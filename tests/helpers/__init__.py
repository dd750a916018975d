"""What the tests share: the project's paths, the reference numbers, and the command line.

Tests import from here (`from helpers import ROOT, cli`), never from another test module.
Tests never read ../shared: the reference numbers are copied into tests/data.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "recordings"
GOLDEN = json.loads((ROOT / "tests" / "data" / "golden-reference.json").read_text())["values"]


def environment(**changes):
    """The environment of a process a test starts: no API key and no Snakemake profile of the
    user's (the workflow must never need either), matplotlib without a display; `changes` added."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SNAKEMAKE_PROFILE")}
    env["MPLBACKEND"] = "Agg"
    env.update(changes)
    return env


def fuzz_scale():
    """REPLAYLAB_FUZZ_SCALE, which multiplies the fuzz tests' numbers of examples: a whole number
    of at least 1, 1 when unset (`make test`; `.ci/run` sets 3)."""
    import pytest

    text = os.environ.get("REPLAYLAB_FUZZ_SCALE", "1")
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise pytest.UsageError(f"REPLAYLAB_FUZZ_SCALE: {text!r} is not a whole number of at least 1")
    return int(text)


def python(code, cwd=ROOT, timeout=120):
    """`python -c CODE` in a fresh process (what a module imports, or leaves out, shows only
    there); its CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def cli(*args, stdin=None, cwd=ROOT, env=None):
    """`replaylab ARGS` as a user runs it: a real process; its CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "replaylab", *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        env=env if env is not None else environment(),
        timeout=120,
    )


def read_json_line(process, buffer, timeout):
    """The next JSON line on `process`'s stdout, and what was read past it: (value, buffer), the
    value None once stdout is closed. A driver's wait for one answer, bounded by `timeout`."""
    import os
    import select
    import time

    deadline = time.monotonic() + timeout
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        assert left > 0, f"no answer within {timeout} s"
        if select.select([process.stdout], [], [], left)[0]:
            chunk = os.read(process.stdout.fileno(), 1 << 16)
            if not chunk:
                return None, buffer
            buffer += chunk
    line, buffer = buffer.split(b"\n", 1)
    return json.loads(line), buffer
