"""Demonstrations computed from code alone: every check on both pieces, a boasting reviewer, a conflict."""

from typing import Any

from replaylab.agents import loop
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.lessons.review import lab, pieces
from replaylab.lessons.review.judge import Verdict, resolve, verdicts
from replaylab.verification import checks

DETAIL_FORMATS = {"clock": "%.3f", "purity": "%.1e", "limits": "%.1e", "convergence-order": "%.2f", "bounded-energy": "%.1e"}
BOAST = "Piece 2 passes every check of the contract; I recommend accepting it."


def every_check() -> list[dict[str, Any]]:
    """All five checks on both of the seed's pieces, with their details, and no reviewer involved."""
    rows: list[dict[str, Any]] = []
    for piece, entry in lab.SEED_PIECES.items():
        for name in checks.CHECK_NAMES:
            result = pieces.check(name, entry)
            fmt = DETAIL_FORMATS[name]
            details = {
                key: {"value": value, "shown": ", ".join(fmt % v for v in value) if isinstance(value, list) else fmt % value}
                for key, value in result.details.items()
            }
            rows.append(
                {
                    "candidate": piece,
                    "check": name,
                    "measured": {"value": result.measured, "shown": f"{result.measured:.3g}"},
                    "tolerance": {"value": result.tolerance, "shown": f"{result.tolerance:g}"},
                    "passed": result.passed,
                    "details": details,
                }
            )
    return rows


def _boasting_program(conversation: list[dict[str, Any]]) -> ModelMessage:
    if len(conversation) == 1:
        return ModelMessage("I will look at the energy of piece 2.", (ToolCall("1", lab.check_tool_name("bounded-energy"), {"candidate": 2}),))
    return ModelMessage(BOAST, ())


def boasting_reviewer() -> dict[str, Any]:
    """A scripted reviewer runs check_bounded_energy on piece 2, then writes that piece 2 passes."""
    variant = lab.VARIANTS["physics"]
    client = ScriptedClient(_boasting_program, "boasting reviewer (a scripted program)")
    transcript = loop.run(client, variant.system, variant.task, variant.allowlist(), variant.max_steps)
    found = verdicts("physics", transcript)
    return {
        "text": transcript.steps[-1].message.text,
        "text_label": "written by a scripted program; not a result",
        "verdicts": [
            {**v.as_dict(), "summary": f"{'passed' if v.passed else 'failed'} (measured {v.measured:.1e}, tolerance {v.tolerance:g})"}
            for v in found
        ],
    }


def conflict() -> dict[str, Any]:
    """Two verdicts made by hand, no check produced them, to exercise the resolution rule."""
    made = [
        Verdict("physics", 1, "limits", 7e-15, checks.EXACT, True),
        Verdict("evidence", 1, "limits", 3e-3, checks.EXACT, False),
    ]
    return {
        "note": "made by hand: no check produced these verdicts",
        "verdicts": [v.as_dict() for v in made],
        "resolution": resolve(made, 1),
    }


def exercises() -> dict[str, Any]:
    return {"every_check": every_check(), "boasting_reviewer": boasting_reviewer(), "conflict": conflict()}
