"""The stages of a build, each reading files and writing its outputs atomically.

The Snakemake rules call these through thin scripts (inside Snakemake's process, one job at a
time), and `replaylab build` calls them in one process. They write files, so they live outside
the audited packages.
"""

import csv
import fcntl
import io
import json
import os
import shutil
import stat
import tempfile
import time
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE
from replaylab.agents.replay import DEFAULT_TOLERANCE, ReplayMismatch, replay, rerecord_command
from replaylab.inputs import DamagedResult, check_recording, find_runs, made_by, write_contents
from replaylab.lessons import LESSONS, lab, variant

RESULTS_FORMAT = "replaylab-results/1"
RUNS_TABLE = "runs.csv.gz"  # the per-run table of a lesson, next to its results.json


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


def lesson_module(lesson, part):
    """A part of a lesson package (judge, scans, exercises, tables, figures, page)."""
    lab(lesson)  # refuses an unknown lesson with a clear message
    return import_module(f"replaylab.lessons.{lesson}.{part}")


def _replayed(source, tolerance):
    run = check_recording(source)
    try:
        transcript = replay(run, variant(run.lesson, run.variant), tolerance)
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


def replay_batch(sources, folder, tolerance):
    """Replay several recordings into one folder of transcripts (one job for runs too small to be
    worth a job each). A mismatch names its run, and the folder is then not written."""
    with whole_folder(folder) as building:
        for source in sources:
            run = _replayed(source, tolerance)
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
            raise DamagedResult(f"{error}: delete {path.parent}, or run with --forcerun replay") from None
    if runs is not None:
        names = [run.run for run in found]
        missing, extra = sorted(set(runs) - set(names)), sorted(set(names) - set(runs))
        if missing or extra:
            where = recording_io.printable(str(paths[0] if len(paths) == 1 else Path(paths[0]).parent))
            what = f"no transcript of the run {missing[0]!r}" if missing else f"a transcript of {extra[0]!r}, which is not a run of the lesson"
            raise DamagedResult(f"{where}: {what} (changed after the build): delete it, or run with --forcerun replay")
    return found


def judge_lesson(lesson, transcript_paths, target, tolerance, runs=None):
    verdicts = lesson_module(lesson, "judge").judge(load_transcripts(transcript_paths, runs), tolerance)
    write_json(target, verdicts)
    return verdicts


def scan_lesson(lesson, target):
    data = lesson_module(lesson, "scans").scans()
    write_json(target, data)
    return data


def exercise_lesson(lesson, target):
    data = lesson_module(lesson, "exercises").exercises()
    write_json(target, data)
    return data


def allowlists(lesson):
    """The allowlists as the model sees them, printed from the code, per variant."""
    return {
        name: {
            "tools": v.allowlist().specs(),
            "budget": v.budget,
            "max_steps": v.max_steps,
            "max_calls_per_message": MAX_CALLS_PER_MESSAGE,
        }
        for name, v in lab(lesson).VARIANTS.items()
    }


def score_lesson(lesson, verdicts, scans, runs=None):
    """Each judged run's score (right or what it got wrong), the per-run table and the scorecard
    per model (a group-by of the table). `runs` are the runs of results.json."""
    from replaylab.lessons.scorecard import runs_table, scorecard, scores  # pandas: only where it tabulates

    found = scores(verdicts, scans, lesson_module(lesson, "judge").score, runs)
    table = runs_table(found, runs)
    return found, scorecard(table), table


def collect_results(lesson, transcript_paths, verdicts_path, scans_path, exercises_path, target, tolerance, scorecard_json, scorecard_csv, runs_table_path, names=None):
    """Every number of the lesson in one file (`target`): full precision and the text as shown;
    the scorecard also on its own, as JSON and CSV, and the per-run table as gzipped CSV.
    `names`: every run the lesson has, each of which must have its transcript."""
    from replaylab.lessons.scorecard import runs_table_bytes, scorecard_table

    runs = {}
    for run in load_transcripts(transcript_paths, names):
        runs[run.run] = {
            "variant": run.variant,
            "group": run.group,
            "label": run.label,
            "provenance": run.provenance,
            "rerecord": rerecord_command(run),
            "transcript": recording_io.to_data(run),
        }
    verdicts, scans = read_json(verdicts_path), read_json(scans_path)
    found, rows, table = score_lesson(lesson, verdicts, scans, runs)
    data = {
        "format": RESULTS_FORMAT,
        "lesson": lesson,
        "tolerance": tolerance,
        "allowlists": allowlists(lesson),
        "runs": runs,
        "verdicts": verdicts,
        "right_answer": lesson_module(lesson, "judge").RIGHT_ANSWER,
        "scores": found,
        "scorecard": rows,
        "scans": scans,
        "exercises": read_json(exercises_path),
    }
    write_json(target, data)
    write_json(scorecard_json, {"lesson": lesson, "scorecard": rows, "scores": found})
    recording_io.write_atomic(scorecard_csv, csv_text(scorecard_table(rows)))
    recording_io.write_atomic(runs_table_path, runs_table_bytes(table))
    return data


def csv_text(rows):
    stream = io.StringIO()
    if rows:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return stream.getvalue()


