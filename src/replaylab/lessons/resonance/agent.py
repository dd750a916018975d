"""The scripted baseline agents of the resonance lesson: programs, not language models.

Each reads its instance's question as the task states it (F, the range, the tolerance) and decides
each message from the results it has read so far.

`careful` (seed 0 and every multiple of 4) simulates the tool's largest number of periods every
time. It knows the steady amplitude's form, F²/A² = (ω0² − ω²)² + (2γω)², so that F²/A² − ω⁴ is a
line in ω², b·ω² + c, whose b = 4γ² − 2ω0² puts the peak at ω² = −b/2: it measures three frequencies
spread over the range and fits that line (least squares), then measures the estimate and a frequency
on each side of it (half the estimated γ or half the tolerance away, the smaller), with the estimate
again at half the periods to see that the start has died out. It answers the top of the parabola
through its largest amplitude and the nearest frequency measured on each side (the rule of
`supported`), after three more measurements around that top when its largest amplitude was not the
middle one. It is right on every instance of the family.

The others are wrong on purpose, to test the scorecard, and run on any instance: `short-settle` does
the careful work with 8 periods only (its own amplitudes support its answer, which the start may have
moved); `grid-scan` measures twelve evenly spaced frequencies of the range and answers the parabola
top of its best (right only when the peak is broad enough for the grid); `careless` does the careful
work and answers three tolerances above its top (wrong, not supported). The trivial program
(`no-experiment`) answers the middle of the range without an experiment.
"""

import math
from typing import Any, cast

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.resonance import LESSON, family, lab, peak, physics

STRATEGIES = ("careful", "short-settle", "grid-scan", "careless")
CAREFUL = "careful"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, the middle of the range
SURVEY = (0.2, 0.5, 0.8)  # where in the range the careful survey measures (shifted by the seed)
SHORT = 8  # periods of the short-settle program
GRID = 12  # frequencies of the grid scan
CARELESS_SHIFT = 3  # tolerances the careless answer lies above the careful one


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str = "default", seed: int = 0, plan: str | None = None) -> str:
    return f"resonance baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


class Question:
    """What the task states: the force, the range of the peak and the tolerance."""

    def __init__(self, instance: Instance) -> None:
        self.force = family.oscillator(instance)[2]
        self.low, self.high, self.tolerance = family.question(instance)

    def inside(self, frequency: float) -> float:
        return min(max(frequency, self.low), self.high)

    def answer(self, frequency: float, text: str) -> ModelMessage:
        return ModelMessage(text, (ToolCall("answer", ANSWER, {"frequency_rad_s": self.inside(frequency)}),))


def _seen(conversation: list[dict[str, Any]]) -> dict[int, dict[float, float]]:
    """{periods: {frequency: amplitude}} of the calls that ran so far."""
    found: dict[int, dict[float, float]] = {}
    for call, result in exchanges(conversation):
        if call is not None and result.ok and call.name == lab.TOOL:
            found.setdefault(call.arguments["periods"], {})[call.arguments["frequency_rad_s"]] = result.content[lab.KEY]
    return found


def _asked(conversation: list[dict[str, Any]]) -> int:
    """Calls asked for so far, refused ones too (a program must not ask for the same call forever)."""
    return sum(1 for call, _ in exchanges(conversation) if call is not None and call.name != ANSWER)


def _calls(frequencies: list[float], periods: int, start: int) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(str(start + i), lab.TOOL, {"frequency_rad_s": f, "periods": periods})
                 for i, f in enumerate(frequencies))


def fit(question: Question, amplitudes: dict[float, float]) -> tuple[float, float]:
    """(the peak's frequency, γ) of the least-squares line F²/A² − ω⁴ = b·ω² + c through the
    amplitudes, with ω0² = √c and γ² = (b + 2ω0²)/4 (each kept positive)."""
    points = [(w * w, question.force**2 / a**2 - w**4) for w, a in amplitudes.items()]
    mean_u = sum(u for u, _ in points) / len(points)
    mean_q = sum(q for _, q in points) / len(points)
    spread = sum((u - mean_u) ** 2 for u, _ in points)
    b = sum((u - mean_u) * (q - mean_q) for u, q in points) / spread
    c = mean_q - b * mean_u
    top = math.sqrt(max(-b / 2, question.low**2))
    natural_squared = math.sqrt(max(c, 0.0))
    damping = math.sqrt(max((b + 2 * natural_squared) / 4, 0.0))
    return question.inside(top), damping


def _nearby(centre: float, spacing: float) -> list[float]:
    return [centre - spacing, centre, centre + spacing]


