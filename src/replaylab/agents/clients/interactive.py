"""The `interactive` provider (`replaylab session`): any program or person is the agent: one JSON message per line on stdin, results as JSON lines on stdout.

A message is {"text": "...", "tool_calls": [{"id": "...", "name": "...", "arguments": {...}}]}.
A message with no tool calls, or the end of input, ends the run. A line that is not such a message
is answered with {"error": "..."} and the next line is read: the agent's input is data.
"""

import json
import sys

from replaylab.agents.clients import Options, Provider, command, register
from replaylab.agents.messages import ModelMessage, ToolCall, stored

MODEL = "interactive session (a person or a program on stdin)"


def parse_message(line):
    """A `ModelMessage` from one line of JSON, or ValueError naming what is wrong."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"the line is not valid JSON: {error}") from None
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


class InteractiveClient:
    secrets = ()

    def __init__(self, stdin=None, stdout=None, model=MODEL):
        self.model = model
        self._in = stdin if stdin is not None else sys.stdin
        self._out = stdout if stdout is not None else sys.stdout

    def _say(self, data):
        self._out.write(json.dumps(data, allow_nan=False) + "\n")
        self._out.flush()

    def complete(self, system, conversation, tools):
        results = []
        for item in reversed(conversation):
            if item["role"] != "tool":
                break
            results.insert(0, item["result"])
        if results:
            self._say([{"call_id": r.call_id, "ok": r.ok, "content": {k: stored(v) for k, v in r.content.items()}} for r in results])
        for line in self._in:
            if not line.strip():
                continue
            try:
                return parse_message(line)
            except ValueError as error:
                self._say({"error": str(error)})
        return ModelMessage("", ())


HOW = "A person or a program typed each message as a JSON line into `replaylab session`; the harness computed every result."


def make_client(options: Options):
    return InteractiveClient()


def rerecord(recording):
    return command("replaylab", "session", recording.lesson, "--variant", recording.variant, "--run", recording.run)


register(Provider("interactive", "interactive", make_client, lambda options: HOW, rerecord))
