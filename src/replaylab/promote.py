"""`replaylab promote`: show what a new run changes, then move it into recordings/.

No rule of the workflow ever writes under recordings/; this deliberate step is the only way a
run recorded under results/live/ becomes a committed recording. The run is moved, not copied:
it then lives in one place, and `run_folders: [results/live]` never finds its name twice. A run
that a session or an MCP server is still writing is refused (replaylab.ownership): it is not
finished, and its writer would write it again under the same name.
"""

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from replaylab import ownership
from replaylab.agents import recording as recording_io
from replaylab.agents.recording import RecordingError, printable
from replaylab.agents.replay import DEFAULT_TOLERANCE, ReplayMismatch, replay
from replaylab.display import call_line, result_line
from replaylab.inputs import variant_of
from replaylab.lessons import counted, registry

if TYPE_CHECKING:
    from replaylab.agents.messages import ToolCall, ToolResult

_Call = tuple[tuple[int, int], "ToolCall", "ToolResult"]  # ((message, call), call, result), positions from 1


def verdict(run: recording_io.Recording) -> str:
    """One line: what the build decides about this run alone, from recomputed numbers."""
    return registry.lesson(run.lesson).verdict_line(run)


def _calls(run: recording_io.Recording) -> list[_Call]:
    """((message, call), call, result) of every call of a run, positions numbered from 1."""
    return [
        ((message, index), call, result)
        for message, step in enumerate(run.transcript.steps, start=1)
        for index, (call, result) in enumerate(zip(step.message.tool_calls, step.results), start=1)
    ]


def _shown(entry: _Call | None) -> str:
    if entry is None:
        return "(none)"
    (message, index), call, result = entry
    return f"message {message}, call {index}: {call_line(call)} -> {result_line(result)}"


def describe_changes(new: recording_io.Recording, old: recording_io.Recording | None, damaged: str | None = None) -> list[str]:
    """Readable lines: provenance, steps, calls, results and verdict, old against new. `damaged`:
    why the recording being replaced does not load, when it does not."""
    lines = [f"run {new.lesson}/{new.run}: {new.label} ({new.provenance['model']})"]
    if old is None:
        lines.append(f"replaces a recording that does not load: {damaged}" if damaged else "new recording (nothing to replace)")
        lines.append(f"  {counted(len(new.transcript.steps), 'message', 'messages')}, {counted(len(_calls(new)), 'call', 'calls')}")
        lines.append(f"  verdict: {verdict(new)}")
        return lines
    if old.provenance["kind"] != new.provenance["kind"] or old.provenance["model"] != new.provenance["model"]:
        lines.append(f"  produced by: {old.provenance['model']} -> {new.provenance['model']}")
    lines.append(f"  messages: {len(old.transcript.steps)} -> {len(new.transcript.steps)}")
    old_calls, new_calls = _calls(old), _calls(new)
    for index in range(max(len(old_calls), len(new_calls))):
        before = old_calls[index] if index < len(old_calls) else None
        after = new_calls[index] if index < len(new_calls) else None
        if before and after and before[1:] == after[1:]:
            continue
        lines.append(f"  was: {_shown(before)}")
        lines.append(f"  now: {_shown(after)}")
    if [c[1:] for c in old_calls] == [c[1:] for c in new_calls]:
        lines.append("  calls and results: unchanged")
    before, after = verdict(old), verdict(new)
    lines.append(f"  verdict: {before}" if before == after else f"  verdict: {before} -> {after}")
    return lines


def _replaced(target: Path) -> tuple[recording_io.Recording | None, str | None]:
    """(the recording at `target` or None, why it does not load or None). A folder, a pipe or a
    dangling link there is refused: it is not a recording that a run could replace."""
    if not os.path.lexists(target):
        return None, None
    if not target.is_file():
        recording_io.regular_file(target)  # says what is there instead
    try:
        return recording_io.load(target), None
    except RecordingError as error:
        return None, str(error)


BEING_WRITTEN = "this run is still being written by {holder} (a session or an MCP server): promote it once that has ended"


def promote(source: str | Path, recordings: str | Path = "recordings", dry_run: bool = False,
            tolerance: float = DEFAULT_TOLERANCE) -> list[str]:
    """Check the run (it must load and replay within `tolerance`), describe the change, then move
    it: the bytes checked are the bytes written, and the source is removed. Returns the lines shown;
    every error names the file; `ownership.Busy` before anything is read when its writer still runs."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"--tolerance: {tolerance!r} is not a finite number of at least 0")
    where = printable(str(source))
    ownership.check_free(source, BEING_WRITTEN)
    text = recording_io.read(source)
    new = recording_io.loads(text, source)
    try:
        replay(new, variant_of(new, source), tolerance)
    except ReplayMismatch as mismatch:
        raise ReplayMismatch(f"{where}: {mismatch}", mismatch.difference) from None
    target = Path(recordings) / new.lesson / f"{new.run}.json"
    if os.path.lexists(target) and Path(source).resolve() == target.resolve():
        raise RecordingError(f"{where}: is the recording {target} itself: nothing to promote")
    old, damaged = _replaced(target)
    lines = describe_changes(new, old, damaged)
    if dry_run:
        lines.append(f"dry run: {target} left as it was, and {source} where it is")
        return lines
    recording_io.write_atomic(target, text)
    try:
        Path(source).unlink()
    except OSError as error:
        lines.append(f"copied {source} -> {target}; {source} could not be removed ({error.strerror}): remove it by hand")
    else:
        lines.append(f"moved {source} -> {target}")
    return lines
