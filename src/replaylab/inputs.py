"""The workflow's input checks, run while the DAG is built: before any job runs, every run is
found, named and loaded with the one reader of recordings, and the configuration values that
reach a job are checked. Each problem is one `InputError` line naming the file and the field.

`replaylab build` finds its runs here too, so that both ways of building see the same runs.
"""

import hashlib
import json
import math
import os
from pathlib import Path

import jsonschema

import replaylab.lessons
from replaylab.agents import recording as recording_io
from replaylab.agents.recording import RUN_NAME_MAX, RecordingError, check_run_name, check_text, describe, json_path, printable
from replaylab.lessons import UnknownLesson, registry


class InputError(ValueError):
    """A run or a configuration value that the workflow cannot use: one line, no traceback."""


class DamagedResult(ValueError):
    """A file or folder of results/ that the build wrote and that was changed since (by hand):
    one line naming it, and how to have it rebuilt."""


def variant_of(run, path):
    """The variant of its lesson that a recording names; `RecordingError` naming the file and the field."""
    where = printable(str(path))
    try:
        lesson = registry.lesson(run.lesson)
    except UnknownLesson as error:
        raise RecordingError(f"{where}: $.lesson: {error}") from None
    try:
        return lesson.variant(run.variant)
    except UnknownLesson as error:
        raise RecordingError(f"{where}: $.variant: {error}") from None


def check_recording(path, lesson=None):
    """Load one recording and check that it belongs where it lies; `RecordingError` otherwise."""
    run = recording_io.load(path)
    if lesson is not None and run.lesson != lesson:
        raise RecordingError(f"{printable(str(path))}: $.lesson: {run.lesson!r}, but the file lies in the folder of {lesson!r}")
    variant_of(run, path)
    return run


def find_runs(lesson, folders):
    """{run: recording} of a lesson, from <folder>/<lesson>/<run>.json of every folder, in order.

    Hidden files are not recordings. A file name that is not a run name, or a run name used twice,
    is a `RecordingError`: a transcript is named after its run, so one would replace the other.
    """
    runs = {}
    for folder in folders:
        for path in sorted(Path(folder, lesson).glob("*.json")):
            if path.name.startswith("."):
                continue
            check_run_name(path.stem, f"{printable(str(path))}: the file name")
            if path.stem in runs:
                raise RecordingError(
                    f"{path}: $.run: {path.stem!r} is also the run {runs[path.stem]}; "
                    "run names must be unique within a lesson"
                )
            runs[path.stem] = path
    return runs


def checking_code(lessons):
    """A hash of everything a recording is checked with: the schema, this module, the reader and the
    lessons' variants. A change to any of them (a stricter schema) checks every recording again."""
    digest = hashlib.sha256(recording_io.schema_text().encode("utf-8"))
    files = [recording_io.__file__, replaylab.lessons.__file__, registry.__file__, __file__]
    files += [registry.lesson(lesson).part("lab").__file__ for lesson in lessons]
    for name in files:
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()


def check_recordings(runs, cache_file, check_all=None):
    """Load and validate every recording of {lesson: {run: path}}; `RecordingError` for the first
    that fails. The ones that passed are remembered in `cache_file` by size and time, with their
    group and the digest of their content, under the hash of the checking code: unchanged files
    are not read again until that code changes. Returns ({lesson: {run: group}}, {lesson: {run:
    digest}}). `check_all`: [(group, digest), or (None, the error line)] of [(path, lesson)], the
    recordings to check (replaylab.workers.check_all: in worker processes when there are many);
    by default `checked` of each, here."""
    cache_file = Path(cache_file)
    key = checking_code(runs)
    try:
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
        checked = cached["checked"] if cached.get("key") == key else {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        checked = {}
    now, unknown = {}, []
    for lesson, found in runs.items():
        for path in found.values():
            stat = recording_io.regular_file(path)  # a pipe, a folder or a dangling link: refused here
            name = f"{lesson}:{path}"
            now[name] = [stat.st_size, stat.st_mtime_ns]
            known = checked.get(name) if isinstance(checked, dict) else None
            if isinstance(known, list) and len(known) == 4 and known[:2] == now[name]:
                now[name] = known
            else:
                unknown.append((str(path), lesson))
    results = check_all(unknown) if check_all else [checked_recording(item) for item in unknown]
    for (path, lesson), (group, digest) in zip(unknown, results):
        if group is None:
            raise RecordingError(digest)  # the first malformed recording, in the order they were found
        now[f"{lesson}:{path}"] += [group, digest]
    groups = {lesson: {run: now[f"{lesson}:{path}"][2] for run, path in found.items()} for lesson, found in runs.items()}
    digests = {lesson: {run: now[f"{lesson}:{path}"][3] for run, path in found.items()} for lesson, found in runs.items()}
    if now != checked:
        try:
            recording_io.write_atomic(cache_file, json.dumps({"key": key, "checked": now}))
        except OSError:
            pass  # a read-only working copy: check them all again next time
    return groups, digests


def checked_recording(item):
    """(group, digest of the content) of a recording (path, lesson), checked as the workflow checks
    it before anything runs; (None, the one-line error) when it is malformed."""
    path, lesson = item
    try:
        group = check_recording(path, lesson).group
    except RecordingError as error:
        return None, str(error)
    return group, hashlib.sha256(Path(path).read_bytes()).hexdigest()


def check_config(config, schema, source):
    """The workflow's configuration, checked against its schema (workflow/schemas/config.schema.yaml)
    and for what a schema cannot say: lessons replaylab has, a finite tolerance, and the names a
    `record` run would be saved under. `source` names where the configuration came from (files,
    --config). The first problem is one `InputError` line naming `source` and the field."""
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(config),
        key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))),
    )
    if errors:
        raise InputError(f"{source}: {json_path(errors[0].absolute_path)}: {describe(errors[0])}")
    for index, lesson in enumerate(config["lessons"]):
        if lesson not in registry.names():
            raise InputError(
                f"{source}: $.lessons[{index}]: {lesson!r} is not a lesson of replaylab; "
                f"the lessons are: {', '.join(registry.names())}"
            )
    if config["record_lesson"] not in config["lessons"]:
        raise InputError(
            f"{source}: $.record_lesson: {config['record_lesson']!r} is not one of the configured lessons "
            f"({', '.join(config['lessons'])})"
        )
    check_settings(config, source)


