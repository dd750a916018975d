"""What the build decides about a projectile run, from numbers it recomputes (never the model's words).

Two judgements, kept apart. `right` (score, at render time): the answer's bracket is two adjacent
whole degrees holding the best angle of the build's converged scan (scans.best_angle_scan).
`supported` (judge): the agent's own experiments point at its answer: at the smallest dt it used,
its two best angles (the seeds' check, `experiments`) lie in the answer's bracket.
"""

import numpy as np

from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, answer_facts, caught, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.projectile import lab
from replaylab.physics import projectile

GRID_STEP = 0.25  # degrees
GRID_MARGIN = 2  # degrees below and above the agent's bracket
ROUGH_FACTOR = 1.01
DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
REFERENCE_ANGLE = 45.0  # degrees: the best angle without drag, what the gain is measured against
EVIDENCE = "numerically verified: the simulated tennis ball, explicit Euler, no measurement"


def agent_conclusion(transcript):
    """What the agent's experiments show: its two best angles at the smallest dt it used, checked
    against an independent quarter-degree scan at that dt (physics.md 1.5)."""
    tools = {t.name: t for t in lab.tools()}
    calls = [
        args
        for _, call, args in validated_calls(transcript, tools)
        if call.name == lab.RANGE_TOOL and args["speed"] == lab.SPEED
    ]
    if not calls:
        return {"checkable": False, "reason": f"the agent made no accepted {lab.RANGE_TOOL} call at {lab.SPEED:g} m/s"}
    smallest = min(args["dt"] for args in calls)
    at_smallest = {}
    for args in calls:
        if args["dt"] == smallest:
            at_smallest[args["angle"]] = projectile.range_with_drag(args["speed"], args["angle"], smallest)
    if len(at_smallest) < 2:
        return {
            "checkable": False,
            "smallest_dt": smallest,
            "reason": f"fewer than two distinct angles at the smallest dt the agent used ({smallest:g} s)",
        }
    ranked = sorted(at_smallest.items(), key=lambda item: item[1])
    low, high = sorted(angle for angle, _ in ranked[-2:])
    grid = np.arange(low - GRID_MARGIN, high + GRID_MARGIN + 1e-9, GRID_STEP)
    ranges = projectile.ranges_with_drag(lab.SPEED, grid, smallest)
    best = int(np.argmax(ranges))
    best_angle, best_range = float(grid[best]), float(ranges[best])
    reference_range = projectile.range_with_drag(lab.SPEED, REFERENCE_ANGLE, smallest)
    gain = best_range - reference_range
    gain_percent = (100 * gain) / reference_range
    inside = low <= best_angle <= high
    return {
        "checkable": True,
        "smallest_dt": smallest,
        "at_smallest": [{"angle": a, "range_m": shown(r, f"{r:.6g}")} for a, r in sorted(at_smallest.items())],
        "bracket": [low, high],
        "grid": [{"angle": float(a), "range_m": float(r)} for a, r in zip(grid, ranges)],
        "best_angle": shown(best_angle, f"{best_angle:.2f}"),
        "best_range_m": shown(best_range, f"{best_range:.4g}"),
        "reference_angle": REFERENCE_ANGLE,
        "reference_range_m": shown(reference_range, f"{reference_range:.4g}"),
        "gain_m": shown(gain, f"{gain:.4g}"),
        "gain_percent": shown(gain_percent, f"{gain_percent:.4g}"),
        "inside": inside,
        "verdict": "verified" if inside else "refuted",
        "evidence": EVIDENCE if inside else None,
    }


def rough_ball(run, tolerance):
    """Replay the run against a ball with 1.01 times the drag: the replay must catch the change."""
    variant = lab.VARIANTS[run.variant]
    try:
        replay(run, variant, tolerance, drag=ROUGH_FACTOR * projectile.DRAG)
    except ReplayMismatch as mismatch:
        return {"drag_factor": ROUGH_FACTOR, **caught(mismatch)}
    return {"drag_factor": ROUGH_FACTOR, "caught": False}


def answer_text(answer):
    """An answer as submitted, in words."""
    return f"{answer['low']:g} to {answer['high']:g} degrees"


def support(answer, experiments):
    """(supported, why): whether the agent's two best angles at its smallest dt lie in its
    answer's bracket; None without an answer."""
    if answer is None:
        return None, "no answer to support"
    if not experiments["checkable"]:
        return False, f"its experiments show no bracket: {experiments['reason']}"
    low, high = experiments["bracket"]
    at = f"its two best angles at dt {experiments['smallest_dt']:g} s, {low:g} and {high:g} degrees,"
    if answer["low"] <= low and high <= answer["high"]:
        return True, f"{at} lie in its answer"
    return False, f"{at} do not both lie in its answer"


def verdict_of(run):
    """Who made a replayed run, its calls, its answer, what its experiments show and whether they
    support its answer."""
    facts = answer_facts(run, lab.VARIANTS[run.variant])
    experiments = agent_conclusion(run.transcript)
    supported, why = support(facts["answer"], experiments)
    return {**run_facts(run), **facts, "supported": supported, "support": why, "experiments": experiments}


def judge(runs, tolerance):
    """The verdict of each replayed run; the runs of the reference group also get the rough-ball
    replay (a demonstration, not needed for every run)."""
    verdicts = {}
    for run in runs:
        verdicts[run.run] = verdict_of(run)
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["rough_ball"] = rough_ball(run, tolerance)
    return verdicts


RIGHT_ANSWER = (
    "the answer's low and high are two adjacent whole degrees (high = low + 1), and the best angle of the "
    "build's converged quarter-degree scan lies between them, both included."
)
NO_ANSWER, NOT_ADJACENT, OUTSIDE = (
    "no answer",
    "its bracket is not two adjacent whole degrees",
    "the best angle of the build's scan lies outside its bracket",
)


def score(entry, scans):
    """None when the answer is right, else what is wrong (fixed texts, so that the scorecard counts
    the runs that got the same thing wrong together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    if answer["high"] != answer["low"] + 1:
        return NOT_ADJACENT
    if not answer["low"] <= scans["best_angle"]["angle"]["value"] <= answer["high"]:
        return OUTSIDE
    return None


def verdict_line(recording, scans):
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    truth = f"the build's converged scan puts the best angle at {scans['best_angle']['angle']['shown']} degrees"
    return judgement_line(verdict, score(verdict, scans), answer_text, truth)
