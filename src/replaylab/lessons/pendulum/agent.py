"""The scripted baseline agents of the pendulum lesson: programs, not language models.

Each reads its instance's question as the task states it (threshold, precision, L and g) and decides
each message from the results it has read so far.

`careful` (seed 0 and every seed that is a multiple of 4) measures the small-angle period and two
survey amplitudes at dt1 = T0/200 (T0 = 2π√(L/g) of the task's pendulum; a step in seconds that is
fine for one pendulum is coarse for another), then locates the crossing on the grid of the precision
asked (estimating it from the excess against the amplitude on log-log axes, and measuring the
bracket's edges), then measures that bracket again at dt2 = dt1/2. Symplectic Euler's period error
falls as dt², so the two steps give Richardson's extrapolation of the excess at each edge, E + (E −
E1)/3, and the size of the error left at dt2, |E − E1|/3: the program moves the bracket if the
extrapolated excess puts the crossing in a neighbouring one, and picks the step at which the error
left is a quarter of the distance of the extrapolated excess from the threshold at the bracket's
edges (at least the tool's smallest dt). It measures the bracket there (moving it once more if that
step still shows it elsewhere) and answers the bracket its smallest step brackets. It is right on
every instance of the family (the family keeps only instances that the tool's smallest step can
decide with that margin).

The others are wrong on purpose, to test the scorecard, and run on any instance: `coarse-dt` locates
the crossing the same way at dt 0.1 s and never refines it (its own periods support its answer,
which the coarse step may have moved); `stops-at-20-and-30` checks convergence in dt, but only at 20
and 30 degrees, and answers the bracket where the excess would reach the threshold if it grew as the
square of the amplitude, never measured there (right by luck at best, not supported); `careless`
does the careful work and answers the bracket above (wrong, not supported). The trivial program
(`no-experiment`) answers the bracket that holds 20 degrees, without an experiment.
"""

import math
from collections.abc import Iterable, Sequence
from typing import Any, cast

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.pendulum import LESSON, family, lab, physics

STRATEGIES = ("careful", "coarse-dt", "stops-at-20-and-30", "careless")
CAREFUL = "careful"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, a fixed guess
SURVEY_STEPS = 200  # steps per small-angle period of the careful survey's dt
SURVEY = (25, 55)  # degrees (plus seed % 5): between them or near lie the crossings of 0.5 % to 10 %
SAFETY = 4  # the careful program's last step leaves an error a quarter of the distance to the threshold
COARSE_DT = 0.1  # s
WIDE = (20, 30)  # degrees: where the wrong-on-purpose search stops
WIDE_DTS = (0.01, 0.005)  # s
GUESS = 20  # degrees: the trivial program's answer is the bracket that holds it


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str = "default", seed: int = 0, plan: str | None = None) -> str:
    return f"pendulum baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


class Question:
    """What the task states: the threshold, the precision and the pendulum (its T0, from L and g)."""

    def __init__(self, instance: Instance) -> None:
        self.excess, self.precision = family.excess(instance), family.precision(instance)
        g, length = family.pendulum(instance)
        self.period = physics.small_angle_period(g, length)
        self.whole = float(self.precision).is_integer()

    def edge(self, k: int) -> float:
        """The k-th amplitude of the precision's grid, as the program writes it (22, or 22.5)."""
        value = k * self.precision
        return int(value) if self.whole else float(value)

    def around(self, amplitude: float) -> tuple[float, float]:
        """(low, high): the bracket of the grid that holds an amplitude (kept within the answer's bounds)."""
        amplitude = min(max(amplitude, lab.AMPLITUDE_PARAMETER.low + self.precision), lab.AMPLITUDE_PARAMETER.high - self.precision)
        k = math.floor(amplitude / self.precision)
        return self.edge(k), self.edge(k + 1)

    def on_grid(self, amplitude: float) -> bool:
        return lab.on_the_grid(amplitude, self.precision)

    def answer(self, low: float, high: float, text: str) -> ModelMessage:
        return ModelMessage(text, (ToolCall("answer", ANSWER, {"low": low, "high": high}),))


def _seen(conversation: list[dict[str, Any]]) -> tuple[float | None, dict[float, dict[float, float]], int]:
    """(the small-angle period or None, {dt: {amplitude: period}}, calls that ran) so far."""
    reference: float | None = None
    found: dict[float, dict[float, float]] = {}
    ran = 0
    for call, result in exchanges(conversation):
        if call is None or not result.ok:
            continue
        ran += 1
        if call.name == lab.SMALL_ANGLE_TOOL:
            reference = result.content[lab.PERIOD_KEY]
        elif call.name == lab.PERIOD_TOOL:
            found.setdefault(call.arguments["dt"], {})[call.arguments["amplitude_deg"]] = result.content[lab.PERIOD_KEY]
    return reference, found, ran


