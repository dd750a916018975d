"""The lesson's ball: quadratic drag, explicit Euler, landing by linear interpolation.

Every operation is written in the order of the specification (docs/physics.md section 1), because the
reference numbers are reproduced bit for bit. The same formulas serve one launch (Python floats)
and a scan of many launches (numpy arrays), so a scan point equals the one-point tool exactly.
The seed's tennis ball from the ground is the default; the family's other balls and launch
heights pass `drag`, `mass` and `height` (the same operations, other numbers).
"""

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import numpy.typing as npt

G = 9.80665  # standard gravity, m/s^2 (not 9.81)
MASS = 0.058  # kg
DIAMETER = 0.067  # m
AIR_DENSITY = 1.2  # kg/m^3
DRAG_COEFFICIENT = 0.5
AREA = math.pi * (DIAMETER / 2) ** 2  # m^2
DRAG = 0.5 * AIR_DENSITY * DRAG_COEFFICIENT * AREA  # kg/m, computed, never the rounded 0.00106
LAUNCH_HEIGHT = 0.0  # m
MAX_STEPS = 1_000_000
DEGREE = math.pi / 180  # the constant that math.radians and numpy.radians multiply by

Floats = TypeVar("Floats", float, npt.NDArray[np.float64])  # one launch's numbers, or a scan's arrays


def _launch(speed: float, angle: float) -> tuple[float, float]:
    theta = angle * DEGREE
    return speed * math.cos(theta), speed * math.sin(theta)


def _acceleration(vx: Floats, vy: Floats, drag: Floats, sqrt: Callable[[Floats], Floats],
                  mass: Floats | float = MASS) -> tuple[Floats, Floats]:
    """Sum the drag and weight forces onto zero and divide by the mass, in the spec's order."""
    s = sqrt(vx * vx + vy * vy)
    q = (-drag) * s
    weight_y = mass * (-G)
    return (0 + q * vx) / mass, (weight_y + q * vy) / mass


def _check_dt(dt: float) -> None:
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt!r}")


def range_with_drag(speed: float, angle: float, dt: float, drag: float = DRAG, mass: float = MASS,
                    height: float = LAUNCH_HEIGHT) -> float:
    """Horizontal distance in metres at which the ball lands on the ground (y = 0), launched from
    `height` metres above it (the ground by default)."""
    _check_dt(dt)
    vx, vy = _launch(speed, angle)
    x, y = 0.0, float(height)
    for _ in range(MAX_STEPS):
        ax, ay = _acceleration(vx, vy, drag, math.sqrt, mass)
        x_new, y_new = x + vx * dt, y + vy * dt
        vx, vy = vx + ax * dt, vy + ay * dt
        if y_new < 0:
            return _interpolate_landing(x, y, x_new, y_new)
        x, y = x_new, y_new
    raise RuntimeError(f"not landed after {MAX_STEPS} steps of {dt:g} s")


def _interpolate_landing(x_prev: Floats, y_prev: Floats, x_new: Floats, y_new: Floats) -> Floats:
    f = y_prev / (y_prev - y_new)
    return x_prev + f * (x_new - x_prev)


def ranges_with_drag(speed: npt.ArrayLike, angles: npt.ArrayLike, dt: npt.ArrayLike,
                     drag: npt.ArrayLike = DRAG) -> npt.NDArray[np.float64]:
    """`range_with_drag` for many angles at once, stepping all flights together with numpy.

    Bit-identical to the one-point function: the same operations, element by element.
    """
    return ranges_of_launches(speed, angles, dt, drag)


def ranges_of_launches(speeds: npt.ArrayLike, angles: npt.ArrayLike, dts: npt.ArrayLike, drags: npt.ArrayLike = DRAG,
                       masses: npt.ArrayLike = MASS, heights: npt.ArrayLike = LAUNCH_HEIGHT) -> npt.NDArray[np.float64]:
    """`range_with_drag` for many launches at once: every argument a number or an array, broadcast
    together, one flight per element (a family of balls, speeds, heights and steps in one scan).

    Bit-identical to the one-point function element by element: the same operations on the same
    numbers (the launch's sine and cosine from `math`, as there). A flight that has landed leaves
    the arrays, so a long flight beside many short ones costs only its own steps.
    """
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (speeds, angles, dts, drags, masses, heights)))
    speed, angle, dt, drag, mass, height = (a.ravel().copy() for a in arrays)
    shape = arrays[0].shape
    if not np.all(dt > 0):
        _check_dt(float(dt[~(dt > 0)][0]))
    launches = [_launch(float(s), float(a)) for s, a in zip(speed, angle)]
    vx = np.array([v[0] for v in launches], dtype=float)
    vy = np.array([v[1] for v in launches], dtype=float)
    x, y = np.zeros(len(vx)), height
    result = np.full(len(vx), np.nan)
    flying = np.arange(len(vx))  # where each flight still in the arrays goes in the result
    if not len(vx):
        return result.reshape(shape)
    for _ in range(MAX_STEPS):
        ax, ay = _acceleration(vx, vy, drag, np.sqrt, mass)
        x_new, y_new = x + vx * dt, y + vy * dt
        vx, vy = vx + ax * dt, vy + ay * dt
        landed = y_new < 0
        if landed.any():
            result[flying[landed]] = _interpolate_landing(x[landed], y[landed], x_new[landed], y_new[landed])
            keep = ~landed
            if not keep.any():
                return result.reshape(shape)
            flying, vx, vy, x_new, y_new, dt, drag, mass = (a[keep] for a in (flying, vx, vy, x_new, y_new, dt, drag, mass))
        x, y = x_new, y_new
    raise RuntimeError(f"not landed after {MAX_STEPS} steps of {float(dt.max()):g} s")


def range_without_drag(speed: float, angle: float, height: float = LAUNCH_HEIGHT) -> float:
    """Exact range in vacuum: speed^2 sin(2 angle) / g from the ground, the angle doubled in degrees
    first; from `height` above the ground, vx (vy + sqrt(vy^2 + 2 g height)) / g."""
    if height == 0:
        return float(speed * speed * math.sin((2 * angle) * DEGREE) / G)
    vx, vy = _launch(speed, angle)
    return float(vx * (vy + math.sqrt(vy * vy + 2 * G * height)) / G)


def flight_time_without_drag(speed: float, angle: float) -> float:
    """Exact time of flight in vacuum: 2 speed sin(angle) / g."""
    return float(2 * speed * math.sin(angle * DEGREE) / G)
