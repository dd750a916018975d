"""`replaylab import-inspect LOG... --out FOLDER`: every sample of Inspect logs of replaylab's
tasks as a recording (format 2), written to FOLDER/<lesson>/<run>.json.

All or nothing: every sample of every log is converted, checked against the recording schema,
replayed through the current code and judged before the first file is written; a sample that does
not replay stops the import with the replay's one-line mismatch. A sample whose score in the log
differs from replaylab's judgement now is imported with one warning line (the log's score is never
used: every run is judged again wherever it goes), and `inspect-imports.csv` in the folder gets a
row per run, with both scores and `inspect_score_agrees`. A log of an eval that did not end well
(cancelled, ended by an error, or never ended) is skipped, in one line, when a log given with it is
its retry (`inspect eval-retry`), and refused otherwise. A log is read only when its decompressed
size, as its zip directory states it (which bounds what a zip reader gives), is within MAX_LOG_BYTES:
a zip bomb is one line before anything is decompressed. Each file is then written atomically by
replaylab's recording writer, never over another file: a run already there with the same text is
left as it is (the same import again, or one cut short by a kill, completes), and an import that
fails or is interrupted while it writes removes the files it wrote. The run is named after the eval,
the sample and the epoch (`inspect-<eval id>-<variant>-e<epoch>`; with `--campaign`, as the
campaign names its runs), and the runs of one epoch of one eval make a group (a lesson judged per
group decides them together).
"""

import csv
import datetime
import io
import math
import os
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from replaylab.agents import recording as recording_io
from replaylab.agents.clients.inspect_ai import kind_of
from replaylab.agents.recording import RecordingError, printable
from replaylab.agents.replay import ReplayMismatch
from replaylab.campaign_settings import Run
from replaylab.errors import InvalidInput
from replaylab.inspect_tasks import convert, judging
from replaylab.lessons import UnknownLesson, counted, registry

SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# The option that set each Inspect limit replaylab does not replay, for the one line that refuses it.
OPTIONS = {"message": "--message-limit", "turn": "--turn-limit", "working": "--working-limit", "cost": "--cost-limit"}
# The most a log may hold once decompressed, and the most entries of its zip: a sample of
# replaylab's tasks is about 35 KB (a scripted run) to a few hundred (a model's, with its events),
# so 128 MiB is hundreds to thousands of samples; Inspect's reader needs about 6 times a log's size
# in memory (1.1 GB for a sample padded to 200 MiB). An entry of more than a MiB that its zip
# shrank more than MAX_RATIO times is padding, not a log (JSON logs shrink 5 to 10 times).
MAX_LOG_BYTES = 128 * 2**20
MAX_LOG_ENTRIES = 100_000
MAX_RATIO = 100
SCORER = "replaylab_judge"  # the name of the task's scorer in a log's scores (scorer.py)
SCORES = ("right", "answered", "supported")
IMPORTS = "inspect-imports.csv"  # a row per imported run, beside the lessons' folders
COLUMNS = ("file", "log", "eval_id", "sample_id", "epoch", *(f"inspect_{key}" for key in SCORES), *SCORES,
           "inspect_score_agrees")


class ImportRefused(InvalidInput):
    """One line: the log, the sample and what is wrong."""


@dataclass(frozen=True)
class Imported:
    recording: recording_io.Recording
    path: Path  # where it is to be written
    where: str  # the log and the sample, for a line about it
    row: dict  # its row of inspect-imports.csv (but `file`)
    disagreement: str | None  # the warning line when the log's score is not replaylab's judgement now
    log: str  # the log's path, as given


