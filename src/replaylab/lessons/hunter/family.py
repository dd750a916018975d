"""The hunter family: claims that an integrator keeps the oscillator's energy within L % of its initial
value for every run of n1 to n2 steps per period and p1 to p2 periods, true and false.

Each instance is one claim, hunted by one variant named by its method (`explicit-euler`,
`symplectic-euler`, `velocity-verlet`, `runge-kutta-4`), never by whether it holds. The seeds' two
claims keep their ids, variants and texts. The drawn ones (`hunter-001` ...) come from
`random.Random(SEED)`:
- the domain: n1 from 4 to 150 (log-uniform), n2 from n1 + 9 to 200; p1 from 1 to 30 (mostly
  small), p2 from p1 + 1 to 50: inside the tool's bounds (4..200, 1..50), at least ten values of
  steps per period and two of periods. A domain is kept only when its worst case lies between
  1e-5 and 4 (an energy error neither lost in round-off nor beyond 400 %: explicit Euler's domains
  are therefore short runs at fine steps), whatever the claim will be;
- the method (each of the four integrators of `physics.integrators.STEPPERS`), whether the claim
  holds and its difficulty: in each block of 24 drawn instances, each triple (level, holds, method)
  once, in a drawn order: half the claims hold, at every level and for every method alike;
- the limit L, in per cent with three significant digits, placed by the drift of the domain's
  experiments (drift_table: the build's own scan) so that the claim holds or not, at its level:
  - a false claim's level is the share of the domain's experiments that break it: easy at least
    25 %, medium 5 % to 25 %, hard below 5 % (only a corner of the domain breaks it);
  - a true claim's level is how close its worst case comes to the limit, 1 - worst / L: easy 25 %
    to 50 %, medium 5 % to 25 %, hard below 5 % (an experiment at the worst case comes within a
    few per cent of the limit and still holds).
  The limit is never below 0.0001 %, and 100 % or more only for a method whose drift exceeds 100 %
  somewhere within the tool's bounds (explicit and symplectic Euler): velocity Verlet's and
  Runge-Kutta 4's never do, and such a claim about them would hold on its face.
  The seeds get their levels by the same rule (symplectic Euler's claim: 27 % of its domain breaks
  it, easy; velocity Verlet's: its worst case is 3.6 % below the limit, hard).

Edge cases, decided at draw time:
- round-off: a limit within a relative 1e-6 of any experiment's drift of its domain (its worst case
  among them) is never drawn, so that no answer turns on the last digits (a worst case exactly on
  the limit would hold: "within 4 %" holds at 4 %);
- runs whose energy stops being finite: none within the tool's bounds, for any method (explicit
  Euler's largest drift there is about 1e108, at 4 steps per period over 50 periods; tested); the
  tool would refuse one as an error, and the draw keeps no domain with one (its worst case would
  be infinite).

The drift grows as the step grows and as the run gets longer, for every method over the tool's
whole bounds (tested): a domain's worst case is its corner (n1, p2), which the careful program tries
first. The draw reads the four methods' tables (drift_table), computed once per process: about half
a second.
"""

import math
import random
from decimal import Decimal

import numpy as np

from replaylab.lessons import DIFFICULTIES, Instance, Variant
from replaylab.lessons.hunter import drift_table, lab
from replaylab.physics.integrators import STEPPERS

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {
    lab.METHOD: "the integrator the claim is about",
    lab.LIMIT: "the claim's limit L on the energy error |E/E0 - 1|, per cent",
    "steps_per_period_low": "the fewest steps per period of the claim's domain (n1)",
    "steps_per_period_high": "the most steps per period of the claim's domain (n2)",
    "periods_low": "the fewest periods of the claim's domain (p1)",
    "periods_high": "the most periods of the claim's domain (p2)",
}
DRAWN = 72  # three blocks of the 24 triples (level, holds, method)
METHODS = tuple(STEPPERS)
FIRST_STEPS = (4, 150)  # n1, drawn log-uniform
LONGEST_FIRST_PERIODS = 30  # p1 from 1 to this
WORST = (1e-5, 4.0)  # a domain's worst case lies in this range
DIGITS = 3  # significant digits of the limit in per cent
SMALLEST_LIMIT = 1e-6  # 0.0001 %: a limit is never smaller
ROUND_OFF = 1e-6  # no experiment of the domain within this relative distance of the limit
SHARE = {"easy": (0.25, 1.0), "medium": (0.05, 0.25), "hard": (0.0, 0.05)}  # a false claim's share that breaks it
MARGIN = {"easy": (0.25, 0.5), "medium": (0.05, 0.25), "hard": (0.0, 0.05)}  # a true claim's 1 - worst / L
ATTEMPTS = 10  # limits tried on one domain before another domain is drawn


def level(method: str, ranges: dict[str, tuple[int, int]], limit: float) -> str:
    """An instance's difficulty: from the share of its domain that breaks a false claim, or from how
    close a true claim's worst case comes to its limit (module docstring)."""
    worst = drift_table.worst(method, ranges)["value"]
    if worst > limit:
        broken, size = drift_table.breaking(method, ranges, limit)
        return _band(SHARE, broken / size)
    return _band(MARGIN, 1 - worst / limit)


