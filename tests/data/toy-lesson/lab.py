"""The toy lab: one bounded tool, the answer tool, one variant."""

from replaylab.agents.tools import Allowlist, Parameter, Tool, answer_tool
from replaylab.lessons import Variant, harness_rules

TOOL, KEY = "square", "value"
X = Parameter("x", "the number to square", 0, 10)
NUMBER = 3  # the number the task asks about
MAX_STEPS = 3
SQUARE = Parameter("square", "your value of 3 squared", 0, 100, integer=True)


def tools():
    return [Tool(TOOL, f"x times x. Returns {KEY}: the square of x.", (X,), lambda x: {KEY: x * x})]


ANSWER = answer_tool("Your answer; it ends the run. square: the value of 3 squared.", (SQUARE,))


def all_tools():
    return Allowlist(tools())


SYSTEM = "You square numbers with your tool. " + harness_rules(MAX_STEPS)
TASK = (f"What is {NUMBER} squared? Call answer with square, a whole number: your answer is right when it equals "
        f"the square of {NUMBER} that the build computes.")
VARIANTS = {"default": Variant("default", SYSTEM, TASK, tools, ANSWER, max_steps=MAX_STEPS)}
