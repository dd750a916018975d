"""Recording one new run: the checks of what to record (before any work is done or paid for),
the request, and the run recorded and saved as a new file, whole or not at all. `replaylab record`,
the workflow's `record_run` job and a campaign's recording jobs all record through here.
"""

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from replaylab.agents import clients, loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients import load_provider
from replaylab.agents.clients.interactive import message_from_data
from replaylab.agents.messages import Transcript
from replaylab import unfinished
from replaylab.errors import InvalidInput, ProviderFailed, ReplaylabError
from replaylab.lessons import registry

if TYPE_CHECKING:
    from replaylab.agents.messages import ModelMessage, Step
    from replaylab.agents.secrets import Secret
    from replaylab.lessons import Lesson, Variant


def live_path(lesson: str, run: str, out: str | Path | None, folder: str = "results/live") -> Path:
    return Path(out) if out else Path(folder) / lesson / f"{run}.json"


ALREADY_THERE = "a recording is already there, and a recorded run is never overwritten: choose another --run"


def new_file(path: str | Path) -> Path:
    """Refuse, before any work is done or paid for, to write over a recorded run."""
    if os.path.lexists(path):
        raise InvalidInput(f"{path}: {ALREADY_THERE}")
    return Path(path)


def save_new(run: recording_io.Recording, path: str | Path, secrets: Iterable["Secret | str | None"] = ()) -> None:
    try:
        recording_io.save(run, path, secrets, new=True)
    except FileExistsError:
        raise InvalidInput(f"{path}: appeared while the run was recorded; {ALREADY_THERE}") from None



def chosen_variant(lesson: "Lesson", instance: str | None, variant: str | None) -> tuple["Variant", str]:
    """(the Variant, the instance's id) that --instance and --variant choose: the instance's variant
    of that name (its first by default), or, without --instance, the seed instance's."""
    if instance is None:
        v = lesson.variant(variant or next(iter(lesson.variants)))
        return v, lesson.seed_of(v.name).id
    found = lesson.instance(instance)
    return lesson.variant(variant or next(iter(lesson.instance_variants(found.id))), found.id), found.id



def read_messages(path: str | Path) -> tuple[dict[str, Any], list["ModelMessage"]]:
    """The lesson, variant, group, run and messages of a recording or of a file of messages."""
    path = Path(path)
    where = recording_io.printable(str(path))
    data = recording_io.parse_json(recording_io.read(path), where)  # the one reader's limits
    if isinstance(data, dict) and "format" in data:
        run = recording_io.from_data(recording_io.validate(data, where), str(path))
        messages = [s.message for s in run.transcript.steps]
        meta = {"lesson": run.lesson, "variant": run.variant, "group": run.group, "run": run.run}
        return meta | ({"instance": run.instance} if run.instance is not None else {}), messages
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InvalidInput(f"{where}: $.messages: a file of messages is an object with a list of messages")
    unknown = sorted(set(data) - {"lesson", "instance", "variant", "group", "run", "messages"})
    if unknown:
        raise InvalidInput(f"{where}: $: unknown field {', '.join(map(recording_io.short, unknown))}")
    messages = []
    for i, item in enumerate(data["messages"]):
        try:
            messages.append(message_from_data(item))
        except ValueError as error:
            raise InvalidInput(f"{where}: $.messages[{i}]: {error}") from None
    meta = {k: data[k] for k in ("lesson", "instance", "variant", "group", "run") if k in data}
    return meta, messages



def messages_for(provider: clients.Provider, source: str | Path | None,
                 lesson: str) -> tuple[dict[str, Any], tuple["ModelMessage", ...]]:
    """The file's metadata and messages, for a provider that takes --from FILE (`source`); nothing
    for one that decides its own calls."""
    if not provider.takes_file:
        if source:
            raise InvalidInput(f"--from FILE belongs to --provider {' or '.join(clients.names(lambda p: p.takes_file))}; "
                               f"the {provider.name} provider decides its own calls")
        return {}, ()
    if not source:
        raise InvalidInput(f"--from FILE is required with --provider {provider.name}")
    meta, messages = read_messages(source)
    if meta.get("lesson", lesson) != lesson:
        raise InvalidInput(f"{source}: $.lesson: {meta['lesson']!r}, but the command records lesson {lesson!r}")
    return meta, tuple(messages)


_Limit = TypeVar("_Limit", int, float)


