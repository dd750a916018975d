"""The scripted baseline agents of the rlc lesson: programs, not language models.

Each reads its instance's question as the task states it (L and V0) and decides each message from
the results it has read so far.

`careful` (seed 0 and every multiple of 4) first surveys the decay at 0.1, 0.5, 2.5 and 12.5 ms (and
62.5 ms if the voltage has not yet fallen below half of V0), each at a hundredth of its time as dt,
to find its time scale: τ is a quarter of the first survey time at which the voltage is below V0/2.
Then it reads the voltage at τ, 2τ and 3τ at a fine step (τ/4000, and finer than every survey step).
A voltage that is a sum of two modes, v_k = α λ1^k + β λ2^k at equal intervals, obeys v_{k+1} = a
v_k + b v_{k−1} (Prony's method), and so does the trapezoidal rule's own voltage at multiples of its
step; from V0 and the three readings it solves a and b, and the modes are complex (underdamped)
exactly when a² + 4b < 0. It then shows it with its own data at that fine step: the voltage read at
π/ω_d (ω_d from the complex modes), where an underdamped voltage is lowest, below zero; or, for an
overdamped circuit, at the time its two modes bring the voltage to a tenth of 0.1 % of V0, positive.
It is right on every instance of the family.

The others are wrong on purpose, to test the scorecard, and run on any instance: `coarse-dt` reads
eight times from 0.5 to 64 ms at dt = 0.5 ms and answers underdamped when one voltage is below zero
(above a step of T0/π, trapezoidal ringing takes an overdamped circuit below zero, and its own
readings then support the wrong answer); `watch-to-one-percent` reads at doubling times at dt = 0.001 ms until the
voltage is below 1 % of V0 and answers underdamped only if it saw it below zero (a near-critical
undershoot comes later); `careless` does the careful work and answers the other regime. The trivial
program (`no-experiment`) answers overdamped without an experiment.
"""

import cmath
import math
from typing import Any, cast

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.rlc import LESSON, family, lab

STRATEGIES = ("careful", "coarse-dt", "watch-to-one-percent", "careless")
CAREFUL = "careful"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, "overdamped"
SURVEY = (0.1, 0.5, 2.5, 12.5, 62.5)  # ms: the careful survey's times
SURVEY_STEPS = 100  # the survey's dt is its time over this
FINE_STEPS = 4000  # the fine dt is τ over this
SHOWN = 1e-4  # the careful program shows an overdamped voltage at this share of V0
COARSE = (0.5, (0.5, 1, 2, 4, 8, 16, 32, 64))  # dt and times of the coarse-dt program, ms
WATCH = (0.001, 0.05, 0.01)  # dt, first time (doubled each call) and the share of V0 the watch stops at


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str = "default", seed: int = 0, plan: str | None = None) -> str:
    return f"rlc baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


def _seen(conversation: list[dict[str, Any]]) -> dict[tuple[float, float], float]:
    """{(time, dt): voltage} of the calls that ran so far."""
    return {(call.arguments["time_ms"], call.arguments["dt_ms"]): result.content[lab.KEY]
            for call, result in exchanges(conversation) if call is not None and result.ok and call.name == lab.TOOL}


def _asked(conversation: list[dict[str, Any]]) -> int:
    """Calls asked for so far, refused ones too (a program must not ask for the same call forever)."""
    return sum(1 for call, _ in exchanges(conversation) if call is not None and call.name != ANSWER)


def _calls(reads: list[tuple[float, float]], start: int) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(str(start + i), lab.TOOL, {"time_ms": t, "dt_ms": dt}) for i, (t, dt) in enumerate(reads))


def _answer(regime: str, text: str) -> ModelMessage:
    return ModelMessage(text, (ToolCall("answer", ANSWER, {"regime": regime}),))


def _other(regime: str) -> str:
    return lab.OVERDAMPED if regime == lab.UNDERDAMPED else lab.UNDERDAMPED


def prony(initial: float, first: float, second: float, third: float) -> tuple[float, float]:
    """(a, b) of v_{k+1} = a v_k + b v_{k−1} through four readings at equal intervals."""
    det = first * first - initial * second
    return (second * first - initial * third) / det, (first * third - second * second) / det


def modes(a: float, b: float) -> tuple[complex, complex]:
    """The two roots of λ² = a λ + b (complex conjugates when a² + 4b < 0)."""
    root = cmath.sqrt(a * a + 4 * b)
    return (a + root) / 2, (a - root) / 2


def shown_time(initial: float, a: float, b: float, tau: float) -> tuple[str, float]:
    """(the regime the modes say, the time at which to show it): the lowest point of an underdamped
    voltage, π/ω_d; or, overdamped, when the two modes bring the voltage to SHOWN of V0."""
    first, second = modes(a, b)
    if a * a + 4 * b < 0:
        return lab.UNDERDAMPED, math.pi * tau / abs(cmath.phase(first))
    slow = math.log(first.real) / tau
    fast = math.log(second.real) / tau if second.real > 0 else -math.inf
    time = tau
    while True:
        model = math.exp(slow * time) if fast == -math.inf else (fast * math.exp(slow * time) - slow * math.exp(fast * time)) / (fast - slow)
        if model < SHOWN or time >= lab.TIME.high:
            return lab.OVERDAMPED, min(time, lab.TIME.high)
        time *= 1.1


