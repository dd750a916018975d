"""The projectile lab: the prompts, the tools with their bounds, and the allowlist of a run.

The seed's own question (a tennis ball at 25 m/s from the ground) keeps its texts word for word
(`INTRO`, `TASK`, `tools`); an instance of the family (family.py) gets the same texts with its own
ball, launch height and speed (`intro_text`, `task_text`, `setup_tools`).
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from replaylab.agents.tools import Allowlist, Parameter, Refused, Tool, answer_tool
from replaylab.lessons import Instance, Prompts, Variant
from replaylab.lessons.projectile.balls import BY_NAME, TENNIS, Setup
from replaylab.physics import projectile

SPEED = 25  # m/s, the speed of the lesson's question
SPEED_PARAMETER = Parameter("speed", "launch speed, m/s", 1, 50)
ANGLE_PARAMETER = Parameter("angle", "launch angle above the horizontal, degrees", 1, 89)
DT_PARAMETER = Parameter("dt", "time step of the explicit Euler integration, s", 0.001, 0.05)
MAX_STEPS = 12
# The names the agent, the judge and the pages use for the tools and their results.
RANGE_TOOL, VACUUM_TOOL, FLIGHT_TIME_TOOL = "range_with_drag", "range_without_drag", "flight_time_without_drag"
RANGE_KEY, TIME_KEY = "range_m", "time_s"
SEED_SETUP = Setup(TENNIS, SPEED, projectile.LAUNCH_HEIGHT)  # the seed's question: what its tools simulate
SEED_ID = "projectile-seed"  # the seed instance's id

INTRO_END = (
    "You can only act through "
    "the tools you are given; every call is checked against their bounds before it runs. The "
    "simulator integrates the flight with explicit Euler steps of size dt, so its answers depend "
    "on dt: before you trust a result, check that it no longer changes when dt gets smaller."
)
INTRO = (
    "You are a careful experimental physicist with a simulator of a tennis ball (58 g, 6.7 cm) "
    "flying through air with quadratic drag, launched from the ground. " + INTRO_END
)


def setup_of(instance: Instance) -> Setup:
    """What an instance's tools simulate, from its parameters (the seed's: `SEED_SETUP`)."""
    p = instance.parameters
    return Setup(BY_NAME[p["ball"]], p["launch_speed_m_s"], p["launch_height_m"])


def launched_from(height: float) -> str:
    """Where the ball starts, in words: "the ground", or "2.5 m above level ground"."""
    return "the ground" if height == 0 else f"{height:g} m above level ground"


def intro_text(setup: Setup) -> str:
    """The system text's own part for an instance: its ball and launch height, then the seed's words."""
    if setup == SEED_SETUP:
        return INTRO
    lands = "" if setup.height == 0 else "; its range is the horizontal distance from the launch point to where it lands on the ground"
    return (f"You are a careful experimental physicist with a simulator of a {setup.ball.words()} flying through air "
            f"with quadratic drag, launched from {launched_from(setup.height)}{lands}. " + INTRO_END)


MARGIN_WORDS = ("This question was drawn so that the angle of the longest throw (as dt goes to zero) lies at least "
                "{margin:g} degree from every whole degree: exactly one bracket is right. ")


def task_text(speed: float, margin: float | None = None) -> str:
    """The task at a launch speed (the seed's TASK at 25 m/s, without a margin): the question, the
    answer's form, and the rules it is judged by; a drawn instance's also says how far its best angle
    lies from every whole degree (`margin`, family.MARGIN)."""
    drawn = "" if margin is None else MARGIN_WORDS.format(margin=margin)
    return (
        f"At a launch speed of {speed} m/s, which launch angle throws this ball the furthest? Answer to "
        "within one degree by calling answer with low and high, two whole-degree angles with high = low + 1 "
        "(any other pair is refused). Your answer is right when the best angle of the build's own converged scan "
        "(angles in quarter-degree steps, at time steps small enough that its best angle no longer changes) lies "
        "between low and high, both included: a best angle exactly on a whole degree makes both brackets around it "
        f"right. {drawn}It is supported when your own {RANGE_TOOL} calls at {speed} m/s and at the smallest dt you used "
        "locate the maximum in it: your longest throw at that dt is at an angle between low and high, you measured "
        "a shorter throw at an angle on each side of it at that dt, and the top of the parabola through those three "
        "points lies between low and high. Say in explanation how you checked convergence in dt."
    )


TASK = task_text(SPEED)
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


def range_with_drag_of(setup: Setup, drag: float | None = None) -> Callable[[float, float, float], float]:
    """The range function of a setup's ball (cached: the simulation is pure), `drag` replacing its
    drag constant (the rough-ball demo)."""
    drag = setup.drag if drag is None else drag

    def simulate(speed: float, angle: float, dt: float) -> float:
        return _range_with_drag(speed, angle, dt, drag, setup.mass, setup.height)

    return simulate


def setup_tools(setup: Setup) -> Callable[..., list[Tool]]:
    """The `tools` of an instance's variant: the two tools with its ball and launch height, which
    their descriptions state; `drag` (a setting) replaces the ball's drag constant."""
    if setup == SEED_SETUP:
        return tools
    where = launched_from(setup.height)
    descriptions = (
        f"Simulate the {setup.ball.words()}, launched from {where}, with drag and time step dt. Returns "
        f"{RANGE_KEY}: the horizontal distance (m) from the launch point at which it lands on the ground.",
        f"The same ball in vacuum, launched from {where}, exactly. Returns {RANGE_KEY}: the horizontal distance (m) "
        "from the launch point at which it would land on the ground.",
    )

    def instance_tools(drag: float = setup.drag) -> list[Tool]:
        return _tools(setup, drag, descriptions)

    return instance_tools


def tools(drag: float = projectile.DRAG) -> list[Tool]:
    """The two tools of a run of the seed's question; `drag` replaces the ball's drag constant (the rough-ball demo)."""
    return _tools(SEED_SETUP, drag, (
        f"Simulate the ball with drag and time step dt. Returns {RANGE_KEY}: the horizontal distance (m) at which it lands.",
        f"The ball in vacuum, exactly. Returns {RANGE_KEY}: the horizontal distance (m) at which it would land.",
    ))


def _tools(setup: Setup, drag: float, descriptions: tuple[str, str]) -> list[Tool]:
    simulate = range_with_drag_of(setup, drag)

    def range_with_drag(speed: float, angle: float, dt: float) -> dict[str, float]:
        return {RANGE_KEY: simulate(speed, angle, dt)}

    def range_without_drag(speed: float, angle: float) -> dict[str, float]:
        return {RANGE_KEY: projectile.range_without_drag(speed, angle, setup.height)}

    return [
        Tool(RANGE_TOOL, descriptions[0], (SPEED_PARAMETER, ANGLE_PARAMETER, DT_PARAMETER), range_with_drag),
        Tool(VACUUM_TOOL, descriptions[1], (SPEED_PARAMETER, ANGLE_PARAMETER), range_without_drag),
    ]


LOW = Parameter("low", "the lower whole-degree angle of your bracket, degrees", ANGLE_PARAMETER.low, ANGLE_PARAMETER.high - 1, integer=True)
HIGH = Parameter("high", "the upper whole-degree angle of your bracket (low + 1), degrees", ANGLE_PARAMETER.low + 1, ANGLE_PARAMETER.high, integer=True)


def adjacent(fields: dict[str, Any]) -> None:
    """The form the task states: two adjacent whole degrees (any other pair is refused, and the run goes on)."""
    if fields["high"] != fields["low"] + 1:
        raise Refused(f"high must be low + 1 (two adjacent whole degrees), got low {fields['low']} and high {fields['high']}")


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    return f"{answer['low']:g} to {answer['high']:g} degrees"


ANSWER = answer_tool(
    "Your answer; it ends the run. low and high: the two whole-degree launch angles (high = low + 1) between "
    "which the angle of the longest throw lies.",
    (LOW, HIGH),
    adjacent,
    answer_text,
)


def flight_time_tool() -> Tool:
    """The exercise's new tool: same bounds as the others, added to the allowlist by code."""

    def flight_time_without_drag(speed: float, angle: float) -> dict[str, float]:
        return {TIME_KEY: projectile.flight_time_without_drag(speed, angle)}

    return Tool(
        FLIGHT_TIME_TOOL,
        f"The ball in vacuum, exactly. Returns {TIME_KEY}: its time of flight (s).",
        (SPEED_PARAMETER, ANGLE_PARAMETER),
        flight_time_without_drag,
    )


VARIANTS = {"default": Variant("default", INTRO, TASK, tools, ANSWER, budget=None, max_steps=MAX_STEPS, format1=FORMAT1)}


def variants(setup: Setup, margin: float) -> dict[str, Variant]:
    """{name: Variant} of an instance: the seed's own for the seed's setup, else the same rules with
    the instance's ball, height and speed, and the margin its best angle keeps from whole degrees."""
    if setup == SEED_SETUP:
        return dict(VARIANTS)
    return {"default": Variant("default", intro_text(setup), task_text(setup.speed, margin), setup_tools(setup), ANSWER,
                               budget=None, max_steps=MAX_STEPS)}


def all_tools() -> Allowlist:
    """Every tool of the lesson, exercise tools included, on a fresh allowlist."""
    return Allowlist(tools() + [flight_time_tool()])
