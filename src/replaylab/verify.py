"""`replaylab verify [CAMPAIGN ...]`: every result built again, from the recordings and the code, in
a temporary folder, and compared with RESULTS file by file: the lessons, and every campaign of
RESULTS/campaigns/ (or those named).

Results are disposable outputs: anything in them can be made again, so a file that differs from a
rebuild (a digit edited in a transcript, a verdict flipped in a per-run table, a judged batch
changed by hand, a count of a campaign's scorecard) is found whatever the change. The rebuild is
the workflow's own (Snakemake, with the project's Snakefile and configuration), in a folder where
the sources are links: recordings/, the run folders, each campaign's recordings (the rebuild never
records a run, nor reads a key).

It is built with the settings the results were built with, as they record them, so that a
difference is one a rebuild would change: each transcript names the recording it replayed (hence
its run folder, e.g. one given with `--config run_folders=...`) and the tolerance, and each
lesson's batches are named by their number (hence a batch_size that gives as many); a campaign's
settings are its campaign.yaml (which `replaylab campaign` writes) or else the configured
campaign's. The lessons are rebuilt by the targets that built them: `all` when the summary is
there, else each lesson whose page is there, none when only campaigns were made. A campaign whose
settings are not on disk, or whose runs are not all recorded, is not compared, and a line says so. Compressed tables are compared by their content (gzip stamps its own
time). Hidden files (Snakemake's time stamps, a temporary file) are not results.
"""

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab import settings
from replaylab.batches import batch_count
from replaylab.campaign import Campaign
from replaylab.errors import InvalidInput


class CannotVerify(InvalidInput):
    """What stops the rebuild before it starts, or the rebuild's own failure: one line."""


@dataclass
class Build:
    """One Snakemake run of the rebuild: its targets, its --configfile and its --config values."""

    targets: list[str]
    configfile: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)
    after_summary: bool = False  # a campaign compared when results/index.md was there (its page links it)


