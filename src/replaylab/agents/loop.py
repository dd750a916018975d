"""The agent loop: ask the model, clean its message, run the calls that pass, send the results back."""

from replaylab.agents.messages import Step, Transcript, conversation_for
from replaylab.agents.secrets import clean_message
from replaylab.agents.tools import refused

MAX_CALLS_PER_MESSAGE = 4
TOO_MANY_CALLS = f"at most {MAX_CALLS_PER_MESSAGE} tool calls per message"


def run(client, system, task, allowlist, max_steps, on_step=None):
    """Run until the model asks for no tool (finished), `max_steps` messages, or the end of the
    client's input (both not finished).

    A client's `complete` returns None when its input ended before the agent ended the run (a
    session's stdin closed, a driver that crashed): that is no message, and no step is added.
    `on_step(step)` lets a caller show each message and its results as they happen.
    """
    steps = []
    for _ in range(max_steps):
        message = client.complete(system, conversation_for(task, steps), allowlist.specs())
        if message is None:
            break
        message = clean_message(message, client.secrets)
        results = tuple(
            allowlist.dispatch(call) if i < MAX_CALLS_PER_MESSAGE else refused(call, TOO_MANY_CALLS)
            for i, call in enumerate(message.tool_calls)
        )
        step = Step(message, results)
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if not message.tool_calls:
            return Transcript(client.model, system, task, tuple(steps), finished=True)
    return Transcript(client.model, system, task, tuple(steps), finished=False)