def _asked(conversation: list[dict[str, Any]]) -> int:
    """Calls asked for so far, refused ones too (a program must not ask for the same call forever)."""
    return sum(1 for call, _ in exchanges(conversation) if call is not None and call.name != ANSWER)


def _excesses(periods: dict[float, float], reference: float) -> dict[float, float]:
    return {a: p / reference - 1 for a, p in sorted(periods.items())}


def _ends(excesses: dict[float, float], threshold: float) -> tuple[float | None, float | None]:
    """(the largest amplitude at most at the threshold, the smallest one above it), either None if there is none."""
    below = [a for a, e in excesses.items() if e <= threshold]
    above = [a for a, e in excesses.items() if e > threshold]
    return (max(below) if below else None), (min(above) if above else None)


def _log_log(points: Sequence[tuple[float, float]], threshold: float) -> float:
    """The amplitude where the excess reaches the threshold on the line through two (amplitude,
    excess) points on log-log axes (the excess grows about as the amplitude squared)."""
    (a1, e1), (a2, e2) = points
    slope = (math.log(e2) - math.log(e1)) / (math.log(a2) - math.log(a1))
    if not slope > 0:
        return math.sqrt(a1 * a2)
    return math.exp(math.log(a1) + (math.log(threshold) - math.log(e1)) / slope)


def _estimate(excesses: dict[float, float], threshold: float) -> float:
    """Where the excess reaches the threshold, from the points nearest it on each side (or the two
    nearest it), kept between the measured ends."""
    low, high = _ends(excesses, threshold)
    if low is not None and high is not None and excesses[low] > 0:
        pair = [(low, excesses[low]), (high, excesses[high])]
    else:  # a coarse step can make the excess of a small amplitude negative: positive ones only
        points = [(a, e) for a, e in excesses.items() if e > 0]
        pair = sorted(sorted(points, key=lambda p: abs(math.log(p[1] / threshold)))[:2])
    estimate = _log_log(pair, threshold) if len(pair) == 2 else GUESS
    if low is not None:
        estimate = max(estimate, low)
    if high is not None:
        estimate = min(estimate, high)
    return estimate


def _bracket(question: Question, excesses: dict[float, float]) -> tuple[float, float] | None:
    """The grid's bracket that these excesses put the crossing in (both edges measured, the excess at
    most the threshold at the low one and above it at the high one), or None."""
    grid = {a: e for a, e in excesses.items() if question.on_grid(a)}
    low, high = _ends(grid, question.excess)
    if low is None or high is None or not math.isclose(high - low, question.precision):
        return None
    return low, high


def _locate(question: Question, excesses: dict[float, float]) -> tuple[tuple[float, float] | None, list[float]]:
    """(the bracket, []) once these excesses put the crossing in one, else (None, the amplitudes to measure next)."""
    found = _bracket(question, excesses)
    if found is not None:
        return found, []
    low, high = question.around(_estimate(excesses, question.excess))
    missing = [a for a in (low, high) if a not in excesses]
    if not missing:  # both edges measured, on one side of the threshold: the next bracket that way
        side = 1 if excesses[high] <= question.excess else -1
        missing = [question.edge(round(low / question.precision) + (2 if side > 0 else -1))]
    return None, missing


def _calls(amplitudes: Iterable[float], dt: float, start: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(str(start + i), lab.PERIOD_TOOL, {"amplitude_deg": a, "dt": dt}) for i, a in enumerate(amplitudes)
    )


def _round_down(value: float, digits: int = 2) -> float:
    """`value` rounded down to `digits` significant digits (a step an agent would type, never coarser)."""
    unit = 10 ** (math.floor(math.log10(value)) - digits + 1)
    return float(f"{math.floor(value / unit) * unit:.{digits}g}")


def _nice(value: float) -> float:
    return float(f"{value:.3g}")


def _percent(excess: float) -> str:
    return f"{100 * excess:.4f} %"


