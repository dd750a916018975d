"""The `interactive` provider (`replaylab session`): any program or person is the agent, one
JSON message per line on stdin, JSON lines on stdout.

The protocol (`replaylab session --help` shows it with an example):
- first, one line that tells the agent everything it is given: the system text, the task, the
  tools with their bounds, and the limits (messages, calls per message, budget);
- for each message the agent sends, one line with its results, the budget and messages left;
- the line of the message that ends the run (no tool calls, or the message limit) also carries
  `end`, why the run ended; the end of input gets a line with `end` too, and nothing more is read;
- a line that is not a message (empty, not UTF-8, not JSON, nested too deep, a lone surrogate,
  unknown fields, a key twice, a malformed call, two calls with one id) is answered with one
  `error` line, and the next line is read: the agent's input is data. A call may also come in
  OpenAI's shape, {"type": "function", "function": {"name": ..., "arguments": "<JSON text>"}}.
"""

import json
import re
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO, TextIO

from replaylab.agents.clients import Provider, command, register
from replaylab.agents.clients.openai import _arguments as arguments_from_text  # the one rule for arguments as text
from replaylab.agents.messages import ModelMessage, ToolCall, ToolResult, stored
from replaylab.agents.recording import KeyTwice, Recording, short, unique_keys

MODEL = "interactive session (a person or a program on stdin)"
MAX_LINE_BYTES = 1 << 20  # one message; a longer line is refused, and skipped to its end
MAX_DEPTH = 24  # objects and lists inside one another in a message (a tool call needs about 5)


def data_problem(data: Any) -> str | None:
    """A text naming the first place nested deeper than MAX_DEPTH, or a string that is not valid
    Unicode (a lone surrogate, which JSON's \\ud800 escape can make), else None."""
    pending: list[tuple[Any, str, int]] = [(data, "$", 1)]
    while pending:
        value, path, depth = pending.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"{path}: a lone surrogate is not text"
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return f"{path}: nested more than {MAX_DEPTH} levels deep"
        items: Iterable[tuple[Any, Any]] = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                pending.append((key, f"{path} (a key)", depth))
            pending.append((item, f"{path}[{key}]" if isinstance(key, int) else _member(path, key), depth + 1))
    return None


