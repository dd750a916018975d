"""What the build decides about a resonance run, from numbers it recomputes (never the model's words),
against ω_r = √(ω0² − 2γ²), the closed form, which no simulation produced.

Every number is the run's instance's: its oscillator (ω0 and γ, never stated to the agent, and F),
its range and its tolerance. Two judgements, kept apart. `right` (score): the answer lies within the
tolerance of ω_r. `supported` (judge): the run's own amplitudes put the peak there: take its accepted
`steady_amplitude` calls at the largest number of periods it used, recompute each, and find the peak
as `peak.located` does (the largest amplitude at neither end of the frequencies measured, and the top
of the parabola through it and its nearest neighbour on each side); the answer is supported when
that top lies within the tolerance of it. Not checkable: no such call, fewer than three frequencies
at that number of periods, or the largest amplitude at an end; then no answer is supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.agents.messages import Transcript
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.tools import Tool
from replaylab.lessons import REFERENCE_GROUP, Instance, answer_facts, caught, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.resonance import LESSON, family, lab, peak, physics

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
CHANGED_NATURAL = 1.001  # the changed simulation's ω0, relative: the replay must catch it
EVIDENCE = "numerically verified against a closed form"


def _tool(instance: Instance) -> Tool:
    return lab.tools(*family.oscillator(instance))[0]


def measurements(transcript: Transcript, instance: Instance) -> list[dict[str, Any]]:
    """Each accepted steady_amplitude call, recomputed, against the exact steady amplitude at its
    frequency: how far from steady each number of periods left it."""
    tool = _tool(instance)
    natural, damping, force = family.oscillator(instance)
    found: list[dict[str, Any]] = []
    for _, _call, args in validated_calls(transcript, {tool.name: tool}):
        amplitude = tool.function(**args)[lab.KEY]
        exact = physics.exact_amplitude(args["frequency_rad_s"], natural, damping, force)
        found.append({"frequency": args["frequency_rad_s"], "periods": args["periods"], "amplitude_m": amplitude,
                      "exact_m": exact, "error": abs(amplitude / exact - 1)})
    return found


def agent_conclusion(transcript: Transcript, instance: Instance) -> dict[str, Any]:
    """Where the run's own amplitudes at the largest number of periods it used put the peak, against ω_r."""
    measured = measurements(transcript, instance)
    if not measured:
        return {"checkable": False, "reason": f"the agent made no accepted {lab.TOOL} call"}
    most = max(m["periods"] for m in measured)
    at = {m["frequency"]: m["amplitude_m"] for m in measured if m["periods"] == most}
    found = peak.located(at)
    if not found["found"]:
        return {"checkable": False, "periods": most, "reason": f"at the largest number of periods it used ({most}): {found['reason']}"}
    exact = family.resonance(instance)
    tolerance = family.question(instance)[2]
    off = found["top"] - exact
    return {
        "checkable": True,
        "periods": most,
        "tolerance_rad_s": tolerance,
        "at_most": [{"frequency": f, "amplitude_m": shown(a, f"{a:.6g}")} for f, a in sorted(at.items())],
        "best": found["best"], "below": found["below"], "above": found["above"],
        "top": shown(found["top"], f"{found['top']:.6g}"),
        "exact": shown(exact, f"{exact:.6g}"),
        "off": shown(off, f"{off:+.3g}"),
        "within": abs(off) <= tolerance,
        "evidence": EVIDENCE if abs(off) <= tolerance else None,
    }


def support(answer: dict[str, Any] | None, experiments: dict[str, Any]) -> tuple[bool | None, str]:
    """(supported, why): whether the peak the run's own amplitudes locate lies within the tolerance of
    its answer; None without an answer."""
    if answer is None:
        return None, "no answer to support"
    if not experiments["checkable"]:
        return False, f"its experiments locate no peak: {experiments['reason']}"
    top, tolerance = experiments["top"], experiments["tolerance_rad_s"]
    at = (f"its own amplitudes at {experiments['periods']} periods put the top of the peak at {top['shown']} rad/s, "
          f"which lies")
    if abs(top["value"] - answer["frequency_rad_s"]) <= tolerance:
        return True, f"{at} within {tolerance:g} rad/s of its answer"
    return False, f"{at} more than {tolerance:g} rad/s from its answer"


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a run, its calls, its answer, what its experiments show and whether they support it."""
    instance = LESSON.instance_of(run)
    facts = answer_facts(run, LESSON.variant_of(run))
    experiments = agent_conclusion(run.transcript, instance)
    supported, why = support(facts["answer"], experiments)
    return {**run_facts(run, instance), **facts, "supported": supported, "support": why, "experiments": experiments,
            "measurements": measurements(run.transcript, instance)}


def changed_oscillator(run: Recording, tolerance: float) -> dict[str, Any]:
    """Replay the run against an oscillator whose ω0 is 0.1 % higher: the replay must catch the change."""
    natural, damping, force = family.oscillator(LESSON.instance_of(run))
    changed = natural * CHANGED_NATURAL
    try:
        replay(run, LESSON.variant_of(run), tolerance, natural=changed, damping=damping, force=force)
    except ReplayMismatch as mismatch:
        return {"natural": changed, **caught(mismatch)}
    return {"natural": changed, "caught": False}


def judge(runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
    """The verdict of each replayed run; the runs of the reference group are also replayed against a
    changed oscillator."""
    verdicts: dict[str, dict[str, Any]] = {}
    for run in runs:
        verdicts[run.run] = verdict_of(run)
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["changed_oscillator"] = changed_oscillator(run, tolerance)
    return verdicts


RIGHT_ANSWER = (
    "the answer lies within the question's tolerance (0.01 rad/s in the seed's question) of the exact frequency of the "
    "largest steady amplitude, ω_r = √(ω0² − 2γ²), computed from the oscillator's own ω0 and γ (no simulation)."
)
NO_ANSWER, OUTSIDE = "no answer", "the answer lies further than the tolerance from the exact peak"


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance, else
    what is wrong (fixed texts, so that the scorecard counts the runs that got the same thing wrong
    together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    if abs(answer["frequency_rad_s"] - truth["resonance"]["value"]) > truth["tolerance_rad_s"]:
        return OUTSIDE
    return None


answer_text = lab.answer_text


def truth_text(truth: dict[str, Any]) -> str:
    return f"the exact peak ω_r = √(ω0² − 2γ²) is at {truth['resonance']['shown']} rad/s, the tolerance {truth['tolerance_rad_s']:g} rad/s"


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    return judgement_line(verdict, score(verdict, truth), answer_text, truth_text(truth))
