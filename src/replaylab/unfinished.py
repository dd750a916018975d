"""An unfinished run, kept beside the file it becomes (`.<run>.json.partial`): a provider's run is
written there after every answered message, so that a provider's failure, or a kill, loses nothing
that was paid for, and recording the run again (the same command, a campaign's resume) continues it
where it stopped, without asking the provider again for a message it answered.

The partial file is a recording (the same format, `finished` false) with `partial`: the message the
run stopped before, and why. It is continued only when it is of the same run (lesson, variant,
instance, group, provider, model, server, settings, prompts) and its steps replay exactly: each
call goes through the allowlist again, and its result must equal the recorded one.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.messages import Step
from replaylab.agents.replay import compare_result
from replaylab.agents.tools import Allowlist
from replaylab.errors import InvalidInput, Mismatch

PAID_KINDS = ("provider-api",)  # the runs whose messages are paid for: the others cost nothing to record again
RUNNING = ("the recording stopped while the provider was asked for message {next}, without a word (its recorder "
           "killed, or its machine stopped)")
FAILED = "the provider failed at message {next}: {error}"
# what must be the same for a run to continue one kept: (the field's JSON path, its key in `identity`)
SAME = (("$.lesson", "lesson"), ("$.variant", "variant"), ("$.instance", "instance"), ("$.group", "group"),
        ("$.provenance.kind", "kind"), ("$.provenance.provider", "provider"), ("$.provenance.model", "model"),
        ("$.provenance.server", "server"), ("$.provenance.settings", "settings"), ("$.provenance.seed", "seed"),
        ("$.system", "system"), ("$.task", "task"))


def partial_path(target: str | Path) -> Path:
    """Where the unfinished run of the file `target` is kept: hidden beside it, and not a `*.json`
    that a folder of runs would take for a recording."""
    target = Path(target)
    return target.with_name(f".{target.name}.partial")


def identity(run: recording_io.Recording) -> dict[str, Any]:
    """What makes two recordings the same run to continue (SAME)."""
    p = run.provenance
    return {"lesson": run.lesson, "variant": run.variant, "instance": run.instance, "group": run.group,
            "kind": p.get("kind"), "provider": p.get("provider"), "model": p.get("model"), "server": p.get("server"),
            "settings": p.get("settings"), "seed": p.get("seed"),
            "system": recording_io.recording_text(run.transcript.system), "task": recording_io.recording_text(run.transcript.task)}


@dataclass(frozen=True)
class Kept:
    """An unfinished run read back, checked: its steps, and what its provenance says it used."""

    path: Path
    steps: tuple[Step, ...]
    provenance: dict[str, Any]
    notes: tuple[dict[str, Any], ...]

    @property
    def seconds(self) -> float:
        return float(self.provenance.get("seconds", 0.0))


CANNOT = "cannot be continued by this run; delete it to record the run from its start (its messages are then paid for again)"


def read(target: str | Path, fresh: recording_io.Recording, allowlist: Allowlist) -> Kept | None:
    """The unfinished run kept for `target`, or None when there is none. `fresh` is the run that
    would be recorded now, with no step: the kept one must be the same run (`InvalidInput`
    naming the file and the field otherwise). Its steps' calls go through `allowlist` again (so
    that its budget counts them), each result equal to the recorded one (`Mismatch` otherwise)."""
    path = partial_path(target)
    if not path.exists():
        return None
    where = recording_io.printable(str(path))
    data = recording_io.parse(recording_io.read(path), where)
    kept = recording_io.from_data(data, str(path))
    if kept.run != fresh.run:
        raise InvalidInput(f"{where}: $.run: {recording_io.short(kept.run)} is not the run {fresh.run!r}; it {CANNOT}")
    if kept.partial is None or kept.transcript.finished:
        raise InvalidInput(f"{where}: $.partial: missing, so not an unfinished run; it {CANNOT}")
    was, now = identity(kept), identity(fresh)
    for field, key in SAME:
        if was[key] != now[key]:
            raise InvalidInput(f"{where}: {field}: the unfinished run there has {recording_io.short(was[key])}, this "
                               f"one {recording_io.short(now[key])}: it {CANNOT}")
    check_steps(kept.transcript.steps, allowlist, where)
    return Kept(path, kept.transcript.steps, dict(kept.provenance), kept.notes)


def check_steps(steps: Sequence[Step], allowlist: Allowlist, where: str) -> None:
    """Run every call of `steps` through `allowlist` again; `Mismatch` at the first result that
    is not the recorded one, exactly."""
    for i, step in enumerate(steps):
        results, _ = loop.dispatch_message(allowlist, step.message.tool_calls)
        for j, (recorded, recomputed) in enumerate(zip(step.results, results)):
            difference = compare_result(recorded, recomputed, 0.0, i + 1, j + 1)
            if difference is not None:
                raise Mismatch(f"{where}: $.steps[{i}].results[{j}]: {difference.text}: the kept messages do not "
                               f"replay, so the run {CANNOT}")


def write(target: str | Path, run: recording_io.Recording, secrets: Any = ()) -> None:
    """Keep the unfinished `run` (with its `partial`) beside `target`, replacing what was kept."""
    recording_io.write_atomic(partial_path(target), recording_io.dumps(run, secrets))


def remove(target: str | Path) -> None:
    partial_path(target).unlink(missing_ok=True)


# -- a client that goes on with a run begun by another ------------------------------------------


def _total(usage: Any) -> int | None:
    """Tokens of a recorded usage, as a client counts them: the known sides summed, None when none is known."""
    if not isinstance(usage, dict):
        return None
    known = [n for n in usage.values() if n is not None]
    return sum(known) if known else None


def _combined_usage(was: Any, now: Any) -> Any:
    """A side unknown (null) in either part is unknown in the whole; no total is invented."""
    if not isinstance(was, dict):
        return now
    if not isinstance(now, dict):
        return was
    return {side: None if was.get(side) is None or now.get(side) is None
            else min(was[side] + now[side], recording_io.MAX_TOKENS)
            for side in ("input_tokens", "output_tokens")}


def _joined(was: Any, now: Any, most: int) -> Any:
    """Two lists of what a server reported, the later appended, each value once."""
    found = list(was or [])
    found += [value for value in now or [] if value not in found]
    return found[:most] if found else None


class Continued:
    """The client of a run continued from a partial file: asks its own client for the next
    messages, and reports the run's whole usage, request ids and notes, the kept ones first (so
    that `max_tokens_per_run` counts the tokens the kept messages used)."""

    def __init__(self, client: Any, kept: Kept) -> None:
        self._client = client
        self._kept = kept

    @property
    def model(self) -> str:
        return str(self._client.model)

    @property
    def secrets(self) -> Any:
        return self._client.secrets

    @property
    def deadline(self) -> Any:
        return self._client.deadline  # AttributeError for a client without one: hasattr says so

    @deadline.setter
    def deadline(self, value: Any) -> None:
        self._client.deadline = value

    @property
    def notes(self) -> list[dict[str, Any]]:
        return [*self._kept.notes, *getattr(self._client, "notes", ())]

    def complete(self, system: str, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self._client.complete(system, conversation, tools)

    def __getattr__(self, name: str) -> Any:
        if name == "tokens_used" and hasattr(self._client, "tokens_used"):
            return self._tokens_used
        if name == "provenance_extra":
            return self._provenance_extra
        return getattr(self._client, name)

    def _tokens_used(self) -> int | None:
        was, now = _total(self._kept.provenance.get("usage")), self._client.tokens_used()
        if was is None:
            return now  # type: ignore[no-any-return]  # the client's count
        if now is None and not getattr(self._client, "usage_reported", False):
            return was  # nothing asked yet
        return None if now is None else was + now

    def _provenance_extra(self) -> dict[str, Any]:
        was = self._kept.provenance
        now = dict(self._client.provenance_extra()) if hasattr(self._client, "provenance_extra") else {}
        extra = {**{k: was[k] for k in ("server", "settings", "seed") if k in was}, **now}
        usage = _combined_usage(was.get("usage"), now.get("usage"))
        joined = {"usage": usage,
                  "request_ids": [*was.get("request_ids", ()), *now.get("request_ids", ())][:1000] or None,
                  "served_models": _joined(was.get("served_models"), now.get("served_models"), 20),
                  "system_fingerprints": _joined(was.get("system_fingerprints"), now.get("system_fingerprints"), 20)}
        return {**extra, **{k: v for k, v in joined.items() if v is not None}}


# -- what was paid for and never completed ----------------------------------------------------


def left_in(folder: str | Path) -> list[recording_io.Recording]:
    """The unfinished runs kept in a folder of runs whose file was never written (a run whose
    provider kept failing, or one a lowered `campaign.runs` no longer asks for): paid for, and in
    no recording. A damaged partial file is `RecordingError`, naming it."""
    found = []
    for path in sorted(Path(folder).glob(".*.json.partial")):
        if not path.with_name(path.name[1:].removesuffix(".partial")).exists():
            where = recording_io.printable(str(path))
            found.append(recording_io.from_data(recording_io.parse(recording_io.read(path), where), str(path)))
    return found
