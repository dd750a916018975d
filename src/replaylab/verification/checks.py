"""The five checks of the validation contract (docs/physics.md 3.1 to 3.3), with their fixed tolerances.

A piece of code to check is a `Candidate`: a builder that returns a fresh stepper, and what
the code claims (its order, bounded energy). Each check returns a `CheckResult`; a value that is
not finite counts as not measured and fails (it is reported as +inf).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from replaylab.physics import oscillator
from replaylab.physics.integrators import Acceleration, Stepper

EXACT = 1e-12
ORDER_MARGIN = 0.4
BAND_GROWTH = 1.5
LIMITS_GRAVITY = 9.81  # the limits check's constant acceleration (not standard gravity, 9.80665)

CHECK_NAMES = ("clock", "purity", "limits", "convergence-order", "bounded-energy")
ORDER_STEP_COUNTS = (50, 100, 200, 400, 800)
ERROR_PERIODS = 2


@dataclass(frozen=True)
class Candidate:
    """A piece of code to check: a stepper builder and what the piece claims."""

    name: str
    build: Callable[[], Stepper]
    order: int = 1
    bounded_energy: bool = True


@dataclass(frozen=True)
class CheckResult:
    check: str
    measured: float
    tolerance: float
    passed: bool
    details: dict[str, Any] = field(default_factory=dict)


def _finite_or_inf(value: Any) -> float:
    value = float(value)
    return value if math.isfinite(value) else math.inf


def _vector(*values: float) -> npt.NDArray[np.float64]:
    return np.array(values, dtype=float)


def check_clock(candidate: Candidate, tolerance: float = EXACT) -> CheckResult:
    """One step of 0.125 s from t = 3 must advance the clock by exactly 0.125 s."""
    stepper = candidate.build()
    t, _, _ = stepper(3.0, _vector(1.0), _vector(0.0), 0.125, oscillator.acceleration)
    measured = _finite_or_inf(abs(t - (3.0 + 0.125)))
    return CheckResult("clock", measured, tolerance, measured <= tolerance, {"advanced_s": t - 3.0})


def check_purity(candidate: Candidate, tolerance: float = EXACT) -> CheckResult:
    """The same step twice, with unrelated steps between, must give the same result."""
    stepper = candidate.build()
    accel = oscillator.acceleration
    first = stepper(0.0, _vector(1.0), _vector(0.0), 0.1, accel)
    for s in (2.0, -3.0, 0.5):
        stepper(1.0, _vector(s), _vector(s), 0.1, accel)
    again = stepper(0.0, _vector(1.0), _vector(0.0), 0.1, accel)
    with np.errstate(invalid="ignore", over="ignore"):
        difference = max(np.max(np.abs(again[1] - first[1])), np.max(np.abs(again[2] - first[2])))
    measured = _finite_or_inf(difference)
    return CheckResult("purity", measured, tolerance, measured <= tolerance, {"difference": measured})


def _run(stepper: Stepper, x0: npt.NDArray[np.float64], v0: npt.NDArray[np.float64], dt: float, steps: int,
         accel: Acceleration) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Positions and velocities at samples 0..steps (the initial state included)."""
    xs, vs = [x0], [v0]
    t, x, v = 0.0, x0, v0
    for _ in range(steps):
        t, x, v = stepper(t, x, v, dt, accel)
        xs.append(x)
        vs.append(v)
    return np.array(xs), np.array(vs)


def check_limits(candidate: Candidate, tolerance: float = EXACT) -> CheckResult:
    """With no force the motion is uniform; with a constant force the velocity is exact.

    A first-order method may miss the position by up to 0.5 g T dt (the allowance).
    """
    dt, steps = 0.1, 20
    x0, v0 = _vector(1.0, 2.0), _vector(0.5, -1.0)
    tau = (np.arange(steps + 1) * dt)[:, None]  # the experiment's clock, k * dt
    gvec = _vector(0.0, -LIMITS_GRAVITY)
    with np.errstate(invalid="ignore", over="ignore"):
        xs, vs = _run(candidate.build(), x0, v0, dt, steps, lambda t, x, v: np.zeros_like(x))
        uniform = max(np.max(np.abs(xs - (x0 + tau * v0))), np.max(np.abs(vs - v0)))
        xs, vs = _run(candidate.build(), x0, v0, dt, steps, lambda t, x, v: gvec)
        velocity = np.max(np.abs(vs - (v0 + tau * gvec)))
        position = np.max(np.abs(xs - (x0 + tau * v0 + 0.5 * tau**2 * gvec)))
    allowance = 0.5 * LIMITS_GRAVITY * float(tau[-1, 0]) * dt if candidate.order < 2 else 0.0
    excess = max(position - allowance, 0.0)
    values = [_finite_or_inf(v) for v in (uniform, velocity, excess)]
    measured = max(values)
    details = {
        "uniform": values[0],
        "velocity": values[1],
        "position": _finite_or_inf(position),
        "allowance": allowance,
        "excess": values[2],
    }
    return CheckResult("limits", measured, tolerance, measured <= tolerance, details)


