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
    """`replaylab ARGS` as a user runs it: a real process; its CompletedProcess (text). For the tests
    of the process itself (its exit code as the shell sees it, signals, pipes, what a fresh
    interpreter imports); `in_process` for the others."""
    from helpers.processes import track

    process = track(subprocess.Popen(
        [sys.executable, "-m", "replaylab", *map(str, args)],
        stdin=subprocess.PIPE if stdin is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env if env is not None else environment(),
    ))
    try:
        stdout, stderr = process.communicate(stdin, timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def in_process(*args, stdin=None, cwd=ROOT, env=None):
    """`replaylab ARGS` in this process: `replaylab.cli.main(ARGS)`, the function that `python -m
    replaylab` and the console script call and exit with, run as they run it: in `cwd`, with
    `environment()` (or `env`) as os.environ, `stdin` (text, or nothing) on sys.stdin, sys.stdout
    and sys.stderr captured (files, encoded as the interpreter encodes them), warnings and log
    records printed on stderr as a fresh interpreter prints them, SystemExit turned into the exit
    code. Its CompletedProcess (text), as `cli` gives; everything it changed is put back. For the
    tests of what a command says and its exit code; `cli` where the process itself is tested."""
    import io
    import logging
    import signal
    import tempfile
    import traceback
    import warnings

    from replaylab import cli as command

    argv = [str(arg) for arg in args]
    saved_environ, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_signals = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    root = logging.getLogger()
    saved_handlers = root.handlers[:]
    with tempfile.TemporaryDirectory(prefix="replaylab-in-process-") as folder:
        given = Path(folder) / "stdin"
        given.write_text(stdin or "", encoding="utf-8", errors="surrogateescape")
        with open(given, encoding="utf-8", errors="surrogateescape") as stdin_file, \
                open(Path(folder) / "stdout", "w+", encoding="utf-8", errors="surrogateescape") as stdout_file, \
                open(Path(folder) / "stderr", "w+", encoding="utf-8", errors="backslashreplace") as stderr_file, \
                warnings.catch_warnings():
            # the filters of a fresh interpreter (python -W unset), shown on this stderr
            warnings.resetwarnings()
            for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
                warnings.simplefilter("ignore", category)
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
            warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: sys.stderr.write(
                warnings.formatwarning(message, category, filename, lineno, line))
            try:
                os.environ.clear()
                os.environ.update(env if env is not None else environment())
                os.chdir(cwd)
                sys.stdin, sys.stdout, sys.stderr = stdin_file, stdout_file, stderr_file
                root.handlers = []  # records reach stderr as without pytest (logging's last resort)
                try:
                    code = command.main(argv)
                except SystemExit as exit_:  # argparse's errors and --help, as the interpreter ends
                    code = exit_.code
                    if code is not None and not isinstance(code, int):
                        print(code, file=sys.stderr)
                        code = 1
                except Exception:  # what main lets through (REPLAYLAB_DEBUG): the interpreter's traceback
                    traceback.print_exc()
                    code = 1
                code = 0 if code is None else code
                for stream in (sys.stdout, sys.stderr):
                    if not stream.closed:
                        stream.flush()
            finally:
                root.handlers = saved_handlers
                sys.stdin, sys.stdout, sys.stderr = saved_streams
                os.chdir(saved_cwd)
                os.environ.clear()
                os.environ.update(saved_environ)
                for number, handler in saved_signals.items():
                    signal.signal(number, handler)
        # read as `subprocess.run(text=True)` reads a pipe: universal newlines
        outputs = [io.TextIOWrapper(io.BytesIO((Path(folder) / name).read_bytes()), encoding="utf-8").read()
                   for name in ("stdout", "stderr")]
    return subprocess.CompletedProcess(["replaylab", *argv], code, *outputs)


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
