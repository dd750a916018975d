"""The build's answer of each rlc instance: the regime of its exact damping ratio ζ = (R/2)√(C/L)
(no simulation), with what makes it hard to see: how far below zero an underdamped voltage goes
(relative to V0), or the step above which the trapezoidal rule takes an overdamped one below zero."""

from collections.abc import Iterable
from typing import Any

from replaylab.lessons import Instance, shown
from replaylab.lessons.rlc import family, physics


def answer(instance: Instance) -> dict[str, Any]:
    resistance, inductance, capacitance, _ = family.circuit(instance)
    zeta = physics.damping_ratio(resistance, inductance, capacitance)
    period = physics.natural_period(inductance, capacitance)
    found: dict[str, Any] = {"regime": family.regime(zeta), "damping_ratio": shown(zeta, f"{zeta:.5f}"),
                             "natural_period_ms": shown(period, f"{period:.4g}"), "resistance_ohm": resistance,
                             "capacitance_uf": capacitance}
    if zeta < 1:
        depth = physics.undershoot(zeta)
        found["undershoot"] = shown(depth, f"{depth:.3g}")
    else:
        step = physics.below_zero_dt(physics.natural_frequency(inductance, capacitance))
        found["below_zero_dt_ms"] = shown(step, f"{step:.4g}")
    return found


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    return {i.id: answer(i) for i in instances}