def _settled(seen: dict[int, dict[float, float]], periods: int) -> str:
    """What the check at half the periods showed, in words."""
    half = seen.get(max(periods // 2, 1), {})
    common = [w for w in half if w in seen.get(periods, {})]
    if not common:
        return "I did not compare two numbers of periods."
    w = common[0]
    change = abs(seen[periods][w] / half[w] - 1)
    return f"At {w:.6g} rad/s, {periods} periods and half as many differ by {100 * change:.2g} % in amplitude."


def _spacing(found: dict[str, Any]) -> float:
    """The smaller distance from the largest amplitude to a neighbour measured beside it."""
    return float(min(found["best"] - found["below"], found["above"] - found["best"]))


def _careful(question: Question, periods: int, shift: float, careless: bool = False) -> Program:
    """The careful program at `periods` (the short-settle one at fewer; careless: the same work, a
    wrong answer)."""
    span = question.high - question.low
    survey = [question.low + (s + shift) * span for s in SURVEY]

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        asked, seen = _asked(conversation), _seen(conversation)
        at = seen.get(periods, {})
        if asked == 0:
            return ModelMessage(f"A survey of the range at {periods} periods of the drive.", _calls(survey, periods, 1))
        if asked == len(survey):
            if len(at) < len(survey):
                return question.answer((question.low + question.high) / 2, "My survey failed; I guess the middle.")
            centre, damping = fit(question, at)
            spacing = min(question.tolerance / 2, max(damping / 2, 1e-6))
            calls = _calls(_nearby(centre, spacing), periods, asked + 1)
            calls += _calls([centre], max(periods // 2, 1), asked + 4)
            return ModelMessage(
                f"F²/A² − ω⁴ is a line in ω² for this oscillator; the line through my survey puts the peak near "
                f"{centre:.6g} rad/s. I measure there and {spacing:.3g} rad/s on each side, and the same frequency at "
                f"half the periods, to see that the start has died out.", calls)
        found = peak.located(at)
        if found["found"] and (asked > len(survey) + 4 or abs(found["top"] - found["best"]) <= _spacing(found) / 2):
            top = found["top"]
            answer = top + CARELESS_SHIFT * question.tolerance if careless else top
            return question.answer(answer, (
                f"At {periods} periods my largest amplitude is at {found['best']:.6g} rad/s, with smaller ones at "
                f"{found['below']:.6g} and {found['above']:.6g} rad/s; the parabola through the three peaks at "
                f"{top:.6g} rad/s. {_settled(seen, periods)} I answer {answer:.6g} rad/s."))
        if not found["found"] or asked > len(survey) + 4:
            centre, _ = fit(question, at) if len(at) >= 2 else ((question.low + question.high) / 2, 0.0)
            return question.answer(centre, "My measurements do not bracket a peak; I answer my best estimate.")
        centre = found["top"]
        spacing = min(abs(centre - found["best"]), _spacing(found)) / 2
        return ModelMessage(f"The top lies away from my largest amplitude; I measure around {centre:.6g} rad/s.",
                            _calls(_nearby(centre, spacing), periods, asked + 1))

    return program


def _grid(question: Question) -> Program:
    """Twelve frequencies evenly over the range; the parabola top of the best."""
    span = question.high - question.low
    grid = [question.low + span * (i + 0.5) / GRID for i in range(GRID)]

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        asked = _asked(conversation)
        if asked < GRID:
            return ModelMessage("A grid over the range.", _calls(grid[asked : asked + 4], physics.MAX_PERIODS, asked + 1))
        at = _seen(conversation).get(physics.MAX_PERIODS, {})
        found = peak.located(at)
        best = found["top"] if found["found"] else max(at, key=lambda w: at[w]) if at else grid[GRID // 2]
        return question.answer(best, f"The best of my grid, refined by a parabola: {best:.6g} rad/s.")

    return program


def no_experiment(question: Question) -> Program:
    """The trivial program: no experiment; the middle of the range."""
    middle = (question.low + question.high) / 2
    return lambda conversation: question.answer(middle, "A guess, without an experiment: the middle of the range.")


def baseline(variant: str = "default", seed: int = 0, instance: Instance | str | None = None,
             plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage for an instance (None: the seed's question); `seed`
    picks the strategy (`plan` names one instead) and shifts the survey."""
    if not hasattr(instance, "parameters"):  # an id, or None: the seed's question
        instance = LESSON.instance(instance if instance is not None else family.SEED_ID)
    question = Question(cast(Instance, instance))
    plan = plan or strategy(seed)
    shift = 0.03 * (seed % 5)
    if plan == TRIVIAL:
        return no_experiment(question)
    if plan in ("careful", "careless"):
        return _careful(question, physics.MAX_PERIODS, shift, careless=plan == "careless")
    if plan == "short-settle":
        return _careful(question, SHORT, shift)
    return _grid(question)