def _utc(created):
    """Inspect's creation time (ISO text with an offset) as a recording's: UTC, to the second."""
    when = datetime.datetime.fromisoformat(created).astimezone(datetime.UTC).replace(microsecond=0)
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
    found = sample.store.get(convert.LIMIT)
    if found is None:
        found = {}
    if not isinstance(found, dict) or ("value" in found and not _number(found["value"])):
        raise ImportRefused(f"{where}: store {convert.LIMIT}: {_what(found)}, not {{\"value\": a finite number}}")
    if limit.type == "token":
        used = found.get("value", sum(u.input_tokens + u.output_tokens for u in sample.model_usage.values()))
    else:
        used = found.get("value", sample.total_time or 0)
    if not _number(limit.limit) and limit.limit is not None:
        raise ImportRefused(f"{where}: Inspect's {limit.type} limit is {_what(limit.limit)}, not a finite number")
    stopped = convert.stopped_by({"type": limit.type, "limit": limit.limit, "value": used})
    if stopped is None:
        option = OPTIONS.get(limit.type)
        how = f" (run it again without {option})" if option else ""
        raise ImportRefused(
            f"{where}: Inspect's {limit.type} limit ({limit.limit:g}) ended the sample inside the run; replaylab replays "
            f"only a run that it or its own limits ended (tokens, seconds){how}"
        )
    return stopped


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _what(value):
    """A value as a refusal shows it: short, printable, and a type's name said as such."""
    text = printable(repr(value))
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


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
    meta = sample.metadata if isinstance(sample.metadata, dict) else {}
    lesson, variant, instance = meta.get("lesson"), meta.get("variant"), meta.get("instance")
    for key, value in (("lesson", lesson), ("variant", variant), ("instance", instance)):
        if not (isinstance(value, str) or (key == "instance" and value is None)):
            raise ImportRefused(f"{where}: metadata {key}: {_what(value)}, not the name of one"
                                " (the sample was not made by replaylab's task)")
    try:
        family = registry.lesson(lesson)
        found = family.instance(instance) if instance is not None else family.seed_of(variant)
        family.variant(variant, found.id)  # an unknown variant: one line here, not in the replay
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
        judged = judging.values(judging.judge(recording)[0])  # replayed first: every result recomputed
    except ReplayMismatch as mismatch:  # the one line of the first result that differs
        raise ReplayMismatch(f"{where}: {mismatch}", mismatch.difference) from None
    stored = _stored_score(sample)
    agrees = None if stored is None else stored == judged
    row = {"log": Path(path).name, "eval_id": log.eval.eval_id, "sample_id": sample.id, "epoch": sample.epoch,
           **{f"inspect_{key}": "" if stored is None else _shown(stored[key]) for key in SCORES},
           **{key: _shown(judged[key]) for key in SCORES}, "inspect_score_agrees": "" if agrees is None else str(agrees).lower()}
    disagreement = None if agrees in (None, True) else (
        f"{where}: the log's score ({_scores_text(stored)}) is not replaylab's judgement of the replayed run "
        f"({_scores_text(judged)}); the log's score is not used (edited, or scored by other code?)")
    return Imported(recording, Path(out) / lesson / f"{run}.json", where, row, disagreement, str(path))


def _stored_score(sample):
    """The log's score of the sample by replaylab's scorer, {right, answered, supported} as floats,
    or None when it holds none (scored by no scorer, or by another)."""
    score = (sample.scores or {}).get(SCORER)
    value = getattr(score, "value", None)
    if not isinstance(value, dict) or not all(isinstance(value.get(key), (int, float)) for key in SCORES):
        return None
    return {key: float(value[key]) for key in SCORES}


def _shown(value):
    return f"{value:g}"


def _scores_text(scores):
    return ", ".join(f"{key} {_shown(scores[key])}" for key in SCORES)


def read(path):
    from inspect_ai.log import read_eval_log

    shown = printable(str(path))
    if not os.path.isfile(path):
        raise ImportRefused(f"{shown}: {'no such file' if not os.path.lexists(path) else 'not a file'}")
    check_size(path)
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # whatever Inspect's reader raises for a file that is not its log
        text = (str(error).strip().splitlines() or [""])[0]
        raise ImportRefused(f"{shown}: not an Inspect log ({type(error).__name__}: {printable(text)[:160]})") from None
    solvers = [step.solver for step in (log.plan.steps if log.plan else ())]
    if solvers != [convert.SOLVER]:
        raise ImportRefused(f"{shown}: not a replaylab task: its solver is {', '.join(solvers) or 'none'}, not {convert.SOLVER} "
                            "(inspect eval replaylab/LESSON)")
    return log


