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
import hashlib
import io
import json
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
from replaylab.inputs import DamagedResult, check_recording, made_by, variant_of
from replaylab.lessons import registry
from replaylab.lessons.cells import quoting, to_cell

if TYPE_CHECKING:
    from replaylab.lessons import Lesson


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


def _replayed(source: str | Path, tolerance: float, lesson: str | None = None) -> recording_io.Recording:
    run = check_recording(source, lesson)
    try:
        transcript = replay(run, variant_of(run, source), tolerance)
    except ReplayMismatch as mismatch:
        raise ReplayMismatch(f"{source}: {mismatch}") from None
    return dataclasses.replace(run, transcript=transcript, replayed={"from": str(source), "tolerance": tolerance})


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
    """The replay stage of one batch: recordings, replayed through the current code into a folder
    of transcripts, and judged."""

    lesson: str
    recordings: Sequence[str | Path]
    transcripts: str | Path  # output: a folder
    judged: str | Path  # output: the batch's verdicts, and what the render reads of each run
    tolerance: float


def replay_batch(stage: Replay) -> None:
    """Replay several recordings into one folder of transcripts (one job for runs too small to be
    worth a job each) and judge them there, while the tools' results are still in memory (the
    tool functions are pure and cached: the judge's recomputations cost next to nothing). A
    mismatch names its run; then neither the folder nor the verdicts are written.

    Each transcript is written without a sync of its own: the folder appears whole or not at all
    (`whole_folder`), and a replay makes it again."""
    runs: list[recording_io.Recording]
    behaviours: dict[str, str]
    runs, behaviours = [], {}
    with whole_folder(stage.transcripts) as building:
        for source in stage.recordings:
            run = _replayed(source, stage.tolerance, stage.lesson)
            path = building / f"{run.run}.json"
            data = recording_io.to_data(run)
            path.write_text(transcript_text(data, path), encoding="utf-8")
            behaviours[run.run] = behaviour(data)
            runs.append(run)
        verdicts = judge_batch(stage.lesson, runs, stage.tolerance, behaviours)
        recording_io.write_atomic(stage.judged, json.dumps(verdicts, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")


def batch_listed(path: str | Path) -> list[str]:
    """The recordings of a batch's list (written by the workflow: {"recordings": [[path, digest]]})."""
    return [recording for recording, _ in read_json(path)["recordings"]]


def transcript_text(data: dict[str, Any], path: str | Path) -> str:
    """A replayed run (as `recording_io.to_data` gives it) as the text of its transcript: a
    recording (any reader of recordings reads it), checked against the recording schema before it
    is written, in compact JSON: the json module writes that in C, several times faster than
    indented text, and a third smaller."""
    errors = recording_io.schema_errors(data)
    if errors:
        raise recording_io.RecordingError(f"{path}: {recording_io.json_path(errors[0].absolute_path)}: {errors[0].message}")
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def judge_batch(lesson: str, runs: Sequence[recording_io.Recording], tolerance: float,
                behaviours: dict[str, str]) -> dict[str, Any]:
    """The verdicts of a batch of replayed runs, and the decisions of its groups (a lesson that
    decides per group gets whole groups), with what the render job needs of each run: it reads
    every batch's verdicts, never every transcript. `behaviours`: {run: `behaviour` digest}."""
    lesson = registry.lesson(lesson)
    verdicts = lesson.judge(runs, tolerance)
    return {"runs": {run.run: run_facts(run, lesson, behaviours.get(run.run)) for run in runs}, "verdicts": verdicts,
            "groups": lesson.decide(runs, verdicts)}


def behaviour(data: dict[str, Any]) -> str:
    """A digest of what a run did (a recording as data): its question (instance, variant, system
    and task texts) and each message's text, calls and results, without the run's name, group,
    provenance, call ids or times. Two runs with one digest are copies: a deterministic model asked
    the same question again, one piece of evidence (statistics.METHODS['distinct_runs'])."""
    steps = [{"text": step["text"],
              "calls": [[call["name"], call["arguments"], call.get("as_json")] for call in step["tool_calls"]],
              "results": [[result["ok"], result["content"]] for result in step["results"]]} for step in data["steps"]]
    what = [data.get("instance"), data["variant"], data["system"], data["task"], steps, data["finished"],
            data.get("stopped_by")]
    return hashlib.sha256(json.dumps(what, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]


def run_facts(run: recording_io.Recording, lesson: "Lesson", digest: str | None = None) -> dict[str, Any]:
    """What the per-run table and the list of runs need of a replayed run (`digest`: its
    `behaviour`)."""
    facts: dict[str, Any] = {
        "variant": run.variant,
        "group": run.group,
        "label": run.label,
        "model": run.model,
        "messages": len(run.transcript.steps),
    }
    if digest:
        facts["behaviour"] = digest
    if lesson.judged == "group":
        facts["group_key"] = lesson.group_key(run)
    usage = run.provenance.get("usage")
    if usage:
        facts["usage"] = usage
    if run.transcript.stopped_by:
        facts["stopped_by"] = run.transcript.stopped_by
    return facts


def load_transcript(path: str | Path) -> recording_io.Recording:
    """A replayed run from its transcript file; a damaged or missing one is one `DamagedResult`
    line that says how to rebuild it."""
    try:
        return recording_io.load(path)
    except recording_io.RecordingError as error:
        raise DamagedResult(f"{error}: delete {Path(path).parent}, or run with --forcerun {made_by(path)}") from None


def score_batches(lesson: str, judged: Sequence[str | Path], transcripts: Iterable[str | Path], answers: dict[str, Any],
                  runs: Iterable[str] | None = None) -> tuple[dict[str, dict[str, Any]], dict[str, Path], list[dict[str, Any]],
                                                              dict[str, Path], dict[str, Any]]:
    """Every batch's verdicts, scored one batch at a time (a lesson of 100,000 runs never holds
    every verdict in memory): ({run: facts}, {run: its transcript file}, [scores] in name order,
    {run: the file of its verdict}, {group key: decision} of a lesson that decides per group), each
    run scored against `answers`, the build's answer of each instance. `judged` are the batches' files (judged/<batch>.json),
    `transcripts` their folders of transcripts (transcripts/<batch>); with `runs`, the names every
    run of the lesson has, exactly those (never a shorter answer from a file changed by hand)."""
    from replaylab.lessons.scorecard import scores  # pandas: only where it tabulates

    decide = registry.lesson(lesson).part("judge").score  # looked up once, not once per run
    folders = {Path(folder).name: Path(folder) for folder in transcripts}
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
            files[run] = folders[path.stem] / f"{run}.json"
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
