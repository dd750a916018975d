"""The stages of a build that compute: replay, judge, scan; each reads files and writes its outputs
atomically. What a lesson shows is written by `replaylab.render`, the one stage that draws and
writes pages (so that only its jobs depend on the plotting and page code).

Each stage takes one small dataclass that names its inputs, outputs and settings, as the rule
names them. The Snakemake rules call these through thin scripts (inside Snakemake's process, or, for the
batches of a lesson of several, in worker processes side by side: workflow/rules/jobs.smk), and
`replaylab.build` calls them in one process. They write files, so they live
outside the audited packages.
"""

import csv
import io
import json
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.lessons import UnknownLesson, registry


def write_json(path, data):
    recording_io.write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def read_json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def variant_of(run, path):
    """The variant of its lesson that a recording names; `RecordingError` naming the file and the field."""
    try:
        lesson = registry.lesson(run.lesson)
    except UnknownLesson as error:
        raise recording_io.RecordingError(f"{path}: $.lesson: {error}") from None
    try:
        return lesson.variant(run.variant)
    except UnknownLesson as error:
        raise recording_io.RecordingError(f"{path}: $.variant: {error}") from None


def check_recording(path, lesson=None):
    """Load one recording and check that it belongs where it lies; `RecordingError` otherwise."""
    run = recording_io.load(path)
    if lesson is not None and run.lesson != lesson:
        raise recording_io.RecordingError(f"{path}: $.lesson: {run.lesson!r}, but the file lies in the folder of {lesson!r}")
    variant_of(run, path)
    return run


def _replayed(source, tolerance, lesson=None):
    run = check_recording(source, lesson)
    try:
        transcript = replay(run, variant_of(run, source), tolerance)
    except ReplayMismatch as mismatch:
        raise ReplayMismatch(f"{source}: {mismatch}") from None
    return recording_io.Recording(
        run.lesson, run.run, run.variant, run.group, run.provenance, transcript, run.source,
        {"from": str(source), "tolerance": tolerance},
    )


@contextmanager
def whole_folder(folder):
    """Fill a folder that appears whole or not at all: the block writes into a hidden sibling,
    which replaces `folder` only when the block succeeds."""
    folder = Path(folder)
    building = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        yield building
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)


@dataclass(frozen=True)
class Replay:
    """The replay stage of one batch: recordings, replayed through the current code into a folder
    of transcripts, and judged."""

    lesson: str
    recordings: list
    transcripts: str  # output: a folder
    judged: str  # output: the batch's verdicts, and what the render reads of each run
    tolerance: float


