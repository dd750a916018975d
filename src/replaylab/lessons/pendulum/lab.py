"""The pendulum lab: the prompts, the two tools with their bounds, and the allowlist of a run.

`variant(...)` makes the variant of one question (threshold, precision, length, gravity); the seed's
own question is `variant` of its numbers, and its texts are the lesson's texts of before the family.
"""

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from replaylab.agents.tools import Allowlist, Parameter, Refused, Tool, answer_tool
from replaylab.lessons import Prompts, Variant
from replaylab.lessons.pendulum import physics

BUDGET = 12  # tool calls per run, both tools counted
MAX_STEPS = 12
AMPLITUDE_PARAMETER = Parameter("amplitude_deg", "amplitude: the angle from the vertical at release, degrees", 1, 170)
DT_PARAMETER = Parameter("dt", "time step of the symplectic Euler integration, s", 0.0005, 0.2)
# The names the agent, the judge and the pages use for the tools and their result.
PERIOD_TOOL, SMALL_ANGLE_TOOL = "pendulum_period", "small_angle_period"
PERIOD_KEY = "period_s"
PRECISION = 1  # degrees: the seed's bracket, two adjacent whole degrees

INTRO = (
    "You are a careful computational physicist with a simulator of a simple pendulum (a point mass on "
    "a rigid massless rod). You can only act through the tools you are given; every call is checked "
    "against their bounds before it runs, and every accepted call of either tool counts against the "
    "budget. The simulator steps the motion with symplectic Euler of step dt, so the periods it returns "
    "depend on dt: before you trust a result, check that it no longer changes when dt gets smaller."
)
# The words of each precision a question may ask: (to within, the pair in the task, the pair in the
# answer tool, the low field, the high field, the refusal's form).
WORDS = {
    0.5: ("half a degree", "two amplitudes in degrees with low a multiple of 0.5 and high = low + 0.5",
          "amplitudes in degrees (low a multiple of 0.5, high = low + 0.5)",
          "the lower amplitude of your bracket, a multiple of 0.5 degrees",
          "the upper amplitude of your bracket (low + 0.5), degrees",
          "low must be a multiple of 0.5 and high must be low + 0.5 (a bracket of half a degree)"),
    1: ("one degree", "two whole-degree amplitudes with high = low + 1", "whole-degree amplitudes (high = low + 1)",
        "the lower whole-degree amplitude of your bracket, degrees",
        "the upper whole-degree amplitude of your bracket (low + 1), degrees",
        "high must be low + 1 (two adjacent whole degrees)"),
    2: ("two degrees", "two whole-degree amplitudes with low a multiple of 2 and high = low + 2",
        "whole-degree amplitudes (low a multiple of 2, high = low + 2)",
        "the lower whole-degree amplitude of your bracket, a multiple of 2 degrees",
        "the upper whole-degree amplitude of your bracket (low + 2), degrees",
        "low must be a multiple of 2 and high must be low + 2 (a bracket of two degrees)"),
}
PRECISIONS = tuple(WORDS)  # degrees: the brackets a question may ask for


def percent_text(excess: float) -> str:
    """The threshold as the texts state it: 0.01 -> "1 %"."""
    return f"{100 * excess:g} %"


def task_text(excess: float, precision: float, length: float, g: float) -> str:
    """The task of one question; the seed's numbers give the seed's task of before the family."""
    within, pair = WORDS[precision][:2]
    return (
        f"A pendulum of length {length:g} m under g = {g:g} m/s² is released at rest from an "
        "amplitude θ0. From which amplitude on does the true period exceed the small-angle period 2π√(L/g) by more "
        f"than {percent_text(excess)} of the small-angle period (T/T0 − 1 > {excess:g})? Answer to within {within} by "
        f"calling answer with low and high, {pair} (any other pair is "
        "refused) between which that happens. Your answer is right when the exact crossing (from the exact period "
        "by the arithmetic-geometric mean, not from a simulation) lies between low and high, both included. It is "
        f"supported when your own {PERIOD_TOOL} calls at the smallest dt you used put the crossing in it: ordered by "
        f"amplitude, their excess T/T0 − 1 rises above {excess:g} exactly once, between two neighbouring "
        "amplitudes you measured that both lie between low and high. Say in explanation how you checked convergence in dt."
    )


