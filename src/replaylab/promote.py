"""`replaylab promote`: show what a new run changes, then copy it into recordings/.

No rule of the workflow ever writes under recordings/; this deliberate step is the only way a
run recorded under results/live/ becomes a committed recording.
"""

from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.replay import DEFAULT_TOLERANCE, replay
from replaylab.display import call_line, result_line
from replaylab.lessons import counted, registry
from replaylab.pipeline import variant_of


def verdict(run):
    """One line: what the build decides about this run alone, from recomputed numbers."""
    return registry.lesson(run.lesson).verdict_line(run)


def _calls(run):
    """((message, call), call, result) of every call of a run, positions numbered from 1."""
    return [
        ((message, index), call, result)
        for message, step in enumerate(run.transcript.steps, start=1)
        for index, (call, result) in enumerate(zip(step.message.tool_calls, step.results), start=1)
    ]


def _shown(entry):
    if entry is None:
        return "(none)"
    (message, index), call, result = entry
    return f"message {message}, call {index}: {call_line(call)} -> {result_line(result)}"


def describe_changes(new, old):
    """Readable lines: provenance, steps, calls, results and verdict, old against new."""
    lines = [f"run {new.lesson}/{new.run}: {new.label} ({new.provenance['model']})"]
    if old is None:
        lines.append("new recording (nothing to replace)")
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


def promote(source, recordings="recordings", dry_run=False, tolerance=DEFAULT_TOLERANCE):
    """Check the run (it must load and replay), describe the change, then copy it. Returns the lines shown."""
    text = recording_io.read(source)  # the bytes checked are the bytes copied
    new = recording_io.loads(text, source)
    replay(new, variant_of(new, source), tolerance)
    target = Path(recordings) / new.lesson / f"{new.run}.json"
    old = recording_io.load(target) if target.exists() else None
    lines = describe_changes(new, old)
    if dry_run:
        lines.append(f"dry run: {target} left as it was")
    else:
        recording_io.write_atomic(target, text)
        lines.append(f"copied {source} -> {target}")
    return lines