def check_settings(config, source):
    """The configuration values a job receives, beyond what the schema says: a finite tolerance, and
    the names a `record` run would be saved under (every variant's file name) and its model, before
    anything is recorded or paid for."""
    tolerance = config["tolerance"]
    if not math.isfinite(tolerance):
        raise InputError(f"{source}: $.tolerance: {tolerance} is not a finite number")
    record_run = config["record_run"]
    longest = max(len(f"{record_run}-{name}") for name in registry.lesson(config["record_lesson"]).variants)
    try:
        check_run_name(record_run, f"{source}: $.record_run")
        if longest > RUN_NAME_MAX:
            raise RecordingError(
                f"{source}: $.record_run: {len(record_run)} characters is too long: the files are named "
                f"<record_run>-<variant>.json, and a run name has at most {RUN_NAME_MAX} characters"
            )
        check_text(config["model"], f"{source}: $.model", 200)
    except RecordingError as error:
        raise InputError(str(error)) from None


# ---------------------------------------------------------------------------------------------
# The folders of results/ a job writes whole (replayed batches, tables, figures): each lists its
# files, so that a file removed or changed by hand is noticed before the build trusts the folder.

CONTENTS = ".contents"
MADE_BY = {"transcripts": "replay", "judged": "replay", "scans.json": "scan", "exercises.json": "scan"}


def made_by(path):
    """The rule that writes a file or folder of results/<lesson>/, or of a campaign's
    results/campaigns/<name>/<lesson>/ (what --forcerun needs)."""
    parts = Path(path).parts
    prefix = "campaign_" if "campaigns" in parts else ""
    for part in reversed(parts):
        if part in MADE_BY:
            return prefix + MADE_BY[part]
    return prefix + "render"


def _listing(folder):
    """{name: size} of a folder's files, but its list and Snakemake's time stamp of the folder."""
    return {
        p.name: p.lstat().st_size
        for p in sorted(Path(folder).iterdir())
        if p.name != CONTENTS and not p.name.startswith(".snakemake")
    }


def write_contents(folder):
    """Write the list of a folder's files (name: size) into the folder."""
    Path(folder, CONTENTS).write_text(json.dumps(_listing(folder), indent=0) + "\n", encoding="utf-8")


def check_folder(folder):
    """`DamagedResult` if a folder written whole by the build lost, gained or changed a file since.
    A folder without its list (written by an older replaylab) is taken as it is."""
    folder = Path(folder)
    try:
        listed = json.loads((folder / CONTENTS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        listed = None
    now = _listing(folder)
    if listed == now:
        return
    # only deleting it helps: this check runs before Snakemake reads --forcerun
    where, remedy = printable(str(folder)), "delete it (Snakemake builds it again when a job needs it)"
    if not isinstance(listed, dict):
        raise DamagedResult(f"{where}: its list of files ({CONTENTS}) was changed after the build: {remedy}")
    for name in sorted(set(listed) | set(now)):
        if name not in now:
            what = f"{name} was removed"
        elif name not in listed:
            what = f"{name} was added"
        elif listed[name] != now[name]:
            what = f"{name} was changed"
        else:
            continue
        raise DamagedResult(f"{where}: {printable(what)} after the build: {remedy}")


JSON_RESULTS = ("scans.json", "exercises.json", "results.json", "scorecard.json")


def check_json_ends(path):
    """`DamagedResult` if a JSON file the build wrote (an object, ending in a line break) was
    emptied or cut: its first and last bytes only, so that even a large file costs nothing."""
    with open(path, "rb") as stream:
        first = stream.read(1)
        stream.seek(max(0, stream.seek(0, os.SEEK_END) - 2))
        last = stream.read(2)
    if first != b"{" or last != b"}\n":
        raise DamagedResult(
            f"{printable(str(path))}: not the whole JSON file the build wrote (emptied or cut after the build): "
            "delete it (Snakemake builds it again when a job needs it)"
        )


def check_results(lessons, results="results"):
    """Check what the lessons' results hold before a job trusts it: the folders the build writes
    whole (check_folder) and the ends of its JSON files (check_json_ends); a batch's folder and
    verdicts, whatever the batch is named (a lesson's batch<i>of<n>, a campaign's runs<a>to<b>),
    but not the hidden ones a job writes before it puts them in place."""
    for lesson in lessons:
        base = Path(results, lesson)
        folders = [base / "tables", base / "figures", *sorted((base / "transcripts").glob("[!.]*"))]
        for folder in folders:
            if folder.is_dir():
                check_folder(folder)
        for path in [*(base / name for name in JSON_RESULTS), *sorted((base / "judged").glob("[!.]*.json"))]:
            if path.is_file():
                check_json_ends(path)
