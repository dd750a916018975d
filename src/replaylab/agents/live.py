"""A run recorded while it happens: a session on stdin, or an MCP client.

The file is claimed when the run starts (created, never over an existing file), and written again
after every message or call, atomically. A message or call is first tried on a copy of the
allowlist (tools are pure, the budget a count), and its recording checked with the reader's own
limits (recording.MAX_BYTES, the schema, what is read back is what was sent): one that would make
the file unreadable, or replay otherwise, is refused before it runs and costs nothing. So what is
on disk always loads and replays, and a run whose recorder dies midway keeps everything but the
call in flight, recorded as not finished.
"""

from __future__ import annotations

import copy
import json
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import CALLS_ONLY, MAX_CALLS_PER_MESSAGE, dispatch_message
from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript
from replaylab.agents.replay import compare_result
from replaylab.agents.tools import ANSWER

if TYPE_CHECKING:
    from replaylab.lessons import Variant

LIVE_KINDS = ("interactive", "mcp")  # runs recorded as they happen, by a session or an MCP server
ANSWERED = f"finished: the agent called {ANSWER}, which ends the run"
NO_ANSWER = f"finished without an answer: a message without a tool call ends the run, and {ANSWER} was not called"
MESSAGE_LIMIT = "the message limit is reached ({limit} messages): the run has ended, not finished, with no answer"
CALL_LIMIT = "the call limit is reached ({limit} calls): the run has ended, not finished, with no answer"
INPUT_ENDED = "the input ended before the agent ended the run: recorded as not finished, with no answer"
CLIENT_CLOSED = f"the client closed the session without calling {ANSWER}: recorded as not finished, with no answer"
STOPPED = "the {who} was {how} before the agent ended the run: recorded as not finished, with no answer"
SIGNALS: dict[int, str] = {signal.SIGINT: "interrupted (SIGINT, Ctrl-C)", signal.SIGTERM: "stopped (SIGTERM)"}
# Room kept in the file for what a run adds after its last message: its end, a note, the client.
RESERVE = 4096


def stopped(who: str, signum: int) -> str:
    """Why a run ended when its recorder (`who`: session, server) got a signal."""
    return STOPPED.format(who=who, how=SIGNALS.get(signum, f"stopped (signal {signum})"))


def how_it_ended(kind: str, finished: bool, steps: int, max_steps: int | None, stopped_by: dict[str, Any] | None = None,
                 answered: bool = False, ended: str | None = None) -> str:
    """How a run ended, from its recording, in words (pages, `replaylab replay`). `ended`: why a run
    recorded as it happened (session, MCP) ended, as its recorder wrote it; such a run that is not
    finished and says nothing was stopped without a word (its recorder killed)."""
    if stopped_by:
        return (f"stopped by its limit {stopped_by['limit']} ({stopped_by['allowed']:g}; the run used "
                f"{stopped_by['used']:g}): not finished, with no answer, and scored as not right")
    if finished:
        if answered:
            return f"finished with an answer (an accepted call of {ANSWER})"
        return "finished without an answer (its last message asks for no tool)"
    if ended and kind not in LIVE_KINDS:  # a provider's run its recorder ended: the next message could not be kept
        return f"not finished: {ended}"
    if max_steps is None or steps >= max_steps:
        return "stopped at the message limit (not finished, no answer)"
    if kind in LIVE_KINDS:
        if ended:
            return f"not finished: {ended}"
        return ("not finished: its recorder stopped without saying why (it was killed, or its machine stopped); "
                "what was recorded until then is kept")
    return "not finished: the input ended before the agent ended the run"


def client_instructions(system: str, task: str) -> str:
    """What an MCP client is given before its first call (the server's instructions, and its prompt):
    the system text in the words of calls, the task, and how the session records the run. Pages
    show an MCP run's prompts in these words."""
    return (
        f"{system}\n\nThe task: {task}\n\n"
        "Each call you make is recorded as a call of the run, in the order it comes; every call is checked against "
        f"the bounds in its schema before it runs, and each result says what is left. Closing the session before "
        f"{ANSWER} is accepted records the run as not finished, with no answer."
    )


def ended_with_answer(step: Step) -> bool:
    """Whether a step holds the accepted answer that ended its run."""
    return any(r.ok and c.name == ANSWER for c, r in zip(step.message.tool_calls, step.results))


