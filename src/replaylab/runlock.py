"""A plain rerun after an interrupted or killed Snakemake: the lock a killed run left is removed,
and only when no Snakemake of this workflow is running in the folder.

Snakemake locks a working directory with files in .snakemake/locks/, which a run killed with
SIGKILL (or by a power cut) leaves behind, so that the next run refuses to start until
`snakemake --unlock`. The files say nothing of who made them. So every Snakemake process that
reads this workflow holds, for its whole life, a shared `flock` on .snakemake/replaylab/running,
which the kernel releases when the process ends, however it ends. A process that can take that
lock exclusively is the only one: a Snakemake lock it finds then belongs to a run that is gone.
"""

import fcntl
import os
import time
from pathlib import Path

_HELD = []  # the open lock file, kept for the life of the process


def hold(folder=".snakemake", wait_s=10.0):
    """Hold the shared lock of this process; first, if no other process holds it, remove the
    Snakemake locks left in `folder`/locks by a run that was killed. Returns their names."""
    marker = Path(folder, "replaylab", "running")
    marker.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(marker, os.O_RDWR | os.O_CREAT, 0o644)
    removed = []
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pass  # another Snakemake of this workflow runs here: its locks are real
    else:
        removed = _remove_stale(Path(folder, "locks"))
    deadline = time.monotonic() + wait_s
    while True:  # from exclusive (or none) to shared; another process may hold it exclusively a moment
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(handle)
                raise TimeoutError(f"{marker}: another Snakemake has held it for {wait_s:g} s") from None
            time.sleep(0.05)
    _HELD.append(handle)
    return removed


def _remove_stale(locks):
    removed = []
    for path in sorted(locks.glob("*.lock")):
        try:
            path.unlink()
            removed.append(path.name)
        except FileNotFoundError:
            pass
    return removed
