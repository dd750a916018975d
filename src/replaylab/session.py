"""`replaylab session`: the agent types its messages as JSON lines, and reads everything it is given
and every result as JSON lines, one message at a time (agents/clients/interactive.py has the protocol).
"""

import json

from replaylab.agents import loop
from replaylab.agents.clients.interactive import InteractiveClient, results_data
from replaylab.agents.live import ANSWERED
from replaylab.agents.messages import ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry

INTERRUPTED = "the session was interrupted (Ctrl-C) before the agent ended the run: recorded as not finished"

HELP = """\
The session speaks JSON lines, one object per line, both ways; a person can type them too.

First it prints one line with everything the agent is given: the system text, the task, the tools
with their bounds (JSON Schema: type, minimum, maximum, enum, required), the limits, and the
protocol (this help's next paragraphs in short):
  {header}
(printed on one line; budget null: no budget of experiments.)

Then send one message per line: {{"text": "...", "tool_calls": [{{"id": "1", "name": TOOL,
"arguments": {{...}}}}]}} (both fields optional). Each message is answered with one line, its
results in the order of the calls, and what is left:
  > {message}
  < {answer}
A refused call has "ok": false and "content": {{"error": REASON}}; it costs no experiment, but
its message counts against the message limit. Calls after the {calls}th of one message are refused.
End the run by calling the tool "answer" with your answer's fields (the tools list gives them): an
accepted answer ends the run; a refused one says why, and the run goes on. A message without tool
calls ends the run with no answer. The line of the message that ends the run, like the line of the
last message the limit allows, carries why it ended:
  > {answer_message}
  < {end}
Then the session exits. Closing the input before that ends the run as not finished (one last
line with "end" says so). A line that is not a message gets {{"error": "line N: ...", "line": N}}
and costs nothing. The recording is written after every message: a killed session keeps its
messages, recorded as not finished. An existing recording is never overwritten.
"""


def _short(value, limit=60):
    """A long text of the example cut to its first words."""
    return value if len(value) <= limit else value[: limit - 4].rsplit(" ", 1)[0] + " ..."


def help_text():
    """The session's help, its example made from the first lesson of the registry: its first
    variant and first tool, called with the smallest values its bounds allow, and the answer the
    harness really gives to that call (so the example is true, whatever the lessons are)."""
    lesson = registry.lesson(registry.names()[0])
    name, v = next(iter(lesson.variants.items()))
    allowlist = v.allowlist()
    spec = allowlist.specs()[0]
    arguments = {
        key: p["enum"][0] if "enum" in p else p["minimum"] for key, p in spec["parameters"]["properties"].items()
    }
    message = {"text": "One call.", "tool_calls": [{"id": "1", "name": spec["name"], "arguments": arguments}]}
    result = allowlist.dispatch(ToolCall("1", spec["name"], arguments))
    left = {"budget_left": None if v.budget is None else v.budget - allowlist.used, "messages_left": v.max_steps - 1}
    recording = f"results/live/{lesson.name}/typed.json"
    header = {
        "lesson": lesson.name, "variant": name, "run": "typed", "recording": recording,
        "system": _short(v.system), "task": _short(v.task), "tools": ["..."],
        "limits": {"messages": v.max_steps, "calls_per_message": loop.MAX_CALLS_PER_MESSAGE, "budget": v.budget},
        "protocol": "...",
    }
    answer = {"message": 1, "results": results_data((result,)), **left}
    fields = v.answer.spec()["parameters"]["properties"]
    example = {key: p["enum"][0] if "enum" in p else [] if p["type"] == "array" else p["minimum"]
               for key, p in fields.items() if key in v.answer.spec()["parameters"]["required"]}
    answer_call = ToolCall("2", ANSWER, example)
    answer_message = {"text": "My answer.", "tool_calls": [{"id": "2", "name": ANSWER, "arguments": example}]}
    answered = allowlist.dispatch(answer_call)
    end = {"message": 2, "results": results_data((answered,)), **left, "messages_left": v.max_steps - 2,
           "end": {"finished": True, "reason": ANSWERED, "recording": recording}}
    return HELP.format(
        header=json.dumps(header), message=json.dumps(message), answer=json.dumps(answer), end=json.dumps(end),
        answer_message=json.dumps(answer_message), calls=loop.MAX_CALLS_PER_MESSAGE,
    )


def header(live):
    """Everything the agent is given, before its first message."""
    v = live.variant
    return {
        "lesson": live.lesson,
        "variant": v.name,
        "run": live.run,
        "recording": str(live.path),
        "system": v.system,
        "task": v.task,
        "tools": live.allowlist.specs(),
        "limits": live.limits(),
        "protocol": PROTOCOL,
    }


# How to talk to the session, in the first line too: an agent that reads only its input learns
# there how a message looks and how the run ends (the same as `replaylab session --help`).
PROTOCOL = (
    'Send one JSON object per line: {"text": "...", "tool_calls": [{"id": "1", "name": TOOL, '
    '"arguments": {...}}]}. Each line is answered on one line with the results of its calls. '
    f'End the run with a call of the tool "{ANSWER}" (its fields are in tools); an accepted answer ends the '
    "run. A message without tool calls ends it with no answer; closing the input ends it as not finished."
)


def end_data(live):
    return {"finished": live.finished, "reason": live.ended, "recording": str(live.path)}


def run_session(live, stdin=None, stdout=None):
    """Run the session to its end; the recording is up to date after every message."""
    client = InteractiveClient(stdin, stdout, live.provenance["model"])
    client.say(header(live))

    def on_step(step):
        ended = live.add(step)
        line = {
            "message": len(live.steps),
            "results": results_data(step.results),
            "budget_left": live.budget_left(),
            "messages_left": live.messages_left(),
        }
        if ended:
            line["end"] = end_data(live)
        client.say(line)

    v = live.variant
    try:
        loop.run(client, v.system, v.task, live.allowlist, v.max_steps, on_step=on_step)
    except KeyboardInterrupt:
        live.input_ended(INTERRUPTED)
        raise
    if live.ended is None:
        live.input_ended()
        client.say({"end": end_data(live)})
    return live
