"""The hunter's judge: the verdict on a claim, computed from the arguments of the agent's experiments.

It never reads the model's text and never trusts a stored result (physics.md 2.5).
"""

import dataclasses
import math

from replaylab.lessons import REFERENCE_GROUP, run_facts, counted, shown, validated_calls
from replaylab.lessons.hunter import lab

DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
STRICTER_VARIANT = "velocity-verlet"  # the exercise's stricter claim: 3.5 % instead of 4 %
STRICTER_LIMIT = 0.035
EVIDENCE = "numerically verified: the simulated oscillator, {method}, {steps} steps per period, {periods}"


def _experiment(arguments, value):
    return {**arguments, "value": shown(value, f"{value:.6g}")}


def hunt_verdict(transcript, claim):
    tool = lab.drift_tool()
    tested, witness, closest = 0, None, None
    for _, call, arguments in validated_calls(transcript, {tool.name: tool}):
        if call.name != claim.tool or tested >= claim.budget:
            continue
        if not claim.covers(arguments):
            continue
        value = tool.function(**arguments)[claim.key]
        if not math.isfinite(value):
            continue
        tested += 1
        if witness is None and not claim.holds_on(value):
            witness = (arguments, value)
        if closest is None or value > closest[1]:
            closest = (arguments, value)
    verdict = {
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


RIGHT_ANSWER = (
    "for a claim the independent scan finds broken in its domain, a counterexample found; for a claim it finds "
    "none against, the hunt reached the domain's worst case, the largest drift the scan finds."
)


def score(entry, scans):
    """A claim the scan breaks: right when a counterexample was found. A claim without one in its
    domain: right when the hunt reached the domain's worst case, the largest value the scan finds."""
    verdict = entry["verdict"]
    worst = scans["worst_case"][verdict["claim"]]
    if verdict["outcome"] == "counterexample":
        return None if worst["value"] > verdict["limit"] else "a counterexample to a claim that has none"
    if worst["value"] > verdict["limit"]:
        return "no counterexample found, though the domain has one"
    if verdict["closest"] is None or verdict["closest"]["value"]["value"] < worst["value"]:
        return f"did not reach the domain's worst case ({worst['value']:.6g} at {worst['steps_per_period']}/{worst['periods']})"
    return None


def judge(runs, tolerance=None):
    """The verdict of each replayed hunt against its own claim, and the probes of the verdict's honesty."""
    verdicts = {}
    for run in runs:
        claim = lab.CLAIMS[run.variant]
        verdicts[run.run] = {
            **run_facts(run, task=f"{run.variant} claim"),
            "verdict": hunt_verdict(run.transcript, claim),
        }
        if run.group != DEMONSTRATION_GROUP:
            continue  # the probes below are the page's demonstrations, made with the reference runs
        verdicts[run.run]["words_ignored"] = words_ignored(run.transcript, claim)
        if run.variant == STRICTER_VARIANT:
            stricter = dataclasses.replace(
                claim, name=f"{claim.name}-stricter", limit=STRICTER_LIMIT,
                statement=claim.statement.replace("within 4 %", "within 3.5 %"),
            )
            verdicts[run.run]["stricter_claim"] = hunt_verdict(run.transcript, stricter)
    return verdicts


def _with_last_text(transcript, text):
    last = transcript.steps[-1]
    steps = transcript.steps[:-1] + (dataclasses.replace(last, message=dataclasses.replace(last.message, text=text)),)
    return dataclasses.replace(transcript, steps=steps)


def _with_stored_results(transcript, value):
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


def words_ignored(transcript, claim):
    """The verdict again, after the last text is emptied, replaced by a boast, and results forged to 0.9."""
    if not transcript.steps:
        return []
    probes = (
        ("last text emptied", _with_last_text(transcript, "")),
        ("last text replaced by a boast of a counterexample", _with_last_text(transcript, BOAST)),
        ("every stored result overwritten by 0.9", _with_stored_results(transcript, 0.9)),
    )
    return [{"probe": what, "outcome": hunt_verdict(changed, claim)["outcome"]} for what, changed in probes]


def verdict_line(recording):
    """One line for `replaylab promote`: the verdict of this hunt on its own claim."""
    v = hunt_verdict(recording.transcript, lab.CLAIMS[recording.variant])
    found = v["witness"] or v["closest"]
    where = f", {'witness' if v['witness'] else 'closest'} {found['steps_per_period']}/{found['periods']}" if found else ""
    return f"{v['outcome']} ({v['tested']} tested{where})"
