"""`replaylab import-inspect LOG... --out FOLDER`: every sample of Inspect logs of replaylab's
tasks as a recording (format 2), written to FOLDER/<lesson>/<run>.json.

All or nothing: every sample of every log is converted, checked against the recording schema and
replayed through the current code before the first file is written; a sample that does not
replay stops the import with the replay's one-line mismatch. Each file is then written atomically
by replaylab's recording writer, never over an existing file. The run is named after the eval,
the sample and the epoch (`inspect-<eval id>-<variant>-e<epoch>`; with `--campaign`, as the
campaign names its runs), and the runs of one epoch of one eval make a group (a lesson judged per
group decides them together).
"""

import datetime
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from replaylab.agents import recording as recording_io
from replaylab.agents.clients.inspect_ai import kind_of
from replaylab.agents.recording import RecordingError, printable
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.campaign_settings import Run
from replaylab.errors import InvalidInput
from replaylab.inspect_tasks import convert
from replaylab.lessons import UnknownLesson, registry

SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# The option that set each Inspect limit replaylab does not replay, for the one line that refuses it.
OPTIONS = {"message": "--message-limit", "turn": "--turn-limit", "working": "--working-limit", "cost": "--cost-limit"}


class ImportRefused(InvalidInput):
    """One line: the log, the sample and what is wrong."""


@dataclass(frozen=True)
class Imported:
    recording: recording_io.Recording
    path: Path  # where it is to be written
    where: str  # the log and the sample, for a line about it


def _utc(created):
    """Inspect's creation time (ISO text with an offset) as a recording's: UTC, to the second."""
    when = datetime.datetime.fromisoformat(created).astimezone(datetime.timezone.utc).replace(microsecond=0)
    return when.isoformat().replace("+00:00", "Z")


def _server(url):
    """The host (and port) of the server Inspect was given (--model-base-url); never its path or query."""
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def _stopped_by(sample, where):
    """replaylab's `stopped_by` of a sample that an Inspect limit ended, None for one it did not;
    ImportRefused for a limit replaylab does not replay."""
    limit = sample.limit
    if limit is None:
        return None
    found = sample.store.get(convert.LIMIT) or {}
    if limit.type == "token":
        used = found.get("value", sum(u.input_tokens + u.output_tokens for u in sample.model_usage.values()))
    else:
        used = found.get("value", sample.total_time or 0)
    stopped = convert.stopped_by({"type": limit.type, "limit": limit.limit, "value": used})
    if stopped is None:
        option = OPTIONS.get(limit.type)
        how = f" (run it again without {option})" if option else ""
        raise ImportRefused(
            f"{where}: Inspect's {limit.type} limit ({limit.limit:g}) ended the sample inside the run; replaylab replays "
            f"only a run that it or its own limits ended (tokens, seconds){how}"
        )
    return stopped


def _usage(sample):
    usage = sample.model_usage or {}
    if not usage:
        return None
    return {"input_tokens": sum(u.input_tokens for u in usage.values()), "output_tokens": sum(u.output_tokens for u in usage.values())}


def _request_ids(sample):
    ids = [r.id for e in sample.events if e.event == "model" for r in (e.request_ids or ()) if isinstance(r.id, str) and r.id]
    return [printable(i)[:200] for i in ids][:1000] or None


def provenance(log, sample, path):
    version = log.eval.packages.get("inspect_ai", "unknown")
    provider, _, _ = log.eval.model.partition("/")
    reported = sample.output.model if sample.output is not None else None
    inspect = {
        "version": version, "provider": provider, "model": log.eval.model, "model_reported": reported or None,
        "eval_id": log.eval.eval_id, "run_id": log.eval.run_id or None, "task": log.eval.task_registry_name or log.eval.task,
        "sample_id": sample.id, "epoch": sample.epoch, "log": Path(path).name,
    }
    if provider == "replaylab":
        who = f"replaylab's built-in program {log.eval.model.partition('/')[2]} (not a language model) played the agent"
    elif provider == "mockllm":
        who = "Inspect's mockllm model gave the messages it was scripted with (not a language model)"
    else:
        who = f"the model answered through Inspect's {provider} provider"
    how = (f"Recorded through Inspect AI {version}: {who}; replaylab's allowlist, inside Inspect's sample, checked every "
           "call and computed every result.")
    return recording_io.provenance(
        kind_of(log.eval.model), log.eval.model, how,
        provider="inspect_ai", server=_server(log.eval.model_base_url), usage=_usage(sample),
        request_ids=_request_ids(sample), inspect={k: v for k, v in inspect.items() if v is not None},
    ) | {"recorded": _utc(log.eval.created), "replaylab": (sample.metadata or {}).get("replaylab") or log.eval.packages.get("replaylab", "unknown")}


