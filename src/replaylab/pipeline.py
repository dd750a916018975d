"""The stages of a build, each reading files and writing its outputs atomically.

The Snakemake rules call these through thin scripts (inside Snakemake's process, one job at a
time), and `replaylab build` calls them in one process. They write files, so they live outside
the audited packages.
"""

import csv
import io
import json
import shutil
from contextlib import contextmanager
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.loop import MAX_CALLS_PER_MESSAGE
from replaylab.agents.replay import DEFAULT_TOLERANCE, ReplayMismatch, replay, rerecord_command
from replaylab.lessons import registry
from replaylab.lessons.scorecard import scorecard, scorecard_table, scores

RESULTS_FORMAT = "replaylab-results/1"


def write_json(path, data):
    recording_io.write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def read_json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def check_recording(path, lesson=None):
    """Load one recording and check that it belongs where it lies; `RecordingError` otherwise."""
    run = recording_io.load(path)
    if lesson is not None and run.lesson != lesson:
        raise recording_io.RecordingError(f"{path}: $.lesson: {run.lesson!r}, but the file lies in the folder of {lesson!r}")
    try:
        registry.lesson(run.lesson).variant(run.variant)
    except ValueError as error:
        raise recording_io.RecordingError(f"{path}: $.variant: {error}") from None
    return run


def _replayed(source, tolerance):
    run = check_recording(source)
    try:
        transcript = replay(run, registry.lesson(run.lesson).variant(run.variant), tolerance)
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


def load_transcripts(paths):
    return [recording_io.load(p) for p in transcript_files(paths)]


def judge_lesson(lesson, transcript_paths, target, tolerance):
    verdicts = registry.lesson(lesson).judge(load_transcripts(transcript_paths), tolerance)
    write_json(target, verdicts)
    return verdicts


def scan_lesson(lesson, target):
    data = registry.lesson(lesson).scans()
    write_json(target, data)
    return data


def exercise_lesson(lesson, target):
    data = registry.lesson(lesson).exercises()
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
        for name, v in registry.lesson(lesson).variants.items()
    }


def score_lesson(lesson, verdicts, scans):
    """Each judged run's score (right or what it got wrong) and the scorecard per model."""
    found = scores(verdicts, scans, registry.lesson(lesson).score)
    return found, scorecard(found)


def collect_results(lesson, transcript_paths, verdicts_path, scans_path, exercises_path, target, tolerance, scorecard_json, scorecard_csv):
    """Every number of the lesson in one file (`target`): full precision and the text as shown;
    the scorecard also on its own, as JSON and CSV."""
    runs = {}
    for run in load_transcripts(transcript_paths):
        runs[run.run] = {
            "variant": run.variant,
            "group": run.group,
            "label": run.label,
            "provenance": run.provenance,
            "rerecord": rerecord_command(run),
            "transcript": recording_io.to_data(run),
        }
    verdicts, scans = read_json(verdicts_path), read_json(scans_path)
    found, rows = score_lesson(lesson, verdicts, scans)
    data = {
        "format": RESULTS_FORMAT,
        "lesson": lesson,
        "tolerance": tolerance,
        "allowlists": allowlists(lesson),
        "runs": runs,
        "verdicts": verdicts,
        "right_answer": registry.lesson(lesson).right_answer,
        "scores": found,
        "scorecard": rows,
        "scans": scans,
        "exercises": read_json(exercises_path),
    }
    write_json(target, data)
    write_json(scorecard_json, {"lesson": lesson, "scorecard": rows, "scores": found})
    recording_io.write_atomic(scorecard_csv, csv_text(scorecard_table(rows)))
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
    tables = registry.lesson(lesson).tables(results)
    with whole_folder(folder) as building:
        for name, rows in tables.items():
            (building / f"{name}.csv").write_text(csv_text(rows), encoding="utf-8")


def figure_names(lesson):
    return list(registry.lesson(lesson).figures)


def write_figure(lesson, name, results, target):
    """Draw one figure of a lesson to PNG (written to a temporary name, then renamed).

    The figures are `matplotlib.figure.Figure` objects, not pyplot's: no GUI backend, no pyplot
    import, nothing to close."""
    figure = registry.lesson(lesson).figures[name](results)
    target = Path(target)
    temporary = target.with_name(f".{target.name}.tmp.png")
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


def write_page(lesson, results, target):
    text = registry.lesson(lesson).page(results)
    recording_io.write_atomic(target, text)


def write_index(results_paths, target):
    from replaylab import index_page

    text = index_page.index([read_json(p) for p in results_paths])
    recording_io.write_atomic(target, text)


def render_lesson(lesson, transcript_paths, verdicts_path, scans_path, exercises_path, folder, tolerance):
    """What a lesson shows, from its judged runs: results.json, the scorecard, tables, figures, page."""
    folder = Path(folder)
    results = collect_results(
        lesson, transcript_paths, verdicts_path, scans_path, exercises_path, folder / "results.json", tolerance,
        folder / "scorecard.json", folder / "scorecard.csv",
    )  # the data as written, used by every writer below (results.json is parsed by nobody here)
    write_tables(lesson, results, folder / "tables")
    write_figures(lesson, results, folder / "figures")
    write_page(lesson, results, folder / "index.md")


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


def build_lesson(lesson, sources, folder, tolerance, scans=None, exercises=None, progress=print):
    """Every result of one lesson from the given recordings; `scans` and `exercises` may be the
    files of an earlier build (they never depend on a recording)."""
    folder = Path(folder)
    replay_batch(sources, folder / "transcripts", tolerance)
    progress(f"{lesson}: replayed {len(sources)} runs")
    transcripts = [folder / "transcripts"]
    judge_lesson(lesson, transcripts, folder / "verdicts.json", tolerance)
    if scans is None:
        scans = folder / "scans.json"
        scan_lesson(lesson, scans)
    if exercises is None:
        exercises = folder / "exercises.json"
        exercise_lesson(lesson, exercises)
    render_lesson(lesson, transcripts, folder / "verdicts.json", scans, exercises, folder, tolerance)
    progress(f"{lesson}: results in {folder}")


def build(lessons=registry.NAMES, recordings="recordings", results="results", tolerance=DEFAULT_TOLERANCE, progress=print, run_folders=()):
    """Every result of every lesson in one process, without Snakemake (the same stages, in order)."""
    results = Path(results)
    for lesson in lessons:
        sources = list(find_runs(lesson, [recordings, *run_folders]).values())
        build_lesson(lesson, sources, results / lesson, tolerance, progress=progress)
    write_index([results / lesson / "results.json" for lesson in lessons], results / "index.md")
