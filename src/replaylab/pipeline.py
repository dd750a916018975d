"""The stages of a build that compute: replay, judge, scan; each reads files and writes its outputs
atomically. What a lesson shows is written by `replaylab.render`, the one stage that draws and
writes pages (so that only its jobs depend on the plotting and page code).

Each stage takes one small dataclass that names its inputs, outputs and settings, as the rule
names them. The Snakemake rules call these through thin scripts (inside Snakemake's process, one
job at a time), and `replaylab.build` calls them in one process. They write files, so they live
outside the audited packages.
"""

import csv
import io
import json
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.inputs import DamagedResult, check_recording, made_by, variant_of, write_contents
from replaylab.lessons import registry


def write_json(path, data):
    recording_io.write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def read_json(path):
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


def _replayed(source, tolerance):
    run = check_recording(source)
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
    """Fill a folder that appears whole or not at all: the block writes into a hidden sibling of a
    name no other process uses, which replaces `folder` only when the block succeeds. The folder
    lists its files (inputs.write_contents), so that one removed by hand is noticed."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=folder.parent))
    try:
        os.chmod(building, 0o777 & ~_umask())  # mkdtemp's 0700 would hide the results
        yield building
        write_contents(building)
        _swap_in(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _umask():
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _swap_in(building, folder):
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
    """The replay stage: recordings, replayed through the current code into a folder of transcripts."""

    recordings: list
    transcripts: str  # output: a folder
    tolerance: float


def replay_batch(stage):
    """Replay several recordings into one folder of transcripts (one job for runs too small to be
    worth a job each). A mismatch names its run, and the folder is then not written."""
    with whole_folder(stage.transcripts) as building:
        for source in stage.recordings:
            run = _replayed(source, stage.tolerance)
            recording_io.save(run, building / f"{run.run}.json")


def transcript_files(paths):
    """Transcript files, with each folder (a replayed batch) replaced by the files in it."""
    files = []
    for path in map(Path, paths):
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return files


def load_transcripts(paths, runs=None):
    """The replayed runs in the transcript files or folders `paths`; with `runs`, the names every
    run of the lesson has, exactly those (never a shorter answer from a folder changed by hand).
    A damaged transcript is one `DamagedResult` line that says how to rebuild it."""
    files = transcript_files(paths)
    found = []
    for path in files:
        try:
            found.append(recording_io.load(path))
        except recording_io.RecordingError as error:
            raise DamagedResult(f"{error}: delete {path.parent}, or run with --forcerun {made_by(path)}") from None
    if runs is not None:
        names = [run.run for run in found]
        missing, extra = sorted(set(runs) - set(names)), sorted(set(names) - set(runs))
        if missing or extra:
            where = recording_io.printable(str(paths[0] if len(paths) == 1 else Path(paths[0]).parent))
            what = f"no transcript of the run {missing[0]!r}" if missing else f"a transcript of {extra[0]!r}, which is not a run of the lesson"
            raise DamagedResult(f"{where}: {what} (changed after the build): delete it, or run with --forcerun {made_by(where)}")
    return found


@dataclass(frozen=True)
class Judge:
    """The judge stage: the verdicts of a lesson's replayed runs."""

    lesson: str
    transcripts: list  # folders of transcripts (replayed batches) or transcript files
    verdicts: str  # output
    tolerance: float
    runs: list | None = None  # the names of every run of the lesson, each of which must have its transcript


def judge_lesson(stage):
    verdicts = registry.lesson(stage.lesson).judge(load_transcripts(stage.transcripts, stage.runs), stage.tolerance)
    write_json(stage.verdicts, verdicts)
    return verdicts


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
    per model (a group-by of the table). `runs` are the runs of results.json."""
    from replaylab.lessons.scorecard import runs_table, scorecard, scores  # pandas: only where it tabulates

    found = scores(verdicts, scans, registry.lesson(lesson).score, runs)
    table = runs_table(found, runs)
    return found, scorecard(table), table


def csv_text(rows):
    stream = io.StringIO()
    if rows:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return stream.getvalue()