def _band(bands: dict[str, tuple[float, float]], value: float) -> str:
    for name in DIFFICULTIES:
        low, high = bands[name]
        if low <= value < high or (name == "easy" and value >= high):
            return name
    return "hard"  # below every band's floor: a false claim that barely breaks, a true one at its limit


def _rounded(percent: float) -> float:
    """A limit in per cent to DIGITS significant digits."""
    exponent = math.floor(math.log10(percent)) - (DIGITS - 1)
    return float(Decimal(repr(float(percent))).quantize(Decimal(1).scaleb(exponent)))


def _domain(draw: random.Random, method: str) -> dict[str, tuple[int, int]]:
    """A domain of runs whose worst case lies in WORST (drawn again until it does)."""
    while True:
        low_n = round(FIRST_STEPS[0] * (FIRST_STEPS[1] / FIRST_STEPS[0]) ** draw.random())
        high_n = low_n + 9 + int(draw.random() * (drift_table.STEPS[-1] - low_n - 8))
        low_p = 1 + int(draw.random() ** 2 * LONGEST_FIRST_PERIODS)
        high_p = low_p + 1 + int(draw.random() * (drift_table.PERIODS[-1] - low_p))
        ranges = {"steps_per_period": (low_n, high_n), "periods": (low_p, high_p)}
        if WORST[0] <= drift_table.worst(method, ranges)["value"] <= WORST[1]:
            return ranges


def _limit(draw: random.Random, method: str, ranges: dict[str, tuple[int, int]], name: str, holds: bool) -> float | None:
    """A limit in per cent that makes the claim hold or not at the level `name`, or None."""
    drifts = np.sort(drift_table.block(method, ranges), axis=None)[::-1]  # largest first
    worst = float(drifts[0])
    if holds:
        low, high = MARGIN[name]
        target = worst / (1 - (low + draw.random() * (high - low)))
    else:
        low, high = SHARE[name]
        broken = min(len(drifts), max(1, round((low + draw.random() * (high - low)) * len(drifts))))
        below = drifts[broken] if broken < len(drifts) else drifts[-1] / 2
        target = math.sqrt(below * drifts[broken - 1])  # between the last that breaks and the first that holds
    percent = _rounded(100 * target)
    limit = lab.limit_of(percent)
    if limit >= 1 and drift_table.table(method).max() <= 1:
        return None  # the method never loses or gains all its energy: "within 100 %" or more holds on its face
    if limit < SMALLEST_LIMIT or np.min(np.abs(drifts - limit)) <= ROUND_OFF * limit or (worst <= limit) != holds:
        return None
    return percent if level(method, ranges, limit) == name else None


def _drawn(draw: random.Random, number: int, name: str, holds: bool, method: str) -> Instance:
    while True:
        ranges = _domain(draw, method)
        for _ in range(ATTEMPTS):
            percent = _limit(draw, method, ranges, name, holds)
            if percent is not None:
                return Instance(f"hunter-{number:03d}", name, lab.parameters_of(method, percent, ranges))


def _plans(draw: random.Random) -> list[tuple[str, bool, str]]:
    """The (level, holds, method) of each drawn instance: each triple once in every block of 24, in a
    drawn order, so that neither the level nor the method says whether a claim holds."""
    plans: list[tuple[str, bool, str]] = []
    while len(plans) < DRAWN:
        block = [(name, holds, method) for name in DIFFICULTIES for holds in (True, False) for method in METHODS]
        for i in range(len(block) - 1, 0, -1):  # Fisher-Yates, with random() alone
            j = int(draw.random() * (i + 1))
            block[i], block[j] = block[j], block[i]
        plans += block
    return plans[:DRAWN]


# The seeds' levels by the family's rule (`level`: 27 % of the symplectic Euler claim's domain breaks
# it; the velocity Verlet claim's worst case lies 3.6 % below its limit), stated so that the seeds are
# found without the drift tables, which a workflow's start would otherwise compute; a test holds them
# to the rule.
SEED_LEVELS = {"symplectic-euler": "easy", "velocity-verlet": "hard"}


def seeds() -> list[Instance]:
    """The seeds' own claims, without the drift tables."""
    found: list[Instance] = []
    for name, claim in lab.CLAIMS.items():
        percent = float(Decimal(repr(claim.limit)) * 100)
        found.append(Instance(f"hunter-seed-{name}", SEED_LEVELS[name], lab.parameters_of(claim.fixed["method"], percent, claim.ranges),
                              seed=True))
    return found


def instances() -> list[Instance]:
    draw = random.Random(SEED)
    plans = _plans(draw)
    return seeds() + [_drawn(draw, number, *plan) for number, plan in enumerate(plans, start=1)]


def variants(instance: Instance) -> dict[str, Variant]:
    claim = lab.claim_of(instance)
    if instance.seed:
        return {claim.name: lab.VARIANTS[claim.name]}
    return {lab.variant_name(claim.fixed["method"]): lab.variant(claim)}
