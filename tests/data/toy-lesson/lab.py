"""The toy lab: one bounded tool, one variant."""

from replaylab.agents.tools import Allowlist, Parameter, Tool
from replaylab.lessons import Variant

TOOL, KEY = "square", "value"
X = Parameter("x", "the number to square", 0, 10)


def tools():
    return [Tool(TOOL, "x times x.", (X,), lambda x: {KEY: x * x})]


def all_tools():
    return Allowlist(tools())


VARIANTS = {"default": Variant("default", "You square numbers with your tool.", "What is 3 squared?", tools, max_steps=3)}
