"""The pendulum family: from which amplitude on does the true period exceed the small-angle period
2π√(L/g) by more than a threshold of it (T/T0 − 1 > threshold), to a stated precision.

Each instance states four numbers, drawn by `random.Random(SEED)` (only `.random()`), each uniform
over its grid:
- `threshold_percent`: 0.5 % to 10 % in steps of 0.001 % (the exact crossing then lies between 16.2
  and 69.3 degrees);
- `precision_deg`: the bracket asked for, 0.5, 1 or 2 degrees: the answer is low and high with
  high = low + precision and low a multiple of the precision (the answer tool refuses any other pair);
- `length_m`: 0.25 to 4 m in steps of 0.01 m, and `gravity_m_s2`: 1.6 to 25 m/s² in steps of
  0.01 m/s². They change every period the tools return (T0 from 0.63 s to 9.9 s), not the crossing
  amplitude: an agent must divide by the small-angle period of this pendulum, and a dt in seconds
  that is fine for one pendulum is coarse for another.
The build's answer (answers.py) is the exact crossing from the arithmetic-geometric mean and the
bracket of the precision that holds it.

How fine the step must be. The simulation steps θ'' = −(g/L) sin θ, so its periods over T0 depend on
dt only through the steps per small-angle period N = T0/dt, and symplectic Euler makes the period
too short by a relative error that falls as 1/N² (measured order 2.0, scans.py) and is positive
below 90 degrees: the simulated crossing lies above the exact one, by more the coarser the step.
`needed_steps(edge)` estimates the N from which the simulated excess at a bracket edge lies on the
same side of the threshold as the exact one: the relative period error measured at 400 steps per
period (ω0 = 1, once per amplitude) scaled as 1/N², against the distance of the exact excess from
the threshold there.

Difficulty: the N the upper edge of the right bracket needs (the simulated crossing lands in the
right bracket from there on; the lower edge never constrains it, the shift being upward):
easy below 50 steps per small-angle period, medium 50 to 200, hard 200 or more (dt = T0/200 is
0.01 s for the seed's pendulum, whose N is about 96: medium). The crossing close below a bracket's
upper edge, or a small threshold (whose crossing the step moves further), make an instance hard.
20 drawn instances of each level: instance n aims at the level `DIFFICULTIES[(n - 1) % 3]` and
candidates are drawn until one has it.

Edge cases, excluded at draw time: an instance is kept only when at the tool's smallest dt (0.0005 s)
the simulation's error in the excess is below a quarter of the distance between the exact excess and
the threshold at both edges of the right bracket (N needed at most half of T0/0.0005): the careful
program can then tell the sides apart, with room to spare, within its budget. That excludes every
crossing within round-off of a bracket edge (the distance there is nil). A (threshold, precision)
pair drawn twice is drawn again.
"""

import math
import random
from functools import cache
from typing import Any, cast

from replaylab.lessons import DIFFICULTIES, Instance, Variant
from replaylab.lessons.pendulum import lab, physics

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {
    "threshold_percent": "the excess T/T0 - 1 the question asks about, per cent of the small-angle period",
    "precision_deg": "the bracket asked for: high = low + precision, low a multiple of it, degrees",
    "length_m": "the pendulum's length L, m",
    "gravity_m_s2": "the gravity g, m/s²",
}
SEED_ID = "pendulum-seed"
PER_LEVEL = 20  # drawn instances of each difficulty
THRESHOLD_PERCENT = (0.5, 10.0)  # the draw's ranges, ends included, on the grids below
LENGTH_M = (0.25, 4.0)
GRAVITY_M_S2 = (1.6, 25.0)
THRESHOLD_DIGITS, DIGITS = 3, 2  # decimals of the drawn threshold (per cent), and of the length (m) and gravity (m/s²)
ERROR_STEPS = 400  # steps per small-angle period at which the relative period error is measured
LEVELS = ((50, "easy"), (200, "medium"))  # steps per small-angle period needed: below 50 easy, below 200 medium, else hard
SAFETY = 2  # the smallest dt must give at least twice the steps needed (a quarter of the distance in error)


def _on_grid(low: float, high: float, r: float, digits: int) -> float:
    """A number from [low, high], ends included, with `digits` decimals, uniform over that grid."""
    steps = round((high - low) * 10**digits)
    return cast(float, round(low + min(int((steps + 1) * r), steps) / 10**digits, digits))


def excess(instance: Instance) -> float:
    """The instance's threshold as a fraction (the seed's is exactly physics.EXCESS)."""
    return cast(float, instance.parameters["threshold_percent"] / 100)


