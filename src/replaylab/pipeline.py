"""The stages of a build that compute: replay, judge, scan; each reads files and writes its outputs
atomically. What a lesson shows is written by `replaylab.render`, the one stage that draws and
writes pages (so that only its jobs depend on the plotting and page code).

Each stage takes one small dataclass that names its inputs, outputs and settings, as the rule
names them. The Snakemake rules call these through thin scripts (scripts/, each job a process of
its own), and `replaylab.build` calls them in one process. They write files, so they live
outside the audited packages.
"""

import csv
import dataclasses
import functools
import gc
import hashlib
import io
import json
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.messages import Transcript
from replaylab.agents.recording import RecordingError, printable
from replaylab.inputs import DamagedResult, made_by, variant_of
from replaylab.lessons import registry
from replaylab.lessons.cells import quoting, to_cell

if TYPE_CHECKING:
    from replaylab.lessons import Lesson, Variant


def write_json(path: str | Path, data: Any) -> None:
    recording_io.write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def read_json(path: str | Path) -> dict[str, Any]:
    """The data of a JSON file the build wrote (verdicts, scans, results), or `DamagedResult`, one
    line that names the file and how to rebuild it, when it was emptied or changed by hand."""
    path = Path(path)
    shown = recording_io.printable(str(path))
    remedy = f"delete it, or run with --forcerun {made_by(path)}"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise DamagedResult(f"{shown}: not a regular file, so not the one the build wrote: {remedy}")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DamagedResult(f"{shown}: missing (removed after the build): run again, or with --forcerun {made_by(path)}") from None
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise DamagedResult(f"{shown}: not the JSON the build wrote ({error}): {remedy}") from None
    if not isinstance(data, dict):
        raise DamagedResult(f"{shown}: not the JSON object the build wrote: {remedy}")
    return data