def _member(path: str, key: str) -> str:
    """The path of an object's member: a key that is not a plain name is quoted (escaped, so that
    the text holds no half character or line break)."""
    return f"{path}.{key}" if _PLAIN_KEY.fullmatch(key) else f"{path}[{short(key)}]"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def parse_message(line: bytes | str, example: dict[str, Any] | None = None) -> ModelMessage:
    """A `ModelMessage` from one line (bytes or text), or ValueError naming what is wrong."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"the line is not valid UTF-8 (byte {line[error.start]:#04x} at {error.start})") from None
    line = line.rstrip("\r\n")
    try:
        data = json.loads(line, object_pairs_hook=unique_keys)
    except KeyTwice as error:
        raise ValueError(str(error)) from None
    except json.JSONDecodeError as error:  # where in the line (json would count the lines of the input)
        where = "at the end of the line" if error.pos >= len(line) else f"at character {error.pos + 1}"
        what = error.msg.removesuffix(" at")  # "Unterminated string starting at": its place follows
        raise ValueError(f"the line is not valid JSON: {what} {where}") from None
    except RecursionError:
        raise ValueError(f"the line is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:  # an integer of more than 4300 digits
        raise ValueError(f"the line holds a number that cannot be read: {error}") from None
    problem = data_problem(data)
    if problem:
        raise ValueError(problem)
    return message_from_data(data, example)


CALL_EXAMPLE = {"id": "1", "name": "TOOL", "arguments": {"ARGUMENT": "VALUE"}}


def call_shapes(example: dict[str, Any] | None = None) -> str:
    """The two shapes of a call a message may hold, as one line with an example of each."""
    example = example or CALL_EXAMPLE
    openai = {"id": example["id"], "type": "function",
              "function": {"name": example["name"], "arguments": json.dumps(example["arguments"])}}
    return f"a call is {json.dumps(example)}, or in OpenAI's shape {json.dumps(openai)}"


def message_shape(example: dict[str, Any] | None = None) -> str:
    """The shape of a message, as one line with an example (a call of the lesson, `example`)."""
    return f'a message is {{"text": "...", "tool_calls": [{json.dumps(example or CALL_EXAMPLE)}]}}'


def message_from_data(data: Any, example: dict[str, Any] | None = None) -> ModelMessage:
    """A `ModelMessage` from {"text": ..., "tool_calls": [...]}, or ValueError naming what is wrong
    (a call that is wrong says the shape a call has, with `example`, a call of the lesson)."""
    if not isinstance(data, dict):
        raise ValueError("a message must be a JSON object")
    unknown = sorted(set(data) - {"text", "tool_calls"})
    if unknown:
        raise ValueError(f"unknown fields: {', '.join(map(short, unknown))}; {message_shape(example)}")
    text = data.get("text", "")
    calls = data.get("tool_calls", [])
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    if not isinstance(calls, list):
        raise ValueError(f"tool_calls must be a list of calls: {call_shapes(example)}")
    tool_calls: list[ToolCall] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(calls):
        try:
            call = call_from_data(item, i)
        except ValueError as error:
            raise ValueError(f"tool_calls[{i}]: {error}; {call_shapes(example)}") from None
        if call.id in seen:
            raise ValueError(f"tool_calls[{i}]: the id {call.id!r} is the id of tool_calls[{seen[call.id]}] too: "
                             "each call of a message has its own id")
        seen[call.id] = i
        tool_calls.append(call)
    return ModelMessage(text, tuple(tool_calls))


def call_from_data(data: Any, i: int) -> ToolCall:
    """A `ToolCall` from a call in either shape: {"id", "name", "arguments"}, or OpenAI's {"id",
    "type": "function", "function": {"name", "arguments": JSON text}}. Arguments given as text are
    read as the OpenAI client reads them (text that is not JSON stays text, which the allowlist
    refuses); a call without an id gets call-N."""
    if not isinstance(data, dict):
        raise ValueError(f"a call is a JSON object, not {type(data).__name__}")
    fields, where = data, ""
    if "function" in data:  # OpenAI's shape
        fields, where = data["function"], "function: "
        _no_others(data, {"id", "type", "function"}, "")
        if data.get("type", "function") != "function":
            raise ValueError(f"type must be 'function', got {short(data['type'])}")
        if not isinstance(fields, dict):
            raise ValueError(f"function must be an object with a name and arguments, not {type(fields).__name__}")
        fields = {**fields, **({"id": data["id"]} if "id" in data else {})}
        _no_others(data["function"], {"name", "arguments"}, where)
    else:
        _no_others(data, {"id", "name", "arguments"}, "")
    data = fields
    if "name" not in data:
        raise ValueError(f"{where}the call has no name")
    arguments = data.get("arguments", {})
    if isinstance(arguments, str):
        arguments = arguments_from_text(arguments)
    return ToolCall(str(data.get("id", f"call-{i + 1}")), data["name"], arguments)


def _no_others(data: dict[str, Any], fields: set[str], where: str) -> None:
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ValueError(f"{where}unknown fields: {', '.join(map(short, unknown))}")


def results_data(results: Iterable[ToolResult]) -> list[dict[str, Any]]:
    """Results as the agent reads them: a value that is not finite is null ("not measured")."""
    return [{"call_id": r.call_id, "ok": r.ok, "content": {k: stored(v) for k, v in r.content.items()}} for r in results]


class InteractiveClient:
    """Reads one message per line (bytes) and writes JSON lines. The session (`replaylab session`)
    reads each line with `read` and says the rest through `say`. `reading` is true while it waits
    for a line: the session's signal handler stops the wait then, and otherwise at the next `read`
    (`pending`), so that a message that is being answered gets its answer first."""

    secrets = ()

    def __init__(self, stdin: BinaryIO | None = None, stdout: TextIO | None = None, model: str = MODEL,
                 example: dict[str, Any] | None = None) -> None:
        self.model = model
        self._in = stdin if stdin is not None else sys.stdin.buffer
        self._out = stdout if stdout is not None else sys.stdout
        self.example = example  # a call of the lesson, shown when a call is malformed
        self.line = 0
        self.reading = False
        self.pending: int | None = None  # a signal that came while a message was answered

    def say(self, data: Any) -> None:
        # ASCII: no character of the line (U+2028, U+0085, half a character) can split it or fail to print
        self._out.write(json.dumps(data, ensure_ascii=True, allow_nan=False) + "\n")
        self._out.flush()

    def _read_line(self) -> bytes | None:
        """The next line, or None at the end of input; a line too long is skipped to its end."""
        if self.pending is not None:
            raise Interrupted(self.pending)
        self.reading = True
        try:
            line = self._in.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                rest = line
                while rest and not rest.endswith(b"\n"):
                    rest = self._in.readline(MAX_LINE_BYTES)
        finally:
            self.reading = False
        if not line:
            return None
        self.line += 1
        return line

    def read(self) -> tuple[int, ModelMessage | None, str | None] | None:
        """(line number, message, None) or (line number, None, what is wrong) of the next line, or
        None at the end of input."""
        line = self._read_line()
        if line is None:
            return None
        if len(line) > MAX_LINE_BYTES:
            return self.line, None, f"longer than {MAX_LINE_BYTES} bytes"
        if not line.strip():
            return self.line, None, 'an empty line is no message: send one JSON object per line, such as {"text": "..."}'
        try:
            return self.line, parse_message(line, self.example), None
        except ValueError as error:
            return self.line, None, str(error)

    def complete(self, system: str, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelMessage | None:
        """The next message for the agent loop (`loop.run`), every line before it that is not one
        answered with its error line; None at the end of input."""
        while (read := self.read()) is not None:
            number, message, error = read
            if message is not None:
                return message
            self.say({"error": f"line {number}: {error}", "line": number})
        return None


class Interrupted(Exception):
    """A signal stopped the session while it waited for the agent's next line."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


HOW = "A person or a program typed each message as a JSON line into `replaylab session`; the harness computed every result."


def rerecord(recording: Recording) -> str:
    p = recording.provenance
    model = ["--model", p["model"]] if p.get("model_declared") else []
    return command("replaylab", "session", recording.lesson, "--variant", recording.variant, "--run", recording.run, *model)


register(Provider("interactive", "interactive", lambda options: InteractiveClient(), lambda options: HOW, rerecord))
