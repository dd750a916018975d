"""Independent scans of the seeds' circuit and of an overdamped one; they depend on the code only,
never on a run.

- exact: the seeds' circuit (R, L, C, V0), its damping ratio, natural period, damped frequency, and
  its lowest voltage at π/ω_d, from the exact solution;
- curve: the seeds' voltage over CURVE_SPAN natural periods, exact and simulated at a few dt;
- convergence: the simulated voltage at the seeds' lowest point against the exact one, for dt halved
  from 0.1 ms eight times, with the order fitted to it (the slope of a least-squares line through
  log error against log dt);
- ringing: an overdamped circuit (the seeds' L and C, R = STIFF_RESISTANCE: ζ = 10): its lowest
  simulated voltage over every step up to RINGING_SPAN ms at a few dt, against the step 2/|r2|
  above which the trapezoidal rule makes its fast mode alternate in sign, and 2/ω0, above which
  that alternation outlasts the slow decay and takes the voltage below zero; and its voltage at every
  step of a few coarse dt over SERIES_SPAN ms, beside the exact one.
"""

import math
from typing import Any

import numpy as np

from replaylab.lessons import shown
from replaylab.lessons.rlc import lab, physics

CURVE_SPAN = 4  # natural periods of the seeds' curve
CURVE_POINTS = 401
CURVE_DTS = (0.2, 0.1, 0.05)  # ms
CONVERGENCE_DTS = tuple(0.1 / 2**k for k in range(9))  # ms
STIFF_RESISTANCE = 2000.0  # Ω: with the seeds' L and C, ζ = 10
RINGING_SPAN = physics.MAX_TIME  # ms
RINGING_DTS = (1.0, 0.5, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.01)  # ms
SERIES_DTS, SERIES_SPAN = (1.0, 0.5, 0.1), 40.0  # ms: the voltages the figure draws step by step
SERIES_POINTS = 401  # times of the exact voltage beside them
SEED = (lab.RESISTANCE, lab.INDUCTANCE, lab.CAPACITANCE, lab.INITIAL)
STIFF = (STIFF_RESISTANCE, lab.INDUCTANCE, lab.CAPACITANCE, lab.INITIAL)


def lowest_time() -> float:
    """π/ω_d of the seeds' circuit (ms): where its voltage is lowest."""
    zeta = physics.damping_ratio(*SEED[:3])
    return math.pi / (physics.natural_frequency(lab.INDUCTANCE, lab.CAPACITANCE) * math.sqrt(1 - zeta * zeta))


def exact_scan() -> dict[str, Any]:
    zeta = physics.damping_ratio(*SEED[:3])
    period = physics.natural_period(lab.INDUCTANCE, lab.CAPACITANCE)
    time = lowest_time()
    lowest = physics.exact_voltage(time, *SEED)
    return {
        "resistance_ohm": lab.RESISTANCE, "inductance_mh": lab.INDUCTANCE, "capacitance_uf": lab.CAPACITANCE,
        "initial_voltage_v": lab.INITIAL,
        "damping_ratio": shown(zeta, f"{zeta:.5f}"),
        "natural_period_ms": shown(period, f"{period:.4g}"),
        "lowest_time_ms": shown(time, f"{time:.4g}"),
        "lowest_voltage_v": shown(lowest, f"{lowest:.4g}"),
        "regime": lab.UNDERDAMPED if zeta < 1 else lab.OVERDAMPED,
    }


def curve_scan() -> dict[str, Any]:
    span = CURVE_SPAN * physics.natural_period(lab.INDUCTANCE, lab.CAPACITANCE)
    times = [span * k / (CURVE_POINTS - 1) for k in range(CURVE_POINTS)]
    return {
        "times": times,
        "exact": [physics.exact_voltage(t, *SEED) for t in times],
        "simulated": [{"dt": dt, "voltage": [physics.voltage(t, dt, *SEED) for t in times]} for dt in CURVE_DTS],
    }


def fitted_order(dts: list[float], errors: list[float]) -> float:
    """The slope of the least-squares line through (log dt, log error): the order of convergence."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])


def convergence_scan() -> dict[str, Any]:
    time = lowest_time()
    exact = physics.exact_voltage(time, *SEED)
    rows = [{"dt": dt, "voltage": physics.voltage(time, dt, *SEED)} for dt in CONVERGENCE_DTS]
    for row in rows:
        row["error"] = abs(row["voltage"] - exact)
    order = fitted_order(list(CONVERGENCE_DTS), [row["error"] for row in rows])
    return {"time": time, "exact": exact, "rows": rows, "order": shown(order, f"{order:.3f}")}


def stepped(dt: float, circuit: tuple[float, float, float, float], span: float) -> list[float]:
    """The trapezoidal voltage at every step of dt up to `span` ms (the tool's map, step by step)."""
    m = physics.step_map(dt, *circuit[:3])
    v, i = circuit[3], 0.0
    found = []
    for _ in range(math.floor(span / dt)):
        v, i = m[0] * v + m[1] * i, m[2] * v + m[3] * i
        found.append(v)
    return found


def ringing_scan() -> dict[str, Any]:
    zeta = physics.damping_ratio(*STIFF[:3])
    omega = physics.natural_frequency(lab.INDUCTANCE, lab.CAPACITANCE)
    threshold = physics.ringing_dt(zeta, omega)
    rows = []
    for dt in RINGING_DTS:
        voltages = stepped(dt, STIFF, RINGING_SPAN)
        lowest = min(voltages)
        rows.append({"dt": dt, "lowest_voltage_v": lowest, "at_ms": dt * (1 + voltages.index(lowest)), "negative": lowest < 0})
    below = physics.below_zero_dt(omega)
    times = [SERIES_SPAN * k / (SERIES_POINTS - 1) for k in range(SERIES_POINTS)]
    return {
        "resistance_ohm": STIFF_RESISTANCE, "damping_ratio": shown(zeta, f"{zeta:.4g}"),
        "ringing_dt_ms": shown(threshold, f"{threshold:.4g}"), "below_zero_dt_ms": shown(below, f"{below:.4g}"),
        "span_ms": RINGING_SPAN, "rows": rows,
        "series": [{"dt": dt, "voltage": stepped(dt, STIFF, SERIES_SPAN)} for dt in SERIES_DTS],
        "times": times, "exact": [physics.exact_voltage(t, *STIFF) for t in times],
    }


def scans() -> dict[str, Any]:
    return {"exact": exact_scan(), "curve": curve_scan(), "convergence": convergence_scan(), "ringing": ringing_scan()}