def limit(value: _Limit | None, option: str) -> _Limit | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InvalidInput(f"{option} {value:g}: must be a finite number more than 0")
    return value


@dataclass(frozen=True)
class Request:
    """One run to record: who writes its messages, with what options, of which variant, under
    which name and group, within which limits."""

    provider: clients.Provider
    options: clients.Options
    variant: "Variant"  # the lesson's Variant
    name: str
    group: str
    limits: loop.Limits
    instance: str  # the id of the instance of the lesson's family


INTERRUPTED = ("the recording was interrupted (SIGINT, Ctrl-C) while the provider was asked for message "
               "{next}: recorded as not finished, with the messages answered until then")


class Interrupted(ReplaylabError):
    """Ctrl-C during a recording that kept what the provider had answered: its one line, exit 130."""

    exit_code = 130


class KeptFailed(ProviderFailed):
    """A provider's failure after messages it answered, which are kept in the run's partial file."""


RESERVE = 4096  # bytes of a recording kept for what is added after its last message (its end, the notes)


def record_new(request: Request, path: str | Path, on_step: Callable[["Step"], object] | None = None,
               on_resume: Callable[[Path, int], object] | None = None) -> Transcript:
    """Record one run and save it as a new file, whole or not at all, never over another
    (`InvalidInput` if one appeared meanwhile); its transcript. `record` calls it, and a campaign's
    recording job, in threads of its own, one per run in flight.

    Each message is checked, before it is kept, with the reader's own limits (the recording it
    makes is written to text and read back): a message that would make a file the reader refuses
    (too large, say) ends the run there, recorded as not finished with a note saying why; what the
    provider answered before it is kept, and what the client changed to fit the format (notes of
    the client) is said in the recording.

    A run whose messages are paid for (unfinished.PAID_KINDS) is also kept, after every answered
    message, in its partial file (replaylab.unfinished): a failure of the provider (`KeptFailed`)
    or a kill leaves it there, and recording the run again continues it (`on_resume(partial file,
    messages kept)` is told so, and `on_step` is given the kept steps first). The partial file is
    removed once the run's file is written. Ctrl-C ends the run: it is recorded as not finished
    (`Interrupted`, exit 130), as the user asked."""
    provider, options, v = request.provider, request.options, request.variant
    assert provider.make_client is not None  # a provider that records (prepare's): it makes clients
    client: Any = provider.make_client(options)
    recording_io.check_text(client.model, "--model", 200)
    refused: list[str] = []
    began = time.monotonic()
    seconds_before = 0.0

    def recording(transcript: Transcript, ended: str | None = None,
                  partial: dict[str, Any] | None = None) -> recording_io.Recording:
        assert provider.describe is not None  # as make_client
        extra = client.provenance_extra() if hasattr(client, "provenance_extra") else {}
        seconds = round(seconds_before + time.monotonic() - began, 3)
        provenance = recording_io.provenance(provider.kind, client.model, provider.describe(options),
                                             provider=provider.name, **extra, seconds=seconds)
        notes = list(getattr(client, "notes", ()))
        if ended:
            notes.append({"where": f"$.steps[{len(transcript.steps)}]", "what": ended})
        return recording_io.Recording(options.lesson, request.name, options.variant, request.group, provenance,
                                      transcript, str(path), ended=ended, notes=tuple(notes[-100:]),
                                      instance=request.instance, partial=partial)

    def keep(steps: Sequence["Step"]) -> bool:
        """Whether the run with these steps can be recorded, with room for its end."""
        transcript = Transcript(client.model, v.system, v.task, tuple(steps))
        problem = unrecordable(recording(transcript), path, client.secrets)
        if problem:
            refused.append(f"message {len(steps)} was not recorded, and the run ended before it: {problem}")
        return problem is None

    paid = provider.kind_for(client.model) in unfinished.PAID_KINDS
    allowlist = v.allowlist()
    kept_before = unfinished.read(path, recording(Transcript(client.model, v.system, v.task, ())), allowlist) if paid else None
    kept: list[Step] = []
    if kept_before is not None:
        client, seconds_before = unfinished.Continued(client, kept_before), kept_before.seconds
        kept += kept_before.steps
        if on_resume is not None:
            on_resume(kept_before.path, len(kept))
        for step in kept:
            if on_step is not None:
                on_step(step)

    def keep_partial(why: str) -> None:
        transcript = Transcript(client.model, v.system, v.task, tuple(kept), finished=False)
        partial = {"next": len(kept) + 1, "why": recording_io.recording_text(why)[:500]}
        unfinished.write(path, recording(transcript, partial=partial), client.secrets)

    def step_done(step: "Step") -> None:
        kept.append(step)
        if paid:
            keep_partial(unfinished.RUNNING.format(next=len(kept) + 1))
        if on_step is not None:
            on_step(step)

    try:
        transcript = loop.run(client, v.system, v.task, allowlist, v.max_steps, on_step=step_done,
                              limits=request.limits, keep=keep, earlier=tuple(kept), seconds_used=seconds_before)
    except KeyboardInterrupt:  # Ctrl-C: what the provider answered until then is recorded, then the one line
        if kept:
            transcript = Transcript(client.model, v.system, v.task, tuple(kept))
            save_new(recording(transcript, INTERRUPTED.format(next=len(kept) + 1)), path, client.secrets)
            unfinished.remove(path)
            raise Interrupted(f"interrupted (SIGINT); wrote {path} ({len(kept)} messages, not finished)") from None
        raise
    except Exception as error:  # the provider failed (or a bug): what it answered stays in the partial file
        if not (paid and kept):
            raise
        line = recording_io.printable(str(error))
        keep_partial(unfinished.FAILED.format(next=len(kept) + 1, error=line))
        raise KeptFailed(f"{line}; the {len(kept)} messages answered before are kept in "
                         f"{unfinished.partial_path(path)}: recording the run again continues it") from error
    ended = recording_io.recording_text(refused[0])[:500] if refused else None
    save_new(recording(transcript, ended), path, client.secrets)
    unfinished.remove(path)
    return transcript


