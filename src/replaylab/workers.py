"""Worker processes for the work that grows with the number of runs: the replay batches of a
lesson of several run side by side, one per core Snakemake is given, and so does the first check
of many recordings when the workflow starts (`check_all`).

Snakemake runs every job inside its own process (the default profile's force-use-threads), where
Python jobs only take turns on the interpreter lock. A job handed to `run` is instead called in a
worker: a process forked from a server process (multiprocessing's forkserver) that has imported the
pipeline and the lessons' code once. The workers live as long as the Snakemake run, so that their
caches of tool results (the tool functions are pure) serve every batch they replay. A lesson of one
batch never gets here: it costs no process start. Meanwhile Snakemake's process, which waits,
imports what the jobs after the replays need (`import_soon`).
"""

import importlib
import importlib.util
import multiprocessing
import os
import re
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from types import SimpleNamespace

_POOL = None
_STARTING = threading.Lock()


def pool(workers, preload):
    """The one pool of `workers` processes of this Snakemake run, started when first asked for;
    its server imports the modules `preload` once."""
    global _POOL
    with _STARTING:
        if _POOL is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["__main__", *preload])
            _POOL = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    return _POOL


def done_line(name, start, began, where=""):
    """The line a job's log ends with: its time (from perf_counter `start`), where it ran, and
    when (from time.time `began` to now); `read_done_line` reads it back."""
    return f"{name}: done in {time.perf_counter() - start:.2f} s{where}, from {began:.3f} to {time.time():.3f} (seconds since 1970)"


_DONE = re.compile(r"(\w+): done in ([0-9.]+) s.*, from ([0-9.]+) to ([0-9.]+) \(seconds since 1970\)")


def read_done_line(log):
    """(job name, seconds, start, end) from the line `done_line` wrote into the log at `log` (a
    job's note may follow it), or None when there is none: the job failed or did not end."""
    for line in reversed(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()):
        found = _DONE.fullmatch(line)
        if found:
            name, *numbers = found.groups()
            return (name, *map(float, numbers))
    return None


_IMPORTING = set()
_IMPORTING_LOCK = threading.Lock()


def import_soon(modules):
    """Import `modules` in a thread of this process, without waiting (once per list): the render
    jobs' libraries (pandas, matplotlib: about 1.7 s of a processor) are then loaded while the
    workers replay or a campaign's runs record, not after the last of them, when a processor
    would wait for them. A module that fails to load is left to the job that needs it, which
    reports the error."""
    modules = tuple(modules)
    with _IMPORTING_LOCK:
        if modules in _IMPORTING:
            return
        _IMPORTING.add(modules)

    def load():
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the job that imports it reports it
                continue

    threading.Thread(target=load, name="replaylab-imports", daemon=True).start()


def shutdown():
    """End the workers (at the end of the Snakemake run)."""
    global _POOL
    with _STARTING:
        if _POOL is not None:
            _POOL.shutdown(wait=True, cancel_futures=True)
            _POOL = None


@cache
def entry_point(path):
    """A job's entry point (scripts/<name>.py) as a module, loaded once per process (Snakemake's,
    or a worker's)."""
    spec = importlib.util.spec_from_file_location(f"replaylab_rule_{Path(path).stem}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def plain(named):
    """Snakemake's named lists of a job (wildcards, input, output, params) as plain objects that
    can be sent to a worker: each name with its value, a list of files as a list of str."""
    values = {}
    for key, value in named.items():
        values[key] = [str(v) for v in value] if isinstance(value, list) else str(value) if isinstance(value, str) else value
    return SimpleNamespace(**values)


def call(path, *args):
    """In a worker: (the worker's process id, what `main(*args)` of the entry point at `path` returns)."""
    return os.getpid(), entry_point(Path(path)).main(*args)


def run(workers, preload, path, *args):
    """`main(*args)` of the entry point at `path`, called in a worker: (the worker's process id,
    what it returns), or it raises what it raised (its type and message)."""
    return pool(workers, preload).submit(call, str(path), *[plain(a) for a in args]).result()


CHECK_APART_FROM = 2000  # recordings to check: from this many, in the workers (a start costs about 0.3 s)


def check_all(items, workers, preload):
    """`inputs.checked_recording` of each item (path, lesson): in this process, or split among the
    workers when there are many (a first build of a lesson of 100,000 runs) and more than one core."""
    from replaylab.inputs import checked_recording

    if workers > 1 and len(items) >= CHECK_APART_FROM:
        return list(pool(workers, preload).map(checked_recording, items, chunksize=250))
    return [checked_recording(item) for item in items]
