"""Demonstrations computed from code alone: misbehaving calls, the budget, and the exercise of the
largest step at which the trapezoidal voltage of an overdamped circuit never goes below zero."""

from typing import Any

from replaylab import lessons
from replaylab.lessons import shown
from replaylab.lessons.rlc import lab, physics, scans

MISBEHAVING_CALLS = (
    ("a valid call", lab.TOOL, {"time_ms": 0.72, "dt_ms": 0.001}),
    ("a tool that is not allowed", "os.system", {"command": "echo hello"}),
    ("a step of zero", lab.TOOL, {"time_ms": 0.72, "dt_ms": 0}),
    ("a negative time", lab.TOOL, {"time_ms": -1, "dt_ms": 0.001}),
    ("a time past the tool's bound", lab.TOOL, {"time_ms": 1e9, "dt_ms": 0.001}),
    ("a number sent as text", lab.TOOL, {"time_ms": "0.72", "dt_ms": 0.001}),
    ("an argument the tool does not take", lab.TOOL, {"time_ms": 0.72, "dt_ms": 0.001, "resistance": 0}),
)
WITHIN = 1e-6  # ms: the bisection of the largest step stops when its two ends are this close
BRACKET = (0.01, 1.0)  # ms: a step that stays positive, and one that goes below zero


def misbehaving_calls() -> list[dict[str, Any]]:
    return lessons.misbehaving_calls(lab.all_tools(), MISBEHAVING_CALLS, lab.KEY)


def budget() -> dict[str, Any]:
    return lessons.past_the_budget(lab.all_tools(), lab.TOOL, MISBEHAVING_CALLS[0][2], lab.BUDGET, lab.KEY)


def stays_positive(dt: float) -> bool:
    """Whether the overdamped circuit's trapezoidal voltage is at least zero at every step of dt up to
    the tool's longest time."""
    return min(scans.stepped(dt, scans.STIFF, scans.RINGING_SPAN)) >= 0


def largest_positive_dt() -> dict[str, Any]:
    """The largest dt at which the overdamped circuit of the scans never goes below zero within the
    tool's longest time, by bisection (checked against the scan's steps), beside 2/ω0."""
    inside, outside = BRACKET
    if not stays_positive(inside) or stays_positive(outside):
        raise ValueError(f"the voltage at dt {inside:g} ms must stay positive and at {outside:g} ms must not")
    while outside - inside > WITHIN:
        middle = (inside + outside) / 2
        if stays_positive(middle):
            inside = middle
        else:
            outside = middle
    checked = [{"dt": dt, "positive": stays_positive(dt)} for dt in scans.RINGING_DTS]
    below = physics.below_zero_dt(physics.natural_frequency(lab.INDUCTANCE, lab.CAPACITANCE))
    return {"largest": shown(inside, f"{inside:.6g}"), "outside": shown(outside, f"{outside:.6g}"), "within": WITHIN,
            "theory": shown(below, f"{below:.4g}"), "checked": checked,
            "monotone": all(row["positive"] == (row["dt"] <= inside) for row in checked)}


def exercises() -> dict[str, Any]:
    return {"misbehaving_calls": misbehaving_calls(), "budget": budget(), "largest_positive_dt": largest_positive_dt()}