@contextmanager
def whole_folder(folder: str | Path) -> Iterator[Path]:
    """Fill a folder that appears whole or not at all: the block writes into a hidden sibling of a
    name no other process uses, which replaces `folder` only when the block succeeds."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=folder.parent))
    try:
        os.chmod(building, 0o777 & ~_umask())  # mkdtemp's 0700 would hide the results
        yield building
        _swap_in(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _swap_in(building: Path, folder: Path) -> None:
    """Rename `building` to `folder`, the old folder (if any) moved aside first and then removed.
    Another process doing the same at the same moment (two builds into one folder) is no error:
    the rename is tried again, and the last folder put in place stays."""
    for _ in range(100):
        aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.parent))
        try:
            os.replace(folder, aside)  # a folder replaces an empty folder
        except FileNotFoundError:
            pass
        try:
            os.rename(building, folder)
            return
        except OSError as error:
            if not folder.exists():
                raise
            last = error  # another process put its folder there since: try again
        finally:
            shutil.rmtree(aside, ignore_errors=True)
    raise last


@dataclass(frozen=True)
class Replay:
    """The replay stage of one batch: recordings, replayed through the current code into one file
    of transcripts, and judged."""

    lesson: str
    recordings: Sequence[str | Path]
    transcripts: str | Path  # output: the batch's transcripts, a line each (JSON Lines, transcripts/<batch>.jsonl)
    judged: str | Path  # output: the batch's verdicts, and what the render reads of each run
    tolerance: float


def replay_batch(stage: Replay) -> None:
    """Replay several recordings into one file of transcripts (one job for runs too small to be
    worth a job each) and judge them there, while the tools' results are still in memory (the
    tool functions are pure and cached: the judge's recomputations cost next to nothing). A
    mismatch names its run; then neither the transcripts nor the verdicts are written.

    Each recording is read once and checked once (`Replayer`). The transcripts are one file, a
    line each, in the order of the batch's list (a file per run costs more to write than its
    replay), and each run's verdict says where its line lies (`run_facts`, "transcript")."""
    with without_cycle_collection():
        _replay_batch(stage)


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off for a block that holds a batch of runs (JSON data and frozen
    records, which form no cycles; reference counting frees them as before): its passes over every
    object held cost an eighth of a replay's time and half of a render's scoring (docs/performance.md),
    and free nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _replay_batch(stage: Replay) -> None:
    replayer = Replayer(stage.lesson, stage.tolerance)
    archive = Path(stage.transcripts)
    runs: list[recording_io.Recording]
    behaviours: dict[str, str]
    places: dict[str, list[int]]
    lines: list[bytes]
    runs, behaviours, places, lines, offset = [], {}, {}, [], 0
    for source in stage.recordings:
        run, data, text = replayer.replayed(source)
        if run.run in places:
            raise RecordingError(f"{printable(str(source))}: $.run: {run.run!r} is also the name of another run of the batch")
        line = text.encode("utf-8")
        places[run.run] = [offset, len(line)]
        offset += len(line)
        lines.append(line)
        behaviours[run.run] = behaviour(data)
        runs.append(run)
    verdicts = judge_batch(stage.lesson, runs, stage.tolerance, behaviours, places)
    recording_io.write_atomic(archive, b"".join(lines))
    try:
        recording_io.write_atomic(stage.judged, json.dumps(verdicts, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    except BaseException:
        archive.unlink(missing_ok=True)  # never one without the other
        raise


TRANSCRIPTS = ".jsonl"  # the suffix of a batch's file of transcripts


class Replayer:
    """Replays the recordings of one lesson, one at a time: each read once, checked once (its
    variant looked up once per instance and variant), its calls recomputed, and its transcript made
    from what was read, with the recomputed results in place of the recorded ones."""

    def __init__(self, lesson: str | None, tolerance: float) -> None:
        self.lesson = lesson
        self.tolerance = tolerance
        self._variants: dict[tuple[str, str | None, str], Variant] = {}

    def replayed(self, source: str | Path) -> tuple[recording_io.Recording, dict[str, Any], str]:
        """(the replayed run, the data of its steps as they are now, the text of its transcript: a
        line); `RecordingError` for a recording that cannot be used, `ReplayMismatch` naming it when
        a result differs."""
        text = recording_io.read(source)
        run, data = recording_io.loads_with_data(text, source)
        if self.lesson is not None and run.lesson != self.lesson:
            raise RecordingError(f"{printable(str(source))}: $.lesson: {run.lesson!r}, but the file lies in the folder of {self.lesson!r}")
        key = (run.lesson, run.instance, run.variant)
        variant = self._variants.get(key)
        if variant is None:
            variant = self._variants[key] = variant_of(run, source)
        try:
            transcript = replay(run, variant, self.tolerance)
        except ReplayMismatch as mismatch:
            raise ReplayMismatch(f"{source}: {mismatch}") from None
        replayed = {"from": str(source), "tolerance": self.tolerance}
        if ("replayed" not in data and _recomputed_exactly(run.transcript, transcript) and not _held_as_json(data)
                and recording_io.replay_parts_fit({"replayed": replayed})):
            line = line_of_recording(text, replayed)  # what the replay made is what the file holds
        else:
            data = replayed_data(data, transcript, replayed)
            line = transcript_text(data, f"{printable(str(source))}: its transcript")
        return dataclasses.replace(run, transcript=transcript, replayed=replayed), data, line


def _recomputed_exactly(recorded: Transcript, now: Transcript) -> bool:
    """Whether every recomputed result is the recorded one, type for type (1.0 is not 1, -0.0 is
    not 0.0): then the recording's text, with what the replay adds, is the transcript's."""
    for old, new in zip(recorded.steps, now.steps):
        for was, result in zip(old.results, new.results):
            if was.ok is not result.ok or not _identical(was.content, result.content):
                return False
    return True


def _identical(was: Any, now: Any) -> bool:
    """Equal and of one type at every level (JSON text would show the difference)."""
    kind = type(was)
    if kind is not type(now):
        return False
    if kind is dict:
        return was.keys() == now.keys() and all(_identical(value, now[key]) for key, value in was.items())
    if kind is list:
        return len(was) == len(now) and all(map(_identical, was, now))
    if kind is float:
        return was == now and (was != 0.0 or math.copysign(1.0, was) == math.copysign(1.0, now))
    return bool(was == now)


def _held_as_json(data: dict[str, Any]) -> bool:
    """Whether a call of the recording is held as its JSON text (the writer writes it again)."""
    return any("as_json" in call for step in data["steps"] for call in step["tool_calls"])


def line_of_recording(text: str, replayed: dict[str, Any]) -> str:
    """A recording's text (a JSON object checked when it was read, with no `replayed`) as one line
    of a file of transcripts, `replayed` (checked) added: JSON text holds a line break only between
    its values (inside a string it is escaped), so the breaks can go (the indentation stays:
    removing it would cost as much as writing the data again), and the object's closing brace is
    its last character but for spaces."""
    body = text.replace("\n", "").replace("\r", "").rstrip(" \t")
    return body[:-1] + ',"replayed":' + json.dumps(replayed, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "}\n"


def replayed_data(data: dict[str, Any], transcript: Transcript, replayed: dict[str, Any]) -> dict[str, Any]:
    """A replayed run's transcript as data, what `recording_io.to_data` makes of it, from the data
    of its recording (as read and checked) and the replay's `transcript`: the replay kept the
    recording's prompts, messages, end and limit (else it failed), so only the results are new.
    A call that the file holds as its JSON text (`as_json`) is written again by the writer."""
    steps = []
    for step, now in zip(data["steps"], transcript.steps):
        calls = [recording_io.call_data(call) if "as_json" in recorded else
                 {"id": recorded["id"], "name": recorded["name"], "arguments": recorded["arguments"]}
                 for recorded, call in zip(step["tool_calls"], now.message.tool_calls)]
        steps.append({"text": step["text"], "tool_calls": calls, "results": [recording_io.result_data(r) for r in now.results]})
    made = {key: data[key] for key in RECORDING_KEYS if key in data}
    made["steps"] = steps
    made["finished"] = data["finished"]
    made.update((key, data[key]) for key in ("stopped_by", "ended", "notes") if data.get(key))
    made["replayed"] = replayed
    if data.get("partial"):
        made["partial"] = data["partial"]
    return made


RECORDING_KEYS = ("format", "lesson", "run", "variant", "instance", "group", "provenance", "system", "task")  # before the steps


def batch_listed(path: str | Path) -> list[str]:
    """The recordings of a batch's list (written by the workflow: {"recordings": [[path, digest]]})."""
    return [recording for recording, _ in read_json(path)["recordings"]]


def transcript_text(data: dict[str, Any], path: str | Path) -> str:
    """A replayed run (`replayed_data`) as the text of its transcript: a recording (any reader of
    recordings reads it), checked against the recording schema before it is written (what the
    replay made: the rest is its recording's, checked when it was read), in compact JSON: the json
    module writes that in C, several times faster than indented text, and a third smaller."""
    errors = recording_io.replay_parts_errors(data)
    if errors:
        raise recording_io.RecordingError(f"{path}: {recording_io.json_path(errors[0].absolute_path)}: {recording_io.describe(errors[0])}")
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def judge_batch(lesson: str, runs: Sequence[recording_io.Recording], tolerance: float,
                behaviours: dict[str, str], places: Mapping[str, list[int]] | None = None) -> dict[str, Any]:
    """The verdicts of a batch of replayed runs, and the decisions of its groups (a lesson that
    decides per group gets whole groups), with what the render job needs of each run: it reads
    every batch's verdicts, never every transcript. `behaviours`: {run: `behaviour` digest};
    `places`: {run: [offset, length]} of its transcript in the batch's file."""
    lesson = registry.lesson(lesson)
    verdicts = lesson.judge(runs, tolerance)
    places = places or {}
    facts = {run.run: run_facts(run, lesson, behaviours.get(run.run), places.get(run.run)) for run in runs}
    return {"runs": facts, "verdicts": verdicts, "groups": lesson.decide(runs, verdicts)}


def behaviour(data: dict[str, Any]) -> str:
    """A digest of what a run did (a recording as data): its question (instance, variant, system
    and task texts) and each message's text, calls and results, without the run's name, group,
    provenance, call ids or times. Two runs with one digest are copies: a deterministic model asked
    the same question again, one piece of evidence (statistics.METHODS['distinct_runs'])."""
    steps = [{"text": step["text"],
              "calls": [[call["name"], call["arguments"], call.get("as_json")] for call in step["tool_calls"]],
              "results": [[result["ok"], result["content"]] for result in step["results"]]} for step in data["steps"]]
    what = [data.get("instance"), data["variant"], _prompts_digest(data["system"], data["task"]), steps, data["finished"],
            data.get("stopped_by")]
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


@functools.lru_cache(maxsize=1024)
def _prompts_digest(system: str, task: str) -> str:
    """The digest of a question's prompts, made once per question: a batch's runs share a few, and
    they are half of what a digest would otherwise encode."""
    return hashlib.sha256(json.dumps([system, task]).encode()).hexdigest()


def run_facts(run: recording_io.Recording, lesson: "Lesson", digest: str | None = None,
              place: list[int] | None = None) -> dict[str, Any]:
    """What the per-run table and the list of runs need of a replayed run (`digest`: its
    `behaviour`; `place`: [offset, length] in bytes of its line in the batch's transcripts)."""
    facts: dict[str, Any] = {
        "variant": run.variant,
        "group": run.group,
        "label": run.label,
        "model": run.model,
        "messages": len(run.transcript.steps),
    }
    if digest:
        facts["behaviour"] = digest
    if place is not None:
        facts["transcript"] = place
    if lesson.judged == "group":
        facts["group_key"] = lesson.group_key(run)
    usage = run.provenance.get("usage")
    if usage:
        facts["usage"] = usage
    if "seconds" in run.provenance:
        facts["seconds"] = run.provenance["seconds"]
    if run.transcript.stopped_by:
        facts["stopped_by"] = run.transcript.stopped_by
    return facts


def read_transcript(archive: str | Path, run: str, place: object) -> tuple[recording_io.Recording, str]:
    """(the replayed run, the text of its transcript) from its line of its batch's file of
    transcripts (`place`: [offset, length] in bytes, as its verdict says); a damaged or missing
    one is one `DamagedResult` line that names the file and says how to rebuild it."""
    where = f"{recording_io.printable(str(archive))}: the transcript of {run}"
    remedy = f"delete it, or run with --forcerun {made_by(archive)}"
    if not (isinstance(place, list) and len(place) == 2 and all(type(n) is int and n >= 0 for n in place)):
        raise DamagedResult(f"{where}: its place in the file is not the one the build wrote ({recording_io.short(place)}): {remedy}")
    offset, length = place
    try:
        with open(archive, "rb") as stream:
            stream.seek(offset)
            text = stream.read(length).decode("utf-8")
        recording = recording_io.from_data(recording_io.parse(text, where), str(archive))
    except FileNotFoundError:
        raise DamagedResult(f"{where}: the file is missing (removed after the build): run again, or with --forcerun "
                            f"{made_by(archive)}") from None
    except RecordingError as error:  # its line names `where`, the JSON path and what is wrong
        raise DamagedResult(f"{error}: not what the build wrote: {remedy}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DamagedResult(f"{where}: not what the build wrote ({recording_io.printable(str(error))}): {remedy}") from None
    if recording.run != run:
        raise DamagedResult(f"{where}: the line there is the transcript of {recording.run!r}: {remedy}")
    return recording, text


def archived_transcripts(archive: str | Path) -> Iterator[Any]:
    """The data of each line of a batch's file of transcripts, in order, as JSON (not checked: for
    what a reader only looks up in them, such as their names); a file that is not JSON Lines is
    one `DamagedResult` line."""
    try:
        with open(archive, encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                data = json.loads(line)
                if not isinstance(data, dict) or not isinstance(data.get("run"), str):
                    raise ValueError(f"line {number} is not a transcript")
                yield data
    except (OSError, ValueError, RecursionError) as error:
        raise DamagedResult(f"{recording_io.printable(str(archive))}: not the transcripts the build wrote "
                            f"({recording_io.printable(str(error))}): delete it, or run with --forcerun {made_by(archive)}") from None


def score_batches(lesson: str, judged: Sequence[str | Path], transcripts: Iterable[str | Path], answers: dict[str, Any],
                  runs: Iterable[str] | None = None) -> tuple[dict[str, dict[str, Any]], dict[str, Path], list[dict[str, Any]],
                                                              dict[str, Path], dict[str, Any]]:
    """Every batch's verdicts, scored one batch at a time (a lesson of 100,000 runs never holds
    every verdict in memory): ({run: facts}, {run: the file that holds its transcript}, [scores] in
    name order, {run: the file of its verdict}, {group key: decision} of a lesson that decides per
    group), each run scored against `answers`, the build's answer of each instance. `judged` are
    the batches' files (judged/<batch>.json), `transcripts` their files of transcripts
    (transcripts/<batch>.jsonl); with `runs`, the names every run of the lesson has, exactly those
    (never a shorter answer from a file changed by hand)."""
    from replaylab.lessons.scorecard import scores  # pandas: only where it tabulates

    decide = registry.lesson(lesson).part("judge").score  # looked up once, not once per run
    archives = {Path(archive).stem: Path(archive) for archive in transcripts}
    facts: dict[str, dict[str, Any]]
    files: dict[str, Path]
    found: list[dict[str, Any]]
    where: dict[str, Path]
    groups: dict[str, Any]
    facts, files, found, where, groups = {}, {}, [], {}, {}
    for path in map(Path, judged):
        batch = read_json(path)
        for run, fact in batch["runs"].items():
            facts[run] = fact
            files[run] = archives[path.stem]
        found += scores(batch["verdicts"], answers, decide, batch["runs"])
        where.update((entry, path) for entry in batch["verdicts"])
        groups.update(batch["groups"])
    if runs is not None:
        missing, extra = sorted(set(runs) - set(facts)), sorted(set(facts) - set(runs))
        if missing or extra:
            folder = recording_io.printable(str(Path(judged[0]).parent)) if judged else "judged/"
            what = f"no verdict of the run {missing[0]!r}" if missing else f"a verdict of {extra[0]!r}, which is not a run of the lesson"
            raise DamagedResult(f"{folder}: {what} (changed after the build): delete it, or run with --forcerun replay")
    return facts, files, sorted(found, key=lambda score: score["run"]), where, groups


def verdicts_of(entries: Iterable[str], where: Mapping[str, str | Path]) -> dict[str, Any]:
    """{entry: verdict} of some judged entries, read from their batches' files."""
    read: dict[str | Path, Any]
    found: dict[str, Any]
    read, found = {}, {}
    for entry in entries:
        path = where[entry]
        if path not in read:
            read[path] = read_json(path)["verdicts"]
        found[entry] = read[path][entry]
    return found


@dataclass(frozen=True)
class Answers:
    """The answers stage: the build's answer of every instance of a lesson's family (what a run's
    answer is scored against), and the table of the instances. Computed from the code alone."""

    lesson: str
    answers: str | Path  # output: {instance: answer}
    instances: str | Path  # output: instances.csv


def answer_lesson(stage: Answers) -> None:
    lesson = registry.lesson(stage.lesson)
    answers = lesson.answers()
    write_json(stage.answers, answers)
    recording_io.write_atomic(stage.instances, csv_text(instance_rows(lesson, answers)))


def instance_rows(lesson: "Lesson", answers: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per instance: its id, difficulty, whether it is one of the seeds' own questions, a
    column per parameter (named as the task text names it, SI units in the name), and the build's
    answer as JSON."""
    columns = list(lesson.part("family").PARAMETERS)
    return [
        {"instance": i.id, "difficulty": i.difficulty, "seed": i.seed,
         **{name: i.parameters.get(name, "") for name in columns},
         "answer": json.dumps(answers[i.id], sort_keys=True, ensure_ascii=False, allow_nan=False)}
        for i in lesson.instances.values()
    ]


@dataclass(frozen=True)
class Scan:
    """The scan stage: what a lesson computes from its code alone, never from a run."""

    lesson: str
    scans: str | Path  # output
    exercises: str | Path  # output


def scan_lesson(stage: Scan) -> None:
    lesson = registry.lesson(stage.lesson)
    write_json(stage.scans, lesson.scans())
    write_json(stage.exercises, lesson.exercises())


def allowlists(lesson: str) -> dict[str, dict[str, Any]]:
    """The allowlists as the model sees them, printed from the code, per variant name: of the seeds'
    own questions first, then of the first instance that holds each other name (a family whose
    instances bring variants of their own, such as claims about other integrators)."""
    lesson = registry.lesson(lesson)
    variants = dict(lesson.variants)
    for instance in lesson.instances:
        for name, v in lesson.instance_variants(instance).items():
            variants.setdefault(name, v)
    return {
        name: {
            "tools": v.allowlist().specs(),
            "budget": v.budget,
            "max_steps": v.max_steps,
            "max_calls_per_message": MAX_CALLS_PER_MESSAGE,
        }
        for name, v in variants.items()
    }


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows (dicts with the same keys) as CSV text, every cell one a spreadsheet shows as text
    (cells.to_cell, cells.quoting)."""
    stream = io.StringIO()
    if rows:
        cells = [{key: to_cell(value) for key, value in row.items()} for row in rows]
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n",
                                quoting=quoting(value for row in cells for value in row.values()))
        writer.writeheader()
        writer.writerows(cells)
    return stream.getvalue()