def names(log, sample, lesson, variant, instance, campaign):
    """(run, group): after the eval, the sample and the epoch; or as the campaign names them."""
    if campaign:
        run = Run(lesson.name, variant, log.eval.model, sample.epoch, instance.id, instance.seed)
        return run.name, run.group
    return (SAFE.sub("-", f"inspect-{log.eval.eval_id}-{sample.id}-e{sample.epoch}"),
            SAFE.sub("-", f"inspect-{log.eval.eval_id}-e{sample.epoch}"))


def sample_recording(log, sample, path, out, campaign=None):
    where = f"{printable(str(path))}: sample {printable(str(sample.id))} epoch {sample.epoch}"
    if sample.error is not None:
        first = (sample.error.message or "").strip().splitlines()[:1] or ["no message"]
        raise ImportRefused(f"{where}: the sample ended with an error ({printable(first[0])[:160]}); it is not a whole run")
    meta = sample.metadata or {}
    lesson, variant, instance = meta.get("lesson"), meta.get("variant"), meta.get("instance")
    try:
        family = registry.lesson(lesson)
        found = family.instance(instance) if instance is not None else family.seed_of(variant)
        v = family.variant(variant, found.id)
    except UnknownLesson as error:
        raise ImportRefused(f"{where}: metadata lesson {lesson!r}, instance {instance!r}, variant {variant!r}: {error}") from None
    stopped = _stopped_by(sample, where)
    finished = sample.store.get(convert.FINISHED)
    if stopped is None and not isinstance(finished, bool):
        raise ImportRefused(f"{where}: store {convert.FINISHED}: missing, so replaylab's solver did not end this sample")
    transcript = convert.transcript(sample.messages, log.eval.model, bool(finished) and stopped is None, stopped, where)
    run, group = names(log, sample, family, variant, found, campaign)
    recording_io.check_run_name(run, f"{where}: the run's name")
    recording = convert.recording(lesson, variant, run, group, provenance(log, sample, path), transcript, found.id)
    recording_io.parse(recording_io.dumps(recording), where)  # the schema's check, naming the sample
    try:
        replay(recording, v)
    except ReplayMismatch as mismatch:  # the one line of the first result that differs
        raise ReplayMismatch(f"{where}: {mismatch}", mismatch.difference) from None
    return Imported(recording, Path(out) / lesson / f"{run}.json", where)


def read(path):
    from inspect_ai.log import read_eval_log

    shown = printable(str(path))
    if not os.path.isfile(path):
        raise ImportRefused(f"{shown}: {'no such file' if not os.path.lexists(path) else 'not a file'}")
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # whatever Inspect's reader raises for a file that is not its log
        text = (str(error).strip().splitlines() or [""])[0]
        raise ImportRefused(f"{shown}: not an Inspect log ({type(error).__name__}: {printable(text)[:160]})") from None
    if log.status != "success":
        raise ImportRefused(f"{shown}: the eval's status is {log.status!r}, not 'success': only a whole eval is imported "
                            "(`inspect eval-retry` completes one)")
    solvers = [step.solver for step in (log.plan.steps if log.plan else ())]
    if solvers != [convert.SOLVER]:
        raise ImportRefused(f"{shown}: not a replaylab task: its solver is {', '.join(solvers) or 'none'}, not {convert.SOLVER} "
                            "(inspect eval replaylab/LESSON)")
    return log


def import_logs(paths, out, campaign=None):
    """Every sample of every log, checked and replayed, then written (all or nothing); the paths written."""
    found = []
    for path in paths:
        log = read(path)
        found += [sample_recording(log, sample, path, out, campaign) for sample in (log.samples or ())]
    if not found:
        raise ImportRefused(f"{', '.join(map(str, paths))}: no sample to import")
    seen = {}
    for item in found:
        if item.path in seen:
            raise ImportRefused(f"{item.where}: the same run as {seen[item.path]} ({item.path.name}): a log given twice?")
        seen[item.path] = item.where
        recording_io.refuse_existing(item.path, "import into another --out folder, or delete it first")
    written = []
    for item in found:
        try:
            recording_io.save(item.recording, item.path, new=True)
        except FileExistsError:
            raise RecordingError(f"{printable(str(item.path))}: appeared during the import, and a recorded run is never "
                                 f"overwritten; written before it: {len(written)}") from None
        written.append(item.path)
    return written
