"""Inspect's messages of a sample as replaylab's: one conversion for the solver, the scorer and
the importer, so that what they dispatch, judge and write is the same run.

Works on Inspect's message objects by their fields (role, text, tool_calls, error) and imports
nothing of Inspect. Bad input is a `NotARun`, one line that says where and what is wrong.
"""

import json

from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript
from replaylab.errors import InvalidInput

FINISHED = "replaylab:finished"  # the solver's verdict on how the run ended, in the sample's store
LIMIT = "replaylab:limit"  # an Inspect limit that ended the sample inside the solver: {type, limit, value}
SOLVER = "replaylab/allowlist_loop"  # the solver's name in the log's plan


class NotARun(InvalidInput):
    """A sample that is not a whole run of a replaylab task."""


def call_of(call):
    """A replaylab ToolCall of an Inspect ToolCall. Arguments Inspect could not parse as JSON
    (`parse_error`; it then gives {}) become text, which the allowlist refuses as it refuses text
    from replaylab's own client ("the arguments must be an object")."""
    arguments = call.arguments if call.parse_error is None else f"(not JSON: {call.parse_error})"
    return ToolCall(call.id, call.function, arguments)


def result_text(result):
    """A ToolResult as the tool message's content: our JSON, as replaylab's own client sends it."""
    return json.dumps(result.content)


def steps_of(messages, where):
    """The prompts (system, task) and the steps of a sample's messages: each assistant message with
    its calls, each followed by one tool message per call, in order."""
    if len(messages) < 2 or [m.role for m in messages[:2]] != ["system", "user"]:
        raise NotARun(f"{where}: the messages do not start with the system text and the task")
    steps, pending = [], None
    for number, m in enumerate(messages[2:], start=3):
        if m.role == "assistant":
            if pending:
                raise NotARun(f"{where}: message {number}: the calls of the message before have no results")
            calls = tuple(call_of(c) for c in (m.tool_calls or ()))
            steps.append(Step(ModelMessage(m.text or "", calls), ()))
            pending = list(calls)
        elif m.role == "tool":
            if not pending:
                raise NotARun(f"{where}: message {number}: a tool result no call asked for")
            call = pending.pop(0)
            if m.tool_call_id != call.id:
                raise NotARun(f"{where}: message {number}: the result of call {m.tool_call_id!r}, where {call.id!r} is due")
            step = steps[-1]
            steps[-1] = Step(step.message, step.results + (_result(m, call, where, number),))
        else:
            raise NotARun(f"{where}: message {number}: a {m.role} message inside the run (only the model's and the tools' are)")
    if pending:
        raise NotARun(f"{where}: the calls of the last message have no results (the sample was cut inside a step)")
    return messages[0].text, messages[1].text, tuple(steps)


def _result(message, call, where, number):
    if message.error is not None:
        return ToolResult(call.id, call.name, False, {"error": message.error.message})
    try:
        content = json.loads(message.text)
    except ValueError:
        raise NotARun(f"{where}: message {number}: the result of call {call.id!r} is not JSON: {message.text[:60]!r}") from None
    if not isinstance(content, dict):
        raise NotARun(f"{where}: message {number}: the result of call {call.id!r} is not a JSON object")
    return ToolResult(call.id, call.name, True, content)


def transcript(messages, model, finished, stopped_by, where):
    system, task, steps = steps_of(messages, where)
    return Transcript(model, system, task, steps, finished, stopped_by)


# Inspect's limits that replaylab has (its per-run limits): a sample they ended is a run stopped by
# that limit, with the messages Inspect kept (Inspect drops the model message that crossed a token
# limit). Any other Inspect limit (messages, turns, working time, cost, an operator) cuts the run in
# a way replaylab does not replay.
LIMITS = {"token": "max_tokens_per_run", "time": "max_seconds_per_run"}


def stopped_by(limit):
    """replaylab's `stopped_by` of an Inspect limit {type, limit, value}, or None when replaylab has no such limit."""
    if limit["type"] not in LIMITS or not limit["limit"] or limit["limit"] <= 0:
        return None
    return {"limit": LIMITS[limit["type"]], "allowed": limit["limit"], "used": max(0, limit["value"])}


def scorer_provenance(model):
    """What the scorer knows of a run it judges in place (nothing is written)."""
    return {"kind": "provider-api", "model": model, "how": "judged inside Inspect AI", "recorded": "1970-01-01",
            "replaylab": "", "provider": "inspect_ai"}


def recording(lesson, variant, run, group, provenance, transcript, instance=None):
    from replaylab.agents.recording import Recording

    return Recording(lesson, run, variant, group, provenance, transcript, instance=instance)