def verify(project: str | Path, results: str | Path | None = None, campaigns: Sequence[str] = (), cores: int | str = "all",
           keep: bool = False, note: Callable[[str], object] = print) -> tuple[list[str], int]:
    """Rebuild into a temporary folder and compare: ([lines, one per file that differs], how many
    files were compared). `project`: the project's folder, whose Snakefile, configuration and
    sources the rebuild uses, wherever the command was started; `results`: the folder of results
    as the user gave it (default the project's results/); `campaigns`: the campaigns to compare
    (default every one found). `note(text)` gets what was not compared and why, and the folder kept."""
    project = Path(project).resolve()
    label = Path(results) if results else Path("results")
    folder = Path(results).resolve() if results else project / "results"
    if not folder.is_dir():
        raise CannotVerify(f"{label}: not a folder of results")
    configured = settings.load(project)  # checked as a run of the workflow checks it: one line when it is not
    found = on_disk(folder, label, campaigns)
    work = Path(tempfile.mkdtemp(prefix="replaylab-verify-"))
    try:
        _link(work / "config", project / "config")
        _link(work / "recordings", project / "recordings")
        lessons, skip = _lessons(configured, folder, work, note)
        builds, skipped = _campaigns(configured, folder, label, work, found, campaigns, lessons.values, note)
        # in the order they were built: a campaign's page links the summary only when it was there
        # then, and the summary lists the campaigns there when it was written
        later = [build for build in builds if build.after_summary]
        for build in [*(b for b in builds if not b.after_summary), lessons, *later, *([lessons] if later else [])]:
            if build.targets:
                _rebuild(work, project, cores, build)
        return _compare(work / "results", folder, label, skip + skipped)
    finally:
        if keep:
            note(f"the rebuild is kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _link(target: Path, source: str | Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(Path(source).resolve())


def _hard_link(source: str | Path, target: str | Path) -> None:
    """A file copied as a hard link where it can be (read only by the rebuild), else copied."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


# ---------------------------------------------------------------------------------------------
# What the results were built with


def _replayed(line: str) -> dict[str, Any] | None:
    """What a transcript (a line of its batch's file) says of its replay, {"from": its recording,
    "tolerance": ...}, or None."""
    try:
        found = json.loads(line).get("replayed")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def _transcripts(path: Path) -> list[str]:
    """The lines of a batch's file of transcripts (transcripts/<batch>.jsonl), one per run."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return []


def _last_build(lesson: str | Path) -> tuple[list[str], int | None]:
    """The transcripts of a lesson's results folder that its last build wrote, and its number of
    batches (None for a campaign's blocks): the batches of one number (batch<i>of<n>) that hold the
    most runs, the newest of equals. A build with another number of batches leaves those it wrote
    before (Snakemake removes only what it remakes)."""
    by_number: dict[int | None, list[Path]] = {}
    for path in Path(lesson).glob("transcripts/*.jsonl"):
        if path.name.startswith("."):
            continue  # a temporary file, not a result
        number = path.stem.rpartition("of")[2]
        by_number.setdefault(int(number) if number.isdigit() else None, []).append(path)
    if not by_number:
        return [], None
    lines = {number: [line for path in sorted(paths) for line in _transcripts(path)] for number, paths in by_number.items()}
    number = max(by_number, key=lambda n: (len(lines[n]), max(p.stat().st_mtime for p in by_number[n])))
    return lines[number], number


def recorded(lesson_folders: Iterable[str | Path]) -> tuple[float | None, list[str], dict[str | Path, tuple[int, int]]]:
    """(the tolerance, or None when the transcripts do not agree on one; the folders of the
    recordings they replayed, as the build named them, in order; {folder: (runs, batches)}) of
    the transcripts of the lessons' result folders `lesson_folders` (their last build's)."""
    tolerances: set[float]
    sources: dict[str, None]
    counts: dict[str | Path, tuple[int, int]]
    tolerances, sources, counts = set(), {}, {}
    for lesson in lesson_folders:
        transcripts, number = _last_build(lesson)
        if number is not None:
            counts[lesson] = (len(transcripts), number)
        for line in transcripts:
            replayed = _replayed(line)
            if replayed is None:
                continue
            if isinstance(replayed.get("tolerance"), (int, float)):
                tolerances.add(float(replayed["tolerance"]))
            if isinstance(replayed.get("from"), str):
                sources.setdefault(str(Path(replayed["from"]).parent.parent))  # <folder>/<lesson>/<run>.json
    return (tolerances.pop() if len(tolerances) == 1 else None), list(sources), counts


def batch_size(configured: int, counts: Mapping[Any, tuple[int, int]]) -> int | None:
    """The configured batch_size when it gives each lesson as many batches as its results have
    ({lesson: (runs, batches)}), else the smallest that does; None when none does."""
    def fits(size: int) -> bool:
        return all(batch_count(runs, size) == batches for runs, batches in counts.values())

    if fits(configured):
        return configured
    smallest = max((math.ceil(runs / batches) for runs, batches in counts.values()), default=1)
    return smallest if fits(smallest) else None


def _lessons(configured: settings.Settings, results: Path, work: Path,
             note: Callable[[str], object]) -> tuple[Build, list[Path]]:
    """The rebuild of the lessons with the settings their results record, its run folders linked
    into `work`; and the linked folders inside RESULTS (sources, not compared)."""
    tolerance, sources, counts = recorded([results / lesson for lesson in configured.lessons])
    folders: list[str]
    skip: list[Path]
    folders, skip = [], []
    for name in sources:
        if Path(name) == Path("recordings"):
            continue
        path = configured.folder / name
        if not path.is_dir():
            note(f"{name}: a run folder of the build, not there any more: its runs are not rebuilt")
            continue
        if Path(name).is_absolute() or ".." in Path(name).parts:
            note(f"{name}: a run folder outside the project, read where it is: the files that name its runs may differ")
            folders.append(str(path.resolve()))
            continue
        _link(work / name, path)
        folders.append(name)
        if Path(name).parts[0] == "results":
            skip.append(Path(*Path(name).parts[1:]))
    values: dict[str, Any] = {"run_folders": folders}
    if tolerance is not None:
        values["tolerance"] = tolerance
    size = batch_size(configured.batch_size, counts)
    if size is not None:
        values["batch_size"] = size
    config = configured.config()
    built = {key: value for key, value in values.items() if value != config[key]}
    if built:
        note("the lessons were built with " + ", ".join(f"{key} {json.dumps(value)}" for key, value in built.items())
             + ", not as configured: rebuilt with the same")
    return Build(_built(configured.lessons, results, note), values=values), skip


def _built(lessons: Iterable[str], results: Path, note: Callable[[str], object]) -> list[str]:
    """The targets that made the lessons' results: `all` when its summary is there, else each
    lesson whose page is there (`snakemake LESSON`); none when no lesson was built (a campaign
    alone makes a few files of a lesson, which its own rebuild makes again)."""
    if (results / "index.md").is_file():
        return ["all"]
    built = [lesson for lesson in lessons if (results / lesson / "index.md").is_file()]
    if not built:
        note("no lesson was built (results/index.md is not there): the campaigns alone are compared")
    return built


# ---------------------------------------------------------------------------------------------
# The campaigns


def on_disk(results: Path, label: Path, names: Iterable[str] = ()) -> list[str]:
    """The campaigns of RESULTS/campaigns/, by name; one line when one of `names` is not there."""
    root = results / "campaigns"
    found = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
    unknown = [name for name in names if name not in found]
    if unknown:
        raise CannotVerify(f"{label / 'campaigns' / unknown[0]}: no such campaign; "
                           f"{'the campaigns are: ' + ', '.join(found) if found else 'there is none'}")
    return found


def _campaigns(configured: settings.Settings, results: Path, label: Path, work: Path, found: Iterable[str],
               names: Collection[str], values: dict[str, Any], note: Callable[[str], object]) -> tuple[list[Build], list[Path]]:
    """The rebuilds of the campaigns to compare (`names`, or every one `found`), their sources
    linked into `work`; and the folders inside RESULTS not compared: the sources, and the campaigns
    that are not rebuilt (their pages copied, for the summary and the site to show as they did)."""
    root = results / "campaigns"
    builds: list[Build]
    skip: list[Path]
    builds, skip = [], []
    for name in found:
        folder, shown = root / name, label / "campaigns" / name
        build: Build | None
        problem: str | None
        build = problem = None
        if not names or name in names:
            build, problem = _campaign(configured, folder, name, values)
        if problem and names:
            raise CannotVerify(f"{shown}: cannot be compared: {problem}")
        if problem:
            note(f"{shown}: not compared: {problem}")
        if build is None:  # its pages as they are, for the summary and the site to show
            shutil.copytree(folder, work / "results" / "campaigns" / name, copy_function=_hard_link,
                            ignore=lambda where, names, top=folder: ["recordings"] if Path(where) == top else [])
            skip.append(Path("campaigns", name))
            continue
        _link(work / "results" / "campaigns" / name / "recordings", folder / "recordings")
        skip.append(Path("campaigns", name, "recordings"))
        if build.configfile:
            _link(work / "results" / "campaigns" / name / "campaign.yaml", build.configfile)
            build.configfile = work / "results" / "campaigns" / name / "campaign.yaml"
            skip.append(Path("campaigns", name, "campaign.yaml"))
        builds.append(build)
    return builds, skip


def _campaign(configured: settings.Settings, folder: Path, name: str, values: dict[str, Any]) -> tuple[Build | None, str | None]:
    """(the rebuild of the campaign in `folder`, None) or (None, why it cannot be rebuilt)."""
    written = folder / "campaign.yaml"
    if written.is_file():  # as `replaylab campaign` ran it: --configfile campaign.yaml
        try:
            found = settings.load(configured.folder, [written])
        except settings.InputError as error:
            return None, str(error)
    elif configured.campaign.name == name:
        found, written = configured, None
    else:
        return None, (f"its settings are not on disk (no campaign.yaml, which `replaylab campaign` writes) and it is not "
                      f"the configured campaign ({configured.campaign.name})")
    if found.campaign.name != name:
        assert written is not None  # the configured campaign has its name
        return None, f"{written.name}: names the campaign {found.campaign.name!r}"
    if not (folder / "recordings").is_dir():
        return None, "it has no recordings"
    try:
        plan = Campaign(found.campaign.section(), found.batch_size)
        missing = sum(1 for lesson in plan.lessons for run in plan.runs(lesson)
                      if not (folder / "recordings" / lesson / f"{run}.json").exists())
    except InvalidInput as error:
        return None, str(error)
    if missing:
        return None, f"{missing} of its runs are not recorded (the rebuild records none)"
    tolerance, _, _ = recorded([folder / lesson for lesson in plan.lessons])
    try:
        linked = "](../../index.md)" in (folder / "index.md").read_text(encoding="utf-8")
    except OSError:
        linked = False
    build = Build(["campaign"], written, {"run_folders": values["run_folders"]}, linked)
    if tolerance is not None and tolerance != found.tolerance:
        build.values["tolerance"] = tolerance
    return build, None


# ---------------------------------------------------------------------------------------------
# The rebuild, and the comparison


def _rebuild(work: Path, project: Path, cores: int | str, build: Build) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "SNAKEMAKE_PROFILE")}
    command = [sys.executable, "-m", "snakemake", *build.targets, "--snakefile", str(project / "Snakefile"),
               "--directory", str(work), "--cores", str(cores), "--quiet", "all"]
    if build.configfile:
        command += ["--configfile", str(build.configfile)]
    if build.values:
        command += ["--config", *(f"{key}={json.dumps(value)}" for key, value in build.values.items())]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("Using workflow specific profile")]
        raise CannotVerify(f"the rebuild failed: {said[0] if said else f'snakemake exit code {done.returncode}'}")


