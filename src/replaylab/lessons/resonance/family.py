"""The resonance family: at which driving frequency is the steady amplitude of a driven, damped
oscillator largest, to within a stated tolerance, when its natural frequency and damping are not
stated.

Each instance is one oscillator x'' + 2γx' + ω0²x = F cos(ωt), drawn by `random.Random(SEED)` (only
`.random()`):
- `hidden`: ω0, log-uniform from 0.5 to 8 rad/s, and the damping ratio ζ = γ/ω0, log-uniform from
  0.005 to 0.3 (γ = ζ·ω0), each rounded to 4 significant digits. The agent is never told them: it
  measures amplitudes (lab.TOOL) and finds the peak from them;
- `force_m_s2`: F, 0.2 to 5 m/s² in steps of 0.1 (it scales every amplitude, not the peak);
- `tolerance_rad_s`: 0.005, 0.01 or 0.02 rad/s, and the stated range `frequency_low_rad_s` to
  `frequency_high_rad_s`: from ω_r·(1 − a) rounded down to ω_r·(1 + b) rounded up to 0.01 rad/s,
  with a and b uniform from 0.1 to 0.4, so that where the peak lies in the range says nothing.
The build's answer (answers.py) is ω_r = √(ω0² − 2γ²), the closed form.

Difficulty: the drive periods a run must simulate before the amplitudes it measures place the peak
within the tolerance (physics.periods_needed: the free oscillation's envelope e^{-γt} down to the
relative drop of the steady amplitude from its peak to ω_r ± the tolerance): easy below 20, medium
20 to 80, hard 80 or more (a light damping, or a peak so flat within the tolerance that small
differences decide). 20 drawn instances of each level: instance n aims at the level
`DIFFICULTIES[(n - 1) % 3]` and candidates are drawn until one has it.

Edge cases, excluded at draw time: an oscillator that needs more than a quarter of the tool's
largest number of periods (the careful program, which simulates them all, then sees a start that has
died out to the fourth power of what decides), and one whose simulated peak (the steady state of
Runge-Kutta at 64 steps per period, physics.discrete_resonance) lies further than a tenth of the
tolerance from ω_r (none does: a few millionths of ω_r at most; tested).
"""

import math
import random
from functools import cache
from typing import Any

from replaylab.lessons import DIFFICULTIES, Instance, Variant
from replaylab.lessons.resonance import lab, physics

SEED = 40  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {
    "force_m_s2": "the drive's force per unit mass F, m/s²",
    "frequency_low_rad_s": "the stated range of the peak: its lowest frequency, rad/s",
    "frequency_high_rad_s": "the stated range of the peak: its highest frequency, rad/s",
    "tolerance_rad_s": "the answer must lie within this of the exact peak, rad/s",
}
SEED_ID = "resonance-seed"
PER_LEVEL = 20  # drawn instances of each difficulty
NATURAL = (0.5, 8.0)  # rad/s, log-uniform
RATIO = (0.005, 0.3)  # ζ = γ/ω0, log-uniform
FORCE = (0.2, 5.0)  # m/s², in steps of 0.1
TOLERANCES = (0.005, 0.01, 0.02)  # rad/s
MARGINS = (0.1, 0.4)  # the stated range reaches this far below and above ω_r, relative
DIGITS = 4  # significant digits of ω0 and γ
LEVELS = ((20, "easy"), (80, "medium"))  # periods needed: below 20 easy, below 80 medium, else hard
SAFETY = 4  # an oscillator may need at most a quarter of the tool's largest number of periods
OFF = 0.1  # the simulated peak lies within this share of the tolerance of ω_r


def _significant(value: float, digits: int = DIGITS) -> float:
    return float(f"{value:.{digits - 1}e}")


def oscillator(instance: Instance) -> tuple[float, float, float]:
    """(ω0, γ, F) of an instance's oscillator."""
    hidden = instance.hidden["oscillator"]
    return hidden["natural_frequency_rad_s"], hidden["damping_rate_s"], instance.parameters["force_m_s2"]