def replay_batch(stage):
    """Replay several recordings into one folder of transcripts (one job for runs too small to be
    worth a job each) and judge them there, while the tools' results are still in memory (the
    tool functions are pure and cached: the judge's recomputations cost next to nothing). A
    mismatch names its run; then neither the folder nor the verdicts are written.

    Each transcript is written without a sync of its own: the folder appears whole or not at all
    (`whole_folder`), and a replay makes it again."""
    runs = []
    with whole_folder(stage.transcripts) as building:
        for source in stage.recordings:
            run = _replayed(source, stage.tolerance, stage.lesson)
            path = building / f"{run.run}.json"
            path.write_text(transcript_text(run, path), encoding="utf-8")
            runs.append(run)
        verdicts = judge_batch(stage.lesson, runs, stage.tolerance)
        recording_io.write_atomic(stage.judged, json.dumps(verdicts, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def batch_listed(path):
    """The recordings of a batch's list (written by the workflow: {"recordings": [[path, digest]]})."""
    return [recording for recording, _ in read_json(path)["recordings"]]


def transcript_text(run, path):
    """A replayed run as the text of its transcript: a recording (any reader of recordings reads
    it), checked against the recording schema before it is written, in compact JSON: the json
    module writes that in C, several times faster than indented text, and a third smaller."""
    data = recording_io.to_data(run)
    errors = recording_io.schema_errors(data)
    if errors:
        raise recording_io.RecordingError(f"{path}: {recording_io.json_path(errors[0].absolute_path)}: {errors[0].message}")
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def judge_batch(lesson, runs, tolerance):
    """The verdicts of a batch of replayed runs (a lesson judged per group gets whole groups), with
    what the render job needs of each run: it reads every batch's verdicts, never every transcript."""
    return {"runs": {run.run: run_facts(run) for run in runs}, "verdicts": registry.lesson(lesson).judge(runs, tolerance)}


def run_facts(run):
    """What the per-run table and the list of runs need of a replayed run."""
    facts = {
        "variant": run.variant,
        "group": run.group,
        "label": run.label,
        "model": run.model,
        "messages": len(run.transcript.steps),
    }
    usage = run.provenance.get("usage")
    if usage:
        facts["usage"] = usage
    if run.transcript.stopped_by:
        facts["stopped_by"] = run.transcript.stopped_by
    return facts


def transcript_files(paths):
    """Transcript files, with each folder (a replayed batch) replaced by the files in it."""
    files = []
    for path in map(Path, paths):
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return files


def load_transcripts(paths):
    return [recording_io.load(p) for p in transcript_files(paths)]


def score_batches(lesson, judged, transcripts, scans):
    """Every batch's verdicts, scored one batch at a time (a lesson of 100,000 runs never holds
    every verdict in memory): ({run: facts}, {run: its transcript file}, [scores] in name order,
    {judged entry: the file of its verdict}). `judged` are the batches' files (judged/<batch>.json),
    `transcripts` their folders of transcripts (transcripts/<batch>)."""
    from replaylab.lessons.scorecard import scores  # pandas: only where it tabulates

    decide = registry.lesson(lesson).part("judge").score  # looked up once, not once per run
    folders = {Path(folder).name: Path(folder) for folder in transcripts}
    facts, files, found, where = {}, {}, [], {}
    for path in map(Path, judged):
        batch = read_json(path)
        for run, fact in batch["runs"].items():
            facts[run] = fact
            files[run] = folders[path.stem] / f"{run}.json"
        found += scores(batch["verdicts"], scans, decide, batch["runs"])
        where.update((entry, path) for entry in batch["verdicts"])
    return facts, files, sorted(found, key=lambda score: score["run"]), where


def verdicts_of(entries, where):
    """{entry: verdict} of some judged entries, read from their batches' files."""
    read, found = {}, {}
    for entry in entries:
        path = where[entry]
        if path not in read:
            read[path] = read_json(path)["verdicts"]
        found[entry] = read[path][entry]
    return found


@dataclass(frozen=True)
class Scan:
    """The scan stage: what a lesson computes from its code alone, never from a run."""

    lesson: str
    scans: str  # output
    exercises: str  # output


def scan_lesson(stage):
    lesson = registry.lesson(stage.lesson)
    write_json(stage.scans, lesson.scans())
    write_json(stage.exercises, lesson.exercises())


def allowlists(lesson):
    """The allowlists as the model sees them, printed from the code, per variant."""
    return {
        name: {
            "tools": v.allowlist().specs(),
            "budget": v.budget,
            "max_steps": v.max_steps,
            "max_calls_per_message": MAX_CALLS_PER_MESSAGE,
        }
        for name, v in registry.lesson(lesson).variants.items()
    }


def score_lesson(lesson, verdicts, scans, runs=None):
    """Each judged run's score (right or what it got wrong), the per-run table and the scorecard
    per model (a group-by of the table). `runs`: what the batches' verdicts say of each run
    ({run: facts}, `run_facts`)."""
    from replaylab.lessons.scorecard import scores, tabulate  # pandas: only where it tabulates

    decide = registry.lesson(lesson).part("judge").score  # looked up once, not once per run
    found = scores(verdicts, scans, decide, runs)
    return (found, *tabulate(found, runs))


def csv_text(rows):
    stream = io.StringIO()
    if rows:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return stream.getvalue()


def find_runs(lesson, folders):
    """{run: recording} of a lesson, from <folder>/<lesson>/<run>.json of every folder, in order.

    Hidden files are not recordings. A run name used twice is a `RecordingError`: a transcript is
    named after its run, so one would silently replace the other.
    """
    runs = {}
    for folder in folders:
        for path in sorted(Path(folder, lesson).glob("*.json")):
            if path.name.startswith("."):
                continue
            if path.stem in runs:
                raise recording_io.RecordingError(
                    f"{path}: $.run: {path.stem!r} is also the run {runs[path.stem]}; "
                    "run names must be unique within a lesson"
                )
            runs[path.stem] = path
    return runs
