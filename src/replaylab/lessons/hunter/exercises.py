"""Demonstrations computed from code alone: the allowlist's boundary and its budget."""

from typing import Any

from replaylab.agents.messages import ToolCall, ToolResult
from replaylab.agents.tools import Allowlist
from replaylab.lessons import shown
from replaylab.lessons.hunter import lab

VALID = {"method": "velocity Verlet", "steps_per_period": 32, "periods": 5}
ATTEMPTS = (
    ("a valid experiment", VALID),
    ("a method that is not an integrator", {**VALID, "method": "os.system"}),
    ("a method given as a list", {**VALID, "method": ["velocity Verlet"]}),
    ("zero steps per period", {**VALID, "steps_per_period": 0}),
    ("a million periods", {**VALID, "periods": 1000000}),
    ("a fractional number of steps", {**VALID, "steps_per_period": 32.5}),
    ("an extra argument", {**VALID, "code": "print(1)"}),
)


def _outcome(result: ToolResult) -> dict[str, Any]:
    if result.ok:
        value = result.content[lab.RESULT_KEY]
        return {"ok": True, "value": shown(value, f"{value:.4f}")}
    return {"ok": False, "error": result.content["error"]}


def boundary() -> dict[str, Any]:
    """Seven attempts on one allowlist, then the valid experiment nine times on a fresh one."""
    allowlist = Allowlist(lab.tools(), budget=lab.BUDGET)
    attempts = [
        {"what": what, "arguments": arguments, **_outcome(allowlist.dispatch(ToolCall(str(i), lab.TOOL_NAME, arguments)))}
        for i, (what, arguments) in enumerate(ATTEMPTS, start=1)
    ]
    fresh = Allowlist(lab.tools(), budget=lab.BUDGET)
    repeats = [
        {"call": i, **_outcome(fresh.dispatch(ToolCall(str(i), lab.TOOL_NAME, VALID)))}
        for i in range(1, lab.BUDGET + 2)
    ]
    return {"attempts": attempts, "budget": lab.BUDGET, "repeats": repeats}


def exercises() -> dict[str, Any]:
    return {"boundary": boundary()}
