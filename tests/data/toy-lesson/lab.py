"""The toy lab: one bounded tool, the answer tool, and the variant of one number to square."""

from replaylab.agents.tools import Allowlist, Parameter, Tool, answer_tool
from replaylab.lessons import Variant

TOOL, KEY = "square", "value"
X = Parameter("x", "the number to square", 0, 10)
NUMBER = 3  # the number the seeds' question asks about
MAX_STEPS = 3


def tools():
    return [Tool(TOOL, f"x times x. Returns {KEY}: the square of x.", (X,), lambda x: {KEY: x * x})]


def all_tools():
    return Allowlist(tools())


INTRO = "You square numbers with your tool."


def variant(number):
    """The variant that asks for the square of `number`: its task and its answer tool state the number."""
    square = Parameter("square", f"your value of {number} squared", 0, 100, integer=True)
    task = (f"What is {number} squared? Call answer with square, a whole number: your answer is right when it equals "
            f"the square of {number} that the build computes. It is supported when you squared {number} yourself and "
            "got that number.")
    answer = answer_tool(f"Your answer; it ends the run. square: the value of {number} squared.", (square,))
    return Variant("default", INTRO, task, tools, answer, max_steps=MAX_STEPS)


VARIANTS = {"default": variant(NUMBER)}
