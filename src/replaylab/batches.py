"""Runs grouped into replay jobs: many small runs must not cost one job each; and the lists of the
batches, which the workflow writes when it starts, each the one input of its replay job.

A run's batch depends only on its key (its name, or in a lesson judged per group the name of its
group, so that a group is replayed and judged in one job) and on the number of batches, a power of
two that doubles as the lesson grows: changing, adding or removing one run leaves every other run
in its batch (until the count doubles), so the workflow reruns one replay job, not all of them.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from replaylab.agents.recording import write_atomic


def batch_count(runs: int, size: int) -> int:
    """The smallest power of two of batches that holds `runs` runs with at most about `size` each."""
    if size < 1:
        raise ValueError(f"a batch holds at least one run, not {size}")
    count = 1
    while count * size < runs:
        count *= 2
    return count


def batch_of(key: str, count: int) -> str:
    """The name of the batch of a run's key, among `count` batches: batch<i>of<count>."""
    index = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % count
    return f"batch{index}of{count}"


def batches(runs: Mapping[str, str | Path], size: int, keys: Mapping[str, str] | None = None) -> dict[str, list[str | Path]]:
    """{batch name: [runs' files]} of {run name: file}, batches and runs in name order; no empty
    batch. `keys`: {run name: key}, the runs of one key go to one batch (by default each run's
    own name)."""
    count = batch_count(len(runs), size)
    found: dict[str, list[str | Path]] = {}
    for run in sorted(runs):
        key = run if keys is None else keys[run]
        found.setdefault(batch_of(key, count), []).append(runs[run])
    return dict(sorted(found.items()))


def list_text(lesson: str, batch: str, entries: list[list[str]]) -> str:
    """The text of a batch's list, the one input file of its replay job: its recordings with the
    digest of each one's content ([[path, digest]]), so that a changed, added or removed recording
    changes the list, and reruns that batch only."""
    return json.dumps({"lesson": lesson, "batch": batch, "recordings": entries}, indent=0) + "\n"


def write_list(path: str | Path, lesson: str, batch: str, entries: Iterable[Sequence[str]]) -> None:
    """Write a batch's list, atomically, and only when its text changed."""
    write_if_changed(path, list_text(lesson, batch, [list(entry) for entry in entries]))


def write_if_changed(path: str | Path, text: str) -> None:
    """Write a file the workflow makes when it starts, for its jobs to read (a batch's list, the
    settings of the jobs), atomically, and only when its text changed: a file rewritten as it was
    would change its time, not what a job reads."""
    path = Path(path)
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    write_atomic(path, text)
