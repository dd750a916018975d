"""The projectile lab: the prompts, the tools with their bounds, and the allowlist of a run."""

from functools import lru_cache

from replaylab.agents.tools import Allowlist, Parameter, Tool
from replaylab.lessons import Variant
from replaylab.physics import projectile

SPEED = 25  # m/s, the speed of the lesson's question
SPEED_PARAMETER = Parameter("speed", "launch speed, m/s", 1, 50)
ANGLE_PARAMETER = Parameter("angle", "launch angle above the horizontal, degrees", 1, 89)
DT_PARAMETER = Parameter("dt", "time step of the explicit Euler integration, s", 0.001, 0.05)
MAX_STEPS = 12
# The names the agent, the judge and the pages use for the tools and their results.
RANGE_TOOL, VACUUM_TOOL, FLIGHT_TIME_TOOL = "range_with_drag", "range_without_drag", "flight_time_without_drag"
RANGE_KEY, TIME_KEY = "range_m", "time_s"

SYSTEM = (
    "You are a careful experimental physicist with a simulator of a tennis ball (58 g, 6.7 cm) "
    "flying through air with quadratic drag, launched from the ground. You can only act through "
    "the tools you are given; every call is checked against their bounds before it runs. The "
    "simulator integrates the flight with explicit Euler steps of size dt, so its answers depend "
    "on dt: before you trust a result, check that it no longer changes when dt gets smaller. "
    "Use at most 4 tool calls per message. When you are done, answer without calling a tool."
)
TASK = (
    f"At a launch speed of {SPEED} m/s, which launch angle throws this ball the furthest? "
    "Give the answer to within one degree, as the two whole-degree angles that bracket the best "
    "angle, and say how you checked convergence in dt."
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
            "Horizontal distance (m) at which the ball lands, simulated with drag and time step dt.",
            (SPEED_PARAMETER, ANGLE_PARAMETER, DT_PARAMETER),
            range_with_drag,
        ),
        Tool(
            VACUUM_TOOL,
            "Exact horizontal distance (m) at which the ball would land in vacuum.",
            (SPEED_PARAMETER, ANGLE_PARAMETER),
            range_without_drag,
        ),
    ]


def flight_time_tool():
    """The exercise's new tool: same bounds as the others, added to the allowlist by code."""

    def flight_time_without_drag(speed, angle):
        return {TIME_KEY: projectile.flight_time_without_drag(speed, angle)}

    return Tool(
        FLIGHT_TIME_TOOL,
        "Exact time of flight (s) of the ball in vacuum.",
        (SPEED_PARAMETER, ANGLE_PARAMETER),
        flight_time_without_drag,
    )


VARIANTS = {"default": Variant("default", SYSTEM, TASK, tools, budget=None, max_steps=MAX_STEPS)}


def all_tools():
    """Every tool of the lesson, exercise tools included, on a fresh allowlist."""
    return Allowlist(tools() + [flight_time_tool()])
