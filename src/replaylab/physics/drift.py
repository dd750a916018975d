"""Largest relative energy drift of the oscillator over a run, for one run or a scan of runs."""

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from replaylab.physics import oscillator
from replaylab.physics.integrators import STEPPERS


def max_energy_drift(method: str, steps_per_period: int, periods: int) -> float:
    """max |E_i / E_0 - 1| over the initial state and every step (docs/physics.md 2.3).

    Python floats: one run is about ten times faster this way than through numpy.
    """
    stepper = STEPPERS[method]
    dt = oscillator.PERIOD / steps_per_period
    t, x, v = 0.0, oscillator.X0, oscillator.V0
    worst = 0.0
    for _ in range(steps_per_period * periods):
        t, x, v = stepper(t, x, v, dt, oscillator.acceleration)
        try:
            energy = oscillator.energy(x, v)
        except OverflowError:
            energy = math.inf
        if not math.isfinite(energy):
            raise ValueError("the energy of the run is not finite")
        worst = max(worst, abs(energy / oscillator.INITIAL_ENERGY - 1))
    return worst


def max_energy_drift_by_period(method: str, steps_per_period: int, periods: int) -> list[float | None]:
    """`max_energy_drift(method, steps_per_period, p)` for every p from 1 to `periods`, from one
    run: the largest drift so far, read off at the end of each period (None from the period in
    which the energy stopped being finite). Each value equals the one-run result bit for bit: the
    same steps in the same order, and a run's drift never depends on its length."""
    stepper = STEPPERS[method]
    dt = oscillator.PERIOD / steps_per_period
    t, x, v = 0.0, oscillator.X0, oscillator.V0
    worst = 0.0
    found: list[float | None] = []
    for _ in range(periods):
        for _ in range(steps_per_period):
            t, x, v = stepper(t, x, v, dt, oscillator.acceleration)
            try:
                energy = oscillator.energy(x, v)
            except OverflowError:
                energy = math.inf
            if not math.isfinite(energy):
                return found + [None] * (periods - len(found))
            worst = max(worst, abs(energy / oscillator.INITIAL_ENERGY - 1))
        found.append(worst)
    return found


def max_energy_drifts(method: str, steps_per_period: npt.ArrayLike, periods: int) -> npt.NDArray[np.float64]:
    """`max_energy_drift` for several steps-per-period values at once (numpy, element-wise)."""
    return cast(npt.NDArray[np.float64], max_energy_drifts_at(method, steps_per_period, [periods])[0])


def max_energy_drifts_at(method: str, steps_per_period: npt.ArrayLike,
                         periods: Sequence[int] | npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The largest drift after each number of `periods`, for every steps-per-period value: an
    array of shape (len(periods), len(steps_per_period)), from one simulation per value.

    Every run is stepped together up to the longest one. The largest drift so far of every run is
    kept at each step where some run is read off, and each run is read off there when it reaches
    each number of periods, so every element equals the one-point result bit for bit (the drift of
    a run never depends on its length; what a run does after its last step is never read). A drift
    that is not finite stays in the largest so far (NaN and infinity win every maximum), so that a
    run whose energy stopped being finite before its end is found there.
    """
    stepper = STEPPERS[method]
    counts = np.asarray(steps_per_period, dtype=np.int64)
    checkpoints = counts[None, :] * np.asarray(periods, dtype=np.int64)[:, None]
    dt = oscillator.PERIOD / counts.astype(float)
    read_off = np.unique(checkpoints)  # sorted
    t = np.zeros(len(counts))
    x = np.full(len(counts), oscillator.X0)
    v = np.full(len(counts), oscillator.V0)
    worst = np.zeros(len(counts))
    kept = np.empty((len(read_off), len(counts)))
    with np.errstate(over="ignore", invalid="ignore"):
        for row, steps in enumerate(np.diff(read_off, prepend=0).tolist()):  # steps since the last read-off
            for _ in range(steps):
                t, x, v = stepper(t, x, v, dt, oscillator.acceleration)
                np.maximum(worst, np.abs(oscillator.energy(x, v) / oscillator.INITIAL_ENERGY - 1), out=worst)
            kept[row] = worst
    found = kept[np.searchsorted(read_off, checkpoints), np.arange(len(counts))]
    if not np.isfinite(found).all():
        raise ValueError("the energy of the run is not finite")
    return found
