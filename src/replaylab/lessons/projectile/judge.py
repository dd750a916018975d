"""What the build decides about a projectile run, from numbers it recomputes (never the model's words).

Everything is of the run's own instance (`LESSON.instance_of(run)`): its ball, launch height and
speed (`lab.setup_of`), its tools, and the build's answer of it (`truth`, given to `score`).

Two judgements, kept apart. `right` (score, at render time): the answer's bracket (two adjacent whole
degrees: the answer tool refuses any other pair) holds the best angle of the build's converged scan
(scans.best_angle_scan). `supported` (judge): the run's own replayed data locate the maximum where the
answer says (`located`): at the smallest dt it used, its best measured angle lies in the bracket, it
measured a shorter range on each side of that angle, and the top of the parabola through those three
points lies in the bracket. Data that fall across the bracket (a best angle at its edge with no lower
range measured beyond it) never support it, and more experiments never take support away from an
answer the data locate. `experiments` keeps the seeds' check of the two best angles against a
quarter-degree scan (golden values).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from replaylab.agents.messages import Transcript
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import REFERENCE_GROUP, answer_facts, caught, judgement_line, run_facts, shown, validated_calls
from replaylab.lessons.projectile import LESSON, lab
from replaylab.lessons.projectile.balls import Setup
from replaylab.physics import projectile

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

GRID_STEP = 0.25  # degrees
GRID_MARGIN = 2  # degrees below and above the agent's bracket
ROUGH_FACTOR = 1.01
DEMONSTRATION_GROUP = REFERENCE_GROUP  # the runs the page's demonstrations are made with
REFERENCE_ANGLE = 45.0  # degrees: the best angle without drag, what the gain is measured against


def evidence(ball: str) -> str:
    """The evidence label of a right conclusion about a run of an instance throwing `ball` (its name)."""
    return f"numerically verified: the simulated {ball}, explicit Euler, no measurement"


EVIDENCE = evidence(lab.SEED_SETUP.ball.name)  # the seed's: the tennis ball


def at_smallest_dt(transcript: Transcript, setup: Setup = lab.SEED_SETUP) -> tuple[float | None, dict[float, float]]:
    """(the smallest dt of the run's accepted range calls at the question's speed, {angle: range at
    that dt, recomputed with the setup's ball}), or (None, {}) without such a call."""
    tools = {t.name: t for t in lab.setup_tools(setup)()}
    calls = [
        args
        for _, call, args in validated_calls(transcript, tools)
        if call.name == lab.RANGE_TOOL and args["speed"] == setup.speed
    ]
    if not calls:
        return None, {}
    smallest = min(args["dt"] for args in calls)
    simulate = lab.range_with_drag_of(setup)
    return smallest, {args["angle"]: simulate(args["speed"], args["angle"], smallest) for args in calls if args["dt"] == smallest}


def parabola_top(points: tuple[tuple[float, float], tuple[float, float], tuple[float, float]]) -> float:
    """The angle of the top of the parabola through three (angle, range) points, the middle one the
    highest (the vertex of the quadratic through them, by divided differences)."""
    (a0, r0), (a1, r1), (a2, r2) = points
    slope_left, slope_right = (r1 - r0) / (a1 - a0), (r2 - r1) / (a2 - a1)
    curvature = (slope_right - slope_left) / (a2 - a0)
    return (a0 + a1) / 2 - slope_left / (2 * curvature)


def located(transcript: Transcript, setup: Setup = lab.SEED_SETUP) -> dict[str, Any]:
    """Where the run's own data locate the maximum: at its smallest dt, its best measured angle, the
    nearest angle it measured on each side (each with a shorter range), and the top of the parabola
    through those three points. Not located (`located` False, with the reason) without such a
    neighbour on each side."""
    smallest, at = at_smallest_dt(transcript, setup)
    if smallest is None:
        return {"located": False, "reason": f"it made no accepted {lab.RANGE_TOOL} call at {setup.speed:g} m/s"}
    rows = sorted(at.items())
    best = max(range(len(rows)), key=lambda i: (rows[i][1], -i))
    angle, top_range = rows[best]
    found = {"smallest_dt": smallest, "best": {"angle": angle, "range_m": shown(top_range, f"{top_range:.6g}")}}
    sides: dict[str, Any] = {"below": rows[best - 1] if best > 0 else None, "above": rows[best + 1] if best + 1 < len(rows) else None}
    at_dt = f"at dt {smallest:g} s"
    for side, neighbour in sides.items():
        if neighbour is None or not neighbour[1] < top_range:
            return {**found, "located": False,
                    "reason": f"its longest throw {at_dt} is at {angle:g} degrees, and it measured no shorter throw {side} that angle {at_dt}"}
    top = parabola_top((sides["below"], rows[best], sides["above"]))
    return {**found, "located": True, "below": {"angle": sides["below"][0], "range_m": shown(sides["below"][1], f"{sides['below'][1]:.6g}")},
            "above": {"angle": sides["above"][0], "range_m": shown(sides["above"][1], f"{sides['above'][1]:.6g}")},
            "top": shown(top, f"{top:.2f}")}


def agent_conclusion(transcript: Transcript, setup: Setup = lab.SEED_SETUP) -> dict[str, Any]:
    """The seeds' check of what the agent's experiments show: its two best angles at the smallest dt
    it used, checked against an independent quarter-degree scan at that dt (docs/physics.md 1.5), which
    stays within the tool's bounds."""
    smallest, at_smallest = at_smallest_dt(transcript, setup)
    if smallest is None:
        return {"checkable": False, "reason": f"the agent made no accepted {lab.RANGE_TOOL} call at {setup.speed:g} m/s"}
    if len(at_smallest) < 2:
        return {
            "checkable": False,
            "smallest_dt": smallest,
            "reason": f"fewer than two distinct angles at the smallest dt the agent used ({smallest:g} s)",
        }
    ranked = sorted(at_smallest.items(), key=lambda item: item[1])
    low, high = sorted(angle for angle, _ in ranked[-2:])
    start, stop = max(low - GRID_MARGIN, lab.ANGLE_PARAMETER.low), min(high + GRID_MARGIN, lab.ANGLE_PARAMETER.high)
    grid = np.arange(start, stop + 1e-9, GRID_STEP)
    ranges = projectile.ranges_of_launches(setup.speed, grid, smallest, setup.drag, setup.mass, setup.height)
    best = int(np.argmax(ranges))
    best_angle, best_range = float(grid[best]), float(ranges[best])
    reference_range = lab.range_with_drag_of(setup)(setup.speed, REFERENCE_ANGLE, smallest)
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
        "evidence": evidence(setup.ball.name) if inside else None,
    }


def rough_ball(run: Recording, tolerance: float) -> dict[str, Any]:
    """Replay the run against a ball with 1.01 times its instance's drag: the replay must catch the change."""
    variant = LESSON.variant_of(run)
    try:
        replay(run, variant, tolerance, drag=ROUGH_FACTOR * lab.setup_of(LESSON.instance_of(run)).drag)
    except ReplayMismatch as mismatch:
        return {"drag_factor": ROUGH_FACTOR, **caught(mismatch)}
    return {"drag_factor": ROUGH_FACTOR, "caught": False}


answer_text = lab.answer_text


def support(answer: dict[str, Any] | None, where: dict[str, Any]) -> tuple[bool | None, str]:
    """(supported, why): whether the run's own data (`located`) locate the maximum in its answer's
    bracket; None without an answer."""
    if answer is None:
        return None, "no answer to support"
    if not where["located"]:
        return False, f"its data do not locate the maximum: {where['reason']}"
    low, high = answer["low"], answer["high"]
    best, top = where["best"]["angle"], where["top"]
    at = (f"at dt {where['smallest_dt']:g} s its longest throw is at {best:g} degrees, between shorter ones at "
          f"{where['below']['angle']:g} and {where['above']['angle']:g}, and the parabola through them tops at {top['shown']} degrees")
    if not low <= best <= high:
        return False, f"{at}: its best angle lies outside its answer"
    if not low <= top["value"] <= high:
        return False, f"{at}, outside its answer"
    return True, f"{at}, inside its answer"


def verdict_of(run: Recording) -> dict[str, Any]:
    """Who made a replayed run, its calls, its answer, where its experiments locate the maximum (and
    the seeds' check of them), and whether they support its answer."""
    instance = LESSON.instance_of(run)
    setup = lab.setup_of(instance)
    facts = answer_facts(run, LESSON.variant_of(run))
    where = located(run.transcript, setup)
    supported, why = support(facts["answer"], where)
    return {**run_facts(run, instance), **facts, "supported": supported, "support": why, "located": where,
            "experiments": agent_conclusion(run.transcript, setup)}


def judge(runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
    """The verdict of each replayed run; the runs of the reference group also get the rough-ball
    replay (a demonstration, not needed for every run)."""
    verdicts: dict[str, dict[str, Any]] = {}
    for run in runs:
        verdicts[run.run] = verdict_of(run)
        if run.group == DEMONSTRATION_GROUP:
            verdicts[run.run]["rough_ball"] = rough_ball(run, tolerance)
    return verdicts


RIGHT_ANSWER = (
    "the best angle of the build's converged quarter-degree scan lies between the answer's low and high (two "
    "adjacent whole degrees), both included."
)
NO_ANSWER, OUTSIDE = "no answer", "the best angle of the build's scan lies outside its bracket"


def score(entry: dict[str, Any], truth: dict[str, Any]) -> str | None:
    """None when the answer is right against `truth`, the build's answer of the run's instance, else
    what is wrong (fixed texts, so that the scorecard counts the runs that got the same thing wrong
    together)."""
    answer = entry["answer"]
    if answer is None:
        return NO_ANSWER
    if not answer["low"] <= truth["angle"]["value"] <= answer["high"]:
        return OUTSIDE
    return None


def verdict_line(recording: Recording, truth: dict[str, Any]) -> str:
    """One line for `replaylab promote` and `replaylab replay`: the answer as submitted, both judgements."""
    verdict = verdict_of(recording)
    said = f"the build's converged scan puts the best angle at {truth['angle']['shown']} degrees"
    return judgement_line(verdict, score(verdict, truth), answer_text, said)
