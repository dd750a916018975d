"""The build's answer of each resonance instance: ω_r = √(ω0² − 2γ²) of its oscillator (the closed
form, no simulation), the tolerance within which an answer is right, and for comparison ω0 and the
damped frequency √(ω0² − γ²), which an answer may be mistaken for."""

import math
from collections.abc import Iterable
from typing import Any

from replaylab.lessons import Instance, shown
from replaylab.lessons.resonance import family, physics


def answer(instance: Instance) -> dict[str, Any]:
    natural, damping, _ = family.oscillator(instance)
    peak = physics.resonance(natural, damping)
    damped = math.sqrt(natural**2 - damping**2)
    return {"resonance": shown(peak, f"{peak:.5f}"), "tolerance_rad_s": family.question(instance)[2],
            "natural_rad_s": natural, "damping_rate_s": damping, "damped_rad_s": shown(damped, f"{damped:.5f}")}


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    return {i.id: answer(i) for i in instances}
