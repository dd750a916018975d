"""The workflow's input checks, run while the DAG is built, before any job runs: every run is found
and named, and read for its digest and group. A dry run (`snakemake -n`) also validates every
recording with the one reader of recordings; a run leaves that to the replay job of each batch,
which validates each recording it replays (the configuration's checks are in
replaylab.configuration). Each problem is one line naming the file and the field.

`replaylab build` finds its runs here too, so that both ways of building see the same runs.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import replaylab.lessons
from replaylab.agents import recording as recording_io
from replaylab.agents.recording import RecordingError, check_run_name, printable
from replaylab.lessons import UnknownLesson, registry
from replaylab.errors import InvalidInput


class DamagedResult(InvalidInput):
    """A file of results/ that a job reads and that is not what the build wrote (removed, emptied,
    cut): one line naming it, and how to have it rebuilt. `replaylab verify` finds any other change."""


def variant_of(run: recording_io.Recording, path: str | Path) -> replaylab.lessons.Variant:
    """The variant of its lesson (of its instance) that a recording names; `RecordingError` naming the
    file and the field."""
    where = printable(str(path))
    try:
        lesson = registry.lesson(run.lesson)
    except UnknownLesson as error:
        raise RecordingError(f"{where}: $.lesson: {error}") from None
    if run.instance is not None:
        try:
            lesson.instance(run.instance)
        except UnknownLesson as error:
            raise RecordingError(f"{where}: $.instance: {error}") from None
    try:
        return lesson.variant_of(run)
    except UnknownLesson as error:
        raise RecordingError(f"{where}: $.variant: {error}") from None


def check_recording(path: str | Path, lesson: str | None = None) -> recording_io.Recording:
    """Load one recording and check that it belongs where it lies; `RecordingError` otherwise."""
    run = recording_io.load(path)
    if lesson is not None and run.lesson != lesson:
        raise RecordingError(f"{printable(str(path))}: $.lesson: {run.lesson!r}, but the file lies in the folder of {lesson!r}")
    variant_of(run, path)
    return run


def find_runs(lesson: str, folders: Iterable[str | Path]) -> dict[str, Path]:
    """{run: recording} of a lesson, from <folder>/<lesson>/<run>.json of every folder, in order.

    Hidden files are not recordings. A file name that is not a run name, or a run name used twice,
    is a `RecordingError`: a transcript is named after its run, so one would replace the other.
    """
    runs: dict[str, Path] = {}
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


def checking_code(lessons: Iterable[str]) -> str:
    """A hash of everything a recording is checked with: the schema, this module, the reader and the
    lessons' variants. A change to any of them (a stricter schema) checks every recording again."""
    digest = hashlib.sha256(recording_io.schema_text().encode("utf-8"))
    files = [recording_io.__file__, replaylab.lessons.__file__, registry.__file__, __file__]
    files += [cast(str, registry.lesson(lesson).part("lab").__file__) for lesson in lessons]
    for name in files:
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()


def check_recordings(runs: Mapping[str, Mapping[str, str | Path]], cache_file: str | Path,
                     validate: bool = True) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Read each recording of {lesson: {run: path}} that `cache_file` does not know (with
    `validate`, does not know as validated) for its group and digest, and with `validate` load and
    validate it; `RecordingError` for the first that fails. Returns ({lesson: {run: group}},
    {lesson: {run: digest of its content}}).

    The ones that passed are remembered in `cache_file` by size and time, with their group and
    digest, under the hash of the checking code: unchanged files are not read again until that code
    changes. With `validate` False (a run, whose replay jobs check each recording they replay, side
    by side), a recording not seen before is only read, for its digest and its group; it is
    validated by the first dry run (`snakemake -n`), which validates every recording."""
    cache_file = Path(cache_file)
    key = checking_code(runs)
    try:
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
        checked = cached["checked"] if cached.get("key") == key else {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        checked = {}
    now: dict[str, list[Any]]
    unknown: list[tuple[str, str]]
    now, unknown = {}, []
    for lesson, found in runs.items():
        for path in found.values():
            stat = recording_io.regular_file(path)  # a pipe, a folder or a dangling link: refused here
            name = f"{lesson}:{path}"
            now[name] = [stat.st_size, stat.st_mtime_ns]
            known = checked.get(name) if isinstance(checked, dict) else None
            if isinstance(known, list) and len(known) == 5 and known[:2] == now[name] and (known[4] or not validate):
                now[name] = known
            else:
                unknown.append((str(path), lesson))
    look = checked_recording if validate else seen_recording
    for path, lesson in unknown:
        group, digest = look((path, lesson))
        if group is None:
            raise RecordingError(digest)  # the first malformed recording, in the order they were found
        now[f"{lesson}:{path}"] += [group, digest, validate]
    groups = {lesson: {run: now[f"{lesson}:{path}"][2] for run, path in found.items()} for lesson, found in runs.items()}
    digests = {lesson: {run: now[f"{lesson}:{path}"][3] for run, path in found.items()} for lesson, found in runs.items()}
    if now != checked:
        try:
            recording_io.write_atomic(cache_file, json.dumps({"key": key, "checked": now}))
        except OSError:
            pass  # a read-only working copy: check them all again next time
    return groups, digests


def checked_recording(item: tuple[str | Path, str | None]) -> tuple[str | None, str]:
    """(group, digest of the content) of a recording (path, lesson), checked as the workflow checks
    it before anything runs; (None, the one-line error) when it is malformed."""
    path, lesson = item
    try:
        group = check_recording(path, lesson).group
    except RecordingError as error:
        return None, str(error)
    return group, hashlib.sha256(Path(path).read_bytes()).hexdigest()


def seen_recording(item: tuple[str | Path, str | None]) -> tuple[str | None, str]:
    """(group, digest of the content) of a recording read but not validated (its replay job
    validates it); what cannot be read that way is checked in full, for its one-line error."""
    path, _ = item
    try:
        text = recording_io.read(path)
        group = json.loads(text).get("group")
    except (RecordingError, ValueError, AttributeError, RecursionError):
        group = None
    if not isinstance(group, str):
        return checked_recording(item)
    return group, hashlib.sha256(text.encode("utf-8")).hexdigest()


MADE_BY = {"transcripts": "replay", "judged": "replay", "scans.json": "scan", "exercises.json": "scan"}


def made_by(path: str | Path) -> str:
    """The rule that writes a file or folder of results/<lesson>/, or of a campaign's
    results/campaigns/<name>/<lesson>/ (what --forcerun needs)."""
    parts = Path(path).parts
    prefix = "campaign_" if "campaigns" in parts else ""
    for part in reversed(parts):
        if part in MADE_BY:
            return prefix + MADE_BY[part]
    return prefix + "render"