def _richardson(question: Question, bracket: tuple[float, float], coarse: dict[float, float], fine: dict[float, float],
                dt: float) -> tuple[tuple[float, float], float | None, dict[float, float]]:
    """(the bracket the extrapolated excess puts the crossing in, the step to measure it at or None
    when dt already leaves a quarter of the distance, the extrapolated excesses), from one bracket's
    excesses at two steps (the coarse one twice dt)."""
    threshold = question.excess
    extrapolated = {a: fine[a] + (fine[a] - coarse[a]) / 3 for a in bracket}
    left = max(max(abs(fine[a] - coarse[a]) / 3 for a in bracket), 1e-300)  # never nil: a step can be chosen
    low, high = bracket
    if extrapolated[low] > threshold:
        final = (question.edge(round(low / question.precision) - 1), low)
    elif extrapolated[high] <= threshold:
        final = (high, question.edge(round(high / question.precision) + 1))
    else:
        final = bracket
    (a1, e1), (a2, e2) = sorted(extrapolated.items())
    for a in final:
        if a in extrapolated:
            continue
        if e1 > 0 and e2 > 0:  # the new edge: on the log-log line through the two extrapolated ones
            slope = (math.log(e2) - math.log(e1)) / (math.log(a2) - math.log(a1))
            extrapolated[a] = math.exp(math.log(e1) + slope * (math.log(a) - math.log(a1)))
        else:
            extrapolated[a] = e1 + (e2 - e1) * (a - a1) / (a2 - a1)
    distance = min(abs(extrapolated[a] - threshold) for a in final)
    if final == bracket and left * SAFETY <= distance:
        return final, None, extrapolated
    step = dt * math.sqrt(distance / (SAFETY * left))
    return final, max(lab.DT_PARAMETER.low, _round_down(min(step, dt / 2))), extrapolated


def _careful_answer(question: Question, excesses: dict[float, float], bracket: tuple[float, float], dt: float, first: float,
                    careless: bool = False) -> ModelMessage:
    """The careful answer: the bracket its smallest step brackets (careless: the one above)."""
    low, high = bracket
    if careless:
        low, high = high, question.edge(round(high / question.precision) + 1)
    return question.answer(low, high, (
        f"At dt = {dt:g} s the period exceeds the small-angle period by {_percent(excesses[bracket[0]])} at "
        f"{bracket[0]:g} degrees and by {_percent(excesses[bracket[1]])} at {bracket[1]:g} degrees, so the crossing "
        f"of {lab.percent_text(question.excess)} lies between them. I located it at dt = {first:g} s, halved dt, extrapolated "
        f"the excess as dt² goes to zero and chose dt = {dt:g} s so that the error left is well inside the distance "
        f"to the threshold. I answer {low:g} to {high:g} degrees."))


def _fallback_answer(question: Question, excesses: dict[float, float], dt: float) -> ModelMessage:
    """The answer of a program whose budget ran out: the bracket around its best estimate."""
    low, high = question.around(_estimate(excesses, question.excess)) if excesses else question.around(GUESS)
    return question.answer(low, high, f"My budget ran out; from my periods at dt = {dt:g} s I estimate the crossing "
                                      f"between {low:g} and {high:g} degrees.")


def _careful(question: Question, survey: tuple[int, ...], careless: bool = False) -> Program:
    """The careful program (careless: the same work, the bracket above as its answer)."""
    dt1 = min(max(_nice(question.period / SURVEY_STEPS), 4 * lab.DT_PARAMETER.low), lab.DT_PARAMETER.high)
    dt2 = dt1 / 2

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        reference, found, _ = _seen(conversation)
        left = lab.BUDGET - _asked(conversation)
        if reference is None:
            calls = (ToolCall("1", lab.SMALL_ANGLE_TOOL, {}),) + _calls(survey, dt1, 2)
            return ModelMessage(f"The small-angle period, and a survey at dt = {dt1:g} s (T0/{SURVEY_STEPS}).", calls)
        start = _asked(conversation) + 1
        first = _excesses(found.get(dt1, {}), reference)
        bracket, missing = _locate(question, first)
        if bracket is None:
            if len(missing) > left:
                return _fallback_answer(question, first, dt1)
            return ModelMessage(f"Locating the crossing between multiples of {question.precision:g} degree at dt = {dt1:g} s.",
                                _calls(missing, dt1, start))
        second = _excesses(found.get(dt2, {}), reference)
        missing = [a for a in bracket if a not in second]
        if missing:
            if len(missing) > left:
                return _fallback_answer(question, first, dt1)
            return ModelMessage(f"Checking convergence: the bracket again at dt = {dt2:g} s.", _calls(missing, dt2, start))
        final, dt3, _ = _richardson(question, bracket, first, second, dt2)
        if dt3 is None:
            return _careful_answer(question, second, bracket, dt2, dt1, careless)
        third = _excesses(found.get(dt3, {}), reference)
        located: tuple[float, float] | None
        located, missing = (final, [a for a in final if a not in third])
        if not missing:
            located, missing = _locate(question, third)
        if located is not None and not missing:
            return _careful_answer(question, third, located, dt3, dt1, careless)
        if len(missing) > left:
            return _fallback_answer(question, third or second, dt3 if third else dt2)
        return ModelMessage(f"Extrapolating in dt² puts the crossing between {final[0]:g} and {final[1]:g} degrees; "
                            f"measuring there at dt = {dt3:g} s, fine enough for the distance to the threshold.",
                            _calls(missing, dt3, start))

    return program


