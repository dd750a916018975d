"""The hunter's judge: the answer a hunt submitted, and what its experiments show about the claim,
computed from the arguments of the agent's calls.

It never reads the model's text and never trusts a stored result (docs/physics.md 2.5). Each run is
judged against the claim of its own instance (a seed's, or a drawn one: lab.claim_of). Two judgements:
`right` (score): a counterexample is right when the build runs the answer's experiment itself and
its result breaks the claim inside the claim's domain (any such experiment, not only the worst
case); "none found" is right when the build's scan of the whole domain finds no violation.
`supported` (judge): a counterexample the hunt ran itself, among its counted experiments, whose
result broke the claim; "none found" after at least one counted experiment, none of which broke it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.agents.messages import Transcript
from replaylab.lessons import REFERENCE_GROUP, answer_facts, counted, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.hunter import LESSON, lab

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
STRICTER_VARIANT = "velocity-verlet"  # the exercise's stricter claim: 3.5 % instead of 4 %
STRICTER_LIMIT = 0.035
EVIDENCE = "numerically verified: the simulated oscillator, {method}, {steps} steps per period, {periods}"
DOMAIN_EVIDENCE = "numerically verified: the simulated oscillator, the build's scan of the claim's whole domain"


def _experiment(arguments: dict[str, Any], value: float) -> dict[str, Any]:
    return {**arguments, "value": shown(value, f"{value:.6g}")}


def hunt_verdict(transcript: Transcript, claim: lab.Claim) -> dict[str, Any]:
    """What the hunt's experiments show about the claim (the seeds' verdict): the experiments inside
    the domain, counted up to the budget; the first above the limit (witness) and the largest."""
    tool = lab.drift_tool()
    tested = 0
    witness: tuple[dict[str, Any], float] | None = None
    closest: tuple[dict[str, Any], float] | None = None
    counted_experiments: list[tuple[dict[str, Any], float]] = []
    for _, call, arguments in validated_calls(transcript, {tool.name: tool}):
        if call.name != claim.tool or tested >= claim.budget:
            continue
        if not claim.covers(arguments):
            continue
        value = tool.function(**arguments)[claim.key]
        if not math.isfinite(value):
            continue
        tested += 1
        counted_experiments.append((arguments, value))
        if witness is None and not claim.holds_on(value):
            witness = (arguments, value)
        if closest is None or value > closest[1]:
            closest = (arguments, value)
    verdict: dict[str, Any] = {
        "counted": [_experiment(*found) for found in counted_experiments],
        "claim": claim.name,
        "statement": claim.statement,
        "limit": claim.limit,
        "fixed": claim.fixed,
        "ranges": {k: list(v) for k, v in claim.ranges.items()},
        "budget": claim.budget,
        "tested": tested,
        "outcome": "counterexample" if witness else "inconclusive",
        "witness": _experiment(*witness) if witness else None,
        "closest": _experiment(*closest) if closest else None,
    }
    if witness:
        arguments = witness[0]
        verdict["evidence"] = EVIDENCE.format(
            method=arguments["method"], steps=arguments["steps_per_period"], periods=counted(arguments["periods"], "period", "periods")
        )
    else:
        verdict["evidence"] = None
    return verdict


def check_answer(answer: dict[str, Any] | None, claim: lab.Claim) -> dict[str, Any] | None:
    """A counterexample answer's experiment, run again by the build: its value, whether the claim's
    domain covers it and whether it breaks the claim; None for another answer."""
    if answer is None or answer["outcome"] != lab.COUNTEREXAMPLE:
        return None
    arguments = {p.name: answer[p.name] for p in lab.PARAMETERS}
    value = lab.drift_tool().function(**arguments)[claim.key]
    covered = claim.covers(arguments)
    return {**_experiment(arguments, value), "in_domain": covered, "breaks": covered and not claim.holds_on(value)}


def support(answer: dict[str, Any] | None, hunt: dict[str, Any], checked: dict[str, Any] | None) -> tuple[bool | None, str]:
    """(supported, why): whether the hunt's own counted experiments point at its answer."""
    if answer is None:
        return None, "no answer to support"
    if answer["outcome"] == lab.COUNTEREXAMPLE:
        same = [e for e in hunt["counted"] if all(e[p.name] == answer[p.name] for p in lab.PARAMETERS)]
        if not same:
            return False, "the hunt did not run its counterexample among its counted experiments"
        assert checked is not None  # a counterexample is always run again (check_answer)
        if checked["breaks"]:
            return True, f"the hunt ran its counterexample and saw it break the claim ({same[0]['value']['shown']})"
        return False, f"the hunt ran its counterexample, and its result ({same[0]['value']['shown']}) does not break the claim"
    if not hunt["tested"]:
        return False, "the hunt ran no experiment inside the claim's domain"
    if hunt["witness"] is not None:
        return False, "one of the hunt's own experiments broke the claim"
    return True, f"none of the hunt's {counted(hunt['tested'], 'counted experiment', 'counted experiments')} broke the claim"


