"""How a run is shown to a person: one line per tool call, numbers with 6 significant digits."""

import sys


def number_text(value):
    """A result's value: a float with 6 significant digits, a name (the check that ran) as it is."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else repr(value)


def call_line(call):
    if isinstance(call.arguments, dict):
        arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    else:
        arguments = repr(call.arguments)
    return f"{call.name}({arguments})" if isinstance(call.name, str) else f"{call.name!r}({arguments})"


def result_line(result):
    if not result.ok:
        return f"refused: {result.content['error']}"
    return ", ".join(f"{k} {number_text(v)}" for k, v in result.content.items())


def print_step(number, step, stream=sys.stdout):
    """One message and its results, as a person follows a run."""
    text = step.message.text.strip()
    print(f"message {number}: {text if text else '(no text)'}", file=stream)
    for index, (call, result) in enumerate(zip(step.message.tool_calls, step.results), start=1):
        print(f"  call {index}: {call_line(call)} -> {result_line(result)}", file=stream)