def check_size(path):
    """ImportRefused, before anything is decompressed, for a log that would hold more than
    MAX_LOG_BYTES: a zip's entries as its directory states them (a zip reader gives no more than an
    entry states), or a JSON log's own size."""
    shown, limit = printable(str(path)), f"{MAX_LOG_BYTES // 2**20} MiB"
    if not zipfile.is_zipfile(path):
        size = os.path.getsize(path)
        if size > MAX_LOG_BYTES:
            raise ImportRefused(f"{shown}: {size / 2**20:.0f} MiB, more than a log imported at once may hold ({limit})")
        return
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise ImportRefused(f"{shown}: not an Inspect log (a damaged zip: {printable(str(error))[:120]})") from None
    if len(entries) > MAX_LOG_ENTRIES:
        raise ImportRefused(f"{shown}: a zip of {len(entries)} entries, more than an Inspect log imported at once may hold "
                            f"({MAX_LOG_ENTRIES})")
    for entry in entries:
        if entry.file_size > 2**20 and entry.file_size > MAX_RATIO * max(entry.compress_size, 1):
            raise ImportRefused(f"{shown}: its entry {printable(entry.filename)[:80]} would grow from "
                                f"{entry.compress_size / 2**10:.0f} KiB to {entry.file_size / 2**20:.0f} MiB once decompressed, "
                                f"more than {MAX_RATIO} times: not an Inspect log (a zip bomb?); nothing was decompressed")
    size = sum(entry.file_size for entry in entries)
    if size > MAX_LOG_BYTES:
        compressed = os.path.getsize(path)
        raise ImportRefused(f"{shown}: {size / 2**20:.0f} MiB once decompressed (from {compressed / 2**20:.1f} MiB), more than "
                            f"a log imported at once may hold ({limit}); nothing was decompressed")


def _planned(log):
    """The (sample id, epoch) pairs of a log: those its eval was to run, else those it holds."""
    ids = log.eval.dataset.sample_ids if log.eval.dataset is not None else None
    epochs = log.eval.config.epochs or 1
    if ids:
        return {(str(i), e) for i in ids for e in range(1, epochs + 1)}
    return {(str(s.id), s.epoch) for s in log.samples or ()}


def retry_of(log, logs):
    """(path, why) of a log of `logs` that completed the eval `log` did not (`inspect eval-retry`
    keeps the eval's task id; or a whole eval of the same task, arguments and model that holds every
    sample it was to run), else None."""
    for path, other in logs:
        if other.status != "success":
            continue
        if other.eval.task_id and other.eval.task_id == log.eval.task_id:
            return path, f"the same task id {log.eval.task_id}"
        if other.eval.eval_id == log.eval.eval_id:
            return path, f"the same eval id {log.eval.eval_id}"
        same = (other.eval.task_registry_name or other.eval.task, other.eval.task_args, other.eval.model) == (
            log.eval.task_registry_name or log.eval.task, log.eval.task_args, log.eval.model)
        if same and _planned(log) <= {(str(s.id), s.epoch) for s in other.samples or ()}:
            return path, "the same task, arguments and model, and every sample"
    return None


