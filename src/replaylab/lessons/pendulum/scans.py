"""Independent scans of the pendulum; they depend on the code only, never on a run.

- exact: the 1 % crossing of the exact period (arithmetic-geometric mean), to machine precision;
- ratio: the exact period ratio T/T0 over 1 to 170 degrees, and the simulated one at a few dt
  (all amplitudes of one dt stepped together with numpy);
- convergence: for dt halved from 0.2 s eight times, the simulation's relative period error
  against the exact period at two amplitudes and the simulated 1 % crossing, each with the order
  of convergence fitted to it (the slope of a least-squares line through log error against log dt).
"""

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from replaylab.lessons import shown
from replaylab.lessons.pendulum import judge, physics

AMPLITUDES = tuple(range(1, 171))  # degrees: the tool's bounds, every whole degree
SCAN_DTS = (0.1, 0.05, 0.025, 0.0125)  # s: the simulated ratio over every amplitude
CONVERGENCE_DTS = tuple(0.2 / 2**k for k in range(9))  # s: 0.2 down to 0.00078125, within the tool's bounds
CONVERGENCE_AMPLITUDES = (23, 150)  # degrees: the question's, and a large swing


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def exact_scan() -> dict[str, Any]:
    crossing = judge.exact_crossing()
    reference = physics.small_angle_period()
    return {
        "g": physics.G,
        "length": physics.LENGTH,
        "excess": physics.EXCESS,
        "small_angle_period_s": shown(reference, f"{reference:.6g}"),
        "crossing": shown(crossing, f"{crossing:.4f}"),
        "bracket": judge.whole_degrees_around(crossing),
    }


def ratio_scan() -> dict[str, Any]:
    """T/T0 at every whole degree: exact, and simulated at each of SCAN_DTS (null: over the top)."""
    reference = physics.small_angle_period()
    return {
        "amplitudes": list(AMPLITUDES),
        "exact": [physics.exact_ratio(a) for a in AMPLITUDES],
        "simulated": [
            {"dt": dt, "ratio": [_finite(p / reference) for p in physics.periods(AMPLITUDES, dt)]} for dt in SCAN_DTS
        ],
    }


@cache
def simulated_crossing(dt: float) -> float:
    """The simulated 1 % crossing at one dt (degrees), by bisection over the tool's amplitudes."""
    return physics.simulated_crossing(dt, AMPLITUDES[0], AMPLITUDES[-1])


def fitted_order(dts: Sequence[float], errors: Sequence[float]) -> float:
    """The slope of the least-squares line through (log dt, log error): the order of convergence."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])


def convergence_scan() -> dict[str, Any]:
    exact = judge.exact_crossing()
    errors: list[dict[str, Any]] = []
    for amplitude in CONVERGENCE_AMPLITUDES:
        truth = physics.exact_period(amplitude)
        rows: list[dict[str, Any]] = [{"dt": dt, "period_s": physics.period(amplitude, dt), "exact_period_s": truth} for dt in CONVERGENCE_DTS]
        for row in rows:
            row["error"] = abs(row["period_s"] / truth - 1)
        order = fitted_order(CONVERGENCE_DTS, [row["error"] for row in rows])
        errors.append({"amplitude": amplitude, "rows": rows, "order": shown(order, f"{order:.3f}")})
    crossings: list[dict[str, Any]] = []
    for dt in CONVERGENCE_DTS:
        found = simulated_crossing(dt)
        crossings.append({
            "dt": dt,
            "crossing": shown(found, f"{found:.4f}"),
            "shift": shown(found - exact, f"{found - exact:+.3g}"),
            "bracket": judge.whole_degrees_around(found),
        })
    order = fitted_order(CONVERGENCE_DTS, [abs(c["shift"]["value"]) for c in crossings])
    return {"errors": errors, "crossings": crossings, "crossing_order": shown(order, f"{order:.3f}")}


def scans() -> dict[str, Any]:
    return {"exact": exact_scan(), "ratio": ratio_scan(), "convergence": convergence_scan()}