def write_tables(lesson, results, folder):
    """Every table of a lesson (from its results.json data) as CSV, into a folder that appears
    whole or not at all."""
    tables = lesson_module(lesson, "tables").tables(results)
    with whole_folder(folder) as building:
        for name, rows in tables.items():
            (building / f"{name}.csv").write_text(csv_text(rows), encoding="utf-8")


def figure_names(lesson):
    return list(lesson_module(lesson, "figures").FIGURES)


def write_figure(lesson, name, results, target):
    """Draw one figure of a lesson to PNG."""
    save_figure(lesson_module(lesson, "figures").FIGURES[name](results), target)


def save_figure(figure, target):
    """A figure as PNG (written to a temporary name, then renamed).

    The figures are `matplotlib.figure.Figure` objects, not pyplot's: no GUI backend, no pyplot
    import, nothing to close."""
    target = Path(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        figure.savefig(temporary, dpi=110, metadata={"Software": None})
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)


def write_figures(lesson, results, folder):
    """Every figure of a lesson, into a folder that appears whole or not at all."""
    with whole_folder(folder) as building:
        for name in figure_names(lesson):
            write_figure(lesson, name, results, building / f"{name}.png")


def write_markdown_and_html(target, text):
    """A page of the build twice, from one text: the Markdown `target` (…/index.md) and, next to
    it, the same page rendered to self-contained HTML (…/index.html), figures embedded. Every page
    writer calls this. Returns the seconds the HTML took (for the job's log)."""
    start = time.perf_counter()  # with the first import of markdown-it-py
    from replaylab.html_page import html_page

    target = Path(target)
    html = html_page(text, target.parent)
    seconds = time.perf_counter() - start
    recording_io.write_atomic(target, text)
    recording_io.write_atomic(target.with_suffix(".html"), html)
    return seconds


def write_page(lesson, results, target, index=None):
    """A lesson's page, as Markdown and HTML; `index`: the path from the page to the summary of
    every lesson, linked at the top and the bottom (None: no link)."""
    text = lesson_module(lesson, "page").page(results)
    if index is not None:
        link = f"[← All lessons]({index})"
        text = f"{link}\n\n{text}\n{link}\n"
    return write_markdown_and_html(target, text)


def write_index(results_paths, target):
    from replaylab import index_page

    text = index_page.index([read_json(p) for p in results_paths])
    return write_markdown_and_html(target, text)


def render_lesson(lesson, transcript_paths, verdicts_path, scans_path, exercises_path, folder, tolerance, runs=None, index="../index.md"):
    """What a lesson shows, from its judged runs: results.json, the scorecard, tables, figures, page
    (Markdown and HTML, linked to the summary `index`). Returns the seconds the HTML took. `runs`:
    the names of every run of the lesson, each of which must have its transcript."""
    folder = Path(folder)
    results = collect_results(
        lesson, transcript_paths, verdicts_path, scans_path, exercises_path, folder / "results.json", tolerance,
        folder / "scorecard.json", folder / "scorecard.csv", folder / RUNS_TABLE, runs,
    )  # the data as written, used by every writer below (results.json is parsed by nobody here)
    write_tables(lesson, results, folder / "tables")
    write_figures(lesson, results, folder / "figures")
    return write_page(lesson, results, folder / "index.md", index)


def build_lesson(lesson, sources, folder, tolerance, scans=None, exercises=None, progress=print, index="../index.md"):
    """Every result of one lesson from the given recordings; `scans` and `exercises` may be the
    files of an earlier build (they never depend on a recording). `index`: the summary page the
    lesson's page links to (None for a page that no summary lists)."""
    folder = Path(folder)
    runs = [Path(source).stem for source in sources]
    replay_batch(sources, folder / "transcripts", tolerance)
    progress(f"{lesson}: replayed {len(sources)} runs")
    transcripts = [folder / "transcripts"]
    judge_lesson(lesson, transcripts, folder / "verdicts.json", tolerance, runs)
    if scans is None:
        scans = folder / "scans.json"
        scan_lesson(lesson, scans)
    if exercises is None:
        exercises = folder / "exercises.json"
        exercise_lesson(lesson, exercises)
    render_lesson(lesson, transcripts, folder / "verdicts.json", scans, exercises, folder, tolerance, runs, index)
    progress(f"{lesson}: results in {folder}")


@contextmanager
def one_build_at_a_time(results):
    """Hold the lock of a results folder while a build writes it: a second `replaylab build` into
    the same folder waits for the first, since each stage reads what the one before wrote, and
    the other build's folder taking its place would pull it away mid-read. Released by the
    kernel when the process ends, however it ends."""
    results.mkdir(parents=True, exist_ok=True)
    with open(results / ".build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def build(lessons=LESSONS, recordings="recordings", results="results", tolerance=DEFAULT_TOLERANCE, progress=print, run_folders=()):
    """Every result of every lesson in one process, without Snakemake (the same stages, in order)."""
    results = Path(results)
    with one_build_at_a_time(results):
        for lesson in lessons:
            sources = list(find_runs(lesson, [recordings, *run_folders]).values())
            build_lesson(lesson, sources, results / lesson, tolerance, progress=progress)
        write_index([results / lesson / "results.json" for lesson in lessons], results / "index.md")