def oscillator_error(candidate: Candidate, steps_per_period: int, periods: int = ERROR_PERIODS) -> float:
    """Largest distance to the exact oscillator in the scaled phase plane (x, v/omega), metres.

    Over every sample of the run, the initial one included; times are k * dt, not the stepper's.
    """
    dt = oscillator.PERIOD / steps_per_period
    steps = periods * steps_per_period
    with np.errstate(invalid="ignore", over="ignore"):
        xs, vs = _run(
            candidate.build(), _vector(oscillator.X0), _vector(oscillator.V0), dt, steps,
            oscillator.acceleration,
        )
        tau = np.arange(steps + 1) * dt
        x_exact, v_exact = oscillator.exact_state(tau)
        distance = np.sqrt(
            (xs[:, 0] - x_exact) ** 2 + ((vs[:, 0] - v_exact) / oscillator.OMEGA) ** 2
        )
        worst = np.max(distance)
    return _finite_or_inf(worst) if not np.isnan(distance).any() else math.inf


def oscillator_errors(candidate: Candidate, steps_per_period: npt.ArrayLike,
                      periods: int = ERROR_PERIODS) -> npt.NDArray[np.float64]:
    """`oscillator_error` for several steps-per-period values at once (numpy, element-wise).

    All runs step together up to the longest; each keeps its maximum only over its own samples,
    so every element equals the one-point result bit for bit.
    """
    counts = np.asarray(steps_per_period, dtype=np.int64)
    dt = oscillator.PERIOD / counts.astype(float)
    steps = periods * counts
    stepper = candidate.build()
    t = np.zeros(len(counts))
    x = np.full(len(counts), oscillator.X0)
    v = np.full(len(counts), oscillator.V0)
    worst = np.zeros(len(counts))
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(1, int(steps.max()) + 1):
            t, x, v = stepper(t, x, v, dt, oscillator.acceleration)
            x_exact, v_exact = oscillator.exact_state(k * dt)
            distance = np.sqrt((x - x_exact) ** 2 + ((v - v_exact) / oscillator.OMEGA) ** 2)
            distance = np.where(np.isnan(distance), np.inf, distance)
            worst = np.where((steps >= k) & (distance > worst), distance, worst)
    return worst


def fitted_order(errors: npt.ArrayLike, step_counts: npt.ArrayLike = ORDER_STEP_COUNTS) -> float:
    """Slope of the least-squares line through (ln h, ln error); NaN if an error is 0 or not finite."""
    errors = np.array(errors, dtype=float)
    if not np.all(np.isfinite(errors)) or np.any(errors <= 0):
        return math.nan
    h = oscillator.PERIOD / np.array(step_counts, dtype=float)
    return float(np.polyfit(np.log(h), np.log(errors), 1)[0])


def check_convergence_order(candidate: Candidate, tolerance: float = ORDER_MARGIN) -> CheckResult:
    """The error must shrink with the step at the claimed order, within the margin."""
    errors = [oscillator_error(candidate, n) for n in ORDER_STEP_COUNTS]
    order = fitted_order(errors)
    passed = math.isfinite(order) and abs(order - candidate.order) <= tolerance
    details = {"errors": errors, "order": order}
    return CheckResult("convergence-order", _finite_or_inf(order), tolerance, passed, details)


def energy_bands(candidate: Candidate, steps_per_period: int = 32, periods: int = 100,
                 window_periods: int = 5) -> tuple[float, float]:
    """Largest |E/E0 - 1| in the first and in the last window of samples (160 each)."""
    dt = oscillator.PERIOD / steps_per_period
    steps = steps_per_period * periods
    window = window_periods * steps_per_period
    with np.errstate(invalid="ignore", over="ignore"):
        xs, vs = _run(
            candidate.build(), _vector(oscillator.X0), _vector(oscillator.V0), dt, steps,
            oscillator.acceleration,
        )
        energies = oscillator.energy(xs[:, 0], vs[:, 0])
        if not np.all(np.isfinite(energies)):
            return math.inf, math.inf
        relative = np.abs(energies / oscillator.INITIAL_ENERGY - 1)
    return float(np.max(relative[:window])), float(np.max(relative[-window:]))


def check_bounded_energy(candidate: Candidate, tolerance: float = BAND_GROWTH) -> CheckResult:
    """The energy error late in a long run may not exceed 1.5 times the early one."""
    early, late = energy_bands(candidate)
    if math.isinf(early) or math.isinf(late):
        growth = math.inf
    else:
        growth = late / early if early > 0 else math.inf
    growth = _finite_or_inf(growth)
    details = {"early": early, "late": late, "growth": growth}
    return CheckResult("bounded-energy", growth, tolerance, growth <= tolerance, details)


CHECKS: dict[str, Callable[..., CheckResult]] = {
    "clock": check_clock,
    "purity": check_purity,
    "limits": check_limits,
    "convergence-order": check_convergence_order,
    "bounded-energy": check_bounded_energy,
}


def run_check(name: str, candidate: Candidate, exact: float = EXACT) -> CheckResult:
    """Run one check by name; `exact` replaces the tolerance of the exact checks (clock, purity, limits)."""
    if name in ("clock", "purity", "limits"):
        return CHECKS[name](candidate, exact)
    return CHECKS[name](candidate)