def unrecordable(run: recording_io.Recording, path: str | Path, secrets: Iterable["Secret | str | None"]) -> str | None:
    """Why the reader would refuse the recording of `run` (with RESERVE bytes to spare), or None."""
    try:
        text = recording_io.dumps(run, secrets)
        size = len(text.encode("utf-8"))
        if size > recording_io.MAX_BYTES - RESERVE:
            return f"the recording would hold {size} bytes, and a recording holds at most {recording_io.MAX_BYTES}"
        recording_io.loads(text, path)
    except (ValueError, UnicodeEncodeError) as error:  # RecordingError is a ValueError
        return recording_io.printable(str(error).removeprefix(f"{recording_io.printable(str(path))}: "))
    return None


def prepare(lesson: str, provider: str, *, model: str | None = None, seed: int = 0, variant: str | None = None,
            instance: str | None = None, group: str | None = None, run: str | None = None, out: str | Path | None = None,
            source: str | Path | None = None, base_url: str | None = None, timeout: float | None = None,
            max_retries: int | None = None, max_tokens_per_run: int | None = None,
            max_seconds_per_run: float | None = None) -> tuple[Request, Path]:
    """(the Request, the path of its new file) of one run to record, every value checked first: the
    provider, the file of messages, the instance and variant, the limits, the run's name and file
    (never one that exists), the group. `InvalidInput` (one line) otherwise."""
    provider = load_provider(provider)
    meta, messages = messages_for(provider, source, lesson)
    family = registry.lesson(lesson)
    v, instance = chosen_variant(family, instance or meta.get("instance"), variant or meta.get("variant"))
    options = clients.Options(lesson, v.name, model or None, seed, messages, family.part("agent"), base_url,
                              limit(timeout, "--timeout"), max_retries, instance=family.instance(instance))
    limits = loop.Limits(limit(max_tokens_per_run, "--max-tokens-per-run"), limit(max_seconds_per_run, "--max-seconds-per-run"))
    name = run or meta.get("run") or (Path(out).stem if out else None)
    if name is None:
        name = provider.run_name(options) if provider.run_name else Path(cast("str | Path", source)).stem  # takes a file
    recording_io.check_run_name(name, "--out" if out and not run else "--run")
    if out and Path(out).stem != name:
        raise InvalidInput(f"--out {out}: the file name must be the run's name, {name}.json")
    path = new_file(live_path(lesson, name, out))
    group = group or meta.get("group") or provider.group
    recording_io.check_text(group, "--group", 100)  # printed, so no control character: checked now, not after the run
    return Request(provider, options, v, name, group, limits, instance), path