class Unrecordable(Exception):
    """A message or call its recording could not hold as it came: refused before it ran, costs nothing."""


def _sent(value: Any) -> str | None:
    """A canonical text of what an agent sent, to compare it with what the file gives back."""
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):  # an integer too long to print, nesting beyond the parser
        return None


def _check_read_back(step: Step, back: Step) -> None:
    """`Unrecordable` unless the file gives back the step's calls as they were sent and its results
    as the replay recomputes them: the replay meets the same values and agrees."""
    for number, (call, read) in enumerate(zip(step.message.tool_calls, back.message.tool_calls), start=1):
        sent = (call.id, _sent(call.name), _sent(call.arguments))
        if None in sent or sent != (read.id, _sent(read.name), _sent(read.arguments)):
            raise Unrecordable(f"call {number} cannot be recorded as it was sent (its id, name or arguments hold "
                               "nesting too deep, an integer too long, or text that is not Unicode)")
    for number, (result, read_result) in enumerate(zip(step.results, back.results), start=1):
        if compare_result(read_result, result, 0.0, 1, number) is not None:
            raise Unrecordable(f"the result of call {number} cannot be recorded as it is")


class Ownership(Protocol):
    """What makes a writer the only one of its run name until it ends (replaylab.ownership's `Owner`)."""

    def release(self) -> None: ...