# The prompts of recordings of format 1, before runs ended with an answer (the seed's question only).
FORMAT1 = Prompts(
    "You are a careful computational physicist with a simulator of a simple pendulum (a point mass on "
    "a rigid massless rod). You can only act through the tools you are given; every call is checked "
    "against their bounds before it runs, and every call counts against a budget of "
    f"{BUDGET} calls. The simulator steps the motion with symplectic Euler of step dt, so the periods "
    "it returns depend on dt: before you trust a result, check that it no longer changes when dt gets "
    "smaller. Use at most 4 tool calls per message. When you are done, answer without calling a tool.",
    f"A pendulum of length {physics.LENGTH:g} m under g = {physics.G:g} m/s² is released at rest from an "
    "amplitude θ0. From which amplitude on does the small-angle period 2π√(L/g) understate the true "
    f"period by more than {100 * physics.EXCESS:g} %? Answer to within one degree, as the two whole-degree "
    "amplitudes that bracket it, and say how you checked convergence in dt.",
)
PERIOD_DESCRIPTION = (
    "Simulate the pendulum (L = {length:g} m, g = {g:g} m/s²) released at rest from amplitude_deg: "
    "θ'' = −(g/L) sin θ stepped with symplectic Euler of step dt (ω += −(g/L) sin θ · dt, then θ += ω · dt). "
    f"Returns {PERIOD_KEY}: its period (s), the time between the first two downward zero crossings of θ, "
    "each placed by linear interpolation between the two steps around it."
)
SMALL_ANGLE_DESCRIPTION = (
    "The same pendulum (L = {length:g} m, g = {g:g} m/s²), exactly. Returns "
    f"{PERIOD_KEY}: the small-angle period 2π√(L/g) (s)."
)


# The simulation is a pure function of its arguments: one job that replays or judges many runs
# computes each distinct call once (`typed` keeps 22 and 22.0 apart).
_period = lru_cache(maxsize=65536, typed=True)(physics.period)


def tools(g: float = physics.G, length: float = physics.LENGTH) -> list[Tool]:
    """The two tools of a run of a pendulum of `length` under `g` (a demonstration replaces g: a changed simulation)."""

    def pendulum_period(amplitude_deg: float, dt: float) -> dict[str, float]:
        return {PERIOD_KEY: _period(amplitude_deg, dt, g, length)}

    def small_angle_period() -> dict[str, float]:
        return {PERIOD_KEY: physics.small_angle_period(g, length)}

    return [
        Tool(PERIOD_TOOL, PERIOD_DESCRIPTION.format(g=g, length=length), (AMPLITUDE_PARAMETER, DT_PARAMETER), pendulum_period),
        Tool(SMALL_ANGLE_TOOL, SMALL_ANGLE_DESCRIPTION.format(g=g, length=length), (), small_angle_period),
    ]


def tools_of(g: float, length: float) -> Callable[..., list[Tool]]:
    """`tools` with this pendulum's settings as its defaults (a replay may still change g)."""

    def made(g: float = g, length: float = length) -> list[Tool]:
        return tools(g, length)

    return made


def on_the_grid(value: float, precision: float) -> bool:
    """Whether an amplitude is a whole multiple of the precision (22.5 of 0.5, 22 of 1, 22 of 2)."""
    return math.isfinite(value) and (value / precision).is_integer()


def bracket_check(precision: float) -> Callable[[dict[str, Any]], None]:
    """The form the task states: low a multiple of the precision and high = low + precision (any other
    pair is refused, and the run goes on)."""
    form = WORDS[precision][5]

    def check(fields: dict[str, Any]) -> None:
        low, high = fields["low"], fields["high"]
        if not (on_the_grid(low, precision) and high == low + precision):
            raise Refused(f"{form}, got low {low} and high {high}")

    return check


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    return f"{answer['low']:g} to {answer['high']:g} degrees"


def answer_of(excess: float, precision: float) -> Tool:
    """The answer tool of a question: low and high, a bracket of `precision` degrees."""
    _, _, pair, low_words, high_words, _ = WORDS[precision]
    whole = float(precision).is_integer()
    low = Parameter("low", low_words, AMPLITUDE_PARAMETER.low, AMPLITUDE_PARAMETER.high - precision, integer=whole)
    high = Parameter("high", high_words, AMPLITUDE_PARAMETER.low + precision, AMPLITUDE_PARAMETER.high, integer=whole)
    return answer_tool(
        f"Your answer; it ends the run. low and high: the two {pair} between which the true period starts to exceed "
        f"the small-angle period by more than {percent_text(excess)} of the small-angle period.",
        (low, high),
        bracket_check(precision),
        answer_text,
    )


def variant(excess: float, precision: float, length: float, g: float, format1: Prompts | None = None) -> Variant:
    """The variant of one question: its task, its tools (of this pendulum) and its answer tool."""
    if precision not in WORDS:
        raise ValueError(f"the precision must be one of {', '.join(f'{p:g}' for p in WORDS)} degrees, got {precision!r}")
    return Variant("default", INTRO, task_text(excess, precision, length, g), tools_of(g, length),
                   answer_of(excess, precision), budget=BUDGET, max_steps=MAX_STEPS, format1=format1)


VARIANTS = {"default": variant(physics.EXCESS, PRECISION, physics.LENGTH, physics.G, format1=FORMAT1)}
TASK = VARIANTS["default"].task  # the seed's task
ANSWER = VARIANTS["default"].answer  # the seed's answer tool


def all_tools() -> Allowlist:
    """Every tool of the lesson on a fresh allowlist (with its fresh budget)."""
    return Allowlist(tools(), budget=BUDGET)
