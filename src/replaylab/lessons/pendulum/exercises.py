"""Demonstrations computed from code alone: misbehaving calls, the budget, and the exercise of the
largest dt at which the simulated crossing still lands in the right bracket."""

from typing import Any

from replaylab.agents.tools import Allowlist
from replaylab import lessons
from replaylab.lessons import shown
from replaylab.lessons.pendulum import judge, lab, physics, scans

MISBEHAVING_CALLS = (
    ("a valid call", lab.PERIOD_TOOL, {"amplitude_deg": 22, "dt": 0.01}),
    ("a tool that is not allowed", "os.system", {"command": "echo hello"}),
    ("an amplitude past the top", lab.PERIOD_TOOL, {"amplitude_deg": 180, "dt": 0.01}),
    ("a step of zero", lab.PERIOD_TOOL, {"amplitude_deg": 22, "dt": 0.0}),
    ("a missing argument", lab.PERIOD_TOOL, {"amplitude_deg": 22}),
    ("a number sent as text", lab.PERIOD_TOOL, {"amplitude_deg": "22", "dt": 0.01}),
    ("an argument the tool does not take", lab.SMALL_ANGLE_TOOL, {"length": 2}),
)
DT_WITHIN = 1e-7  # s: the bisection of the largest dt stops when its two ends are this close


def misbehaving_calls() -> list[dict[str, Any]]:
    return lessons.misbehaving_calls(lab.all_tools(), MISBEHAVING_CALLS, lab.PERIOD_KEY)


def budget() -> dict[str, Any]:
    return lessons.past_the_budget(Allowlist(lab.tools(), budget=lab.BUDGET), lab.SMALL_ANGLE_TOOL, {}, lab.BUDGET, lab.PERIOD_KEY)


def _excess(amplitude: float, dt: float) -> float:
    return physics.period(amplitude, dt) / physics.small_angle_period() - 1


def _lands(dt: float, low: float, high: float) -> bool:
    """Whether the simulated crossing at dt lies between the two amplitudes: at most 1 % at the
    low one, above 1 % at the high one."""
    return _excess(low, dt) <= physics.EXCESS < _excess(high, dt)


def _at(dt: float, low: float, high: float) -> dict[str, Any]:
    return {
        "dt": shown(dt, f"{dt:.6g}"),
        "excess_percent": [shown(100 * e, f"{100 * e:.8g}") for e in (_excess(low, dt), _excess(high, dt))],
    }


def largest_dt() -> dict[str, Any]:
    """The largest dt (within the tool's bounds) at which the simulated crossing still lands in the
    right bracket, by bisection on dt (the crossing moves up as dt grows: checked on the scan's dts)."""
    low, high = judge.whole_degrees_around(judge.exact_crossing())
    inside, outside = lab.DT_PARAMETER.low, lab.DT_PARAMETER.high
    if not _lands(inside, low, high) or _lands(outside, low, high):
        raise ValueError(f"the crossing at dt {inside:g} s must land in {low}..{high} and at {outside:g} s must not")
    while outside - inside > DT_WITHIN:
        middle = (inside + outside) / 2
        if _lands(middle, low, high):
            inside = middle
        else:
            outside = middle
    checked = [{"dt": dt, "lands": _lands(dt, low, high)} for dt in scans.CONVERGENCE_DTS]
    return {
        "bracket": [low, high],
        "within": DT_WITHIN,
        "largest": _at(inside, low, high),
        "outside": _at(outside, low, high),
        "checked": checked,
        "monotone": all(row["lands"] == (row["dt"] <= inside) for row in checked),
    }


def exercises() -> dict[str, Any]:
    return {"misbehaving_calls": misbehaving_calls(), "budget": budget(), "largest_dt": largest_dt()}
