"""The scripted baseline reviewers of the review lesson: programs, not language models.

A `thorough` reviewer (even seeds) runs every check its tools allow on both pieces, then reports
what the results say. A `hasty` one (odd seeds) is wrong on purpose, to test the scorecard: it
runs only the first check its tools allow.
"""

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.lessons.review import lab
from replaylab.verification.checks import CHECK_NAMES

STRATEGIES = ("thorough", "hasty")


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant, seed=0):
    return f"review baseline, {strategy(seed)} reviewer (a scripted program, not a language model)"


def _planned_calls(reviewer, plan):
    checks = range(1, 6) if plan == "thorough" else range(1, 2)
    if reviewer == "evidence":
        calls = [("reproduce_check", {"check": n, "candidate": piece}) for piece in lab.PIECES for n in checks]
        return calls + [("oscillator_error", {"candidate": piece, "steps_per_period": 100}) for piece in lab.PIECES]
    names = lab.REVIEWER_CHECKS[reviewer] if plan == "thorough" else lab.REVIEWER_CHECKS[reviewer][:1]
    return [("check_" + name.replace("-", "_"), {"candidate": piece}) for piece in lab.PIECES for name in names]


def _check_name(name, arguments):
    return CHECK_NAMES[arguments["check"] - 1] if name == "reproduce_check" else name[len("check_"):].replace("_", "-")


def baseline(variant, seed=0):
    plan = _planned_calls(variant, strategy(seed))

    def program(conversation):
        seen = exchanges(conversation)
        if len(seen) < len(plan):
            batch = plan[len(seen) : len(seen) + 4]
            calls = tuple(ToolCall(str(len(seen) + i + 1), name, args) for i, (name, args) in enumerate(batch))
            return ModelMessage("Running my checks.", calls)
        failures = {}
        for call, result in seen:
            if result.ok and "passed" in result.content and result.content["passed"] == 0.0:
                failures.setdefault(call.arguments["candidate"], []).append(_check_name(call.name, call.arguments))
        lines = [
            f"Piece {piece}: " + (f"fails {', '.join(failures[piece])}." if piece in failures else "passes my checks.")
            for piece in lab.PIECES
        ]
        return ModelMessage(" ".join(lines), ())

    return program
