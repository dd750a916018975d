"""The reviewers' verdicts, read from recomputed tool results only, and their resolution per piece.

A failed recomputed check stands whoever passed the piece: no voting (physics.md 3.4).
"""

from dataclasses import dataclass

from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, caught, count_calls, validated_calls
from replaylab.lessons.review import lab
from replaylab.verification.checks import CHECK_NAMES

EVIDENCE = "numerically verified: the simulated oscillator stepped by piece {piece}, no measurement"
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

    def as_dict(self):
        return {
            "reviewer": self.reviewer,
            "candidate": self.candidate,
            "check": self.check,
            "measured": {"value": self.measured, "shown": f"{self.measured:.3g}"},
            "tolerance": {"value": self.tolerance, "shown": f"{self.tolerance:g}"},
            "passed": self.passed,
        }


def verdicts(reviewer, transcript):
    """The verdicts of one reviewer's run, each recomputed from the call's arguments."""
    tools = {t.name: t for t in lab.all_tools().tools.values()}
    found = []
    for _, call, arguments in validated_calls(transcript, tools):
        check = lab.check_of(call.name, arguments)
        if check is None:
            continue
        content = tools[call.name].function(**arguments)
        found.append(
            Verdict(reviewer, arguments["candidate"], check, content["measured"], content["tolerance"], content["passed"] == 1.0)
        )
    return found


def resolve(all_verdicts, candidate):
    """The decision on one piece: rejected as soon as one recomputed check failed."""
    mine = [v for v in all_verdicts if v.candidate == candidate]
    outcomes = {}
    for v in mine:
        outcomes.setdefault(v.check, set()).add(v.passed)
    failed = [c for c in CHECK_NAMES if False in outcomes.get(c, ())]
    flagged = sorted({v.reviewer for v in mine if not v.passed})
    clear = sorted({v.reviewer for v in mine} - set(flagged))
    return {
        "candidate": candidate,
        "name": lab.PIECES[candidate].name,
        "rejected": bool(failed),
        "failed": failed,
        "flagged_by": flagged,
        "clear_by": clear,
        "not_covered": [c for c in CHECK_NAMES if c not in outcomes],
        "conflicts": [c for c in CHECK_NAMES if outcomes.get(c) == {True, False}],
    }


def with_evidence(resolution):
    """A resolution of recomputed verdicts: a rejection is numerically verified."""
    piece = resolution["candidate"]
    return {**resolution, "evidence": EVIDENCE.format(piece=piece) if resolution["rejected"] else None}


def replay_with_strict_exact(run, tolerance):
    """Replay a run with the exact-check tolerance made 1e-30: the replay must notice the flipped pass flag."""
    try:
        replay(run, lab.VARIANTS[run.variant], tolerance, exact=STRICT_EXACT)
    except ReplayMismatch as mismatch:
        return {"exact": STRICT_EXACT, **caught(mismatch)}
    return {"exact": STRICT_EXACT, "caught": False}


RIGHT_ANSWER = "piece 2 rejected and piece 1 not, by the recomputed checks of the three reviewers together."


def score(entry, scans):
    """A review is right when piece 2 is rejected and piece 1 is not."""
    one, two = entry["resolution"]
    if two["rejected"] and not one["rejected"]:
        return None
    if not two["rejected"]:
        missing = "bounded-energy was not run on it" if "bounded-energy" in two["not_covered"] else "no failed check"
        return f"piece 2 not rejected ({missing})"
    return f"piece 1 rejected ({', '.join(one['failed'])})"


def judge(runs, tolerance):
    """Verdicts per reviewer, the resolution of each piece per group, and the strict-tolerance replay."""
    groups = {}
    for run in runs:
        groups.setdefault(run.group, []).append(run)
    result = {}
    for group, members in sorted(groups.items()):
        found = [v for run in members for v in verdicts(run.variant, run.transcript)]
        resolution = [with_evidence(resolve(found, piece)) for piece in lab.PIECES]
        result[group] = {
            "reviewers": {run.variant: run.run for run in members},
            "verdicts": [v.as_dict() for v in found],
            "resolution": resolution,
            "model": " + ".join(sorted({run.model for run in members})),
            "task": "review",
            "calls": sum(count_calls(run.transcript)["calls"] for run in members),
            "ran": sum(count_calls(run.transcript)["ran"] for run in members),
            "strict_replays": {
                run.run: replay_with_strict_exact(run, tolerance)
                for run in members
                if run.variant == "physics" and group == DEMONSTRATION_GROUP
            },
        }
    return result


def verdict_line(recording):
    """One line for `replaylab promote`: the checks this reviewer's run ran, as recomputed."""
    found = verdicts(recording.variant, recording.transcript)
    return "; ".join(f"piece {v.candidate} {v.check} {'passed' if v.passed else 'failed'}" for v in found) or "no checks run"
