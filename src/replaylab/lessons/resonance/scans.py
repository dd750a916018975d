"""Independent scans of the seeds' oscillator; they depend on the code only, never on a run.

- exact: ω_r = √(ω0² − 2γ²) of the seeds' oscillator, with ω0, the damped frequency and the peak's
  amplitude F / (2γ√(ω0² − γ²));
- curve: the steady amplitude over the seeds' range, exact, and simulated by the tool after a few
  numbers of periods (the start not yet died out at the smallest);
- settling: at ω_r, the simulated amplitude's relative difference from the exact one after 1 to
  SETTLE periods, beside the free oscillation's envelope e^{-γt} at the end of those periods;
- convergence: the peak of the amplitude Runge-Kutta settles to (physics.discrete_resonance) at 8
  to 128 steps per period against ω_r, with the order of convergence fitted to it (the slope of a
  least-squares line through log error against log steps).
"""

import math
from typing import Any

import numpy as np

from replaylab.lessons import shown
from replaylab.lessons.resonance import lab, physics

CURVE_POINTS = 201  # frequencies over the seeds' range, ends included
CURVE_PERIODS = (4, 8, 16, physics.MAX_PERIODS)  # numbers of periods the curve is simulated after
SETTLE = 60  # periods of the settling scan
CONVERGENCE_STEPS = (8, 16, 32, 64, 128)  # Runge-Kutta steps per period


def exact_scan() -> dict[str, Any]:
    peak = physics.resonance(lab.NATURAL, lab.DAMPING)
    damped = math.sqrt(lab.NATURAL**2 - lab.DAMPING**2)
    top = physics.exact_amplitude(peak, lab.NATURAL, lab.DAMPING, lab.FORCE)
    needed = physics.periods_needed(lab.NATURAL, lab.DAMPING, lab.TOLERANCE)
    return {
        "natural_rad_s": lab.NATURAL, "damping_rate_s": lab.DAMPING, "force_m_s2": lab.FORCE,
        "range": list(lab.RANGE), "tolerance_rad_s": lab.TOLERANCE,
        "resonance": shown(peak, f"{peak:.6g}"),
        "damped": shown(damped, f"{damped:.6g}"),
        "peak_amplitude_m": shown(top, f"{top:.6g}"),
        "periods_needed": shown(needed, f"{needed:.3g}"),
    }


def curve_scan() -> dict[str, Any]:
    low, high = lab.RANGE
    frequencies = [low + (high - low) * i / (CURVE_POINTS - 1) for i in range(CURVE_POINTS)]
    oscillator = (lab.NATURAL, lab.DAMPING, lab.FORCE)
    return {
        "frequencies": frequencies,
        "exact": [physics.exact_amplitude(w, *oscillator) for w in frequencies],
        "simulated": [{"periods": p, "amplitude_m": [physics.steady_amplitude(w, p, *oscillator) for w in frequencies]}
                      for p in CURVE_PERIODS],
    }


def settling_scan() -> dict[str, Any]:
    peak = physics.resonance(lab.NATURAL, lab.DAMPING)
    exact = physics.exact_amplitude(peak, lab.NATURAL, lab.DAMPING, lab.FORCE)
    rows = []
    for periods in range(1, SETTLE + 1):
        amplitude = physics.steady_amplitude(peak, periods, lab.NATURAL, lab.DAMPING, lab.FORCE)
        rows.append({"periods": periods, "amplitude_m": amplitude, "error": abs(amplitude / exact - 1),
                     "envelope": math.exp(-lab.DAMPING * 2 * math.pi * periods / peak)})
    return {"frequency": peak, "exact_m": exact, "rows": rows}


def fitted_order(steps: list[int], errors: list[float]) -> float:
    """Minus the slope of the least-squares line through (log steps, log error): the order."""
    return float(-np.polyfit(np.log(steps), np.log(errors), 1)[0])


def convergence_scan() -> dict[str, Any]:
    exact = physics.resonance(lab.NATURAL, lab.DAMPING)
    rows = []
    for steps in CONVERGENCE_STEPS:
        found = physics.discrete_resonance(lab.NATURAL, lab.DAMPING, steps)
        rows.append({"steps": steps, "resonance": found, "error": abs(found - exact)})
    order = fitted_order(list(CONVERGENCE_STEPS), [row["error"] for row in rows])
    return {"exact": exact, "rows": rows, "order": shown(order, f"{order:.3f}")}


def scans() -> dict[str, Any]:
    return {"exact": exact_scan(), "curve": curve_scan(), "settling": settling_scan(), "convergence": convergence_scan()}
