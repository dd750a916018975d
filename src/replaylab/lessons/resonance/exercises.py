"""Demonstrations computed from code alone: misbehaving calls, the budget, and the exercise of the
fewest periods from which the simulated amplitudes of the seeds' oscillator place its peak within
the tolerance."""

from typing import Any

from replaylab import lessons
from replaylab.lessons import shown
from replaylab.lessons.resonance import lab, peak, physics

MISBEHAVING_CALLS = (
    ("a valid call", lab.TOOL, {"frequency_rad_s": 2.47, "periods": 200}),
    ("a tool that is not allowed", "os.system", {"command": "echo hello"}),
    ("a frequency of zero", lab.TOOL, {"frequency_rad_s": 0, "periods": 200}),
    ("a fractional number of periods", lab.TOOL, {"frequency_rad_s": 2.47, "periods": 20.5}),
    ("a million periods", lab.TOOL, {"frequency_rad_s": 2.47, "periods": 1000000}),
    ("a number sent as text", lab.TOOL, {"frequency_rad_s": "2.47", "periods": 200}),
    ("an argument the tool does not take", lab.TOOL, {"frequency_rad_s": 2.47, "periods": 200, "damping": 0}),
)
LONGEST = 30  # periods: the exercise looks at 1 to this many
GRID = 15  # frequencies on each side of ω_r, a fifth of the tolerance apart


def misbehaving_calls() -> list[dict[str, Any]]:
    return lessons.misbehaving_calls(lab.all_tools(), MISBEHAVING_CALLS, lab.KEY)


def budget() -> dict[str, Any]:
    return lessons.past_the_budget(lab.all_tools(), lab.TOOL, MISBEHAVING_CALLS[0][2], lab.BUDGET, lab.KEY)


def located_after(periods: int) -> dict[str, Any]:
    """Where the simulated amplitudes after `periods` periods, on a grid around ω_r, put the peak."""
    exact = physics.resonance(lab.NATURAL, lab.DAMPING)
    step = lab.TOLERANCE / 5
    grid = [exact + k * step for k in range(-GRID, GRID + 1)]
    found = peak.located({w: physics.steady_amplitude(w, periods, lab.NATURAL, lab.DAMPING, lab.FORCE) for w in grid})
    if not found["found"]:
        return {"periods": periods, "top": None, "within": False}
    off = found["top"] - exact
    return {"periods": periods, "top": shown(found["top"], f"{found['top']:.6g}"), "off": shown(off, f"{off:+.3g}"),
            "within": abs(off) <= lab.TOLERANCE}


def fewest_periods() -> dict[str, Any]:
    """The fewest periods from which the peak the simulated amplitudes locate lies within the tolerance
    of ω_r at every larger number up to LONGEST, beside the family's rule (physics.periods_needed)."""
    rows = [located_after(p) for p in range(1, LONGEST + 1)]
    last_outside = max((row["periods"] for row in rows if not row["within"]), default=0)
    rule = physics.periods_needed(lab.NATURAL, lab.DAMPING, lab.TOLERANCE)
    return {"rows": rows, "fewest": last_outside + 1 if last_outside < LONGEST else None,
            "rule": shown(rule, f"{rule:.3g}"), "grid_step": lab.TOLERANCE / 5}


def exercises() -> dict[str, Any]:
    return {"misbehaving_calls": misbehaving_calls(), "budget": budget(), "fewest_periods": fewest_periods()}
