"""The scripted baseline agents of the hunter lesson: programs, not language models.

`coarse-first` (seed 0, CAREFUL) knows the drift grows as the step grows and as the run gets longer
(true of every method over the tool's whole bounds: tested), so it tries the coarsest steps and
longest runs of the claim's domain first, the corner that holds the worst case, and stops as soon
as an experiment breaks the claim, answering with it (or, when none does, "none found"): right on
every instance, with its first experiment deciding. The others are wrong on purpose, to test the
scorecard: `safe-region` never leaves fine steps, `random` spends its budget on points drawn at
random from the domain (seeded), and `careless` experiments as `coarse-first` does but answers
with its largest drift as a counterexample, without looking at the claim's limit.
"""

import random
from typing import Any

from replaylab.agents.messages import ModelMessage, ToolCall, ToolResult, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons import Instance, Program
from replaylab.lessons.hunter import lab

STRATEGIES = ("coarse-first", "safe-region", "random", "careless")
CAREFUL = "coarse-first"  # right on every instance: the proof that each is solvable as posed
TRIVIAL = "no-experiment"  # the floor: no experiment, "none found"


def strategy(seed: int) -> str:
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant: str, seed: int = 0, plan: str | None = None) -> str:
    return f"hunter baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


def no_experiment(conversation: list[dict[str, Any]]) -> ModelMessage:
    """The trivial program: no experiment; it answers that it found no counterexample."""
    return ModelMessage("No experiment: I found nothing.", (ToolCall("answer", ANSWER, {"outcome": lab.NONE_FOUND}),))


def _plan(claim: lab.Claim, seed: int, plan: str) -> list[tuple[int, int]]:
    (low_n, high_n), (low_p, high_p) = claim.ranges["steps_per_period"], claim.ranges["periods"]
    if plan in ("coarse-first", "careless"):
        points = [(low_n, high_p), (low_n + 1, high_p), (low_n, low_p), (low_n + 2, high_p)]
        points += [(low_n + 4 + 2 * i + seed // 3 % 3, high_p) for i in range(claim.budget)]
    elif plan == "safe-region":
        points = [(high_n - 10 * i, high_p) for i in range(claim.budget)]
    else:
        draw = random.Random(seed)
        points = [(draw.randint(low_n, high_n), draw.randint(low_p, high_p)) for _ in range(4 * claim.budget)]
    return [p for i, p in enumerate(points) if low_n <= p[0] <= high_n and p not in points[:i]][: claim.budget]


def _counterexample(call: ToolCall, result: ToolResult, claim: lab.Claim, words: str) -> ModelMessage:
    a = call.arguments
    fields = {"outcome": lab.COUNTEREXAMPLE, **{p.name: a[p.name] for p in lab.PARAMETERS}}
    return ModelMessage(
        f"{words}: {a['method']} with {a['steps_per_period']} steps per period over {a['periods']} "
        f"periods drifts by {result.content[claim.key]:.4g} (the limit is {claim.limit:g}).",
        (ToolCall("answer", ANSWER, fields),),
    )


def baseline(variant: str, seed: int = 0, instance: Instance | None = None, plan: str | None = None) -> Program:
    """A program(conversation) -> ModelMessage; `seed` picks the strategy (`plan` names one instead)."""
    name = plan or strategy(seed)
    if name == TRIVIAL:
        return no_experiment
    claim = lab.claim_of(instance) if instance is not None else lab.CLAIMS[variant]
    careless = name == "careless"
    planned = _plan(claim, seed, name)

    def program(conversation: list[dict[str, Any]]) -> ModelMessage:
        seen = [(c, r) for c, r in exchanges(conversation) if c is not None and r.ok]
        broken = [(c, r) for c, r in seen if not claim.holds_on(r.content[claim.key])]
        if broken and not careless:
            return _counterexample(*broken[0], claim, "Counterexample")
        done = len(exchanges(conversation))
        if done >= len(planned) or (broken and careless):
            if careless and seen:
                largest = max(seen, key=lambda pair: pair[1].content[claim.key])
                return _counterexample(*largest, claim, "My largest drift is a counterexample")
            worst = max((r.content[claim.key] for _, r in seen), default=float("nan"))
            return ModelMessage(
                f"No counterexample in {len(seen)} experiments; the largest drift was {worst:.4g}, below the limit "
                f"{claim.limit:g}. This does not show that the claim is true.",
                (ToolCall("answer", ANSWER, {"outcome": lab.NONE_FOUND}),),
            )
        batch = planned[done : done + 4]
        calls = tuple(
            ToolCall(str(done + i + 1), claim.tool, {**claim.fixed, "steps_per_period": n, "periods": p})
            for i, (n, p) in enumerate(batch)
        )
        return ModelMessage("Trying the coarsest steps and the longest runs first.", calls)

    return program
