"""The largest energy drift of every experiment the drift tool allows, per method, computed once a process.

One simulation per method (`drift.max_energy_drifts_at`, every steps-per-period value of the tool's
bounds stepped together and read off after every number of periods) gives the table the tool reads
its results from, the family draws its claims from and the build scans a claim's whole domain with:
the same bits as a run of its own (tested against `drift.max_energy_drift`). About a tenth to a
quarter of a second per method, so it is computed once per process and kept.

A run whose energy stops being finite has the value infinity here. None does within the tool's bounds
(explicit Euler's largest drift there, 4 steps per period over 50 periods, is about 1e108; tested),
and the tool refuses such a result as an error.
"""

import math
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from replaylab.physics.drift import max_energy_drift_by_period, max_energy_drifts_at

STEPS = range(4, 201)  # the tool's bounds on steps_per_period (lab.PARAMETERS; a test checks they agree)
PERIODS = range(1, 51)  # and on periods
# A campaign's recording job runs its runs in threads of one process: one table computed at a time.
_LOCK = threading.Lock()


def simulate(method: str, steps: Sequence[int], periods: Sequence[int]) -> npt.NDArray[np.float64]:
    """{(n, p): largest drift} as an array (len(periods), len(steps)); infinity for a run whose energy
    stopped being finite (then each steps-per-period value is run on its own, one period after the other)."""
    try:
        return max_energy_drifts_at(method, list(steps), list(periods))
    except ValueError:  # a run whose energy stopped being finite somewhere
        out = np.empty((len(periods), len(steps)))
        for column, n in enumerate(steps):
            trace = max_energy_drift_by_period(method, n, max(periods))
            out[:, column] = [math.inf if trace[p - 1] is None else trace[p - 1] for p in periods]
        return out


@cache
def _table(method: str) -> npt.NDArray[np.float64]:
    table = simulate(method, STEPS, PERIODS)
    table.flags.writeable = False
    return table


def table(method: str) -> npt.NDArray[np.float64]:
    """The drift of every experiment of the tool's bounds for one method: row p - 1, column n - 4."""
    with _LOCK:
        return _table(method)


def drift(method: str, steps_per_period: int, periods: int) -> float:
    """One experiment's largest drift, read off the table (infinity when its energy stopped being finite)."""
    if steps_per_period not in STEPS or periods not in PERIODS:
        raise ValueError(f"{steps_per_period} steps per period and {periods} periods lie outside the table")
    return float(table(method)[periods - PERIODS[0], steps_per_period - STEPS[0]])


def block(method: str, ranges: dict[str, tuple[int, int]]) -> npt.NDArray[np.float64]:
    """The part of the table a domain covers: rows periods low..high, columns steps low..high."""
    (low_n, high_n), (low_p, high_p) = ranges["steps_per_period"], ranges["periods"]
    return table(method)[low_p - PERIODS[0]: high_p - PERIODS[0] + 1, low_n - STEPS[0]: high_n - STEPS[0] + 1]


def worst(method: str, ranges: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """The experiment of a domain with the largest drift, found by scanning every one of them (ties go
    to the longest run, then to the fewest steps per period)."""
    found = block(method, ranges)
    (low_n, _), (low_p, _) = ranges["steps_per_period"], ranges["periods"]
    value = found.max()
    rows, columns = np.nonzero(found == value)
    row, column = max(zip(rows.tolist(), columns.tolist()), key=lambda rc: (rc[0], -rc[1]))
    return {"method": method, "steps_per_period": low_n + column, "periods": low_p + row, "value": float(value)}


def breaking(method: str, ranges: dict[str, tuple[int, int]], limit: float) -> tuple[int, int]:
    """How many of a domain's experiments have a drift above the limit, and how many it has."""
    found = block(method, ranges)
    return int((found > limit).sum()), int(found.size)