def precision(instance: Instance) -> float:
    return cast(float, instance.parameters["precision_deg"])


def pendulum(instance: Instance) -> tuple[float, float]:
    """(g, L) of the instance's pendulum."""
    return instance.parameters["gravity_m_s2"], instance.parameters["length_m"]


@cache
def crossing(excess: float) -> float:
    """The exact crossing of a threshold (degrees), computed once per threshold."""
    return physics.exact_crossing(excess)


def bracket(crossing: float, precision: float) -> list[float]:
    """The bracket of the precision that holds the crossing: [22, 23] around 22.81 at 1 degree."""
    low = math.floor(crossing / precision) * precision
    return [low, low + precision]


@cache
def relative_error(amplitude: float) -> float:
    """1 − T/T_exact of the simulation at ERROR_STEPS steps per small-angle period (ω0 = 1): the same
    at every L and g, which enter only through dt·√(g/L)."""
    step = 2 * math.pi / ERROR_STEPS
    return 1 - physics.period(amplitude, step, 1.0, 1.0) / physics.exact_period(amplitude, 1.0, 1.0)


def needed_steps(amplitude: float, excess: float) -> float:
    """The steps per small-angle period from which the simulated excess at `amplitude` lies on the
    same side of `excess` as the exact one (inf when the exact excess is the threshold itself)."""
    exact = physics.exact_ratio(amplitude) - 1
    distance = abs(exact - excess)
    if distance == 0:
        return math.inf
    return ERROR_STEPS * math.sqrt((1 + exact) * relative_error(amplitude) / distance)


def level(steps: float) -> str:
    for below, name in LEVELS:
        if steps < below:
            return name
    return "hard"


def assess(excess: float, precision: float, length: float, g: float) -> dict[str, Any]:
    """(difficulty, or None when excluded) of a question, with what decides it: the exact crossing,
    its bracket, and the steps per small-angle period each edge needs."""
    found = crossing(excess)
    low, high = bracket(found, precision)
    steps = {"low": needed_steps(low, excess), "high": needed_steps(high, excess)}
    finest = physics.small_angle_period(g, length) / lab.DT_PARAMETER.low
    kept = found > low and SAFETY * max(steps.values()) <= finest
    return {"difficulty": level(steps["high"]) if kept else None, "crossing": found, "bracket": [low, high],
            "needed_steps": steps, "finest_steps": finest}


def assess_instance(instance: Instance) -> dict[str, Any]:
    g, length = pendulum(instance)
    return assess(excess(instance), precision(instance), length, g)


def seed_instance() -> Instance:
    parameters = {"threshold_percent": 100 * physics.EXCESS, "precision_deg": lab.PRECISION,
                  "length_m": physics.LENGTH, "gravity_m_s2": physics.G}
    found = assess(physics.EXCESS, lab.PRECISION, physics.LENGTH, physics.G)["difficulty"]
    return Instance(SEED_ID, found, parameters, seed=True)


@cache
def _drawn() -> tuple[Instance, ...]:
    draw = random.Random(SEED)
    seen: set[tuple[float, float]] = {(100 * physics.EXCESS, lab.PRECISION)}
    found: list[Instance] = []
    for n in range(1, len(DIFFICULTIES) * PER_LEVEL + 1):
        aim = DIFFICULTIES[(n - 1) % len(DIFFICULTIES)]
        while True:
            threshold = _on_grid(*THRESHOLD_PERCENT, draw.random(), THRESHOLD_DIGITS)
            step = lab.PRECISIONS[min(int(len(lab.PRECISIONS) * draw.random()), len(lab.PRECISIONS) - 1)]
            length = _on_grid(*LENGTH_M, draw.random(), DIGITS)
            g = _on_grid(*GRAVITY_M_S2, draw.random(), DIGITS)
            if (threshold, step) in seen or assess(threshold / 100, step, length, g)["difficulty"] != aim:
                continue
            seen.add((threshold, step))
            found.append(Instance(f"pendulum-{n:03d}", aim, {"threshold_percent": threshold, "precision_deg": step,
                                                             "length_m": length, "gravity_m_s2": g}))
            break
    return tuple(found)


def seeds() -> list[Instance]:
    """The seeds' own question, without a draw."""
    return [seed_instance()]


def instances() -> list[Instance]:
    """The seed's question, then the drawn ones (cached: the draw takes a few hundredths of a second once)."""
    return [*seeds(), *_drawn()]


def variants(instance: Instance) -> dict[str, Variant]:
    if instance.seed:
        return dict(lab.VARIANTS)
    g, length = pendulum(instance)
    return {"default": lab.variant(excess(instance), precision(instance), length, g)}