def _coarse(question: Question, survey: tuple[int, ...], dt: float) -> Program:
    """Locates the crossing at one step and answers, never refining it."""

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        reference, found, _ = _seen(conversation)
        left = lab.BUDGET - _asked(conversation)
        if reference is None:
            calls = (ToolCall("1", lab.SMALL_ANGLE_TOOL, {}),) + _calls(survey, dt, 2)
            return ModelMessage(f"The small-angle period, and a survey at dt = {dt:g} s.", calls)
        excesses = _excesses(found.get(dt, {}), reference)
        bracket, missing = _locate(question, excesses)
        if bracket is not None:
            return question.answer(*bracket, f"At dt = {dt:g} s the crossing lies between {bracket[0]:g} and "
                                             f"{bracket[1]:g} degrees; I did not check it at a smaller dt.")
        if len(missing) > left:
            return _fallback_answer(question, excesses, dt)
        return ModelMessage(f"Narrowing the crossing at dt = {dt:g} s.", _calls(missing, dt, _asked(conversation) + 1))

    return program


def _squared_guess(question: Question, excesses: dict[float, float]) -> tuple[float, float]:
    """The bracket where the excess would reach the threshold if it grew as the amplitude squared
    through the two measured points."""
    (low, e_low), (high, e_high) = sorted(excesses.items())[:2]
    squared = low**2 + (question.excess - e_low) * (high**2 - low**2) / (e_high - e_low)
    return question.around(math.sqrt(max(squared, 1.0)))


def _wide(question: Question) -> Program:
    """Measures 20 and 30 degrees at two dt, and answers the bracket guessed from them."""

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        reference, found, ran = _seen(conversation)
        if reference is None:
            calls = (ToolCall("1", lab.SMALL_ANGLE_TOOL, {}),) + _calls(WIDE, WIDE_DTS[0], 2)
            return ModelMessage(f"The small-angle period, and {WIDE[0]} and {WIDE[1]} degrees at dt = {WIDE_DTS[0]:g} s.", calls)
        if WIDE_DTS[1] not in found:
            return ModelMessage(f"The same two amplitudes at dt = {WIDE_DTS[1]:g} s.", _calls(WIDE, WIDE_DTS[1], ran + 1))
        excesses = _excesses(found[WIDE_DTS[1]], reference)
        if len(excesses) < 2:
            return _fallback_answer(question, excesses, WIDE_DTS[1])
        low, high = _squared_guess(question, excesses)
        return question.answer(low, high, (
            f"At dt = {WIDE_DTS[1]:g} s the excess is {_percent(excesses[WIDE[0]])} at {WIDE[0]} degrees and "
            f"{_percent(excesses[WIDE[1]])} at {WIDE[1]} degrees; halving dt from {WIDE_DTS[0]:g} s changed little. "
            f"If it grows as the amplitude squared, it reaches the threshold between {low:g} and {high:g} degrees."))

    return program


def no_experiment(question: Question) -> Program:
    """The trivial program: no experiment; the bracket that holds 20 degrees."""
    low, high = question.around(GUESS)
    return lambda conversation: question.answer(low, high, "A guess, without an experiment.")


def baseline(variant: str = "default", seed: int = 0, instance: Instance | str | None = None,
             plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage for an instance (None: the seed's question); `seed`
    picks the strategy (`plan` names one instead) and shifts the survey's amplitudes."""
    if not hasattr(instance, "parameters"):  # an id, or None: the seed's question
        instance = LESSON.instance(instance if instance is not None else family.SEED_ID)
    question = Question(cast(Instance, instance))  # one with parameters, by now
    survey = tuple(a + seed % 5 for a in SURVEY)
    plan = plan or strategy(seed)
    if plan == TRIVIAL:
        return no_experiment(question)
    if plan in ("careful", "careless"):
        return _careful(question, survey, careless=plan == "careless")
    if plan == "coarse-dt":
        return _coarse(question, survey, COARSE_DT)
    return _wide(question)
