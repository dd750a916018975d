"""The rlc lab: the prompts, the voltage tool with its bounds, and the answer tool.

`variant(...)` makes the variant of one question: the circuit (its R and C, which the agent is
never told, and its L and V0, which it is told). The seeds' own question is `variant` of the numbers
below.
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from replaylab.agents.tools import Allowlist, Choice, Parameter, Tool, answer_tool
from replaylab.lessons import Variant
from replaylab.lessons.rlc import physics

BUDGET = 12  # experiments per run
MAX_STEPS = 12
TIME = Parameter("time_ms", "the time after the switch closes at which the voltage is read, ms", 0, physics.MAX_TIME)
DT = Parameter("dt_ms", "the time step of the trapezoidal rule, ms", physics.SMALLEST_DT, 10)
TOOL, KEY = "capacitor_voltage", "voltage_v"
UNDERDAMPED, OVERDAMPED = "underdamped", "overdamped"
REGIMES = (UNDERDAMPED, OVERDAMPED)
PERIOD_RANGE = (0.5, 5.0)  # ms: every circuit's natural period 2π√(LC) lies in this range, as the task says
SUPPORT_FRACTION = 1e-3  # an overdamped answer is supported once a voltage at most this share of V0 was read

# The seeds' question: L = 10 mH and V0 = 5 V (stated), R = 180 Ω and C = 1 µF (never stated):
# ζ = 0.9, underdamped, its voltage going 0.15 % of V0 below zero; the natural period 0.628 ms.
RESISTANCE, INDUCTANCE, CAPACITANCE, INITIAL = 180.0, 10.0, 1.0, 5.0

INTRO = (
    "You are a careful experimental physicist with a simulator of an electric circuit. You can only act through "
    "the tools you are given; every call is checked against their bounds before it runs, and every accepted call "
    "counts against the budget. The simulator integrates the circuit with the trapezoidal rule of step dt, as "
    "circuit simulators do: a step too coarse for the circuit's fastest time scale makes its voltage ring from one "
    "step to the next, so before you trust a result, check that it no longer changes when dt gets smaller."
)
DESCRIPTION = (
    "The voltage of the capacitor of the series RLC circuit (L = {inductance:g} mH; R and C are not stated; the "
    "capacitor charged to {initial:g} V, the switch closed at t = 0, no current before) at time_ms, integrated "
    "with the trapezoidal rule: whole steps of dt_ms up to the last one before time_ms, then one step of the rest. "
    f"Returns {KEY}: the capacitor's voltage (V)."
)


def task_text(inductance: float, initial: float) -> str:
    low, high = PERIOD_RANGE
    return (
        f"A capacitor charged to V0 = {initial:g} V discharges from t = 0 through a coil of L = {inductance:g} mH and a "
        "resistor in series; you are not told the resistance R nor the capacitance C, only that the natural period "
        f"2π√(LC) lies between {low:g} and {high:g} ms. Is the circuit underdamped (the capacitor's voltage overshoots: "
        "it goes below zero before it settles) or overdamped (it decays to zero without ever crossing it)? The circuit "
        f"is never within 1 % of critical damping. Answer by calling answer with regime, {UNDERDAMPED} or {OVERDAMPED}. "
        "Your answer is right when it is the regime of the exact damping ratio ζ = (R/2)√(C/L) that the build computes "
        f"from this circuit's own R, L and C (ζ < 1 {UNDERDAMPED}, ζ > 1 {OVERDAMPED}; no simulation). It is supported "
        f"when your own {TOOL} calls at the smallest dt you used show it: for {UNDERDAMPED}, one of them reads a "
        f"voltage below zero; for {OVERDAMPED}, none of them does and one reads a voltage of at most "
        f"{100 * SUPPORT_FRACTION:g} % of V0 (you watched it decay that far). Say in explanation how you checked "
        "your step."
    )


# A pure function of its arguments: a job that replays or judges many runs computes each call once.
_voltage = lru_cache(maxsize=65536, typed=True)(physics.voltage)


def tools(resistance: float = RESISTANCE, inductance: float = INDUCTANCE, capacitance: float = CAPACITANCE,
          initial: float = INITIAL) -> list[Tool]:
    """The voltage tool of a circuit (a demonstration may change R: a changed simulation)."""

    def capacitor_voltage(time_ms: float, dt_ms: float) -> dict[str, float]:
        return {KEY: _voltage(time_ms, dt_ms, resistance, inductance, capacitance, initial)}

    return [Tool(TOOL, DESCRIPTION.format(inductance=inductance, initial=initial), (TIME, DT), capacitor_voltage)]


def tools_of(resistance: float, inductance: float, capacitance: float, initial: float) -> Callable[..., list[Tool]]:
    """`tools` with this circuit's numbers as its defaults (a replay may still change them)."""

    def made(resistance: float = resistance, inductance: float = inductance, capacitance: float = capacitance,
             initial: float = initial) -> list[Tool]:
        return tools(resistance, inductance, capacitance, initial)

    return made


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    return str(answer["regime"])


ANSWER = answer_tool(
    f"Your answer; it ends the run. regime: {UNDERDAMPED} (the capacitor's voltage goes below zero before it settles) "
    f"or {OVERDAMPED} (it never does).",
    (Choice("regime", f"{UNDERDAMPED} or {OVERDAMPED}", REGIMES),),
    echo=answer_text,
)


def variant(resistance: float, inductance: float, capacitance: float, initial: float) -> Variant:
    """The variant of one circuit: its task, its tool and the answer tool."""
    return Variant("default", INTRO, task_text(inductance, initial), tools_of(resistance, inductance, capacitance, initial),
                   ANSWER, budget=BUDGET, max_steps=MAX_STEPS)


VARIANTS = {"default": variant(RESISTANCE, INDUCTANCE, CAPACITANCE, INITIAL)}


def all_tools() -> Allowlist:
    """Every tool of the lesson (the seeds' circuit) on a fresh allowlist with its budget."""
    return Allowlist(tools(), budget=BUDGET)
