"""`replaylab session`: the agent types its messages as JSON lines, and reads everything it is given
and every result as JSON lines, one message at a time (agents/clients/interactive.py has the protocol).
"""

from replaylab.agents import loop
from replaylab.agents.clients.interactive import InteractiveClient, results_data
from replaylab.agents.live import LiveRun

INTERRUPTED = "the session was interrupted (Ctrl-C) before the agent ended the run: recorded as not finished"

HELP = """\
The session speaks JSON lines, one object per line, both ways; a person can type them too.

First it prints one line with everything the agent is given: the system text, the task, the tools
with their bounds (JSON Schema: type, minimum, maximum, enum, required), and the limits:
  {"lesson": "projectile", "variant": "default", "run": "typed",
   "recording": "results/live/projectile/typed.json", "system": "You are ...", "task": "At ...",
   "tools": [{"name": "range_with_drag", "description": "...", "parameters": {"type": "object",
     "properties": {"speed": {"type": "number", "minimum": 1, "maximum": 50, ...}, ...},
     "required": ["speed", "angle", "dt"], "additionalProperties": false}}, ...],
   "limits": {"messages": 12, "calls_per_message": 4, "budget": null}}
(printed on one line; budget null: no budget of experiments.)

Then send one message per line: {"text": "...", "tool_calls": [{"id": "1", "name": TOOL,
"arguments": {...}}]} (both fields optional). Each message is answered with one line, its
results in the order of the calls, and what is left:
  > {"text": "Two angles.", "tool_calls": [{"id": "1", "name": "range_with_drag",
  >  "arguments": {"speed": 25, "angle": 40, "dt": 0.01}}]}
  < {"message": 1, "results": [{"call_id": "1", "ok": true, "content": {"range_m": 35.789}}],
  <  "budget_left": null, "messages_left": 11}
A refused call has "ok": false and "content": {"error": REASON}; it costs no budget. Calls
after the 4th of one message are refused. A message without tool calls is your answer and ends
the run; its line, like the line of the last message the limit allows, carries why it ended:
  < {"message": 2, "results": [], "budget_left": null, "messages_left": 10, "end":
  <  {"finished": true, "reason": "finished: the agent ended the run",
  <   "recording": "results/live/projectile/typed.json"}}
Then the session exits. Closing the input before that ends the run as not finished (one last
line with "end" says so). A line that is not a message gets {"error": "line N: ...", "line": N}
and costs nothing. The recording is written after every message: a killed session keeps its
messages, recorded as not finished. An existing recording is never overwritten.
"""


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
    }


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
