"""The scripted baseline agents of the projectile lesson: programs, not language models.

`careful` (seed 0 and every seed that is a multiple of 4) surveys four angles six degrees apart with
a coarse step (and six degrees further down or up while its best angle is the lowest or highest it
measured), narrows the best whole-degree angle with that step, then checks that the answer survives
smaller steps, deciding each message from the results it has read so far, and answers with its best
angle and the runner-up at dt 0.001 s: the bracket that holds the top of the parabola through them,
within 0.02 degree of the converged top on every instance of the family. The
others are wrong on purpose, to test the scorecard: `stops-early` answers from its first coarse
survey, the best angle and the whole degree next to it towards the runner-up; `wrong-neighbour`
does the careful work but, at the finest step, measures the best angle and its worse neighbour
instead of the better one, and answers with those two; `careless` does the careful work and answers
carelessly, the best angle and its worse neighbour (its own experiments locate the maximum on the
other side: not supported, and wrong).
"""

from collections.abc import Iterable
from typing import Any

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.projectile import lab

COARSE_DT, FINE_DTS = 0.01, (0.002, 0.001)
STRATEGIES = ("careful", "stops-early", "wrong-neighbour", "careless")
CAREFUL = "careful"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, the best angle in vacuum's bracket


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str = "default", seed: int = 0, plan: str | None = None) -> str:
    return f"projectile baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


def _ranges(conversation: list[dict[str, Any]]) -> dict[float, dict[int, float]]:
    """{dt: {angle: range}} of the accepted range_with_drag calls so far."""
    found: dict[float, dict[int, float]] = {}
    for call, result in exchanges(conversation):
        if result.ok and call is not None and call.name == lab.RANGE_TOOL:
            found.setdefault(call.arguments["dt"], {})[call.arguments["angle"]] = result.content[lab.RANGE_KEY]
    return found


def _best(ranges: dict[int, float]) -> int:
    return max(ranges, key=lambda angle: (ranges[angle], -angle))


def _calls(angles: Iterable[int], dt: float, start: int, speed: float = lab.SPEED) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(str(start + i), lab.RANGE_TOOL, {"speed": speed, "angle": a, "dt": dt}) for i, a in enumerate(angles)
    )


SURVEY_STEP = 6  # degrees between the survey's angles


def _farther(coarse: dict[int, float]) -> list[int]:
    """Four more survey angles beyond the survey's lowest (or highest) angle when that one measured
    the longest throw (the top lies further out), within the tool's bounds; [] when the best is inside."""
    best, low, high = _best(coarse), min(coarse), max(coarse)
    if best == low and low > lab.ANGLE_PARAMETER.low:
        return _clamp([low - SURVEY_STEP * k for k in range(1, 5)], coarse)
    if best == high and high < lab.ANGLE_PARAMETER.high:
        return _clamp([high + SURVEY_STEP * k for k in range(1, 5)], coarse)
    return []


def _clamp(angles: Iterable[int], known: dict[int, float]) -> list[int]:
    low, high = lab.ANGLE_PARAMETER.low, lab.ANGLE_PARAMETER.high
    return sorted({a for a in angles if low <= a <= high and a not in known})


def _around(ranges: dict[int, float], centre: int | None, reach: int) -> tuple[int, list[int]]:
    """Angles within `reach` of the best measured angle (or `centre`) not yet measured at this dt."""
    best = _best(ranges) if ranges else centre
    assert best is not None  # the centre is None only where ranges holds a measurement
    return best, _clamp(range(best - reach, best + reach + 1), ranges)


def _conclude(ranges: dict[int, float], dt: float, best: int, careless: bool = False) -> ModelMessage:
    """The answer: the best angle measured and the whole degree next to it towards the runner-up (or,
    careless, away from it), with the words that go with it."""
    neighbour = max((a for a in ranges if a != best), key=lambda a: ranges[a])
    towards = 1 if neighbour > best else -1
    if careless:
        towards = -towards
    step = best + towards
    if not lab.ANGLE_PARAMETER.low <= step <= lab.ANGLE_PARAMETER.high:
        step = best - towards
    low, high = sorted((best, step))
    call = ToolCall("answer", ANSWER, {"low": low, "high": high})
    return ModelMessage(
        f"At dt = {dt:g} s the best angle I measured is {best} degrees and the runner-up {neighbour}; "
        f"I answer that the best angle lies between {low} and {high} degrees.",
        (call,),
    )


def no_experiment(conversation: list[dict[str, Any]]) -> ModelMessage:
    """The trivial program: no experiment; it answers the bracket below 45 degrees, the best angle without drag."""
    return ModelMessage("Without drag the best angle is 45 degrees; drag lowers it a little.",
                        (ToolCall("answer", ANSWER, {"low": 44, "high": 45}),))


def baseline(variant: str = "default", seed: int = 0, instance: Instance | None = None,
             plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage; `seed` picks the strategy (`plan` names one instead)
    and shifts the first angles."""
    first = [30 + seed % 5, 36 + seed % 5, 42 + seed % 5, 48 + seed % 5]
    plan = plan or strategy(seed)
    if plan == TRIVIAL:
        return no_experiment
    speed = lab.setup_of(instance).speed if instance is not None else lab.SPEED

    def calls(angles: Iterable[int], dt: float, start: int) -> tuple[ToolCall, ...]:
        return _calls(angles, dt, start, speed)

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        found = _ranges(conversation)
        count = sum(len(v) for v in found.values())
        coarse = found.get(COARSE_DT, {})
        if not coarse:
            return ModelMessage("Coarse survey with dt = 0.01 s.", calls(first, COARSE_DT, 1))
        if plan == "stops-early":
            return _conclude(coarse, COARSE_DT, _best(coarse))
        farther = _farther(coarse)
        if farther:
            return ModelMessage(f"The longest throw so far is at the edge of my survey, {_best(coarse)} degrees: surveying "
                                "further out with dt = 0.01 s.", calls(farther, COARSE_DT, count + 1))
        best, missing = _around(coarse, None, 2)
        if missing:
            return ModelMessage(f"Narrowing around {best} degrees at dt = 0.01 s.", calls(missing[:4], COARSE_DT, count + 1))
        for dt in FINE_DTS:
            if plan == "wrong-neighbour" and dt == FINE_DTS[-1]:
                previous = found[FINE_DTS[-2]]
                better = max((a for a in (best - 1, best + 1) if a in previous), key=lambda a: previous[a])
                missing = _clamp([best, 2 * best - better], found.get(dt, {}))
            else:
                best, missing = _around(found.get(dt, {}), best, 1)
            if missing:
                return ModelMessage(
                    f"Checking convergence: the angles around {best} degrees again with dt = {dt:g} s.",
                    calls(missing, dt, count + 1),
                )
        finest = found[FINE_DTS[-1]]
        nearby = {a: finest[a] for a in (best - 1, best, best + 1) if a in finest}
        return _conclude(nearby, FINE_DTS[-1], _best(nearby), careless=plan == "careless")

    return program
