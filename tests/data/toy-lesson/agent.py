"""The toy's scripted baselines: `square-three` squares 3 and answers with the result; `careless`
squares 3 too, then answers 3 + 3 (its experiment does not support that answer)."""

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.tools import ANSWER
from replaylab.lessons.toy import lab

STRATEGIES = ("square-three", "careless")


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant, seed=0):
    return f"toy baseline, {strategy(seed)} (a scripted program, not a language model)"


def baseline(variant, seed=0):
    careless = strategy(seed) == "careless"

    def program(conversation):
        seen = [r for c, r in exchanges(conversation) if c is not None and r.ok]
        if not seen:
            return ModelMessage(f"Squaring {lab.NUMBER}.", (ToolCall("1", lab.TOOL, {"x": lab.NUMBER}),))
        square = lab.NUMBER + lab.NUMBER if careless else seen[-1].content[lab.KEY]
        return ModelMessage(f"{lab.NUMBER} squared is {square}.", (ToolCall("2", ANSWER, {"square": square}),))

    return program