def _files(folder: str | Path, skip: Collection[Path] = ()) -> dict[Path, Path]:
    """{path relative to folder: path} of the files under it, hidden ones and `skip` left out (a
    linked folder is not followed)."""
    found: dict[Path, Path] = {}
    for top, folders, files in os.walk(folder):
        here = Path(top).relative_to(folder)
        folders[:] = sorted(f for f in folders if not f.startswith(".") and here / f not in skip)
        for name in sorted(files):
            relative = here / name
            if not name.startswith(".") and relative not in skip:
                found[relative] = Path(top, name)
    return found


def _same(a: Path, b: Path) -> bool:
    first, second = a.read_bytes(), b.read_bytes()
    if a.suffix == ".gz":
        try:
            return gzip.decompress(first) == gzip.decompress(second)
        except (OSError, EOFError):
            return False
    return first == second


def _compare(rebuilt: Path, results: Path, label: Path, skip: Collection[Path]) -> tuple[list[str], int]:
    """The lines of the files of `results` that differ from `rebuilt`, within what the rebuild
    made (a folder of results it does not make, such as results/live, is not compared), each named
    from `label`; and how many files were compared."""
    made = {Path(entry.name) for entry in rebuilt.iterdir() if not entry.name.startswith(".")}
    mine = _files(rebuilt, skip)
    theirs = {path: file for path, file in _files(results, skip).items() if _within(path, made, mine)}
    lines = []
    for path in sorted(set(mine) | set(theirs)):
        shown = label / path
        if path not in theirs:
            lines.append(f"{shown}: missing (a rebuild makes it)")
        elif path not in mine:
            lines.append(f"{shown}: not made by a rebuild")
        elif not _same(mine[path], theirs[path]):
            lines.append(f"{shown}: differs from a rebuild")
    return lines, len(mine)


def _within(path: Path, made: Collection[Path], mine: Iterable[Path]) -> bool:
    """Whether a file of RESULTS lies where the rebuild writes: a folder of a lesson or of a
    compared campaign, or a file of the rebuild's top level."""
    if len(path.parts) == 1:
        return path in made
    if path.parts[0] == "campaigns":
        return any(p.parts[:2] == path.parts[:2] for p in mine)
    return Path(path.parts[0]) in made
