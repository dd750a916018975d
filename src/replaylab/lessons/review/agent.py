"""The scripted baseline reviewers of the review lesson: programs, not language models.

A `thorough` reviewer (even seeds) runs every check its tools allow on both pieces, then reports
what the results say; from seed 2 on, each takes the checks in an order of its own and the
evidence reviewer measures the error at a step count of its own, so runs differ in their path,
not in what they check. A `hasty` one (odd seeds) is wrong on purpose, to test the scorecard: it
runs only the first check its tools allow.
"""

import random

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.lessons.review import lab

STRATEGIES = ("thorough", "hasty")


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant, seed=0):
    return f"review baseline, {strategy(seed)} reviewer (a scripted program, not a language model)"


ERROR_STEPS = (100, 50, 200, 400)  # the evidence reviewer's step counts; seed 0 takes the first


def _planned_calls(reviewer, plan, seed=0):
    order = random.Random(seed)
    checks = list(range(1, 6)) if plan == "thorough" else [1]
    names = list(lab.REVIEWER_CHECKS.get(reviewer, ()))[: None if plan == "thorough" else 1]
    steps = ERROR_STEPS[0]
    if seed and plan == "thorough":
        order.shuffle(checks)
        order.shuffle(names)
        steps = order.choice(ERROR_STEPS)
    if reviewer == "evidence":
        calls = [(lab.REPRODUCE_TOOL, {"check": n, "candidate": piece}) for piece in lab.PIECES for n in checks]
        return calls + [(lab.ERROR_TOOL, {"candidate": piece, "steps_per_period": steps}) for piece in lab.PIECES]
    return [(lab.check_tool_name(name), {"candidate": piece}) for piece in lab.PIECES for name in names]


def baseline(variant, seed=0):
    plan = _planned_calls(variant, strategy(seed), seed)

    def program(conversation):
        seen = exchanges(conversation)
        if len(seen) < len(plan):
            batch = plan[len(seen) : len(seen) + 4]
            calls = tuple(ToolCall(str(len(seen) + i + 1), name, args) for i, (name, args) in enumerate(batch))
            return ModelMessage("Running my checks.", calls)
        failures = {}
        for call, result in seen:
            if result.ok and "passed" in result.content and result.content["passed"] == 0.0:
                failures.setdefault(call.arguments["candidate"], []).append(lab.check_of(call.name, call.arguments))
        lines = [
            f"Piece {piece}: " + (f"fails {', '.join(failures[piece])}." if piece in failures else "passes my checks.")
            for piece in lab.PIECES
        ]
        return ModelMessage(" ".join(lines), ())

    return program
