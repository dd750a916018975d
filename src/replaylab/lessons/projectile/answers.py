"""The build's answer of each projectile instance: the best angle of its converged quarter-degree scan.

The rule is the seed's (scans.best_angle_scan): the range at angles in quarter-degree steps, at
dt 0.001 s, then halved (scans.BEST_DTS), until two time steps in a row give the same best angle;
that angle is the answer. Every instance is computed at once, one flight per (instance, angle) in
the same numpy arrays (physics.projectile.ranges_of_launches, element by element the one-point
tool's operations), and an instance leaves the scan as soon as its best angle has converged.

Which angles: the seed's scan keeps its grid, 30 to 50 degrees. A drawn instance's grid spans two
degrees either side of the best whole degree of a coarse survey (whole degrees 1 to 70 at dt 0.01
s). The range is one smooth hump in the angle, so the best angle of that window is the best angle
of every quarter-degree angle the tool accepts; the scan checks that the best angle never lies on
the window's edge (ValueError otherwise), and the tests compare whole-range scans on instances.
"""

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from replaylab.lessons import Instance
from replaylab.lessons.projectile import lab, scans
from replaylab.lessons.projectile.balls import Setup
from replaylab.physics import projectile

GRID_STEP = 0.25  # degrees, the grid of the answer's scan (the seed's)
DTS = scans.BEST_DTS  # s: dt 0.001, halved three times
SURVEY_ANGLES = np.arange(1, 71)  # degrees: the coarse survey that places a drawn instance's window
SURVEY_DT = 0.01  # s
REACH = 2  # degrees either side of the survey's best whole degree


def windows(setups: Sequence[Setup], seeds: Sequence[bool]) -> list[tuple[float, float]]:
    """(low, high) of each instance's quarter-degree grid: the seed's 30 to 50 degrees, else the
    survey's best whole degree plus or minus REACH."""
    found: list[Any] = [(float(scans.BEST_ANGLES[0]), float(scans.BEST_ANGLES[-1])) if seed else None for seed in seeds]
    todo = [i for i, seed in enumerate(seeds) if not seed]
    if todo:
        ranges = launches([setups[i] for i in todo], [SURVEY_ANGLES] * len(todo), SURVEY_DT)
        for i, row in zip(todo, ranges):
            best = float(SURVEY_ANGLES[int(np.argmax(row))])
            found[i] = (max(best - REACH, lab.ANGLE_PARAMETER.low), min(best + REACH, lab.ANGLE_PARAMETER.high))
    return found


def launches(setups: Sequence[Setup], grids: Sequence[npt.NDArray[Any]], dt: float) -> list[npt.NDArray[np.float64]]:
    """[ranges of one setup at its grid's angles] of several setups, in one numpy scan at dt."""
    sizes = [len(grid) for grid in grids]

    def column(values: Sequence[float]) -> npt.NDArray[np.float64]:
        return np.repeat(np.array(values, dtype=float), sizes)

    ranges = projectile.ranges_of_launches(column([s.speed for s in setups]), np.concatenate(grids), dt,
                                           column([s.drag for s in setups]), column([s.mass for s in setups]),
                                           column([s.height for s in setups]))
    return np.split(ranges, np.cumsum(sizes)[:-1])


def converged_scans(setups: Sequence[Setup], seeds: Sequence[bool]) -> list[dict[str, Any]]:
    """The answer of each setup: its grid's bounds, the best angle and its range at each dt, and the
    converged best angle (the same shape as scans.best_angle_scan, which the seed's equals)."""
    grids = [np.arange(low, high + 1e-9, GRID_STEP) for low, high in windows(setups, seeds)]
    rows: list[list[dict[str, Any]]] = [[] for _ in setups]
    found: list[Any] = [None] * len(setups)
    pending = list(range(len(setups)))
    for dt in DTS:
        if not pending:
            break
        for i, ranges in zip(pending, launches([setups[i] for i in pending], [grids[i] for i in pending], dt)):
            best = int(np.argmax(ranges))
            if not seeds[i] and best in (0, len(ranges) - 1):
                raise ValueError(f"the best angle of {setups[i]} at dt {dt:g} s lies on its window's edge, {grids[i][best]:g} degrees")
            rows[i].append({"dt": dt, "angle": float(grids[i][best]), "range_m": float(ranges[best])})
        pending = [i for i in pending if not (len(rows[i]) > 1 and rows[i][-1]["angle"] == rows[i][-2]["angle"])]
    if pending:
        raise ValueError(f"the best-angle scan of {setups[pending[0]]} does not converge down to dt {DTS[-1]:g} s")
    for i, setup in enumerate(setups):
        angle = rows[i][-1]["angle"]
        found[i] = {"speed": setup.speed, "grid_step": GRID_STEP, "low": float(grids[i][0]), "high": float(grids[i][-1]),
                    "rows": rows[i], "angle": {"value": angle, "shown": f"{angle:.2f}"}}
    return found


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    instances = list(instances)
    found = converged_scans([lab.setup_of(i) for i in instances], [i.seed for i in instances])
    return {instance.id: answer for instance, answer in zip(instances, found)}
