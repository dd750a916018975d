"""The agent loop: ask the model, clean its message, run the calls that pass, send the results back."""

import time
from dataclasses import dataclass

from replaylab.agents.messages import Step, Transcript, conversation_for
from replaylab.agents.secrets import clean_message
from replaylab.agents.tools import refused

MAX_CALLS_PER_MESSAGE = 4
TOO_MANY_CALLS = f"at most {MAX_CALLS_PER_MESSAGE} tool calls per message"


@dataclass(frozen=True)
class Limits:
    """Optional limits of one run (None: no limit), checked after each message and its results:
    a run that has reached one ends there, not finished and stopped by it."""

    max_tokens: int | None = None  # tokens the provider reported (clients that report none never reach it)
    max_seconds: float | None = None

    def reached(self, client, seconds):
        """{"limit", "allowed", "used"} of the first limit reached, or None."""
        if self.max_tokens is not None and hasattr(client, "tokens_used"):
            used = client.tokens_used()
            if used is not None and used >= self.max_tokens:
                return {"limit": "max_tokens_per_run", "allowed": self.max_tokens, "used": used}
        if self.max_seconds is not None and seconds >= self.max_seconds:
            return {"limit": "max_seconds_per_run", "allowed": self.max_seconds, "used": round(seconds, 3)}
        return None


NO_LIMITS = Limits()


def run(client, system, task, allowlist, max_steps, on_step=None, limits=NO_LIMITS):
    """Run until the model asks for no tool (finished), `max_steps` messages, the end of the
    client's input, or a per-run limit (all three not finished).

    A client's `complete` returns None when its input ended before the agent ended the run (a
    session's stdin closed, a driver that crashed): that is no message, and no step is added.
    `on_step(step)` lets a caller show each message and its results as they happen.
    """
    start = time.monotonic()
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
        stopped = limits.reached(client, time.monotonic() - start)
        if stopped:
            return Transcript(client.model, system, task, tuple(steps), finished=False, stopped_by=stopped)
    return Transcript(client.model, system, task, tuple(steps), finished=False)
