"""The resonance lab: the prompts, the amplitude tool with its bounds, and the answer tool.

`variant(...)` makes the variant of one question: the oscillator (its ω0 and γ, which the agent is
never told, and the force it is told), the stated range of the peak and the tolerance. The seeds'
own question is `variant` of the numbers below.
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from replaylab.agents.tools import Allowlist, Parameter, Tool, answer_tool
from replaylab.lessons import Variant
from replaylab.lessons.resonance import physics

BUDGET = 12  # experiments per run
MAX_STEPS = 12
FREQUENCY = Parameter("frequency_rad_s", "the drive's angular frequency ω, rad/s", 0.05, 20)
PERIODS = Parameter("periods", "drive periods simulated from rest before the period that is measured", 1,
                    physics.MAX_PERIODS, integer=True)
TOOL, KEY = "steady_amplitude", "amplitude_m"

# The seeds' question: ω0 = 2.5 rad/s and γ = 0.25 1/s (never stated), F = 1 m/s², the peak between 2
# and 3 rad/s, to within 0.01 rad/s (ω_r = 2.4749 rad/s; ω0 and the damped ω_d = 2.4875 rad/s lie
# further than 0.01 rad/s from it).
NATURAL, DAMPING, FORCE = 2.5, 0.25, 1.0
RANGE = (2.0, 3.0)
TOLERANCE = 0.01

INTRO = (
    "You are a careful experimental physicist with a simulator of a driven, damped oscillator (a mass on a "
    "spring with a damper, pushed by a sinusoidal force). You can only act through the tools you are given; "
    "every call is checked against their bounds before it runs, and every accepted call counts against the "
    "budget. The simulator starts the oscillator from rest and measures one drive period after the number "
    "of periods you ask for: what the start set off dies out only slowly in a lightly damped oscillator, so "
    "before you trust an amplitude, check that it no longer changes when you simulate more periods."
)
DESCRIPTION = (
    "Drive the oscillator x'' + 2γx' + ω0²x = F cos(ωt) (F = {force:g} m/s²; ω0 and γ are not stated) from "
    "rest at ω = frequency_rad_s for as many drive periods as periods says, stepped with classical fourth-order Runge-Kutta "
    f"({physics.STEPS} steps per drive period). Returns {KEY}: the amplitude of the displacement over the next "
    f"drive period, its first Fourier harmonic √(a² + b²) over the {physics.STEPS} steps (m)."
)


def task_text(force: float, low: float, high: float, tolerance: float) -> str:
    return (
        f"A driven, damped oscillator x'' + 2γx' + ω0²x = F cos(ωt) with F = {force:g} m/s² (force per unit mass) "
        "has a natural frequency ω0 and a damping rate γ that you are not told. At which driving frequency ω is "
        f"its steady amplitude largest? It lies between {low:g} and {high:g} rad/s. Answer to within "
        f"{tolerance:g} rad/s by calling answer with frequency_rad_s. Your answer is right when it lies within "
        f"{tolerance:g} rad/s of the exact frequency of the largest steady amplitude, ω_r = √(ω0² − 2γ²), which the "
        "build computes from this oscillator's own ω0 and γ (no simulation). It is supported when your own "
        f"{TOOL} calls at the largest number of periods you used locate the peak there: the largest amplitude "
        "among them is at neither the lowest nor the highest frequency they measured, and the top of the parabola "
        "through it and the nearest frequency measured on each side lies within "
        f"{tolerance:g} rad/s of your answer. Say in explanation how you checked that the motion the start set off "
        "had died out."
    )


# A pure function of its arguments: a job that replays or judges many runs computes each call once.
_amplitude = lru_cache(maxsize=65536, typed=True)(physics.steady_amplitude)


def tools(natural: float = NATURAL, damping: float = DAMPING, force: float = FORCE) -> list[Tool]:
    """The amplitude tool of an oscillator (a demonstration may change ω0: a changed simulation)."""

    def steady_amplitude(frequency_rad_s: float, periods: int) -> dict[str, float]:
        return {KEY: _amplitude(frequency_rad_s, periods, natural, damping, force)}

    return [Tool(TOOL, DESCRIPTION.format(force=force), (FREQUENCY, PERIODS), steady_amplitude)]


def tools_of(natural: float, damping: float, force: float) -> Callable[..., list[Tool]]:
    """`tools` with this oscillator's numbers as its defaults (a replay may still change them)."""

    def made(natural: float = natural, damping: float = damping, force: float = force) -> list[Tool]:
        return tools(natural, damping, force)

    return made


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    return f"{answer['frequency_rad_s']:g} rad/s"


def answer_of(low: float, high: float, tolerance: float) -> Tool:
    """The answer tool of a question: one frequency in the stated range."""
    field = Parameter("frequency_rad_s", f"your frequency of the largest steady amplitude, to within {tolerance:g} rad/s",
                      low, high)
    return answer_tool(
        "Your answer; it ends the run. frequency_rad_s: the driving frequency (rad/s) at which the steady amplitude "
        f"is largest, to within {tolerance:g} rad/s.",
        (field,),
        echo=answer_text,
    )


def variant(natural: float, damping: float, force: float, low: float, high: float, tolerance: float) -> Variant:
    """The variant of one question: its task, the tool of its oscillator and its answer tool."""
    return Variant("default", INTRO, task_text(force, low, high, tolerance), tools_of(natural, damping, force),
                   answer_of(low, high, tolerance), budget=BUDGET, max_steps=MAX_STEPS)


VARIANTS = {"default": variant(NATURAL, DAMPING, FORCE, *RANGE, TOLERANCE)}


def all_tools() -> Allowlist:
    """Every tool of the lesson (the seeds' oscillator) on a fresh allowlist with its budget."""
    return Allowlist(tools(), budget=BUDGET)
