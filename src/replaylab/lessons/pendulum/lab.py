"""The pendulum lab: the prompts, the two tools with their bounds, and the allowlist of a run."""

from functools import lru_cache

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

INTRO = (
    "You are a careful computational physicist with a simulator of a simple pendulum (a point mass on "
    "a rigid massless rod). You can only act through the tools you are given; every call is checked "
    "against their bounds before it runs, and every accepted call of either tool counts against the "
    "budget. The simulator steps the motion with symplectic Euler of step dt, so the periods it returns "
    "depend on dt: before you trust a result, check that it no longer changes when dt gets smaller."
)
EXCESS_TEXT = f"{100 * physics.EXCESS:g} %"
TASK = (
    f"A pendulum of length {physics.LENGTH:g} m under g = {physics.G:g} m/s² is released at rest from an "
    "amplitude θ0. From which amplitude on does the true period exceed the small-angle period 2π√(L/g) by more "
    f"than {EXCESS_TEXT} of the small-angle period (T/T0 − 1 > {physics.EXCESS:g})? Answer to within one degree by "
    "calling answer with low and high, two whole-degree amplitudes with high = low + 1 (any other pair is "
    "refused) between which that happens. Your answer is right when the exact crossing (from the exact period "
    "by the arithmetic-geometric mean, not from a simulation) lies between low and high, both included. It is "
    f"supported when your own {PERIOD_TOOL} calls at the smallest dt you used put the crossing in it: ordered by "
    f"amplitude, their excess T/T0 − 1 rises above {physics.EXCESS:g} exactly once, between two neighbouring "
    "amplitudes you measured that both lie between low and high. Say in explanation how you checked convergence in dt."
)
# The prompts of recordings of format 1, before runs ended with an answer.
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
    f"Simulate the pendulum (L = {physics.LENGTH:g} m, g = {{g:g}} m/s²) released at rest from amplitude_deg: "
    "θ'' = −(g/L) sin θ stepped with symplectic Euler of step dt (ω += −(g/L) sin θ · dt, then θ += ω · dt). "
    f"Returns {PERIOD_KEY}: its period (s), the time between the first two downward zero crossings of θ, "
    "each placed by linear interpolation between the two steps around it."
)
SMALL_ANGLE_DESCRIPTION = (
    f"The same pendulum (L = {physics.LENGTH:g} m, g = {{g:g}} m/s²), exactly. Returns {PERIOD_KEY}: the "
    "small-angle period 2π√(L/g) (s)."
)


# The simulation is a pure function of its arguments: one job that replays or judges many runs
# computes each distinct call once (`typed` keeps 22 and 22.0 apart).
_period = lru_cache(maxsize=65536, typed=True)(physics.period)


def tools(g=physics.G):
    """The two tools of a run; `g` replaces the lesson's gravity (the demonstration of a changed simulation)."""

    def pendulum_period(amplitude_deg, dt):
        return {PERIOD_KEY: _period(amplitude_deg, dt, g)}

    def small_angle_period():
        return {PERIOD_KEY: physics.small_angle_period(g)}

    return [
        Tool(PERIOD_TOOL, PERIOD_DESCRIPTION.format(g=g), (AMPLITUDE_PARAMETER, DT_PARAMETER), pendulum_period),
        Tool(SMALL_ANGLE_TOOL, SMALL_ANGLE_DESCRIPTION.format(g=g), (), small_angle_period),
    ]


LOW = Parameter("low", "the lower whole-degree amplitude of your bracket, degrees", AMPLITUDE_PARAMETER.low, AMPLITUDE_PARAMETER.high - 1, integer=True)
HIGH = Parameter("high", "the upper whole-degree amplitude of your bracket (low + 1), degrees", AMPLITUDE_PARAMETER.low + 1, AMPLITUDE_PARAMETER.high, integer=True)


def adjacent(fields):
    """The form the task states: two adjacent whole degrees (any other pair is refused, and the run goes on)."""
    if fields["high"] != fields["low"] + 1:
        raise Refused(f"high must be low + 1 (two adjacent whole degrees), got low {fields['low']} and high {fields['high']}")


def answer_text(answer):
    """An answer as submitted, in words."""
    return f"{answer['low']:g} to {answer['high']:g} degrees"


ANSWER = answer_tool(
    f"Your answer; it ends the run. low and high: the two whole-degree amplitudes (high = low + 1) between which "
    f"the true period starts to exceed the small-angle period by more than {EXCESS_TEXT} of the small-angle period.",
    (LOW, HIGH),
    adjacent,
    answer_text,
)

VARIANTS = {"default": Variant("default", INTRO, TASK, tools, ANSWER, budget=BUDGET, max_steps=MAX_STEPS, format1=FORMAT1)}


def all_tools():
    """Every tool of the lesson on a fresh allowlist (with its fresh budget)."""
    return Allowlist(tools(), budget=BUDGET)
