"""The rlc family: is a series RLC circuit, whose resistor and capacitor are not stated, underdamped
or overdamped, as the capacitor discharges?

Each instance is one circuit, drawn by `random.Random(SEED)` (only `.random()`):
- `inductance_mh`: L, log-uniform from 1 to 100 mH, rounded to 2 significant digits;
- `initial_voltage_v`: V0, 1 to 12 V in steps of 0.5 V;
- `hidden`: C, from a natural period 2π√(LC) log-uniform from 0.5 to 5 ms, and R, from the damping
  ratio ζ the instance aims at, each rounded to 4 significant digits (ζ, the regime and the level
  are those of the rounded values). The agent is never told them.
The regime and the level come first: in each block of 6 drawn instances, each (level, regime) once,
in a drawn order, so that neither the level nor the position says which regime an instance has. ζ is
drawn uniform from 0.05 to 0.99 for an underdamped circuit and log-uniform from 1.01 to 10 for an
overdamped one, again until it has the level aimed at. The build's answer (answers.py) is the regime
of the exact ζ = (R/2)√(C/L).

Difficulty (`level`), from how close the circuit is to critical damping, which makes both regimes
look alike: hard within 5 % (an underdamped voltage goes below zero by less than 7e-5 of V0, and only
after about three natural periods; an overdamped one decays as a critically damped one would),
medium within 25 % (ζ from 0.75: an undershoot below 2.8 % of V0), easy otherwise. Whatever the
level, a step dt above T0/π makes the trapezoidal rule's voltage of any overdamped circuit go below
zero sooner or later (physics: the ringing of its fast mode outlasts its slow decay).

Edge cases, excluded at draw time: a circuit within 1 % of critical damping (no answer turns on
round-off; the task says so), and one whose natural period, from the rounded values, leaves the
stated range.
"""

import math
import random
from functools import cache

from replaylab.lessons import DIFFICULTIES, Instance, Variant
from replaylab.lessons.rlc import lab, physics

SEED = 41  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {
    "inductance_mh": "the coil's inductance L, mH",
    "initial_voltage_v": "the capacitor's voltage V0 when the switch closes, V",
}
SEED_ID = "rlc-seed"
BLOCKS = 11  # blocks of the 6 (level, regime) pairs: 66 drawn instances
INDUCTANCE = (1.0, 100.0)  # mH, log-uniform
INITIAL = (1.0, 12.0)  # V, in steps of 0.5
ZETA = {lab.UNDERDAMPED: (0.05, 0.99), lab.OVERDAMPED: (1.01, 10.0)}  # uniform, and log-uniform
CRITICAL = 0.01  # no circuit within this of ζ = 1
NEAR, CLOSE = 0.05, 0.25  # |ζ − 1| below: hard, medium
DIGITS = 4  # significant digits of R and C


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits - 1}e}")


def level(zeta: float) -> str:
    """An instance's difficulty from its damping ratio (module docstring)."""
    distance = abs(zeta - 1)
    return "hard" if distance < NEAR else "medium" if distance < CLOSE else "easy"


def regime(zeta: float) -> str:
    return lab.UNDERDAMPED if zeta < 1 else lab.OVERDAMPED


def circuit(instance: Instance) -> tuple[float, float, float, float]:
    """(R, L, C, V0) of an instance's circuit."""
    hidden = instance.hidden["circuit"]
    return hidden["resistance_ohm"], instance.parameters["inductance_mh"], hidden["capacitance_uf"], instance.parameters["initial_voltage_v"]


def zeta_of(instance: Instance) -> float:
    resistance, inductance, capacitance, _ = circuit(instance)
    return physics.damping_ratio(resistance, inductance, capacitance)


def _instance(identifier: str, difficulty: str, resistance: float, inductance: float, capacitance: float, initial: float,
              seed: bool = False) -> Instance:
    return Instance(identifier, difficulty, {"inductance_mh": inductance, "initial_voltage_v": initial}, seed=seed,
                    hidden={"circuit": {"resistance_ohm": resistance, "capacitance_uf": capacitance}})


def seed_instance() -> Instance:
    zeta = physics.damping_ratio(lab.RESISTANCE, lab.INDUCTANCE, lab.CAPACITANCE)
    return _instance(SEED_ID, level(zeta), lab.RESISTANCE, lab.INDUCTANCE, lab.CAPACITANCE, lab.INITIAL, seed=True)


def _plans(draw: random.Random) -> list[tuple[str, str]]:
    """(level, regime) of each drawn instance: each pair once in every block of 6, in a drawn order."""
    plans: list[tuple[str, str]] = []
    for _ in range(BLOCKS):
        block = [(name, kind) for name in DIFFICULTIES for kind in lab.REGIMES]
        for i in range(len(block) - 1, 0, -1):  # Fisher-Yates, with random() alone
            j = int(draw.random() * (i + 1))
            block[i], block[j] = block[j], block[i]
        plans += block
    return plans


def _zeta(draw: random.Random, kind: str) -> float:
    low, high = ZETA[kind]
    r = draw.random()
    return low + (high - low) * r if kind == lab.UNDERDAMPED else low * (high / low) ** r


def _drawn_one(draw: random.Random, number: int, aim: str, kind: str) -> Instance:
    while True:
        inductance = _significant(INDUCTANCE[0] * (INDUCTANCE[1] / INDUCTANCE[0]) ** draw.random(), 2)
        initial = INITIAL[0] + 0.5 * min(int(draw.random() * 23), 22)
        low, high = lab.PERIOD_RANGE
        period = low * (high / low) ** draw.random()
        capacitance = _significant(1000 / (inductance * (2 * math.pi / period) ** 2), DIGITS)
        wanted = _zeta(draw, kind)
        resistance = _significant(2 * wanted * math.sqrt(1000 * inductance / capacitance), DIGITS)
        zeta = physics.damping_ratio(resistance, inductance, capacitance)
        period = physics.natural_period(inductance, capacitance)
        if abs(zeta - 1) < CRITICAL or regime(zeta) != kind or level(zeta) != aim or not low <= period <= high:
            continue
        return _instance(f"rlc-{number:03d}", aim, resistance, inductance, capacitance, initial)


@cache
def _drawn() -> tuple[Instance, ...]:
    draw = random.Random(SEED)
    return tuple(_drawn_one(draw, n, aim, kind) for n, (aim, kind) in enumerate(_plans(draw), start=1))


def seeds() -> list[Instance]:
    """The seeds' own question, without a draw."""
    return [seed_instance()]


def instances() -> list[Instance]:
    """The seeds' question, then the drawn ones (cached: the draw takes a few milliseconds once)."""
    return [*seeds(), *_drawn()]


def variants(instance: Instance) -> dict[str, Variant]:
    return {"default": lab.variant(*circuit(instance))}
