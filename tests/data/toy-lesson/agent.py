"""The toy's scripted baseline: it squares 3, then stops."""

from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.lessons.toy import lab


STRATEGIES = ("square-three",)


def strategy(seed):
    return STRATEGIES[seed % len(STRATEGIES)]


def model(variant, seed=0):
    return "toy baseline (a scripted program, not a language model)"


def baseline(variant, seed=0):
    def program(conversation):
        if len(conversation) == 1:
            return ModelMessage("Squaring 3.", (ToolCall("1", lab.TOOL, {"x": 3}),))
        return ModelMessage("3 squared is 9.")

    return program
