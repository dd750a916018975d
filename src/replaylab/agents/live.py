"""A run recorded while it happens: a session on stdin, or an MCP client.

The file is written when the run starts (a session; an MCP run with its first call), never over an
existing file, and again after every message or call, atomically: what is on disk always validates and replays, and a run whose driver
dies midway keeps everything but the call in flight, recorded as not finished.
"""

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE, dispatch_message
from replaylab.agents.messages import ModelMessage, Step, Transcript
from replaylab.agents.tools import ANSWER

ANSWERED = f"finished: the agent called {ANSWER}, which ends the run"
NO_ANSWER = f"finished without an answer: a message without a tool call ends the run, and {ANSWER} was not called"
MESSAGE_LIMIT = "the message limit is reached ({limit} messages): the run has ended, not finished, with no answer"
INPUT_ENDED = "the input ended before the agent ended the run: recorded as not finished, with no answer"
CLIENT_CLOSED = f"the client closed the session without calling {ANSWER}: recorded as not finished, with no answer"


def how_it_ended(kind, finished, steps, max_steps, stopped_by=None, answered=False):
    """How a run ended, from its recording, in words (pages, `replaylab replay`)."""
    if stopped_by:
        return (f"stopped by its limit {stopped_by['limit']} ({stopped_by['allowed']:g}; the run used "
                f"{stopped_by['used']:g}): not finished, with no answer, and scored as not right")
    if finished:
        if answered:
            return f"finished with an answer (an accepted call of {ANSWER})"
        return "finished without an answer (its last message asks for no tool)"
    if max_steps is None or steps >= max_steps:
        return "stopped at the message limit (not finished, no answer)"
    if kind == "mcp":
        return f"not finished: the MCP client closed the session, or was stopped, before it called {ANSWER}"
    return "not finished: the input ended before the agent ended the run"


def ended_with_answer(step):
    """Whether a step holds the accepted answer that ended its run."""
    return any(r.ok and c.name == ANSWER for c, r in zip(step.message.tool_calls, step.results))


class LiveRun:
    """The steps of one run as they come, with its allowlist (and budget), written after each change."""

    def __init__(self, lesson, run, variant, group, provenance, path, write_now=True):
        self.lesson, self.run, self.variant, self.group = lesson, run, variant, group
        self.provenance = provenance
        self.path = path
        self.allowlist = variant.allowlist()
        self.steps = []
        self.finished = False
        self.ended = None  # why the run ended, once it has
        self.written = False
        if write_now:
            self._write()  # claims the path: FileExistsError if a run is there

    # -- what the agent is told -----------------------------------------------------------------

    def limits(self):
        return {
            "messages": self.variant.max_steps,
            "calls_per_message": MAX_CALLS_PER_MESSAGE,
            "budget": self.variant.budget,
        }

    def budget_left(self):
        """Experiments left, or None when the lesson has no budget."""
        budget = self.variant.budget
        return None if budget is None else budget - self.allowlist.used

    def messages_left(self):
        return self.variant.max_steps - len(self.steps)

    # -- a session: one message at a time, through the loop -------------------------------------

    def add(self, step, full=True):
        """Record one message and its results; say why the run ended if this message ended it.
        `full`: the message is complete (an MCP step fills up call by call)."""
        self.steps.append(step)
        if ended_with_answer(step):
            self._end(True, ANSWERED)
        elif not step.message.tool_calls:
            self._end(True, NO_ANSWER)
        elif len(self.steps) >= self.variant.max_steps and full:
            self._end(False, MESSAGE_LIMIT.format(limit=self.variant.max_steps))
        else:
            self._write()
        return self.ended

    def input_ended(self, reason=INPUT_ENDED):
        """The agent's input ended (or its client went away) before it ended the run."""
        if self.ended is None:
            self._end(False, reason)
        return self.ended

    # -- an MCP client: one call at a time ------------------------------------------------------

    def calls_left(self):
        """Calls left in the run, the answer included: each step holds up to MAX_CALLS_PER_MESSAGE."""
        room = self.variant.max_steps * MAX_CALLS_PER_MESSAGE
        return max(0, room - sum(len(step.results) for step in self.steps))

    def call(self, tool_call):
        """Dispatch one call through the allowlist and record it in the open step (a new step when
        the open one holds MAX_CALLS_PER_MESSAGE calls). An accepted answer ends the run; the last
        call the message limit allows ends it too, with no answer unless it is the answer."""
        if self.ended is not None:
            raise RuntimeError("the run has ended")
        (result,), _ = dispatch_message(self.allowlist, (tool_call,))
        last = self.steps[-1] if self.steps else None
        if last is not None and len(last.message.tool_calls) < MAX_CALLS_PER_MESSAGE:
            self.steps.pop()
            step = Step(ModelMessage(last.message.text, last.message.tool_calls + (tool_call,)), last.results + (result,))
        else:
            step = Step(ModelMessage("", (tool_call,)), (result,))
        self.add(step, full=len(step.results) >= MAX_CALLS_PER_MESSAGE)
        return result

    # -- the file --------------------------------------------------------------------------------

    def transcript(self):
        v = self.variant
        return Transcript(self.provenance["model"], v.system, v.task, tuple(self.steps), self.finished)

    def _end(self, finished, reason):
        self.finished = finished
        self.ended = reason
        self._write()

    def _write(self):
        """The whole run so far, atomically; the first write never replaces a file (FileExistsError)."""
        run = recording_io.Recording(
            self.lesson, self.run, self.variant.name, self.group, self.provenance, self.transcript(), str(self.path)
        )
        recording_io.save(run, self.path, new=not self.written)
        self.written = True
