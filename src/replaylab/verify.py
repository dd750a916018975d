"""`replaylab verify [RESULTS]`: every result built again, from the recordings and the code, in a
temporary folder, and compared with RESULTS file by file.

Results are disposable outputs: anything in them can be made again, so a file that differs from a
rebuild (a digit edited in a transcript, a verdict flipped in a per-run table, a judged batch
changed by hand) is found whatever the change. The rebuild is the workflow's own (Snakemake, with
this folder's Snakefile and configuration), in a folder where the sources are links: recordings/,
the run folders of the configuration, and the recordings of the configured campaign when all its
runs are recorded (the rebuild never records a run, nor reads a key). Compressed tables are
compared by their content (gzip stamps its own time). Hidden files (Snakemake's time stamps, a
temporary file) are not results.
"""

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from replaylab.campaign import Campaign
from replaylab.errors import InvalidInput

CONFIG = Path("config/config.yaml")


class CannotVerify(InvalidInput):
    """What stops the rebuild before it starts, or the rebuild's own failure: one line."""


def verify(results="results", cores="all", keep=False, note=print):
    """Rebuild into a temporary folder and compare: ([lines, one per file that differs], how many
    files were compared). Run in the project's folder (the command line goes there first).
    `note(text)` gets what was not compared and why, and the folder kept."""
    results = Path(results)
    if not results.is_dir():
        raise CannotVerify(f"{results}: not a folder of results")
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    work = Path(tempfile.mkdtemp(prefix="replaylab-verify-"))
    try:
        targets, sources = _sources(work, config, results, note)
        _rebuild(work, cores, targets)
        return _compare(work / "results", results, sources)
    finally:
        if keep:
            note(f"the rebuild is kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _link(target, source):
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(Path(source).resolve())


def _sources(work, config, results, note):
    """Link the sources into `work`; (the targets to build, the linked folders inside results/)."""
    _link(work / "config", "config")
    _link(work / "recordings", "recordings")
    linked = []
    for folder in config.get("run_folders") or []:
        if Path(folder).is_absolute() or not Path(folder).exists():
            continue  # the rebuild reads it where it is, or does without it as the build did
        _link(work / folder, folder)
        linked.append(Path(folder))
    targets = ["all"]  # the default target, and the campaign when it can be compared
    campaign = config.get("campaign") or {}
    recorded = results / "campaigns" / str(campaign.get("name")) / "recordings"
    if recorded.is_dir():
        missing = _not_recorded(campaign, config.get("batch_size", 500), recorded)
        if missing:
            note(f"{recorded.parent}: not compared: {missing} of its runs are not recorded (the rebuild records none)")
        else:
            _link(work / "results" / "campaigns" / campaign["name"] / "recordings", recorded)
            targets.append("campaign")
            linked.append(Path("results", "campaigns", campaign["name"], "recordings"))
    return targets, [Path(*p.parts[1:]) for p in linked if p.parts[0] == "results"]


def _not_recorded(settings, batch_size, recorded):
    plan = Campaign(settings, batch_size)
    return sum(1 for lesson in plan.lessons for name in plan.runs(lesson) if not (recorded / lesson / f"{name}.json").exists())


def _rebuild(work, cores, targets):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "SNAKEMAKE_PROFILE")}
    command = [sys.executable, "-m", "snakemake", *targets, "--snakefile", str(Path("Snakefile").resolve()),
               "--directory", str(work), "--cores", str(cores), "--quiet", "all"]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("Using workflow specific profile")]
        raise CannotVerify(f"the rebuild failed: {said[0] if said else f'snakemake exit code {done.returncode}'}")


def _files(folder, skip=()):
    """{path relative to folder: path} of the files under it, hidden ones and `skip` left out."""
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or any(relative.is_relative_to(s) for s in skip):
            continue
        if path.is_file():
            found[relative] = path
    return found


def _same(a, b):
    first, second = a.read_bytes(), b.read_bytes()
    if a.suffix == ".gz":
        try:
            return gzip.decompress(first) == gzip.decompress(second)
        except (OSError, EOFError):
            return False
    return first == second


def _compare(rebuilt, results, sources):
    """The lines of the files of `results` that differ from `rebuilt`, within what the rebuild
    made (a folder of results it does not make, such as results/live, is not compared)."""
    made = {Path(entry.name) for entry in rebuilt.iterdir() if not entry.name.startswith(".")}
    mine = _files(rebuilt, sources)
    theirs = {path: file for path, file in _files(results, sources).items() if _within(path, made, mine)}
    lines = []
    for path in sorted(set(mine) | set(theirs)):
        shown = results / path
        if path not in theirs:
            lines.append(f"{shown}: missing (a rebuild makes it)")
        elif path not in mine:
            lines.append(f"{shown}: not made by a rebuild")
        elif not _same(mine[path], theirs[path]):
            lines.append(f"{shown}: differs from a rebuild")
    return lines, len(mine)


def _within(path, made, mine):
    """Whether a file of RESULTS lies where the rebuild writes: a folder of a lesson or of the
    verified campaign, or a file of the rebuild's top level."""
    if len(path.parts) == 1:
        return path in made
    if path.parts[0] == "campaigns":
        return any(p.parts[:2] == path.parts[:2] for p in mine)
    return Path(path.parts[0]) in made
