"""What the build decides about an rlc run, from numbers it recomputes (never the model's words),
against the regime of the exact damping ratio ζ = (R/2)√(C/L), which no simulation produced.

Every number is the run's instance's: its circuit (R and C, never stated to the agent, L and V0).
Two judgements, kept apart. `right` (score): the answer is the regime of ζ (below 1 underdamped,
above 1 overdamped). `supported` (judge): the run's own voltages show that regime: take its accepted
`capacitor_voltage` calls at the smallest dt it used and recompute each; they show underdamped when
one voltage is below zero, and overdamped when none is and one is at most 0.1 % of V0 (the run
watched the decay that far). Not checkable: no such call, or readings that show neither; then no
answer is supported. A coarse step can make an overdamped circuit ring below zero: such readings
support a wrong answer, and the page says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.agents.messages import Transcript
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.tools import Tool
from replaylab.lessons import REFERENCE_GROUP, Instance, answer_facts, caught, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.rlc import LESSON, family, lab, physics

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
CHANGED_RESISTANCE = 1.001  # the changed simulation's R, relative: the replay must catch it
EVIDENCE = "numerically verified against an exact formula"


def _tool(instance: Instance) -> Tool:
    return lab.tools(*family.circuit(instance))[0]


def readings(transcript: Transcript, instance: Instance) -> list[dict[str, Any]]:
    """Each accepted capacitor_voltage call, recomputed, beside the exact voltage at its time."""
    tool = _tool(instance)
    resistance, inductance, capacitance, initial = family.circuit(instance)
    return [{"time": args["time_ms"], "dt": args["dt_ms"], "voltage": tool.function(**args)[lab.KEY],
             "exact": physics.exact_voltage(args["time_ms"], resistance, inductance, capacitance, initial)}
            for _, _call, args in validated_calls(transcript, {tool.name: tool})]


def shows(at_smallest: dict[float, float], initial: float) -> tuple[str | None, float | None]:
    """(the regime the readings of one dt show, the time that shows it), or (None, None)."""
    negative = [t for t, v in sorted(at_smallest.items()) if v < 0]
    if negative:
        return lab.UNDERDAMPED, negative[0]
    small = [t for t, v in sorted(at_smallest.items()) if v <= lab.SUPPORT_FRACTION * initial]
    return (lab.OVERDAMPED, small[0]) if small else (None, None)


def agent_conclusion(transcript: Transcript, instance: Instance) -> dict[str, Any]:
    """What the run's own voltages at the smallest dt it used show, against the exact regime."""
    read = readings(transcript, instance)
    if not read:
        return {"checkable": False, "reason": f"the agent made no accepted {lab.TOOL} call"}
    initial = family.circuit(instance)[3]
    smallest = min(r["dt"] for r in read)
    at = {r["time"]: r["voltage"] for r in read if r["dt"] == smallest}
    regime, when = shows(at, initial)
    if regime is None:
        return {"checkable": False, "smallest_dt": smallest,
                "reason": f"at the smallest dt it used ({smallest:g} ms) no voltage is below zero and none is at most "
                          f"{100 * lab.SUPPORT_FRACTION:g} % of V0"}
    zeta = family.zeta_of(instance)
    exact = family.regime(zeta)
    return {
        "checkable": True,
        "smallest_dt": smallest,
        "at_smallest": [{"time": t, "voltage": shown(v, f"{v:.6g}")} for t, v in sorted(at.items())],
        "shows": regime,
        "when": when,
        "damping_ratio": shown(zeta, f"{zeta:.5f}"),
        "exact": exact,
        "agrees": regime == exact,
        "evidence": EVIDENCE if regime == exact else None,
    }


def support(answer: dict[str, Any] | None, experiments: dict[str, Any], initial: float) -> tuple[bool | None, str]:
    """(supported, why): whether the run's own voltages at its smallest dt show its answer's regime."""
    if answer is None:
        return None, "no answer to support"
    if not experiments["checkable"]:
        return False, f"its experiments show neither regime: {experiments['reason']}"
    dt, when = experiments["smallest_dt"], experiments["when"]
    value = next(r["voltage"]["shown"] for r in experiments["at_smallest"] if r["time"] == when)
    seen = (f"at dt {dt:g} ms its own voltage is {value} V at {when:g} ms, below zero" if experiments["shows"] == lab.UNDERDAMPED
            else f"at dt {dt:g} ms its own voltages never go below zero and reach {value} V at {when:g} ms, at most "
                 f"{100 * lab.SUPPORT_FRACTION:g} % of V0 ({initial:g} V)")
    if experiments["shows"] == answer["regime"]:
        return True, f"{seen}: {experiments['shows']}"
    return False, f"{seen}, which shows {experiments['shows']}"


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a run, its calls, its answer, what its experiments show and whether they support it."""
    instance = LESSON.instance_of(run)
    facts = answer_facts(run, LESSON.variant_of(run))
    experiments = agent_conclusion(run.transcript, instance)
    supported, why = support(facts["answer"], experiments, family.circuit(instance)[3])
    return {**run_facts(run, instance), **facts, "supported": supported, "support": why, "experiments": experiments,
            "readings": readings(run.transcript, instance)}


def changed_resistance(run: Recording, tolerance: float) -> dict[str, Any]:
    """Replay the run against a circuit whose R is 0.1 % higher: the replay must catch the change."""
    resistance, inductance, capacitance, initial = family.circuit(LESSON.instance_of(run))
    changed = resistance * CHANGED_RESISTANCE
    try:
        replay(run, LESSON.variant_of(run), tolerance, resistance=changed, inductance=inductance, capacitance=capacitance,
               initial=initial)
    except ReplayMismatch as mismatch:
        return {"resistance": changed, **caught(mismatch)}
    return {"resistance": changed, "caught": False}


def judge(runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
    """The verdict of each replayed run; the runs of the reference group are also replayed against a
    changed circuit."""
    verdicts: dict[str, dict[str, Any]] = {}
    for run in runs:
        verdicts[run.run] = verdict_of(run)
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["changed_resistance"] = changed_resistance(run, tolerance)
    return verdicts


RIGHT_ANSWER = (
    "the answer's regime is that of the exact damping ratio ζ = (R/2)√(C/L) of the circuit's own R, L and C (below 1 "
    "underdamped, above 1 overdamped), computed without a simulation."
)
NO_ANSWER, OTHER_REGIME = "no answer", "the exact damping ratio gives the other regime"


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance, else
    what is wrong (fixed texts, so that the scorecard counts the runs that got the same thing wrong
    together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    return None if answer["regime"] == truth["regime"] else OTHER_REGIME


answer_text = lab.answer_text


def truth_text(truth: dict[str, Any]) -> str:
    return f"the exact damping ratio ζ = (R/2)√(C/L) is {truth['damping_ratio']['shown']}: {truth['regime']}"


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    return judgement_line(verdict, score(verdict, truth), answer_text, truth_text(truth))