def question(instance: Instance) -> tuple[float, float, float]:
    """(the stated range's low and high, the tolerance), rad/s."""
    p = instance.parameters
    return p["frequency_low_rad_s"], p["frequency_high_rad_s"], p["tolerance_rad_s"]


def level(periods: float) -> str:
    for below, name in LEVELS:
        if periods < below:
            return name
    return "hard"


def assess(natural: float, damping: float, tolerance: float) -> dict[str, Any]:
    """The difficulty of an oscillator and a tolerance (None when excluded), with what decides it."""
    needed = physics.periods_needed(natural, damping, tolerance)
    found: dict[str, Any] = {"periods_needed": needed, "resonance": physics.resonance(natural, damping)}
    if SAFETY * needed > physics.MAX_PERIODS:
        return {**found, "difficulty": None}
    simulated = physics.discrete_resonance(natural, damping)
    kept = abs(simulated - found["resonance"]) <= OFF * tolerance
    return {**found, "simulated_resonance": simulated, "difficulty": level(needed) if kept else None}


def _hidden(natural: float, damping: float) -> dict[str, Any]:
    return {"oscillator": {"natural_frequency_rad_s": natural, "damping_rate_s": damping}}


def _parameters(force: float, low: float, high: float, tolerance: float) -> dict[str, Any]:
    return {"force_m_s2": force, "frequency_low_rad_s": low, "frequency_high_rad_s": high, "tolerance_rad_s": tolerance}


def seed_instance() -> Instance:
    found = level(physics.periods_needed(lab.NATURAL, lab.DAMPING, lab.TOLERANCE))
    return Instance(SEED_ID, found, _parameters(lab.FORCE, *lab.RANGE, lab.TOLERANCE), seed=True,
                    hidden=_hidden(lab.NATURAL, lab.DAMPING))


def _uniform(low: float, high: float, r: float) -> float:
    return low + (high - low) * r


def _candidate(draw: random.Random) -> tuple[float, float, float, float, float, float]:
    """(ω0, γ, F, low, high, tolerance) of one drawn oscillator and question."""
    natural = _significant(NATURAL[0] * (NATURAL[1] / NATURAL[0]) ** draw.random())
    damping = _significant(natural * RATIO[0] * (RATIO[1] / RATIO[0]) ** draw.random())
    force = round(_uniform(*FORCE, draw.random()), 1)
    tolerance = TOLERANCES[min(int(len(TOLERANCES) * draw.random()), len(TOLERANCES) - 1)]
    peak = physics.resonance(natural, damping)
    low = math.floor(100 * peak * (1 - _uniform(*MARGINS, draw.random()))) / 100
    high = math.ceil(100 * peak * (1 + _uniform(*MARGINS, draw.random()))) / 100
    return natural, damping, force, low, high, tolerance


@cache
def _drawn() -> tuple[Instance, ...]:
    draw = random.Random(SEED)
    found: list[Instance] = []
    for n in range(1, len(DIFFICULTIES) * PER_LEVEL + 1):
        aim = DIFFICULTIES[(n - 1) % len(DIFFICULTIES)]
        while True:
            natural, damping, force, low, high, tolerance = _candidate(draw)
            if level(physics.periods_needed(natural, damping, tolerance)) != aim:  # the cheap part of `assess` first
                continue
            if assess(natural, damping, tolerance)["difficulty"] != aim:
                continue
            found.append(Instance(f"resonance-{n:03d}", aim, _parameters(force, low, high, tolerance),
                                  hidden=_hidden(natural, damping)))
            break
    return tuple(found)


def seeds() -> list[Instance]:
    """The seeds' own question, without a draw."""
    return [seed_instance()]


def instances() -> list[Instance]:
    """The seeds' question, then the drawn ones (cached: the draw takes a few hundredths of a second once)."""
    return [*seeds(), *_drawn()]


def variants(instance: Instance) -> dict[str, Variant]:
    natural, damping, force = oscillator(instance)
    return {"default": lab.variant(natural, damping, force, *question(instance))}


def resonance(instance: Instance) -> float:
    """ω_r of an instance (rad/s), the closed form."""
    natural, damping, _ = oscillator(instance)
    return physics.resonance(natural, damping)
