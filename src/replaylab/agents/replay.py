"""Replay: run a recording's messages through the current code and compare every result.

A difference beyond the tolerance is a `ReplayMismatch` whose text names the position (message N,
call M), the tool, both values and the command that records the run again.
"""

import math
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from replaylab.agents import clients, loop
from replaylab.agents.messages import ToolResult, Transcript, stored
from replaylab.agents.recording import Recording, recording_text
from replaylab.agents.tools import Allowlist
from replaylab.agents.clients.recorded import OutOfMessages, RecordedMessagesClient
from replaylab.errors import Mismatch

DEFAULT_TOLERANCE = 1e-6
INPUT_CAN_END = ("interactive", "mcp")  # the kinds of run whose agent may stop sending before it ends the run


class _Prompts(Protocol):
    @property
    def system(self) -> str: ...

    @property
    def task(self) -> str: ...


class Replayable(Protocol):
    """What a replay asks of a lesson's variant (replaylab.lessons.Variant)."""

    @property
    def max_steps(self) -> int: ...

    def prompts(self, kind: str, format1: bool = False) -> _Prompts | None: ...

    def allowlist(self, answer: bool = True, **settings: Any) -> Allowlist: ...


@dataclass(frozen=True)
class Difference:
    """Where a recomputed result first differs from the recorded one (message and call numbered
    from 1) and what differs: in words, and, for a value, its key and both values."""

    message: int
    call: int
    tool: object
    text: str
    key: str | None = None
    recorded: object = None
    recomputed: object = None


class ReplayMismatch(Mismatch):
    """The recomputed run differs from the recorded one; `difference` says where, when a result differs."""

    def __init__(self, text: str, difference: Difference | None = None) -> None:
        super().__init__(text)
        self.difference = difference


def rerecord_command(recording: Recording) -> str:
    """The real command that records this run again, as the provider that made it writes it."""
    return clients.rerecord_command(recording)


def replay(recording: Recording, variant: Replayable, tolerance: float = DEFAULT_TOLERANCE, **settings: Any) -> Transcript:
    """The transcript recomputed by the current code; `ReplayMismatch` if it differs from the recording.

    `variant` gives the prompts, the allowlist (built with `settings`) and the step limit. A
    recording of format 1 (made before runs ended with an answer) replays against the prompts of
    that format and an allowlist without the answer tool.
    """
    recorded = recording.transcript

    def fail(text: str, difference: Difference | None = None) -> NoReturn:
        command = rerecord_command(recording)  # only for a mismatch: quoting it costs as much as a replay's calls
        raise ReplayMismatch(f"{text}. If the change is intended, record the run again with: {command}", difference)

    prompts = variant.prompts(recording.provenance["kind"], recording.format1)
    if prompts is None:
        fail("the run was recorded in format 1, and this variant has no prompts of format 1")
    if recorded.system != prompts.system:
        fail("the system prompt has changed since the run was recorded")
    if recorded.task != prompts.task:
        fail("the task has changed since the run was recorded")
    # A session (stdin or MCP) recorded as not finished before its message limit ended where the
    # agent's input ended: the replay's input ends there too. So does a provider's run that its
    # recorder ended (`ended`: the next message could not be recorded), or whose time ran out
    # during a request (stopped_by, with no message for that request).
    input_ended = not recorded.finished and (recording.provenance["kind"] in INPUT_CAN_END or recording.ended is not None
                                             or recorded.stopped_by is not None)
    client = RecordedMessagesClient([s.message for s in recorded.steps], recorded.model, input_ended)
    # a run that a per-run limit ended is replayed as far as it went, and stays stopped by it
    limits = loop.StoppedAt(len(recorded.steps), recorded.stopped_by) if recorded.stopped_by else loop.NO_LIMITS
    allowlist = variant.allowlist(answer=not recording.format1, **settings)
    try:
        now = loop.run(client, prompts.system, prompts.task, allowlist, variant.max_steps, limits=limits)
    except OutOfMessages as error:
        fail(f"the recording ends before the run does ({error})")
    if len(now.steps) != len(recorded.steps):
        fail(f"the run had {len(recorded.steps)} messages when recorded and has {len(now.steps)} now")
    if now.finished != recorded.finished:
        was, is_now = ("finished", "not finished") if recorded.finished else ("not finished", "finished")
        fail(f"the run was {was} when recorded and is {is_now} now")
    for number, (old, new) in enumerate(zip(recorded.steps, now.steps), start=1):
        for call, (old_result, new_result) in enumerate(zip(old.results, new.results), start=1):
            difference = compare_result(old_result, new_result, tolerance, number, call, refusals=not recording.format1)
            if difference:
                fail(f"message {number}, call {call}, tool {old_result.name}: {difference.text}", difference)
    return now


def compare_result(old: ToolResult, new: ToolResult, tolerance: float, message: int, call: int,
                   refusals: bool = True) -> Difference | None:
    """The `Difference` between a recorded and a recomputed result at that position, or None. A
    refusal's text is what the agent read, so it is compared too (`refusals`; recordings of format
    1 were made when it was not, and are replayed without)."""
    if old.ok != new.ok:
        state = "accepted when recorded and is rejected now" if old.ok else "rejected when recorded and is accepted now"
        return Difference(message, call, old.name, f"the call was {state}")
    if not old.ok:
        was, now = old.content.get("error"), recording_text(new.content["error"])
        if refusals and was != now:
            return Difference(message, call, old.name, f"the refusal was {was!r} when recorded and is {now!r} now", "error", was, now)
        return None
    if set(old.content) != set(new.content):
        text = f"the result keys were {sorted(old.content)} when recorded and are {sorted(new.content)} now"
        return Difference(message, call, old.name, text)
    for key, was in old.content.items():
        now = stored(new.content[key])
        if not _same(was, now, tolerance):
            text = f"{key} was {was!r} when recorded and is {now!r} now (tolerance {tolerance:g})"
            return Difference(message, call, old.name, text, key, was, now)
    return None


def _same(was: object, now: object, tolerance: float) -> bool:
    if was is None or now is None:
        return was is None and now is None
    if isinstance(was, bool) or isinstance(now, bool):
        return was is now
    if isinstance(was, (int, float)) and isinstance(now, (int, float)):
        return math.isclose(was, now, rel_tol=tolerance, abs_tol=tolerance)
    return was == now