def _careful(initial: float, careless: bool = False) -> Program:
    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        asked, seen = _asked(conversation), _seen(conversation)
        survey = [(t, t / SURVEY_STEPS) for t in SURVEY if (t, t / SURVEY_STEPS) in seen]
        below = [t for t, dt in survey if seen[(t, dt)] < initial / 2]
        if asked == 0:
            return ModelMessage("A survey of the decay at 0.1, 0.5, 2.5 and 12.5 ms, each at a hundredth of its time as dt.",
                                _calls([(t, t / SURVEY_STEPS) for t in SURVEY[:4]], 1))
        if not below and asked == 4:
            return ModelMessage("Still above half of V0 at 12.5 ms: one more reading, at 62.5 ms.",
                                _calls([(SURVEY[4], SURVEY[4] / SURVEY_STEPS)], asked + 1))
        if not below:
            return _answer(lab.OVERDAMPED, "The voltage never fell below half of V0 in my survey; I guess overdamped.")
        tau = below[0] / 4
        fine = min(tau / FINE_STEPS, min(dt for _, dt in survey) / 2)
        readings = [(k * tau, fine) for k in (1, 2, 3)]
        if not all(r in seen for r in readings):
            return ModelMessage(f"The voltage falls below V0/2 by {below[0]:g} ms: I read it at {tau:g}, {2 * tau:g} and "
                                f"{3 * tau:g} ms with dt = {fine:.3g} ms, to fit its two modes.", _calls(readings, asked + 1))
        a, b = prony(initial, *(seen[r] for r in readings))
        regime, time = shown_time(initial, a, b, tau)
        if (time, fine) not in seen:
            what = "where an underdamped voltage is lowest" if regime == lab.UNDERDAMPED else "where it should be nearly zero"
            return ModelMessage(f"Four readings a time τ apart obey v(k+1) = a v(k) + b v(k−1) with a = {a:.6g} and b = {b:.6g}; "
                                f"a² + 4b = {a * a + 4 * b:.3g}, so its modes are {'complex' if regime == lab.UNDERDAMPED else 'real'}. "
                                f"I read the voltage at {time:.6g} ms, {what}, at the same dt.", _calls([(time, fine)], asked + 1))
        value = seen[(time, fine)]
        answer = _other(regime) if careless else regime
        return _answer(answer, f"At {time:.6g} ms and dt = {fine:.3g} ms the voltage is {value:.6g} V "
                               f"({'below zero' if value < 0 else 'still positive'}), as the modes said: {regime}. "
                               f"I checked my step by reading the modes at a step {FINE_STEPS} times finer than τ. I answer {answer}.")

    return program


def _coarse() -> Program:
    dt, times = COARSE

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        asked = _asked(conversation)
        if asked < len(times):
            return ModelMessage(f"Readings at dt = {dt:g} ms.", _calls([(t, dt) for t in times[asked : asked + 4]], asked + 1))
        negative = [key for key, value in _seen(conversation).items() if value < 0]
        if negative:
            return _answer(lab.UNDERDAMPED, f"The voltage is below zero at {negative[0][0]:g} ms: it overshoots.")
        return _answer(lab.OVERDAMPED, "The voltage never went below zero in my readings.")

    return program


def _watch(initial: float) -> Program:
    dt, first, share = WATCH

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        asked, seen = _asked(conversation), _seen(conversation)
        if any(value < 0 for value in seen.values()):
            return _answer(lab.UNDERDAMPED, "The voltage went below zero: it overshoots.")
        last = seen.get((first * 2 ** (asked - 1), dt)) if asked else None
        time = first * 2**asked
        if (last is not None and last < share * initial) or time > lab.TIME.high or asked >= lab.BUDGET:
            return _answer(lab.OVERDAMPED, f"The voltage fell below {100 * share:g} % of V0 without crossing zero.")
        return ModelMessage(f"Reading the voltage at {time:g} ms.", _calls([(time, dt)], asked + 1))

    return program


def no_experiment(conversation: list[dict[str, Any]]) -> ModelMessage:
    """The trivial program: no experiment; overdamped."""
    return _answer(lab.OVERDAMPED, "A guess, without an experiment.")


def baseline(variant: str = "default", seed: int = 0, instance: Instance | str | None = None,
             plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage for an instance (None: the seed's question); `seed`
    picks the strategy (`plan` names one instead)."""
    if not hasattr(instance, "parameters"):  # an id, or None: the seed's question
        instance = LESSON.instance(instance if instance is not None else family.SEED_ID)
    initial = cast(Instance, instance).parameters["initial_voltage_v"]
    plan = plan or strategy(seed)
    if plan == TRIVIAL:
        return no_experiment
    if plan in ("careful", "careless"):
        return _careful(initial, careless=plan == "careless")
    if plan == "coarse-dt":
        return _coarse()
    return _watch(initial)
