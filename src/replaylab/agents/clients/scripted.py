"""The `scripted` provider: a deterministic program plays the agent; it reads the results so far
and writes the next message. No model, no key.

Each lesson has its baseline programs (`lessons/<lesson>/agent.py`); the seed picks a strategy
(some are wrong on purpose) and the first calls. Named programs, for campaigns that compare them
like models: `scripted-mixed` takes the seed as it is (the lesson's strategies in turn),
`scripted-careful` plays the lesson's first strategy, the careful one, whatever the seed (the
seed still varies its first calls), and `scripted-careless` its `careless` strategy, which
experiments as the careful one does and answers carelessly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from replaylab.agents.clients import Options, Provider, command, register
from replaylab.errors import InvalidInput

if TYPE_CHECKING:
    from replaylab.agents.messages import ModelMessage
    from replaylab.agents.recording import Recording

PROGRAMS = ("scripted-careful", "scripted-careless", "scripted-mixed")
ONE_STRATEGY = {"scripted-careful": None, "scripted-careless": "careless"}  # None: the first


class ScriptedClient:
    secrets = ()

    def __init__(self, program: Callable[[list[dict[str, Any]]], ModelMessage | None], model: str,
                 seed: int | None = None) -> None:
        """`program(conversation) -> ModelMessage`; `model` names the program."""
        self.model = model
        self._program = program
        self._seed = seed

    def complete(self, system: str, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelMessage | None:
        return self._program(conversation)

    def provenance_extra(self) -> dict[str, Any]:
        return {} if self._seed is None else {"seed": self._seed}


def program_seed(options: Options) -> int:
    """The seed the lesson's baseline gets: `scripted-careful` keeps to the first strategy,
    `scripted-careless` to the careless one."""
    if options.model not in ONE_STRATEGY:
        return options.seed
    strategies = options.agent.STRATEGIES
    one = ONE_STRATEGY[options.model]
    return options.seed * len(strategies) + (0 if one is None else strategies.index(one))


def make_client(options: Options) -> ScriptedClient:
    if options.model is not None and options.model not in PROGRAMS:
        raise InvalidInput(f"--model {options.model}: the scripted provider's programs are: {', '.join(PROGRAMS)}")
    seed = program_seed(options)
    model = options.model or options.agent.model(options.variant, seed)
    return ScriptedClient(options.agent.baseline(options.variant, seed, options.instance), model, options.seed)


def describe(options: Options) -> str:
    seed = program_seed(options)
    strategy = options.agent.strategy(seed)
    program = f" {options.model}" if options.model else ""
    return (
        f"Scripted baseline{program}: replaylab's built-in program for this lesson (strategy {strategy}, seed {seed}) "
        "chose each call from the results it had read; the harness computed every result."
    )


def rerecord(recording: Recording) -> str:
    p = recording.provenance
    model = ["--model", p["model"]] if p["model"] in PROGRAMS else []
    return command(
        "replaylab", "record", recording.lesson, "--variant", recording.variant, "--provider", "scripted", *model,
        "--seed", p.get("seed", 0), "--run", recording.run, "--group", recording.group,
    )


def run_name(options: Options) -> str:
    return f"{options.model or 'scripted'}-{options.variant}-{options.seed}"


register(
    Provider(
        "scripted", "scripted", make_client, describe, rerecord, run_name, group="scripted",
        models=PROGRAMS, unattended=True,
    )
)
