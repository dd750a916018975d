"""The agent loop: ask the model, clean its message, run the calls that pass, send the results back.

A run ends when an accepted call of the answer tool ends it (finished, with its answer), when a
message asks for no tool (finished, with no answer), at the message limit, at the end of the
client's input, or at a per-run limit (the last three not finished).
"""

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript, conversation_for
from replaylab.agents.secrets import Secret, clean_message
from replaylab.agents.tools import Allowlist, refused

MAX_CALLS_PER_MESSAGE = 4
CALLS_ONLY = "mcp"  # the kind of run whose agent makes calls one at a time and never sends a message (its texts count calls)
TOO_MANY_CALLS = f"at most {MAX_CALLS_PER_MESSAGE} tool calls per message"
AFTER_ANSWER = "the run ended with the answer before this call: it did not run"


class Client(Protocol):
    """What the loop asks of a client (agents/clients/__init__.py)."""

    @property
    def model(self) -> str: ...

    @property
    def secrets(self) -> Iterable[Secret | str | None]: ...

    def complete(self, system: str, conversation: list[dict[str, Any]],
                 tools: list[dict[str, Any]]) -> ModelMessage | None: ...


@dataclass(frozen=True)
class Limits:
    """Optional limits of one run (None: no limit), checked after every message and its results,
    the last one included: a run that has reached one ends there, not finished and stopped by it,
    and has no answer."""

    max_tokens: int | None = None  # tokens counted by a client that has `tokens_used` (one that bills none has not)
    max_seconds: float | None = None

    def reached(self, client: Client, seconds: float, messages: int) -> dict[str, Any] | None:
        """{"limit", "allowed", "used"} of the first limit reached, or None. The token limit is
        reached at `client.tokens_used()` tokens, or at once when `client.tokens_unbounded()`
        says a count had no bound (a count that is not one never lifts the limit)."""
        if self.max_tokens is not None and hasattr(client, "tokens_used"):
            used = client.tokens_used()
            unbounded = client.tokens_unbounded() if hasattr(client, "tokens_unbounded") else None
            if used is not None and (used >= self.max_tokens or unbounded):
                return {"limit": "max_tokens_per_run", "allowed": self.max_tokens, "used": used}
        if self.max_seconds is not None and seconds >= self.max_seconds:
            return {"limit": "max_seconds_per_run", "allowed": self.max_seconds, "used": round(seconds, 3)}
        return None


NO_LIMITS = Limits()


class OutOfTime(Exception):
    """Raised by a client's `complete` when the run's time (`client.deadline`) ran out while it
    waited for the provider, or would run out during a retry's wait (not waited for): the run ends
    there, stopped by max_seconds_per_run."""


@dataclass(frozen=True)
class StoppedAt:
    """The limit of a replay of a run that a per-run limit stopped: reached after its last message."""

    messages: int
    stopped_by: dict[str, Any]

    def reached(self, client: Client, seconds: float, messages: int) -> dict[str, Any] | None:
        return self.stopped_by if messages >= self.messages else None


def dispatch_message(allowlist: Allowlist, calls: Sequence[ToolCall]) -> tuple[tuple[ToolResult, ...], bool]:
    """The results of one message's calls, in order: each through the allowlist, the calls past
    MAX_CALLS_PER_MESSAGE refused, and, once an answer was accepted, every later call refused.
    Returns (results, whether an accepted answer ended the run)."""
    results: list[ToolResult] = []
    answered = False
    for i, call in enumerate(calls):
        if answered:
            results.append(refused(call, AFTER_ANSWER))
        elif i >= MAX_CALLS_PER_MESSAGE:
            results.append(refused(call, TOO_MANY_CALLS))
        else:
            result = allowlist.dispatch(call)
            answered = result.ok and allowlist.ends_run(call.name)
            results.append(result)
    return tuple(results), answered


def run(client: Client, system: str, task: str, allowlist: Allowlist, max_steps: int,
        on_step: Callable[[Step], object] | None = None, limits: Limits | StoppedAt = NO_LIMITS,
        keep: Callable[[list[Step]], bool] | None = None, earlier: Sequence[Step] = (),
        seconds_used: float = 0.0) -> Transcript:
    """Run until an accepted answer or a message without tool calls (finished), `max_steps`
    messages, the end of the client's input, or a per-run limit (the last three not finished).

    A client's `complete` returns None when its input ended before the agent ended the run (a
    session's stdin closed, a driver that crashed): that is no message, and no step is added.
    A client with a `deadline` attribute is given the time at which the run's time is up, and
    raises `OutOfTime` when it runs out during a request. `keep(steps)` (optional) says whether
    the run with its newest step can still be recorded: when it cannot, that step is dropped and
    the run ends there, not finished. `on_step(step)` lets a caller show each message and its
    results as they happen.

    `earlier`: the steps of a run begun before (an unfinished run continued), whose calls have
    already gone through `allowlist` (its budget counts them), and `seconds_used` the time they
    took: the conversation goes on from them, no message of theirs is asked for again, and the
    limits count them (messages and seconds here; tokens are the client's to report).
    """
    start = time.monotonic() - seconds_used
    if isinstance(limits, Limits) and limits.max_seconds is not None and hasattr(client, "deadline"):
        client.deadline = start + limits.max_seconds
    steps: list[Step] = list(earlier)
    if steps:  # a run continued: it may have ended, or reached a limit, with its last kept message
        last = steps[-1]
        stopped = limits.reached(client, time.monotonic() - start, len(steps))
        if stopped:
            return Transcript(client.model, system, task, tuple(steps), finished=False, stopped_by=stopped)
        answered = any(r.ok and allowlist.ends_run(c.name) for c, r in zip(last.message.tool_calls, last.results))
        if answered or not last.message.tool_calls:
            return Transcript(client.model, system, task, tuple(steps), finished=True)
    for _ in range(max_steps - len(steps)):
        try:
            message = client.complete(system, conversation_for(task, steps), allowlist.specs())
        except OutOfTime:
            assert isinstance(limits, Limits)  # only a client given a deadline by Limits runs out of time
            used = round(time.monotonic() - start, 3)
            stopped = {"limit": "max_seconds_per_run", "allowed": limits.max_seconds, "used": used}
            return Transcript(client.model, system, task, tuple(steps), finished=False, stopped_by=stopped)
        if message is None:
            break
        message = clean_message(message, client.secrets)
        results, answered = dispatch_message(allowlist, message.tool_calls)
        step = Step(message, results)
        if keep is not None and not keep(steps + [step]):
            break
        steps.append(step)
        if on_step is not None:
            on_step(step)
        stopped = limits.reached(client, time.monotonic() - start, len(steps))
        if stopped:
            return Transcript(client.model, system, task, tuple(steps), finished=False, stopped_by=stopped)
        if answered or not message.tool_calls:
            return Transcript(client.model, system, task, tuple(steps), finished=True)
    return Transcript(client.model, system, task, tuple(steps), finished=False)