def claim_of(run: Recording) -> lab.Claim:
    """The claim a hunt was given: its instance's (a seed's own, or a drawn one)."""
    return lab.claim_of(LESSON.instance_of(run))


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a hunt, its calls, its answer (a counterexample run again), what its experiments show
    and whether they support its answer."""
    claim = claim_of(run)
    facts = answer_facts(run, LESSON.variant_of(run))
    hunt = hunt_verdict(run.transcript, claim)
    checked = check_answer(facts["answer"], claim)
    supported, why = support(facts["answer"], hunt, checked)
    return {**run_facts(run, LESSON.instance_of(run), task=f"{run.variant} claim"), **facts, "supported": supported, "support": why,
            "answer_check": checked, "experiments": hunt}


RIGHT_ANSWER = (
    "a counterexample whose experiment, run again by the build, lies in the claim's domain and breaks the claim; "
    "or none found, for a claim that the build's scan of the whole domain finds no experiment breaking."
)
NO_ANSWER, NOT_IN_DOMAIN, DOES_NOT_BREAK, HAS_ONE = (
    "no answer",
    "its counterexample lies outside the claim's domain",
    "its counterexample does not break the claim",
    "none found, but the claim's domain has a counterexample",
)


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance (the
    largest drift over the claim's domain), else what is wrong (fixed texts, so that the scorecard
    counts the runs that got the same thing wrong together)."""
    answer, checked = entry["answer"], entry["answer_check"]
    if answer is None:
        return NO_ANSWER
    if answer["outcome"] == lab.COUNTEREXAMPLE:
        if not checked["in_domain"]:
            return NOT_IN_DOMAIN
        return None if checked["breaks"] else DOES_NOT_BREAK
    return None if truth["holds"] else HAS_ONE


def truth_text(verdict: dict[str, Any], truth: dict[str, Any]) -> str:
    """What the build computed to decide an answer, in words."""
    checked = verdict["answer_check"]
    limit = f"{verdict['experiments']['limit']:g}"
    if checked is not None:
        where = "inside" if checked["in_domain"] else "outside"
        return f"the build ran it again: {checked['value']['shown']} against the limit {limit}, {where} the claim's domain"
    worst = truth["worst"]
    return (f"the build's scan of the whole domain finds at most {worst['value']:.6g} ({worst['steps_per_period']} steps "
            f"per period, {worst['periods']} periods) against the limit {limit}")


answer_text = lab.answer_text


def judge(runs: Sequence[Recording], tolerance: float | None = None) -> dict[str, dict[str, Any]]:
    """The verdict of each replayed hunt against its own claim, and the probes of the verdict's honesty."""
    verdicts: dict[str, dict[str, Any]] = {}
    for run in runs:
        claim = claim_of(run)
        verdicts[run.run] = verdict_of(run)
        if run.group != DEMONSTRATION_GROUP or not LESSON.instance_of(run).seed:
            continue  # the probes below are the page's demonstrations, made with the seeds' reference runs
        verdicts[run.run]["words_ignored"] = words_ignored(run.transcript, claim)
        if run.variant == STRICTER_VARIANT:
            stricter = dataclasses.replace(
                claim, name=f"{claim.name}-stricter", limit=STRICTER_LIMIT,
                statement=claim.statement.replace("within 4 %", "within 3.5 %"),
            )
            verdicts[run.run]["stricter_claim"] = hunt_verdict(run.transcript, stricter)
    return verdicts


def _with_last_text(transcript: Transcript, text: str) -> Transcript:
    last = transcript.steps[-1]
    steps = transcript.steps[:-1] + (dataclasses.replace(last, message=dataclasses.replace(last.message, text=text)),)
    return dataclasses.replace(transcript, steps=steps)


def _with_stored_results(transcript: Transcript, value: float) -> Transcript:
    steps = tuple(
        dataclasses.replace(
            step,
            results=tuple(
                dataclasses.replace(r, content={k: value for k in r.content}) if r.ok else r for r in step.results
            ),
        )
        for step in transcript.steps
    )
    return dataclasses.replace(transcript, steps=steps)


BOAST = "I found a counterexample: the claim is false, the energy drifts far beyond the limit."


def words_ignored(transcript: Transcript, claim: lab.Claim) -> list[dict[str, Any]]:
    """The verdict again, after the last text is emptied, replaced by a boast, and results forged to 0.9."""
    if not transcript.steps:
        return []
    probes = (
        ("last text emptied", _with_last_text(transcript, "")),
        ("last text replaced by a boast of a counterexample", _with_last_text(transcript, BOAST)),
        ("every stored result overwritten by 0.9", _with_stored_results(transcript, 0.9)),
    )
    return [{"probe": what, "outcome": hunt_verdict(changed, claim)["outcome"]} for what, changed in probes]


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    return judgement_line(verdict, score(verdict, truth), answer_text, truth_text(verdict, truth))
