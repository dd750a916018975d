"""What the build decides about a pendulum run, from numbers it recomputes (never the model's words),
against the exact crossing from the arithmetic-geometric mean, which no simulation produced.

Every number is the run's instance's: its threshold, its precision, and its pendulum's L and g (the
tools are rebuilt with them). Two judgements, kept apart. `right` (score): the exact crossing lies in
the answer's bracket (high = low + the precision, low a multiple of it: the answer tool refuses any
other pair), both included. `supported` (judge): what the agent's experiments show lies in its
answer: take the accepted `pendulum_period` calls at the smallest dt the agent used, recompute each
period, and divide by the small-angle period of its pendulum (the build's own). Ordered by amplitude,
the bracket its experiments put the crossing in (derived by the build, never stated by the agent) is
the pair of neighbouring amplitudes between which the excess goes from at most the threshold to above
it; the answer is supported when that bracket lies in it. Not checkable: no such call, fewer than two
amplitudes at that dt, or no crossing (or more than one) among them; then no answer is supported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from replaylab.agents.messages import Transcript
from replaylab.agents.tools import Tool
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, Instance, answer_facts, caught, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.pendulum import LESSON, family, lab, physics

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
CHANGED_G = 9.80  # m/s^2, the changed simulation the replay must catch
EVIDENCE = "numerically verified against an exact formula"
VERIFIED, TOO_COARSE, REFUTED = "verified", "too coarse", "refuted"  # too coarse: wider than the precision asked


@cache
def exact_crossing(excess: float = physics.EXCESS) -> float:
    """The amplitude (degrees) at which the exact period exceeds the small-angle period by `excess`
    (the seed's 1 % by default)."""
    return physics.exact_crossing(excess)


def _percent(value: float) -> dict[str, Any]:
    return shown(100 * value, f"{100 * value:.4f}")


def _instance(instance: Instance | None) -> Instance:
    """The instance a judgement is of: the seed's question unless one is given."""
    return LESSON.instance(family.SEED_ID) if instance is None else instance


def _tools(instance: Instance) -> dict[str, Tool]:
    """{name: tool} of the instance's pendulum."""
    g, length = family.pendulum(instance)
    return {t.name: t for t in lab.tools(g, length)}


def agent_conclusion(transcript: Transcript, instance: Instance | None = None) -> dict[str, Any]:
    """Where the run's own periods put the crossing (a bracket the build derives from its calls at its
    smallest dt, recomputed), against the exact crossing; of the instance's question (the seed's by default)."""
    instance = _instance(instance)
    excess, precision = family.excess(instance), family.precision(instance)
    percent = lab.percent_text(excess)
    tools = _tools(instance)
    calls = [args for _, call, args in validated_calls(transcript, tools) if call.name == lab.PERIOD_TOOL]
    if not calls:
        return {"checkable": False, "reason": f"the agent made no accepted {lab.PERIOD_TOOL} call"}
    smallest = min(args["dt"] for args in calls)
    reference = physics.small_angle_period(*family.pendulum(instance))
    at_smallest: dict[float, float] = {}
    for args in calls:
        if args["dt"] == smallest:
            at_smallest[args["amplitude_deg"]] = tools[lab.PERIOD_TOOL].function(**args)[lab.PERIOD_KEY]
    at = f"at the smallest dt the agent used ({smallest:g} s)"
    if len(at_smallest) < 2:
        return {"checkable": False, "smallest_dt": smallest, "reason": f"fewer than two amplitudes {at}"}
    rows = [(a, p, p / reference - 1) for a, p in sorted(at_smallest.items())]
    crossings = [(low[0], high[0]) for low, high in zip(rows, rows[1:]) if low[2] <= excess < high[2]]
    if len(crossings) != 1:
        below = [e <= excess for *_, e in rows]
        where = (
            f"every excess is at most {percent}" if all(below)
            else f"every excess is above {percent}" if not any(below)
            else f"the excess does not rise through {percent} exactly once from one amplitude to the next"
        )
        return {"checkable": False, "smallest_dt": smallest, "reason": f"its calls {at} do not bracket a crossing of {percent}: {where}"}
    (low, high), exact = crossings[0], exact_crossing(excess)
    inside = low <= exact <= high
    within = within_precision(low, high, precision)
    verdict = REFUTED if not inside else VERIFIED if within else TOO_COARSE
    return {
        "checkable": True,
        "threshold": excess,
        "precision_deg": precision,
        "smallest_dt": smallest,
        "small_angle_period_s": shown(reference, f"{reference:.6g}"),
        "at_smallest": [
            {"amplitude": a, "period_s": shown(p, f"{p:.6g}"), "excess_percent": _percent(e)} for a, p, e in rows
        ],
        "bracket": [low, high],
        "within_a_degree": within_a_degree(low, high),
        "within_precision": within,
        "exact_crossing": shown(exact, f"{exact:.4f}"),
        "inside": inside,
        "verdict": verdict,
        "evidence": EVIDENCE if inside else None,
    }


def within_a_degree(low: float, high: float) -> bool:
    """Whether a bracket lies within two adjacent whole degrees (22 to 23, or 22.7 to 22.9): an answer of
    those two degrees can hold it."""
    return math.floor(low) + 1 >= high


def within_precision(low: float, high: float, precision: float) -> bool:
    """Whether a bracket lies within one bracket of the precision asked (22 to 23, or 22.7 to 22.9, at 1
    degree; 22.5 to 23 at half a degree): an answer of that form can hold it."""
    return (math.floor(low / precision) + 1) * precision >= high


def period_errors(transcript: Transcript, instance: Instance | None = None) -> list[dict[str, Any]]:
    """Each accepted pendulum_period call, recomputed, with its relative error against the exact period
    at its amplitude: how far from converged each step the agent used was."""
    instance = _instance(instance)
    tool = _tools(instance)[lab.PERIOD_TOOL]
    g, length = family.pendulum(instance)
    found: list[dict[str, Any]] = []
    for _, _call, args in validated_calls(transcript, {tool.name: tool}):
        period, exact = tool.function(**args)[lab.PERIOD_KEY], physics.exact_period(args["amplitude_deg"], g, length)
        found.append({"amplitude": args["amplitude_deg"], "dt": args["dt"], "period_s": period, "exact_period_s": exact,
                      "error": abs(period / exact - 1)})
    return found


def changed_gravity(run: Recording, tolerance: float) -> dict[str, Any]:
    """Replay the run against a simulation with g = 9.80 m/s²: the replay must catch the change."""
    variant = LESSON.variant_of(run)
    try:
        replay(run, variant, tolerance, g=CHANGED_G)
    except ReplayMismatch as mismatch:
        return {"g": CHANGED_G, **caught(mismatch)}
    return {"g": CHANGED_G, "caught": False}


def support(answer: dict[str, Any] | None, experiments: dict[str, Any]) -> tuple[bool | None, str]:
    """(supported, why): whether the bracket the run's own periods put the crossing in lies in its answer; None
    without an answer."""
    if answer is None:
        return None, "no answer to support"
    if not experiments["checkable"]:
        return False, f"its experiments show no bracket: {experiments['reason']}"
    low, high = experiments["bracket"]
    at = f"its own periods at dt {experiments['smallest_dt']:g} s put the crossing between {low:g} and {high:g} degrees, which"
    if answer["low"] <= low and high <= answer["high"]:
        return True, f"{at} lies in its answer"
    return False, f"{at} does not lie in its answer"


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a run, its calls, its answer, what its experiments show and whether they support it."""
    instance = LESSON.instance_of(run)
    facts = answer_facts(run, LESSON.variant_of(run))
    experiments = agent_conclusion(run.transcript, instance)
    supported, why = support(facts["answer"], experiments)
    return {**run_facts(run, instance), **facts, "supported": supported, "support": why, "experiments": experiments,
            "period_errors": period_errors(run.transcript, instance)}


def judge(runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
    """The verdict of each replayed run; the runs of the reference group are also replayed against
    the changed simulation."""
    verdicts: dict[str, dict[str, Any]] = {}
    for run in runs:
        verdicts[run.run] = verdict_of(run)
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["changed_gravity"] = changed_gravity(run, tolerance)
    return verdicts


RIGHT_ANSWER = (
    "the exact crossing of the question's threshold (1 % in the seed's question; from the arithmetic-geometric mean, "
    "no simulation) lies between the answer's low and high (a bracket of the precision the question asks: two "
    "adjacent whole degrees in the seed's), both included."
)
NO_ANSWER, OUTSIDE = "no answer", "the exact crossing lies outside its bracket"


def whole_degrees_around(amplitude: float) -> list[float]:
    """The two adjacent whole degrees around an amplitude: [22, 23] around 22.81."""
    return family.bracket(amplitude, 1)


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance, else
    what is wrong (fixed texts, so that the scorecard counts the runs that got the same thing wrong
    together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    if not answer["low"] <= truth["crossing"]["value"] <= answer["high"]:
        return OUTSIDE
    return None


answer_text = lab.answer_text


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    said = f"the exact crossing is at {truth['crossing']['shown']} degrees"
    return judgement_line(verdict, score(verdict, truth), answer_text, said)
