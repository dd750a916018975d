"""The `interactive` provider (`replaylab session`): any program or person is the agent, one
JSON message per line on stdin, JSON lines on stdout.

The protocol (`replaylab session --help` shows it with an example):
- first, one line that tells the agent everything it is given: the system text, the task, the
  tools with their bounds, and the limits (messages, calls per message, budget);
- for each message the agent sends, one line with its results, the budget and messages left;
- the line of the message that ends the run (no tool calls, or the message limit) also carries
  `end`, why the run ended; the end of input gets a line with `end` too, and nothing more is read;
- a line that is not a message (not UTF-8, not JSON, nested too deep, a lone surrogate, unknown
  fields, a key twice) is answered with one `error` line, and the next line is read: the agent's input is data.
"""

import json
import sys

from replaylab.agents.clients import Provider, command, register
from replaylab.agents.messages import ModelMessage, ToolCall, stored
from replaylab.agents.recording import KeyTwice, unique_keys

MODEL = "interactive session (a person or a program on stdin)"
MAX_LINE_BYTES = 1 << 20  # one message; a longer line is refused, and skipped to its end
MAX_DEPTH = 24  # objects and lists inside one another in a message (a tool call needs about 5)


def data_problem(data):
    """A text naming the first place nested deeper than MAX_DEPTH, or a string that is not valid
    Unicode (a lone surrogate, which JSON's \\ud800 escape can make), else None."""
    pending = [(data, "$", 1)]
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
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                pending.append((key, f"{path} (a key)", depth))
            pending.append((item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}", depth + 1))
    return None


def parse_message(line):
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
    return message_from_data(data)


def message_from_data(data):
    """A `ModelMessage` from {"text": ..., "tool_calls": [...]}, or ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a message must be a JSON object")
    unknown = sorted(set(data) - {"text", "tool_calls"})
    if unknown:
        raise ValueError(f"unknown fields: {', '.join(unknown)}")
    text = data.get("text", "")
    calls = data.get("tool_calls", [])
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    if not isinstance(calls, list) or not all(isinstance(c, dict) and "name" in c for c in calls):
        raise ValueError("tool_calls must be a list of objects with a name")
    return ModelMessage(
        text,
        tuple(ToolCall(str(c.get("id", f"call-{i + 1}")), c["name"], c.get("arguments", {})) for i, c in enumerate(calls)),
    )


def results_data(results):
    """Results as the agent reads them: a value that is not finite is null ("not measured")."""
    return [{"call_id": r.call_id, "ok": r.ok, "content": {k: stored(v) for k, v in r.content.items()}} for r in results]


class InteractiveClient:
    """Reads one message per line (bytes) and writes JSON lines; `complete` returns None at the end
    of input. The session (`replaylab session`) says the rest through `say`."""

    secrets = ()

    def __init__(self, stdin=None, stdout=None, model=MODEL):
        self.model = model
        self._in = stdin if stdin is not None else sys.stdin.buffer
        self._out = stdout if stdout is not None else sys.stdout
        self.line = 0

    def say(self, data):
        self._out.write(json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n")
        self._out.flush()

    def _read_line(self):
        """The next line, or None at the end of input; a line too long is refused and skipped."""
        line = self._in.readline(MAX_LINE_BYTES + 1)
        if not line:
            return None
        self.line += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = self._in.readline(MAX_LINE_BYTES)
            self.say({"error": f"line {self.line}: longer than {MAX_LINE_BYTES} bytes", "line": self.line})
            return b""
        return line

    def complete(self, system, conversation, tools):
        while True:
            line = self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                return parse_message(line)
            except ValueError as error:
                self.say({"error": f"line {self.line}: {error}", "line": self.line})


def make_client(stdin=None, stdout=None, model=MODEL):
    return InteractiveClient(stdin, stdout, model)


HOW = "A person or a program typed each message as a JSON line into `replaylab session`; the harness computed every result."


def rerecord(recording):
    return command("replaylab", "session", recording.lesson, "--variant", recording.variant, "--run", recording.run)


register(Provider("interactive", "interactive", lambda options: make_client(), lambda options: HOW, rerecord))
