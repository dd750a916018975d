"""The lesson's pendulum: θ'' = −(g/L) sin θ, stepped with symplectic Euler, its period read off the
trajectory, and the exact period from the arithmetic-geometric mean.

One step of dt (the velocity first, then the angle with the new velocity):

    ω' = ω − (g/L)·sin θ·dt
    θ' = θ + ω'·dt

from θ0 = amplitude·(π/180) at rest (ω = 0), step n at time n·dt.

The period is read off the angle alone, the same way everywhere (the tool, the scans, the
exercises): a downward zero crossing is a step from θ_n > 0 to θ_{n+1} ≤ 0, placed by linear
interpolation at t = (n + θ_n/(θ_n − θ_{n+1}))·dt; the period is the time from the first downward
crossing (about a quarter period after the release) to the second (one swing later).

Exact period: T = 2π√(L/g) / AGM(1, cos(θ0/2)), so the ratio to the small-angle period is
1/AGM(1, cos(θ0/2)), computed to machine precision.
"""

import math

import numpy as np
import numpy.typing as npt

G = 9.81  # m/s^2, the lesson's gravity (the question's value, not standard gravity)
LENGTH = 1.0  # m
DEGREE = math.pi / 180  # the constant that math.radians and numpy.radians multiply by
MAX_STEPS = 1_000_000  # far beyond the longest period the tool's bounds allow (about 12,000 steps)
EXCESS = 0.01  # the question's 1 %: the period exceeds the small-angle period by more than this


def small_angle_period(g: float = G, length: float = LENGTH) -> float:
    """2π√(L/g), in seconds."""
    return 2 * math.pi * math.sqrt(length / g)


def _check_dt(dt: float) -> None:
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt!r}")


def period(amplitude_deg: float, dt: float, g: float = G, length: float = LENGTH) -> float:
    """The period (s) of the simulated pendulum released at rest from `amplitude_deg`."""
    _check_dt(dt)
    rate = g / length
    theta, omega = amplitude_deg * DEGREE, 0.0
    first = None
    for n in range(MAX_STEPS):
        omega = omega - rate * math.sin(theta) * dt
        theta_new = theta + omega * dt
        if theta > 0 and theta_new <= 0:
            crossing = (n + theta / (theta - theta_new)) * dt
            if first is not None:
                return crossing - first
            first = crossing
        if abs(theta_new) > math.pi:
            raise RuntimeError(f"the pendulum went over the top from {amplitude_deg:g} degrees with dt {dt:g} s")
        theta = theta_new
    raise RuntimeError(f"no period after {MAX_STEPS} steps of {dt:g} s")


def periods(amplitudes_deg: npt.ArrayLike, dt: float, g: float = G, length: float = LENGTH) -> npt.NDArray[np.float64]:
    """`period` for many amplitudes at one dt, stepping every pendulum together with numpy (the same
    operations, element by element); NaN where a pendulum went over the top."""
    _check_dt(dt)
    rate = g / length
    theta = np.asarray(amplitudes_deg, dtype=float) * DEGREE
    omega = np.zeros_like(theta)
    first = np.full_like(theta, np.nan)
    found = np.full_like(theta, np.nan)
    open_ = np.ones(theta.shape, dtype=bool)
    for n in range(MAX_STEPS):
        if not open_.any():
            return found
        omega = omega - rate * np.sin(theta) * dt
        theta_new = theta + omega * dt
        down = open_ & (theta > 0) & (theta_new <= 0)
        if down.any():
            crossing = (n + theta[down] / (theta[down] - theta_new[down])) * dt
            second = ~np.isnan(first[down])
            where = np.flatnonzero(down)
            found[where[second]] = crossing[second] - first[where[second]]
            first[where[~second]] = crossing[~second]
            open_[where[second]] = False
        open_ &= np.abs(theta_new) <= math.pi
        theta = theta_new
    raise RuntimeError(f"no period after {MAX_STEPS} steps of {dt:g} s")


def agm(a: float, b: float) -> float:
    """The arithmetic-geometric mean of two positive numbers, iterated until the arithmetic mean stops
    changing (in binary64 that takes at most six rounds from 1 and cos 85°)."""
    for _ in range(64):
        mean, geometric = (a + b) / 2, math.sqrt(a * b)
        if mean == a:
            return mean
        a, b = mean, geometric
    raise ArithmeticError(f"the arithmetic-geometric mean did not settle: {a!r}, {b!r}")


def exact_ratio(amplitude_deg: float) -> float:
    """The exact period over the small-angle period, 1/AGM(1, cos(θ0/2)); it does not depend on g or L."""
    return 1 / agm(1.0, math.cos(amplitude_deg * DEGREE / 2))


def exact_period(amplitude_deg: float, g: float = G, length: float = LENGTH) -> float:
    return small_angle_period(g, length) * exact_ratio(amplitude_deg)


def exact_crossing(excess: float = EXCESS, low: float = 1.0, high: float = 170.0) -> float:
    """The amplitude (degrees) at which the exact ratio exceeds 1 + excess, by bisection until the two
    ends are neighbouring doubles: the smallest double whose computed excess is above `excess`."""
    if not exact_ratio(low) - 1 <= excess < exact_ratio(high) - 1:
        raise ValueError(f"the excess {excess:g} is not crossed between {low:g} and {high:g} degrees")
    while True:
        middle = (low + high) / 2
        if middle in (low, high):
            return high
        if exact_ratio(middle) - 1 > excess:
            high = middle
        else:
            low = middle


def simulated_crossing(dt: float, low: float, high: float, excess: float = EXCESS, g: float = G, length: float = LENGTH,
                       within: float = 1e-9) -> float:
    """The amplitude (degrees) at which the simulated period at `dt` exceeds the small-angle period by
    `excess`, by bisection from a bracket [low, high] (below at low, above at high) to `within` degrees."""
    reference = small_angle_period(g, length)

    def above(amplitude: float) -> bool:
        return period(amplitude, dt, g, length) / reference - 1 > excess

    if above(low) or not above(high):
        raise ValueError(f"the simulated excess at dt {dt:g} s does not cross {excess:g} between {low:g} and {high:g} degrees")
    while high - low > within:
        middle = (low + high) / 2
        if above(middle):
            high = middle
        else:
            low = middle
    return (low + high) / 2