def whole(logs, say):
    """The logs of whole evals: a log of an eval that did not end well (cancelled, ended by an
    error, never ended) is skipped, with one line, when another log given is its retry (its samples
    are there, done again or carried over); refused (one line) when none is."""
    kept = []
    for path, log in logs:
        if log.status == "success":
            kept.append((path, log))
            continue
        shown = printable(str(path))
        found = retry_of(log, logs)
        if found is None:
            raise ImportRefused(f"{shown}: the eval's status is {log.status!r}, and no log given is its retry: only a whole "
                                f"eval is imported; complete it with `inspect eval-retry {shown}` and import the retry's log "
                                "(with this one, or alone)")
        say(f"{shown}: skipped: its eval's status is {log.status!r}, and {printable(str(found[0]))} is its retry "
            f"({found[1]})")
    return kept


def _warn(line):
    print(f"replaylab: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Outcome:
    written: list  # the paths written
    logs: int  # the logs whose samples were imported (not those skipped beside their retry)
    already: int  # the runs whose file was there already, the same


def import_logs(paths, out, campaign=None, say=_warn):
    """Every sample of every log of a whole eval, checked, replayed and judged, then written (all or
    nothing), with a row each in OUT/inspect-imports.csv; its Outcome. `say` takes the lines of
    what is skipped, and of a log's score that differs from replaylab's judgement."""
    found, kept = [], whole([(path, read(path)) for path in paths], say)
    for path, log in kept:
        found += [sample_recording(log, sample, path, out, campaign) for sample in (log.samples or ())]
    if not found:
        raise ImportRefused(f"{', '.join(map(str, paths))}: no sample to import")
    seen, seen_log = {}, {}
    for item in found:
        if item.path in seen:
            raise ImportRefused(f"{item.where}: the same run name as {seen[item.path]} ({item.path.name}): "
                                + ("a log given twice?" if item.log != seen_log[item.path] else
                                   "two samples whose ids differ only in characters a file name cannot hold; give them "
                                   "ids of letters, digits, '_', '.' and '-'"))
        seen[item.path], seen_log[item.path] = item.where, item.log
    todo = [item for item in found if not _already_there(item)]
    if len(todo) < len(found):
        say(f"{counted(len(found) - len(todo), 'run', 'runs')} already imported (the same file is there): left as "
            f"{'it is' if len(found) - len(todo) == 1 else 'they are'}")
    for item in found:
        if item.disagreement:
            say(f"warning: {item.disagreement}")
    written = []
    try:
        for item in todo:
            try:
                recording_io.save(item.recording, item.path, new=True)
            except FileExistsError:
                raise RecordingError(f"{printable(str(item.path))}: appeared during the import, and a recorded run is never "
                                     "overwritten; the runs written before it were removed") from None
            written.append(item)
        known = _listed(Path(out) / IMPORTS)
        rows = [{"file": name, **item.row} for item in found if (name := item.path.relative_to(out).as_posix()) not in known]
        if rows:
            add_rows(Path(out) / IMPORTS, rows)
    except BaseException:  # a failure, Ctrl-C or SIGTERM while writing: all or nothing
        for item in written:
            item.path.unlink(missing_ok=True)
        raise
    return Outcome([item.path for item in written], len(kept), len(found) - len(todo))


def _already_there(item):
    """Whether the run's file is there with the text this import would write (False when nothing
    is there); ImportRefused when another file holds its name."""
    try:
        there = item.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        there = None
    if there != recording_io.dumps(item.recording):
        recording_io.refuse_existing(item.path, "another run of that name is there: import into another --out folder, "
                                     "or delete it first")
    return True


def _listed(table):
    """The files inspect-imports.csv lists already."""
    if not table.exists():
        return set()
    with open(table, newline="", encoding="utf-8") as stream:
        return {row.get("file") for row in csv.DictReader(stream)}


def add_rows(table, rows):
    """The rows added to the table (made if missing), the file replaced whole: its rows before, then these."""
    before = []
    if table.exists():
        with open(table, newline="", encoding="utf-8") as stream:
            before = list(csv.DictReader(stream))
    stream = io.StringIO(newline="")
    writer = csv.DictWriter(stream, COLUMNS, restval="", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(before + rows)
    recording_io.write_atomic(table, stream.getvalue())
