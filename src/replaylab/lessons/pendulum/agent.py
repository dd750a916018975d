"""The scripted baseline agents of the pendulum lesson: programs, not language models.

`careful` (seed 0 and every seed that is a multiple of 4) surveys three amplitudes at dt 0.01 s,
narrows the crossing of 1 % to two adjacent whole degrees (guessing where it lies from the excess
growing about as the square of the amplitude), then halves dt twice and measures the bracket again
each time, moving it by a degree if the crossing left it, deciding each message from the results
it has read so far, and answers with that bracket. The others are wrong on purpose, to test the
scorecard: `coarse-dt` does the same narrowing at dt 0.1 s and never refines it (its own periods
support its answer, which the coarse step may have moved); `stops-at-20-and-30` checks convergence
in dt, but only at 20 and 30 degrees, and answers the two whole degrees where the excess would reach
1 % if it grew as the square of the amplitude, never measured there (right by luck, not supported);
`careless` does the careful work and answers the bracket one degree higher (wrong, not supported).
"""

import math

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons.pendulum import lab, physics

STRATEGIES = ("careful", "coarse-dt", "stops-at-20-and-30", "careless")
CAREFUL = "careful"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, a fixed guess
CAREFUL_DTS = (0.01, 0.005, 0.0025)  # s: the survey's step, then halved twice
COARSE_DT = 0.1  # s
WIDE = (20, 30)  # degrees: where the wrong-on-purpose search stops


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant="default", seed=0, plan=None):
    return f"pendulum baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


def no_experiment(conversation):
    """The trivial program: no experiment; a fixed guess of 20 to 21 degrees."""
    return ModelMessage("A guess, without an experiment.", (ToolCall("answer", ANSWER, {"low": 20, "high": 21}),))


def _seen(conversation):
    """(the small-angle period or None, {dt: {amplitude: period}}, calls that ran) so far."""
    reference, found, ran = None, {}, 0
    for call, result in exchanges(conversation):
        if call is None or not result.ok:
            continue
        ran += 1
        if call.name == lab.SMALL_ANGLE_TOOL:
            reference = result.content[lab.PERIOD_KEY]
        elif call.name == lab.PERIOD_TOOL:
            found.setdefault(call.arguments["dt"], {})[call.arguments["amplitude_deg"]] = result.content[lab.PERIOD_KEY]
    return reference, found, ran


def _excesses(periods, reference):
    return {a: p / reference - 1 for a, p in sorted(periods.items())}


def _ends(excesses):
    """(the largest amplitude at most 1 % over, the smallest one above 1 %), either None if there is none."""
    below = [a for a, e in excesses.items() if e <= physics.EXCESS]
    above = [a for a, e in excesses.items() if e > physics.EXCESS]
    return (max(below) if below else None), (min(above) if above else None)


def _guess(excesses, low, high):
    """Whole degrees around where the excess reaches 1 %, if it grows as the amplitude squared between
    the two ends."""
    e_low, e_high = excesses[low], excesses[high]
    squared = low**2 + (physics.EXCESS - e_low) * (high**2 - low**2) / (e_high - e_low)
    guess = math.floor(math.sqrt(squared))
    return [a for a in (guess, guess + 1) if low < a < high] or [(low + high) // 2]


def _probes(excesses, previous):
    """The amplitudes to measure next at one dt, or [] when two adjacent whole degrees bracket 1 %
    there. `previous`: the bracket found at the dt before (measured first at a new dt)."""
    missing = [a for a in previous if a not in excesses]
    if missing:
        return missing
    low, high = _ends(excesses)
    if low is None:
        return [high - 1]
    if high is None:
        return [low + 1]
    return [] if high - low == 1 else _guess(excesses, low, high)


def _calls(amplitudes, dt, start):
    return tuple(
        ToolCall(str(start + i), lab.PERIOD_TOOL, {"amplitude_deg": a, "dt": dt}) for i, a in enumerate(amplitudes)
    )


def _conclude(found, reference, dts, done, careless=False, guessed=False):
    """The answer, from the finest dt at which a bracket was found (careless: a degree higher; guessed:
    the two whole degrees where the excess would reach 1 % between the ends if it grew as the square of
    the amplitude)."""
    finest = dts[done - 1]
    excesses = _excesses(found[finest], reference)
    low, high = _ends(excesses)
    checked = (
        f"halving dt from {dts[0]:g} s to {finest:g} s kept the crossing there"
        if done > 1
        else "I did not check it at a smaller dt"
    )
    if guessed:
        guess = _guess(excesses, low, high)[0]
        answer = {"low": guess, "high": guess + 1}
    else:
        answer = {"low": low + 1, "high": high + 1} if careless else {"low": low, "high": high}
    return ModelMessage(
        f"At dt = {finest:g} s the period exceeds the small-angle period by {100 * excesses[low]:.3f} % at {low} degrees "
        f"and by {100 * excesses[high]:.3f} % at {high} degrees, so the 1 % crossing lies between {low} and {high} "
        f"degrees; {checked}. I answer {answer['low']} to {answer['high']} degrees.",
        (ToolCall("answer", ANSWER, answer),),
    )


def _narrowing(dts, first, careless=False):
    """A program that brackets the crossing at dts[0], then again at each later dt while the budget lasts."""

    def program(conversation):
        reference, found, ran = _seen(conversation)
        if reference is None:
            calls = (ToolCall("1", lab.SMALL_ANGLE_TOOL, {}),) + _calls(first, dts[0], 2)
            return ModelMessage(f"The small-angle period, and a survey at dt = {dts[0]:g} s.", calls)
        previous = ()
        for done, dt in enumerate(dts):
            excesses = _excesses(found.get(dt, {}), reference)
            probes = _probes(excesses, previous)
            if len(probes) > lab.BUDGET - ran:
                return _conclude(found, reference, dts, max(done, 1), careless)  # the budget cannot take this dt further
            if probes:
                what = "Narrowing the crossing" if dt == dts[0] else "Checking convergence: the bracket again"
                return ModelMessage(f"{what} at dt = {dt:g} s.", _calls(probes, dt, ran + 1))
            previous = _ends(excesses)
        return _conclude(found, reference, dts, len(dts), careless)

    return program


def _wide(dts):
    """Measures 20 and 30 degrees at two dt, and answers two whole degrees guessed between them."""

    def program(conversation):
        reference, found, ran = _seen(conversation)
        if reference is None:
            calls = (ToolCall("1", lab.SMALL_ANGLE_TOOL, {}),) + _calls(WIDE, dts[0], 2)
            return ModelMessage(f"The small-angle period, and {WIDE[0]} and {WIDE[1]} degrees at dt = {dts[0]:g} s.", calls)
        if dts[1] not in found:
            return ModelMessage(f"The same two amplitudes at dt = {dts[1]:g} s.", _calls(WIDE, dts[1], ran + 1))
        return _conclude(found, reference, dts[:2], 2, guessed=True)

    return program


def baseline(variant="default", seed=0, instance=None, plan=None):
    """A program(conversation) -> ModelMessage; `seed` picks the strategy (`plan` names one instead)
    and shifts the survey's amplitudes."""
    first = (10 + seed % 5, 20 + seed % 5, 30 + seed % 5)
    plan = plan or strategy(seed)
    if plan == TRIVIAL:
        return no_experiment
    if plan in ("careful", "careless"):
        return _narrowing(CAREFUL_DTS, first, careless=plan == "careless")
    if plan == "coarse-dt":
        return _narrowing((COARSE_DT,), first)
    return _wide(CAREFUL_DTS)
