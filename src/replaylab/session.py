"""`replaylab session`: the agent types its messages as JSON lines, and reads everything it is given
and every result as JSON lines, one message at a time (agents/clients/interactive.py has the protocol).
"""

import contextlib
import json
import signal
import threading

from replaylab import ownership
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.interactive import InteractiveClient, Interrupted, results_data
from replaylab.agents.live import ANSWERED, LiveRun, Unrecordable, stopped
from replaylab.agents.messages import ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry

MAX_REFUSED_LINES = 100  # lines that are not messages, before the session ends: an agent that cannot write one
TOO_MANY_REFUSED = (f"{MAX_REFUSED_LINES} lines were refused (not messages, or messages the recording could not "
                    "hold): the session has ended, not finished, with no answer")
OUTPUT_CLOSED = "the agent closed the session's output before it ended the run: recorded as not finished, with no answer"

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
A call may also come in OpenAI's shape, {{"id": "1", "type": "function", "function": {{"name": TOOL,
"arguments": "<the arguments as JSON text>"}}}}; two calls of one message never share an id.
A refused call has "ok": false and "content": {{"error": REASON}}; it costs no experiment, but
its message counts against the message limit. Calls after the {calls}th of one message are refused.
End the run by calling the tool "answer" with your answer's fields (the tools list gives them): an
accepted answer ends the run, and its result echoes it ("accepted"); a refused one says why, and the
run goes on. A message without tool calls ends the run with no answer. The answer to the message
before the last one the limit allows carries "warning": "{last}". The line of the message that ends the run, like the line of the
last message the limit allows, carries why it ended:
  > {answer_message}
  < {end}
