"""The reviewers' answers and verdicts, read from recomputed tool results only, and their resolution
per piece and group.

Each reviewer's run is scored on its own answer: per piece, the checks of its remit it names as
failed. `right` (score): each list equals the checks of its remit that fail when the build runs
them itself on the run's own instance's pieces (answers.py). `supported` (judge): the reviewer ran
every check of its remit on both pieces, and named as failed exactly those whose recomputed
results failed. The group's decision (`decide`) stays as the seeds show it: for the runs of one
group and one model, a failed recomputed check rejects a piece whoever passed it, with no voting
(docs/physics.md 3.4); a piece is one instance's, so the runs of a group that are of several instances
are resolved per instance. Every check is recomputed on the pieces of the run's own instance
(family.pieces_of).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replaylab.agents.messages import Transcript
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, answer_facts, caught, judgement_line, run_facts, validated_calls
from replaylab.lessons.review import LESSON, lab
from replaylab.lessons.review.family import pieces_of
from replaylab.lessons.review.pieces import Piece
from replaylab.verification.checks import CHECK_NAMES

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

EVIDENCE = "numerically verified: the simulated oscillator stepped by piece {piece}, no measurement"
EVIDENCE_ANSWER = "numerically verified: the build's own run of every check of the remit on both pieces, no measurement"
STRICT_EXACT = 1e-30
DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with


@dataclass(frozen=True)
class Verdict:
    reviewer: str
    candidate: int
    check: str
    measured: float
    tolerance: float
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "reviewer": self.reviewer,
            "candidate": self.candidate,
            "check": self.check,
            "measured": {"value": self.measured, "shown": f"{self.measured:.3g}"},
            "tolerance": {"value": self.tolerance, "shown": f"{self.tolerance:g}"},
            "passed": self.passed,
        }


def verdicts(reviewer: str, transcript: Transcript, pieces: dict[int, Piece] | None = None) -> list[Verdict]:
    """The verdicts of one reviewer's run, each recomputed from the call's arguments on `pieces`
    ({1: Piece, 2: Piece} of the run's instance; the seed's by default)."""
    tools = {t.name: t for t in lab.all_tools(pieces=pieces or lab.SEED_PIECES).tools.values()}
    found: list[Verdict] = []
    for _, call, arguments in validated_calls(transcript, tools):
        check = lab.check_of(call.name, arguments)
        if check is None:
            continue
        content = tools[call.name].function(**arguments)
        found.append(
            Verdict(reviewer, arguments["candidate"], check, content["measured"], content["tolerance"], content["passed"] == 1.0)
        )
    return found


DRAWN_NAME = "piece {candidate} of instance {instance}"


def piece_name(candidate: int, instance: str | None = None) -> str:
    """What the pages call a piece: the seed's by what it is; a drawn instance's by its number only
    (its faults are hidden)."""
    if instance is None or LESSON.instance(instance).seed:
        return lab.PIECES[candidate].name
    return DRAWN_NAME.format(candidate=candidate, instance=instance)


def resolve(all_verdicts: Iterable[Verdict], candidate: int, instance: str | None = None) -> dict[str, Any]:
    """The decision on one piece (of `instance`; None: the seed's): rejected as soon as one
    recomputed check failed."""
    mine = [v for v in all_verdicts if v.candidate == candidate]
    outcomes: dict[str, set[bool]] = {}
    for v in mine:
        outcomes.setdefault(v.check, set()).add(v.passed)
    failed = [c for c in CHECK_NAMES if False in outcomes.get(c, ())]
    flagged = sorted({v.reviewer for v in mine if not v.passed})
    clear = sorted({v.reviewer for v in mine} - set(flagged))
    return {
        "candidate": candidate,
        **({} if instance is None else {"instance": instance}),
        "name": piece_name(candidate, instance),
        "rejected": bool(failed),
        "failed": failed,
        "flagged_by": flagged,
        "clear_by": clear,
        "not_covered": [c for c in CHECK_NAMES if c not in outcomes],
        "conflicts": [c for c in CHECK_NAMES if outcomes.get(c) == {True, False}],
    }


def with_evidence(resolution: dict[str, Any]) -> dict[str, Any]:
    """A resolution of recomputed verdicts: a rejection is numerically verified."""
    piece = resolution["candidate"]
    return {**resolution, "evidence": EVIDENCE.format(piece=piece) if resolution["rejected"] else None}


def replay_with_strict_exact(run: Recording, tolerance: float) -> dict[str, Any]:
    """Replay a run with the exact-check tolerance made 1e-30: the replay must notice the flipped pass flag."""
    try:
        replay(run, LESSON.variant_of(run), tolerance, exact=STRICT_EXACT)
    except ReplayMismatch as mismatch:
        return {"exact": STRICT_EXACT, **caught(mismatch)}
    return {"exact": STRICT_EXACT, "caught": False}


def failures_seen(found: Sequence[Verdict]) -> dict[int, list[str]]:
    """{piece: the checks (contract order) a run saw fail} of its recomputed verdicts."""
    return {piece: [c for c in CHECK_NAMES if any(v.candidate == piece and v.check == c and not v.passed for v in found)]
            for piece in lab.PIECES}


def support(reviewer: str, answer: dict[str, Any] | None, found: Sequence[Verdict]) -> tuple[bool | None, str]:
    """(supported, why): whether the reviewer ran every check of its remit on both pieces and named as
    failed exactly those whose recomputed results failed; None without an answer."""
    if answer is None:
        return None, "no answer to support"
    ran = {(v.candidate, v.check) for v in found}
    missing = [f"{check} on piece {piece}" for piece in lab.PIECES for check in lab.remit(reviewer) if (piece, check) not in ran]
    if missing:
        return False, f"it did not run {', '.join(missing)}"
    seen = failures_seen(found)
    differs = [piece for piece in lab.PIECES if set(answer[lab.failed_field(piece)]) != set(seen[piece])]
    if differs:
        return False, f"its answer for piece {differs[0]} differs from what its own checks showed ({', '.join(seen[differs[0]]) or 'no failure'})"
    return True, "it ran every check of its remit on both pieces and named exactly the ones that failed"


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a reviewer's run, its calls, its answer, its recomputed verdicts and whether they support its answer."""
    instance = LESSON.instance_of(run)
    facts = answer_facts(run, LESSON.variant_of(run))
    found = verdicts(run.variant, run.transcript, pieces_of(instance))
    supported, why = support(run.variant, facts["answer"], found)
    return {**run_facts(run, instance, task=f"{run.variant} reviewer"), **facts, "supported": supported, "support": why,
            "remit": list(lab.remit(run.variant)), "verdicts": [v.as_dict() for v in found]}


def judge(runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
    """The verdict of each reviewer's run, and the strict-tolerance replay of the demonstration group's
    physics reviewer."""
    result: dict[str, dict[str, Any]] = {}
    for run in runs:
        result[run.run] = verdict_of(run)
        if run.variant == "physics" and run.group == DEMONSTRATION_GROUP:
            result[run.run]["strict_replay"] = replay_with_strict_exact(run, tolerance)
    return result


def decide(members: Sequence[Recording], verdicts_by_run: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The decision of one group (the runs of one group name and one model): the resolution of each
    piece of its instance over every recomputed verdict of its reviewers (per instance, for a group
    whose runs are of several)."""
    found: dict[str, list[Verdict]] = {}  # {instance: [Verdict]}, in the order of the members
    for run in members:
        mine = found.setdefault(LESSON.instance_of(run).id, [])
        mine += [Verdict(**_plain(v)) for v in verdicts_by_run[run.run]["verdicts"]]
    reviewers: dict[str, list[str]] = {}
    for run in sorted(members, key=lambda r: r.run):
        reviewers.setdefault(run.variant, []).append(run.run)
    return {
        "group": members[0].group,
        "model": members[0].model,
        "instances": list(found),
        "reviewers": reviewers,
        "verdicts": [{**v.as_dict(), "instance": instance} for instance, mine in found.items() for v in mine],
        "resolution": [with_evidence(resolve(mine, piece, instance)) for instance, mine in found.items() for piece in lab.PIECES],
    }


def _plain(verdict: dict[str, Any]) -> dict[str, Any]:
    return {**verdict, "measured": verdict["measured"]["value"], "tolerance": verdict["tolerance"]["value"]}


RIGHT_ANSWER = (
    "for each piece, the answer names exactly the checks of the reviewer's remit that fail when the build runs "
    "them itself."
)
NO_ANSWER = "no answer"


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance (the
    checks each piece fails), else what is wrong (fixed texts, so that the scorecard counts the runs
    that got the same thing wrong together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    for piece in lab.PIECES:
        failing = {c for c in truth["failures"][str(piece)] if c in entry["remit"]}
        named = set(answer[lab.failed_field(piece)])
        if named - failing:
            return f"piece {piece}: names a check that passes"
        if failing - named:
            return f"piece {piece}: misses a check that fails"
    return None


answer_text = lab.answer_text


def truth_text(entry: dict[str, Any], truth: dict[str, Any]) -> str:
    return "the build's own checks fail " + "; ".join(
        f"on piece {piece}: {', '.join(c for c in truth['failures'][str(piece)] if c in entry['remit']) or 'none of the remit'}"
        for piece in lab.PIECES
    )


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements,
    and the checks this reviewer's run ran, as recomputed."""
    verdict = verdict_of(recording)
    ran = "; ".join(f"piece {v['candidate']} {v['check']} {'passed' if v['passed'] else 'failed'}" for v in verdict["verdicts"])
    return judgement_line(verdict, score(verdict, truth), answer_text, truth_text(verdict, truth)) + f" [its checks: {ran or 'none'}]"
