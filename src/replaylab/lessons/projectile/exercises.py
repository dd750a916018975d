"""Demonstrations computed from code alone: misbehaving calls, step bounds, a new tool."""

from typing import Any

from replaylab.agents.messages import ToolCall, ToolResult
from replaylab.agents.tools import Allowlist
from replaylab.lessons import shown
from replaylab.lessons.projectile import lab
from replaylab.physics import projectile

MISBEHAVING_CALLS = (
    ("a valid call", lab.RANGE_TOOL, {"speed": 25, "angle": 40, "dt": 0.01}),
    ("a tool that is not allowed", "os.system", {"command": "echo hello"}),
    ("a step of zero", lab.RANGE_TOOL, {"speed": 25, "angle": 40, "dt": 0.0}),
    ("a missing argument", lab.RANGE_TOOL, {"speed": 25, "angle": 40}),
    ("a number sent as text", lab.RANGE_TOOL, {"speed": "25", "angle": 40, "dt": 0.01}),
    ("an extra argument", lab.VACUUM_TOOL, {"speed": 25, "angle": 45, "code": "1+1"}),
)


def _outcome(result: ToolResult, fmt: str) -> dict[str, Any]:
    if result.ok:
        value = next(iter(result.content.values()))
        return {"ok": True, "value": shown(value, fmt % value), "content": result.content}
    return {"ok": False, "error": result.content["error"]}


def misbehaving_calls() -> list[dict[str, Any]]:
    """Six calls through one fresh allowlist, and what became of each."""
    allowlist = Allowlist(lab.tools())
    rows: list[dict[str, Any]] = []
    for number, (what, name, arguments) in enumerate(MISBEHAVING_CALLS, start=1):
        result = allowlist.dispatch(ToolCall(str(number), name, arguments))
        rows.append({"what": what, "name": name, "arguments": arguments, **_outcome(result, "%.3f")})
    return rows


def step_bounds() -> dict[str, Any]:
    """Range at 40 degrees with the smallest and the largest allowed dt."""
    fine = projectile.range_with_drag(lab.SPEED, 40, lab.DT_PARAMETER.low)
    coarse = projectile.range_with_drag(lab.SPEED, 40, lab.DT_PARAMETER.high)
    difference = coarse - fine
    return {
        "angle": 40,
        "fine_dt": lab.DT_PARAMETER.low,
        "coarse_dt": lab.DT_PARAMETER.high,
        "fine_m": shown(fine, f"{fine:.3f}"),
        "coarse_m": shown(coarse, f"{coarse:.3f}"),
        "difference_m": shown(difference, f"{difference:.3f}"),
    }


def new_tool() -> list[dict[str, Any]]:
    """`flight_time_without_drag` added to the allowlist: 90 degrees is refused, 60 runs."""
    allowlist = Allowlist(lab.tools() + [lab.flight_time_tool()])
    rows: list[dict[str, Any]] = []
    for number, angle in enumerate((90, 60), start=1):
        arguments = {"speed": lab.SPEED, "angle": angle}
        result = allowlist.dispatch(ToolCall(str(number), lab.FLIGHT_TIME_TOOL, arguments))
        rows.append({"arguments": arguments, **_outcome(result, "%.3f")})
    return rows


def exercises() -> dict[str, Any]:
    return {"misbehaving_calls": misbehaving_calls(), "step_bounds": step_bounds(), "new_tool": new_tool()}
