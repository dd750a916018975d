"""How a run is shown to a person: one line per tool call, numbers with 6 significant digits.

What a model or the author of a recording wrote is shown with its control characters escaped
(`printable`, the one rule the pages use too): an escape sequence in a recording can neither
colour nor clear the terminal.
"""

import sys
from typing import TYPE_CHECKING, TextIO

from replaylab.agents.recording import printable
from replaylab.agents.tools import ACCEPTED_KEY

if TYPE_CHECKING:
    from replaylab.agents.messages import Step, ToolCall, ToolResult


def number_text(value: object) -> str:
    """A result's value: a float with 6 significant digits, a name (the check that ran) as it is."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else repr(value)


def call_line(call: "ToolCall") -> str:
    if isinstance(call.arguments, dict):
        arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    else:
        arguments = repr(call.arguments)
    text = f"{call.name}({arguments})" if isinstance(call.name, str) else f"{call.name!r}({arguments})"
    return printable(text)


def result_line(result: "ToolResult") -> str:
    if not result.ok:
        return printable(f"refused: {result.content['error']}")
    if ACCEPTED_KEY in result.content:  # the answer, echoed in words
        return printable(f"accepted: {result.content[ACCEPTED_KEY]}")
    return printable(", ".join(f"{k} {number_text(v)}" for k, v in result.content.items()))


def print_step(number: int, step: "Step", stream: TextIO | None = None) -> None:
    """One message and its results, as a person follows a run (on `stream`, by default stdout)."""
    stream = sys.stdout if stream is None else stream
    text = printable(step.message.text.strip(), keep="\n\t")
    print(f"message {number}: {text if text else '(no text)'}", file=stream)
    for index, (call, result) in enumerate(zip(step.message.tool_calls, step.results), start=1):
        print(f"  call {index}: {call_line(call)} -> {result_line(result)}", file=stream)
