"""The toy's scripted baselines: `square-it` squares the instance's number and answers with the
result; `careless` squares it too, then answers the number doubled (its experiment does not support
that answer); `guess` answers 9 without an experiment (the floor)."""

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons.toy import lab

STRATEGIES = ("square-it", "careless")
CAREFUL, TRIVIAL = "square-it", "guess"


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant, seed=0, plan=None):
    return f"toy baseline, {plan or strategy(seed)} (a scripted program, not a language model)"


def baseline(variant, seed=0, instance=None, plan=None):
    plan = plan or strategy(seed)
    number = lab.NUMBER if instance is None else instance.parameters["number"]

    def program(conversation):
        if plan == TRIVIAL:
            return ModelMessage("A guess.", (ToolCall("1", ANSWER, {"square": 9}),))
        seen = [r for c, r in exchanges(conversation) if c is not None and r.ok]
        if not seen:
            return ModelMessage(f"Squaring {number}.", (ToolCall("1", lab.TOOL, {"x": number}),))
        square = number + number if plan == "careless" else seen[-1].content[lab.KEY]
        return ModelMessage(f"{number} squared is {square}.", (ToolCall("2", ANSWER, {"square": square}),))

    return program
