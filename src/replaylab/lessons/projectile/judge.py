"""What the build decides about a projectile run, from numbers it recomputes (never the model's words)."""

import numpy as np

from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, run_facts, caught, shown, validated_calls
from replaylab.lessons.projectile import lab
from replaylab.physics import projectile

GRID_STEP = 0.25  # degrees
GRID_MARGIN = 2  # degrees below and above the agent's bracket
ROUGH_FACTOR = 1.01
DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
REFERENCE_ANGLE = 45.0  # degrees: the best angle without drag, what the gain is measured against
EVIDENCE = "numerically verified: the simulated tennis ball, explicit Euler, no measurement"


def agent_conclusion(transcript):
    """Check the agent's bracket against an independent quarter-degree scan (physics.md 1.5)."""
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


def judge(runs, tolerance):
    """Per replayed run: who made it, its calls and its agent-conclusion check; the runs of the
    reference group also get the rough-ball replay (a demonstration, not needed for every run)."""
    verdicts = {}
    for run in runs:
        verdicts[run.run] = {
            **run_facts(run),
            "conclusion": agent_conclusion(run.transcript),
        }
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["rough_ball"] = rough_ball(run, tolerance)
    return verdicts


RIGHT_ANSWER = "the agent's bracket holds the best angle of the quarter-degree scan and is at most one degree wide."


def score(entry, scans):
    """Right when the bracket holds the scan's best angle and is at most one degree wide."""
    conclusion = entry["conclusion"]
    if not conclusion["checkable"]:
        return "no checkable conclusion (fewer than two angles at its smallest dt)"
    if not conclusion["inside"]:
        return "the scan's best angle lies outside the bracket"
    if conclusion["bracket"][1] - conclusion["bracket"][0] > 1:
        return "the bracket is wider than one degree"
    return None


def verdict_line(recording):
    """One line for `replaylab promote`: the decision on this run's conclusion alone."""
    c = agent_conclusion(recording.transcript)
    if not c["checkable"]:
        return f"not checkable: {c['reason']}"
    return f"bracket {c['bracket'][0]}..{c['bracket'][1]} degrees, scan best {c['best_angle']['shown']}: {c['verdict']}"
