"""Runs grouped into replay jobs: many small runs must not cost one job each.

A run's batch depends only on its key (its name, or in a lesson judged per group the name of its
group, so that a group is replayed and judged in one job) and on the number of batches, a power of
two that doubles as the lesson grows: changing, adding or removing one run leaves every other run
in its batch (until the count doubles), so the workflow reruns one replay job, not all of them.
"""

import hashlib


def batch_count(runs, size):
    """The smallest power of two of batches that holds `runs` runs with at most about `size` each."""
    if size < 1:
        raise ValueError(f"a batch holds at least one run, not {size}")
    count = 1
    while count * size < runs:
        count *= 2
    return count


def batch_of(key, count):
    """The name of the batch of a run's key, among `count` batches: batch<i>of<count>."""
    index = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % count
    return f"batch{index}of{count}"


def batches(runs, size, keys=None):
    """{batch name: [runs' files]} of {run name: file}, batches and runs in name order; no empty
    batch. `keys`: {run name: key}, the runs of one key go to one batch (by default each run's
    own name)."""
    count = batch_count(len(runs), size)
    found = {}
    for run in sorted(runs):
        key = run if keys is None else keys[run]
        found.setdefault(batch_of(key, count), []).append(runs[run])
    return dict(sorted(found.items()))