class LiveRun:
    """The steps of one run as they come, with its allowlist (and budget), written after each change.
    `owner`: the ownership of the run's name, taken before the file is claimed and held until `release`."""

    def __init__(self, lesson: str, run: str, variant: Variant, group: str, provenance: dict[str, Any],
                 path: recording_io.FilePath, instance: str | None = None, owner: Ownership | None = None) -> None:
        self.lesson, self.run, self.variant, self.group = lesson, run, variant, group
        self.instance = instance  # the id of the instance of the lesson's family
        self.provenance = provenance
        self.path = path
        self.allowlist = variant.allowlist()
        self.system = variant.system_for(provenance["kind"])  # what this kind of agent is told
        self.steps: list[Step] = []
        self.finished = False
        self.ended: str | None = None  # why the run ended, once it has
        self.notes: tuple[dict[str, Any], ...] = ()
        self._written = False
        self.owner = owner
        self._save(self._text(self.steps, False, None)[0])  # claims the path: FileExistsError if anything is there

    def release(self) -> None:
        """The recorder is done with the file: its name is free for another writer, or `promote`."""
        if self.owner is not None:
            self.owner.release()

    # -- what the agent is told -----------------------------------------------------------------

    def limits(self) -> dict[str, int | None]:
        return {
            "messages": self.variant.max_steps,
            "calls_per_message": MAX_CALLS_PER_MESSAGE,
            "budget": self.variant.budget,
        }

    def budget_left(self) -> int | None:
        """Experiments left, or None when the lesson has no budget."""
        budget = self.variant.budget
        return None if budget is None else budget - self.allowlist.used

    def messages_left(self) -> int:
        return self.variant.max_steps - len(self.steps)

    def calls_left(self) -> int:
        """Calls left in the run, the answer included: each step holds up to MAX_CALLS_PER_MESSAGE."""
        room = self.variant.max_steps * MAX_CALLS_PER_MESSAGE
        return max(0, room - sum(len(step.results) for step in self.steps))

    # -- a session: one message at a time; an MCP client: one call at a time -------------------

    def message(self, message: ModelMessage) -> Step:
        """Run one whole message (a session) and record it: its step, or `Unrecordable`."""
        return self._take(list(self.steps), message, message.tool_calls, (), full=True)

    def call(self, tool_call: ToolCall) -> ToolResult:
        """Run one call (an MCP client) and record it in the open step, a new step when the open one
        holds MAX_CALLS_PER_MESSAGE calls: its result, or `Unrecordable`. An accepted answer ends
        the run; the last call the message limit allows ends it too."""
        steps = list(self.steps)
        if steps and len(steps[-1].message.tool_calls) < MAX_CALLS_PER_MESSAGE:
            last = steps.pop()
            message, earlier = ModelMessage(last.message.text, last.message.tool_calls + (tool_call,)), last.results
        else:
            message, earlier = ModelMessage("", (tool_call,)), ()
        step = self._take(steps, message, (tool_call,), earlier, full=None)
        return step.results[-1]

    def _take(self, steps: list[Step], message: ModelMessage, calls: Sequence[ToolCall],
              earlier: tuple[ToolResult, ...], full: bool | None) -> Step:
        """Dispatch `calls` on a copy of the allowlist, check that the recording holds the step
        they make (`message`, the results `earlier` of its calls, then theirs), then keep the copy,
        the step and the run's end. `full`: the step is complete (a session's message), or None:
        complete once it holds MAX_CALLS_PER_MESSAGE calls."""
        if self.ended is not None:
            raise RuntimeError("the run has ended")
        allowlist = copy.copy(self.allowlist)
        results, _ = dispatch_message(allowlist, calls)
        step = Step(message, earlier + results)
        steps = steps + [step]
        full = len(step.results) >= MAX_CALLS_PER_MESSAGE if full is None else full
        finished, ended = self._end_of(steps, full)
        text, back = self._text(steps, finished, ended, room=RESERVE)
        _check_read_back(step, back.transcript.steps[-1])
        self._save(text)
        self.allowlist, self.steps, self.finished, self.ended = allowlist, steps, finished, ended
        return step

    def _end_of(self, steps: list[Step], full: bool) -> tuple[bool, str | None]:
        """(finished, why it ended or None) of a run whose last step is `steps[-1]`."""
        step = steps[-1]
        if ended_with_answer(step):
            return True, ANSWERED
        if not step.message.tool_calls:
            return True, NO_ANSWER
        if len(steps) >= self.variant.max_steps and full:
            if self.provenance["kind"] == CALLS_ONLY:
                return False, CALL_LIMIT.format(limit=self.variant.max_steps * MAX_CALLS_PER_MESSAGE)
            return False, MESSAGE_LIMIT.format(limit=self.variant.max_steps)
        return False, None

    def input_ended(self, reason: str = INPUT_ENDED) -> str:
        """The agent's input ended (its client went away, its recorder was stopped) before it ended the run."""
        if self.ended is None:
            self._save(self._text(self.steps, False, reason)[0])
            self.ended = reason
        return self.ended

    def note(self, where: str, what: str) -> None:
        """Say in the recording what it holds otherwise than it came (one note per place, the last kept)."""
        what = recording_io.recording_text(what if len(what) <= 500 else what[:497] + "...")
        notes = tuple(n for n in self.notes if n["where"] != where) + ({"where": where, "what": what},)
        self._save(self._text(self.steps, self.finished, self.ended, notes)[0])
        self.notes = notes

    # -- the file --------------------------------------------------------------------------------

    def _text(self, steps: Sequence[Step], finished: bool, ended: str | None,
              notes: tuple[dict[str, Any], ...] | None = None, room: int = 0) -> tuple[str, recording_io.Recording]:
        """(the recording's text with these steps and end, the recording the reader reads from it),
        with `room` bytes to spare; `Unrecordable` saying why otherwise."""
        v = self.variant
        transcript = Transcript(self.provenance["model"], self.system, v.task, tuple(steps), finished)
        run = recording_io.Recording(self.lesson, self.run, v.name, self.group, self.provenance, transcript,
                                     str(self.path), ended=ended, notes=self.notes if notes is None else notes,
                                     instance=self.instance)
        try:
            text = recording_io.dumps(run)
            size = len(text.encode("utf-8"))
        except (ValueError, UnicodeEncodeError) as error:  # not standard JSON, not text: no file holds it
            raise Unrecordable(f"the recording cannot be written: {error}") from None
        if size > recording_io.MAX_BYTES - room:
            raise Unrecordable(f"the recording would hold {size} bytes, and a recording holds at most "
                               f"{recording_io.MAX_BYTES} ({room} of them kept for the run's end)")
        try:
            return text, recording_io.loads(text, self.path)
        except recording_io.RecordingError as error:
            where = f"{recording_io.printable(str(self.path))}: "
            raise Unrecordable(f"the recording's reader would refuse it: {str(error).removeprefix(where)}") from None

    def _save(self, text: str) -> None:
        """Write the checked text atomically; the first write never replaces a file (FileExistsError)."""
        recording_io.write_atomic(self.path, text, new=not self._written)
        self._written = True
