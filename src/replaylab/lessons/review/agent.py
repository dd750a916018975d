"""The scripted baseline reviewers of the review lesson: programs, not language models.

A `thorough` reviewer (seed 0 and every third seed) runs every check its tools allow on both
pieces, then answers with the checks that failed; from seed 3 on, each takes the checks in an
order of its own and the evidence reviewer measures the error at a step count of its own, so runs
differ in their path, not in what they check. The others are wrong on purpose, to test the
scorecard: a `hasty` one runs only the first check its tools allow and answers from it; a
`careless` one runs every check as the thorough one does, and answers that no check failed.

Every program works on any instance of the family: the tools of a variant run on its own
instance's pieces, so the calls need not know which pieces those are. `thorough` (CAREFUL) is
right on every instance (the tests and the build run it on all of them: 3 reviewers x 61
instances, at most 12 calls in 3 messages each, then the answer); `no-check` (TRIVIAL) is right
only where its reviewer's remit fails on neither piece.
"""

import random
from typing import Any

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.review import lab

STRATEGIES = ("thorough", "hasty", "careless")
CAREFUL = "thorough"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-check"  # the floor: no check, "nothing fails"


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str, seed: int = 0, plan: str | None = None) -> str:
    return f"review baseline, {plan or strategy(seed)} reviewer (a scripted program, not a language model)"


def no_check(conversation: list[dict[str, Any]]) -> ModelMessage:
    """The trivial program: no check; it answers that nothing fails."""
    return ModelMessage("No check: nothing fails.", (ToolCall("answer", ANSWER, {lab.failed_field(piece): [] for piece in lab.PIECES}),))


ERROR_STEPS = (100, 50, 200, 400)  # the evidence reviewer's step counts; seed 0 takes the first


def _planned_calls(reviewer: str, plan: str, seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
    order = random.Random(seed)
    everything = plan != "hasty"
    checks = list(range(1, 6)) if everything else [1]
    names = list(lab.REVIEWER_CHECKS.get(reviewer, ()))[: None if everything else 1]
    steps = ERROR_STEPS[0]
    if seed and everything:
        order.shuffle(checks)
        order.shuffle(names)
        steps = order.choice(ERROR_STEPS)
    if reviewer == "evidence":
        calls = [(lab.REPRODUCE_TOOL, {"check": n, "candidate": piece}) for piece in lab.PIECES for n in checks]
        return calls + [(lab.ERROR_TOOL, {"candidate": piece, "steps_per_period": steps}) for piece in lab.PIECES]
    return [(lab.check_tool_name(name), {"candidate": piece}) for piece in lab.PIECES for name in names]


def baseline(variant: str, seed: int = 0, instance: Instance | None = None, plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage; `seed` picks the strategy (`plan` names one instead).
    `instance` is not needed: the run's tools already hold its pieces."""
    name = plan or strategy(seed)
    if name == TRIVIAL:
        return no_check
    planned = _planned_calls(variant, name, seed)
    careless = name == "careless"

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        seen = exchanges(conversation)
        if len(seen) < len(planned):
            batch = planned[len(seen) : len(seen) + 4]
            calls = tuple(ToolCall(str(len(seen) + i + 1), name, args) for i, (name, args) in enumerate(batch))
            return ModelMessage("Running my checks.", calls)
        failures: dict[int, list[Any]] = {piece: [] for piece in lab.PIECES}
        for call, result in seen:
            if result.ok and "passed" in result.content and result.content["passed"] == 0.0 and not careless:
                assert call is not None  # a result that passed a check answers a call of the run
                failures[call.arguments["candidate"]].append(lab.check_of(call.name, call.arguments))
        lines = [
            f"Piece {piece}: " + (f"fails {', '.join(failures[piece])}." if failures[piece] else "passes my checks.")
            for piece in lab.PIECES
        ]
        answer = ToolCall("answer", ANSWER, {lab.failed_field(piece): failures[piece] for piece in lab.PIECES})
        return ModelMessage(" ".join(lines), (answer,))

    return program
