"""The flight solved apart from the tool's explicit Euler: classical Runge-Kutta (order 4) with a
landing step of its own, for many launches at once (numpy). At dt 0.01 s its ranges agree with
dt 0.0025 s to a few parts in 1e11 on the family's balls (at dt 0.05 s, a few parts in 1e8).

What for: the family's draw skips candidates whose best angle lies near a whole degree (family.py),
which needs the top of the range curve cheaply and to a few thousandths of a degree, in every
process that lists the instances; and the tests compare the build's converged Euler scans with it.
The equations are the tool's (quadratic drag k v |v| / m, gravity G), nothing else is shared.
"""

from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from replaylab.lessons.projectile.balls import Setup
from replaylab.physics import projectile

MAX_STEPS = 100_000
Array = npt.NDArray[np.float64]  # one number per flight


def _rates(vx: Array, vy: Array, c: Array) -> tuple[Array, Array]:
    s = np.sqrt(vx * vx + vy * vy)
    return -c * s * vx, -projectile.G - c * s * vy


def _rk4(x: Array, y: Array, vx: Array, vy: Array, c: Array, h: float | Array) -> tuple[Array, Array, Array, Array]:
    """One Runge-Kutta step of size h (a number or one per flight)."""
    ax1, ay1 = _rates(vx, vy, c)
    vx2, vy2 = vx + 0.5 * h * ax1, vy + 0.5 * h * ay1
    ax2, ay2 = _rates(vx2, vy2, c)
    vx3, vy3 = vx + 0.5 * h * ax2, vy + 0.5 * h * ay2
    ax3, ay3 = _rates(vx3, vy3, c)
    vx4, vy4 = vx + h * ax3, vy + h * ay3
    ax4, ay4 = _rates(vx4, vy4, c)
    return (x + h / 6 * (vx + 2 * vx2 + 2 * vx3 + vx4), y + h / 6 * (vy + 2 * vy2 + 2 * vy3 + vy4),
            vx + h / 6 * (ax1 + 2 * ax2 + 2 * ax3 + ax4), vy + h / 6 * (ay1 + 2 * ay2 + 2 * ay3 + ay4))


def _to_ground(x: Array, y: Array, vx: Array, vy: Array, c: Array) -> Array:
    """From states just above the ground, the range: twice, a step of the time a parabola with the
    state's acceleration takes to reach y = 0, then the last residual height undone along the velocity."""
    for _ in range(2):
        _, ay = _rates(vx, vy, c)
        h = (-vy - np.sqrt(vy * vy - 2 * ay * y)) / ay  # the positive root of y + vy h + ay h^2 / 2 = 0 (ay < 0)
        x, y, vx, vy = _rk4(x, y, vx, vy, c, h)
    return x - y * vx / vy


def ranges(speeds: npt.ArrayLike, angles: npt.ArrayLike, drags: npt.ArrayLike, masses: npt.ArrayLike,
           heights: npt.ArrayLike, dt: float = 0.01) -> Array:
    """Range (m) of each launch (arrays broadcast together), the flight stepped by RK4 with step dt
    until it passes below the ground, then landed by `_to_ground`."""
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (speeds, angles, drags, masses, heights)))
    speed, angle, drag, mass, height = (a.ravel() for a in arrays)
    theta = np.radians(angle)
    x, y = np.zeros(len(speed)), height.copy()
    vx, vy = speed * np.cos(theta), speed * np.sin(theta)
    c = drag / mass
    result = np.full(len(speed), np.nan)
    flying = np.arange(len(speed))
    for _ in range(MAX_STEPS):
        if not len(flying):
            return result.reshape(arrays[0].shape)
        nx, ny, nvx, nvy = _rk4(x, y, vx, vy, c, dt)
        down = ny < 0
        if down.any():
            result[flying[down]] = _to_ground(x[down], y[down], vx[down], vy[down], c[down])
            up = ~down
            flying, nx, ny, nvx, nvy, c = (a[up] for a in (flying, nx, ny, nvx, nvy, c))  # type: ignore[assignment]
        x, y, vx, vy = nx, ny, nvx, nvy
    raise RuntimeError(f"not landed after {MAX_STEPS} Runge-Kutta steps of {dt:g} s")


SURVEY = np.arange(8.0, 50.0, 2.0)  # degrees: where the top is looked for first
NEAR = np.arange(-1.5, 1.51, 0.5)  # degrees around the survey's best angle


def best_angles(setups: Sequence[Setup]) -> Array:
    """The top of the range curve of each setup (degrees): the survey's best angle (RK4 at dt 0.05),
    then the vertex of the parabola through the best of seven angles half a degree apart around it
    and its two neighbours (RK4 at dt 0.01). ValueError when a best angle lies at the survey's edge."""

    def column(values: Sequence[float], n: int) -> Array:
        return np.repeat(np.array(values, dtype=float), n)

    n = len(setups)

    def ball(grid: Array) -> tuple[list[int], list[float], list[float], list[float]]:
        return ([s.speed for s in setups], [s.drag for s in setups], [s.mass for s in setups],
                [s.height for s in setups])

    speeds, drags, masses, heights = (column(v, len(SURVEY)) for v in ball(SURVEY))
    survey = ranges(speeds, np.tile(SURVEY, n), drags, masses, heights, dt=0.05).reshape(n, len(SURVEY))
    best = np.argmax(survey, axis=1)
    if np.any((best == 0) | (best == len(SURVEY) - 1)):
        raise ValueError("a best angle lies at the edge of the survey, 8 to 48 degrees")
    centres = SURVEY[best]
    angles = (centres[:, None] + NEAR[None, :]).ravel()
    speeds, drags, masses, heights = (column(v, len(NEAR)) for v in ball(NEAR))
    near = ranges(speeds, angles, drags, masses, heights).reshape(n, len(NEAR))
    top = np.argmax(near, axis=1)
    if np.any((top == 0) | (top == len(NEAR) - 1)):
        raise ValueError("a best angle lies at the edge of its seven angles")
    rows = np.arange(n)
    r0, r1, r2 = near[rows, top - 1], near[rows, top], near[rows, top + 1]
    step = NEAR[1] - NEAR[0]
    return cast(Array, centres + NEAR[top] + step * (r0 - r2) / (2 * (r0 - 2 * r1 + r2)))