Then the session exits. Closing the input before that ends the run as not finished (one last
line with "end" says so); so does Ctrl-C (SIGINT, exit code 130) or SIGTERM (143). A line that
is not a message (an empty line too), or a message its recording could not hold (more than a
recording's {mib} MiB, or more calls than it holds), gets {{"error": "line N: ...", "line": N}} and
costs nothing; after {refused} such lines the session ends, not finished, and the recording
notes how many there were. The recording is written after every message: a killed session
keeps its messages, recorded as not finished. An existing recording is never overwritten.
"""


def _short(value, limit=60):
    """A long text of the example cut to its first words."""
    return value if len(value) <= limit else value[: limit - 4].rsplit(" ", 1)[0] + " ..."


def example_call(allowlist):
    """A call of the first tool with the smallest values its bounds allow: the example of the help,
    and of an error about a malformed call."""
    spec = allowlist.specs()[0]
    arguments = {key: p["enum"][0] if "enum" in p else p["minimum"] for key, p in spec["parameters"]["properties"].items()}
    return {"id": "1", "name": spec["name"], "arguments": arguments}


def help_text():
    """The session's help, its example made from the first lesson of the registry: its first
    variant and first tool, called with the smallest values its bounds allow, and the answer the
    harness really gives to that call (so the example is true, whatever the lessons are)."""
    lesson = registry.lesson(registry.names()[0])
    name, v = next(iter(lesson.variants.items()))
    allowlist = v.allowlist()
    example = example_call(allowlist)
    message = {"text": "One call.", "tool_calls": [example]}
    result = allowlist.dispatch(ToolCall("1", example["name"], example["arguments"]))
    left = {"budget_left": None if v.budget is None else v.budget - allowlist.used, "messages_left": v.max_steps - 1}
    recording = f"results/live/{lesson.name}/typed.json"
    header = {
        "lesson": lesson.name, "instance": lesson.seed_of(name).id, "variant": name, "run": "typed", "recording": recording,
        "system": _short(v.system), "task": _short(v.task), "tools": ["..."],
        "limits": {"messages": v.max_steps, "calls_per_message": loop.MAX_CALLS_PER_MESSAGE, "budget": v.budget},
        "protocol": "...",
    }
    answer = {"message": 1, "results": results_data((result,)), **left}
    fields = v.answer.spec()["parameters"]["properties"]
    required = [key for key in fields if key in v.answer.spec()["parameters"]["required"]]
    # the n-th number the first number's minimum plus n: a bracket's low and high are then two adjacent values
    first = next((fields[key]["minimum"] for key in required if "minimum" in fields[key]), 0)
    example = {key: fields[key]["enum"][0] if "enum" in fields[key] else [] if fields[key]["type"] == "array"
               else first + n for n, key in enumerate(required)}
    answer_call = ToolCall("2", ANSWER, example)
    answer_message = {"text": "My answer.", "tool_calls": [{"id": "2", "name": ANSWER, "arguments": example}]}
    answered = allowlist.dispatch(answer_call)
    end = {"message": 2, "results": results_data((answered,)), **left, "messages_left": v.max_steps - 2,
           "end": {"finished": True, "reason": ANSWERED, "recording": recording}}
    return HELP.format(
        header=json.dumps(header), message=json.dumps(message), answer=json.dumps(answer), end=json.dumps(end),
        answer_message=json.dumps(answer_message), calls=loop.MAX_CALLS_PER_MESSAGE, refused=MAX_REFUSED_LINES,
        mib=recording_io.MAX_BYTES >> 20, last=LAST_MESSAGE,
    )


def header(live):
    """Everything the agent is given, before its first message."""
    v = live.variant
    return {
        "lesson": live.lesson,
        "instance": live.instance,
        "variant": v.name,
        "run": live.run,
        "recording": str(live.path),
        "system": live.system,
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
    "run. A message without tool calls ends it with no answer; closing the input ends it as not finished. "
    f'A line that is not a message gets {{"error": ...}}; after {MAX_REFUSED_LINES} of them the session ends.'
)


def end_data(live):
    return {"finished": live.finished, "reason": live.ended, "recording": str(live.path)}


def result_line(live, step):
    """What the agent reads after its message: the results, what is left, and the end if it came."""
    line = {
        "message": len(live.steps),
        "results": results_data(step.results),
        "budget_left": live.budget_left(),
        "messages_left": live.messages_left(),
    }
    if live.ended:
        line["end"] = end_data(live)
    elif live.messages_left() == 1:
        line["warning"] = LAST_MESSAGE
    return line


LAST_MESSAGE = f"one message is left: call {ANSWER} in it, or the run ends with no answer"


@contextlib.contextmanager
def signals_end(client):
    """SIGINT and SIGTERM end the session: at once while it waits for a line, else once the
    message being answered has its answer (`client.pending`)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return

    def handler(signum, frame):
        if client.reading:
            raise Interrupted(signum)
        client.pending = signum

    before = {number: signal.signal(number, handler) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, old in before.items():
            signal.signal(number, old)


# What a second writer of a run name is told (a session, an MCP server; `promote` says it its way)
BEING_WRITTEN = "this run is being written by {holder} (a session or an MCP server)"


def start(lesson, name, v, group, provenance, path, instance):
    """The live run of a session (or of an MCP server, with its `path`): its name owned first
    (replaylab.ownership: `Busy` while another session or server writes it, even when its file is
    gone meanwhile), then its recording claimed (FileExistsError when it is there). The run holds
    the ownership until `live.release()`."""
    owner = ownership.take(path, BEING_WRITTEN + ": choose another --run, or wait until it has ended")
    try:
        return LiveRun(lesson, name, v, group, provenance, path, instance, owner)
    except BaseException:
        owner.release()
        raise


def run_session(live, stdin=None, stdout=None):
    """Run the session to its end, one answer for every line; the recording is up to date after
    every line, and its name is free for another writer (or `promote`) once it returns. Returns the
    signal that ended it, or None."""
    try:
        return _serve(live, stdin, stdout)
    finally:
        live.release()


def _serve(live, stdin, stdout):
    client = InteractiveClient(stdin, stdout, live.provenance["model"], example_call(live.allowlist))
    client.say(header(live))
    refused, first = 0, None
    with signals_end(client):
        try:
            while live.ended is None:
                read = client.read()
                if read is None:
                    live.input_ended()
                    client.say({"end": end_data(live)})
                    break
                number, message, error = read
                if message is not None:
                    try:
                        client.say(result_line(live, live.message(message)))
                        continue
                    except Unrecordable as why:
                        error = f"the message cannot be recorded, so it did not run and costs nothing: {why}"
                refused += 1
                line = {"error": f"line {number}: {error}", "line": number}
                first = first or line["error"]
                live.note("$.steps", f"{refused} line(s) of the session's input were refused, not messages or "
                          f"messages the recording could not hold, and are not among its steps; the first, {first}")
                if refused >= MAX_REFUSED_LINES:
                    live.input_ended(TOO_MANY_REFUSED)
                    line["end"] = end_data(live)
                client.say(line)
        except Interrupted as stop:
            live.input_ended(stopped("session", stop.signum))
            client.say({"end": end_data(live)})
            return stop.signum
        except BrokenPipeError:
            live.input_ended(OUTPUT_CLOSED)
            raise
    return None
