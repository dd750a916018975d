"""The projectile lab: the prompts, the tools with their bounds, and the allowlist of a run."""

from functools import lru_cache

from replaylab.agents.tools import Allowlist, Parameter, Refused, Tool, answer_tool
from replaylab.lessons import Prompts, Variant
from replaylab.physics import projectile

SPEED = 25  # m/s, the speed of the lesson's question
SPEED_PARAMETER = Parameter("speed", "launch speed, m/s", 1, 50)
ANGLE_PARAMETER = Parameter("angle", "launch angle above the horizontal, degrees", 1, 89)
DT_PARAMETER = Parameter("dt", "time step of the explicit Euler integration, s", 0.001, 0.05)
MAX_STEPS = 12
# The names the agent, the judge and the pages use for the tools and their results.
RANGE_TOOL, VACUUM_TOOL, FLIGHT_TIME_TOOL = "range_with_drag", "range_without_drag", "flight_time_without_drag"
RANGE_KEY, TIME_KEY = "range_m", "time_s"

INTRO = (
    "You are a careful experimental physicist with a simulator of a tennis ball (58 g, 6.7 cm) "
    "flying through air with quadratic drag, launched from the ground. You can only act through "
    "the tools you are given; every call is checked against their bounds before it runs. The "
    "simulator integrates the flight with explicit Euler steps of size dt, so its answers depend "
    "on dt: before you trust a result, check that it no longer changes when dt gets smaller."
)
TASK = (
    f"At a launch speed of {SPEED} m/s, which launch angle throws this ball the furthest? Answer to "
    "within one degree by calling answer with low and high, two whole-degree angles with high = low + 1 "
    "(any other pair is refused). Your answer is right when the best angle of the build's own converged scan "
    "(angles in quarter-degree steps, at time steps small enough that its best angle no longer changes) lies "
    "between low and high, both included: a best angle exactly on a whole degree makes both brackets around it "
    f"right. It is supported when your own {RANGE_TOOL} calls at {SPEED} m/s and at the smallest dt you used "
    "locate the maximum in it: your longest throw at that dt is at an angle between low and high, you measured "
    "a shorter throw at an angle on each side of it at that dt, and the top of the parabola through those three "
    "points lies between low and high. Say in explanation how you checked convergence in dt."
)
# The prompts of recordings of format 1, before runs ended with an answer.
FORMAT1 = Prompts(
    "You are a careful experimental physicist with a simulator of a tennis ball (58 g, 6.7 cm) "
    "flying through air with quadratic drag, launched from the ground. You can only act through "
    "the tools you are given; every call is checked against their bounds before it runs. The "
    "simulator integrates the flight with explicit Euler steps of size dt, so its answers depend "
    "on dt: before you trust a result, check that it no longer changes when dt gets smaller. "
    "Use at most 4 tool calls per message. When you are done, answer without calling a tool.",
    f"At a launch speed of {SPEED} m/s, which launch angle throws this ball the furthest? "
    "Give the answer to within one degree, as the two whole-degree angles that bracket the best "
    "angle, and say how you checked convergence in dt.",
)


# The simulation is a pure function of its arguments: one job that replays or judges many runs
# computes each distinct call once (`typed` keeps 25 and 25.0 apart).
_range_with_drag = lru_cache(maxsize=65536, typed=True)(projectile.range_with_drag)


def tools(drag=projectile.DRAG):
    """The two tools of a run; `drag` replaces the ball's drag constant (the rough-ball demo)."""

    def range_with_drag(speed, angle, dt):
        return {RANGE_KEY: _range_with_drag(speed, angle, dt, drag)}

    def range_without_drag(speed, angle):
        return {RANGE_KEY: projectile.range_without_drag(speed, angle)}

    return [
        Tool(
            RANGE_TOOL,
            f"Simulate the ball with drag and time step dt. Returns {RANGE_KEY}: the horizontal distance (m) "
            "at which it lands.",
            (SPEED_PARAMETER, ANGLE_PARAMETER, DT_PARAMETER),
            range_with_drag,
        ),
        Tool(
            VACUUM_TOOL,
            f"The ball in vacuum, exactly. Returns {RANGE_KEY}: the horizontal distance (m) at which it would land.",
            (SPEED_PARAMETER, ANGLE_PARAMETER),
            range_without_drag,
        ),
    ]


LOW = Parameter("low", "the lower whole-degree angle of your bracket, degrees", ANGLE_PARAMETER.low, ANGLE_PARAMETER.high - 1, integer=True)
HIGH = Parameter("high", "the upper whole-degree angle of your bracket (low + 1), degrees", ANGLE_PARAMETER.low + 1, ANGLE_PARAMETER.high, integer=True)


def adjacent(fields):
    """The form the task states: two adjacent whole degrees (any other pair is refused, and the run goes on)."""
    if fields["high"] != fields["low"] + 1:
        raise Refused(f"high must be low + 1 (two adjacent whole degrees), got low {fields['low']} and high {fields['high']}")


def answer_text(answer):
    """An answer as submitted, in words."""
    return f"{answer['low']:g} to {answer['high']:g} degrees"


ANSWER = answer_tool(
    "Your answer; it ends the run. low and high: the two whole-degree launch angles (high = low + 1) between "
    "which the angle of the longest throw lies.",
    (LOW, HIGH),
    adjacent,
    answer_text,
)


def flight_time_tool():
    """The exercise's new tool: same bounds as the others, added to the allowlist by code."""

    def flight_time_without_drag(speed, angle):
        return {TIME_KEY: projectile.flight_time_without_drag(speed, angle)}

    return Tool(
        FLIGHT_TIME_TOOL,
        f"The ball in vacuum, exactly. Returns {TIME_KEY}: its time of flight (s).",
        (SPEED_PARAMETER, ANGLE_PARAMETER),
        flight_time_without_drag,
    )


VARIANTS = {"default": Variant("default", INTRO, TASK, tools, ANSWER, budget=None, max_steps=MAX_STEPS, format1=FORMAT1)}


def all_tools():
    """Every tool of the lesson, exercise tools included, on a fresh allowlist."""
    return Allowlist(tools() + [flight_time_tool()])
