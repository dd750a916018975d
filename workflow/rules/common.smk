"""Helpers of the workflow, and no rules: most of them run while Snakemake builds the DAG.

- the lessons of the configuration and their recordings, each loaded and validated now, so that a
  malformed recording or configuration stops even a dry run with one line naming the file, the
  JSON path of the field and what is wrong;
- the `code=` inputs of every job: the files of src/replaylab that its script really imports,
  from the import graph (stdlib `modulefinder`, which reads the code without running it), so that
  a change in the library reruns exactly the jobs that use it;
- the file lists of the target rules;
- `run_job`, which runs a job's entry point in scripts/ inside Snakemake's process.
"""

import hashlib
import importlib.util
import io
import json
import modulefinder
import os
import sys
import threading
import time
import traceback
from functools import cache
from pathlib import Path

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

ROOT = Path(workflow.basedir)  # the folder of the top-level Snakefile
SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
SCRIPTS = ROOT / "scripts"
RULES = ROOT / "workflow" / "rules"
# validate() reads a schema path relative to the file that calls it: this one.
CONFIG_SCHEMA = "../schemas/config.schema.yaml"

# The workflow's own library comes first, before any installed copy (the rule scripts do the same).
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab import pipeline  # noqa: E402
from replaylab.agents.recording import RecordingError, json_path  # noqa: E402
from replaylab.agents.replay import ReplayMismatch  # noqa: E402
from replaylab.lessons import UnknownLesson, registry  # noqa: E402

KNOWN_LESSONS = registry.names()


def stop(message):
    """End the run while the DAG is built: `message` alone on stderr, no traceback, exit code 1."""
    print(message, file=sys.stderr)
    sys.exit(1)


def relative(path):
    """A path as the rules name files: relative to the working directory (the project's root)."""
    return os.path.relpath(path)


# ---------------------------------------------------------------------------------------------
# Configuration


def config_files():
    """Where the configuration came from, to name it in an error."""
    names = [relative(f) for f in workflow.configfiles]
    if workflow.config_settings.config:
        names.append("--config")
    return " + ".join(names) or "the configuration"


def check_config():
    """Validate `config` with snakemake.utils.validate; on failure, one line with the field's path."""
    try:
        validate(config, schema=CONFIG_SCHEMA)
    except WorkflowError:
        with open(RULES / CONFIG_SCHEMA, encoding="utf-8") as stream:
            schema = yaml.safe_load(stream)
        errors = sorted(
            jsonschema.Draft202012Validator(schema).iter_errors(config),
            key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))),
        )
        if not errors:
            raise
        error = errors[0]
        stop(f"{config_files()}: {json_path(error.absolute_path)}: {error.message}")
    for index, lesson in enumerate(config["lessons"]):
        if lesson not in KNOWN_LESSONS:
            stop(
                f"{config_files()}: $.lessons[{index}]: {lesson!r} is not a lesson of replaylab; "
                f"the lessons are: {', '.join(KNOWN_LESSONS)}"
            )


check_config()
LESSONS = tuple(config["lessons"])
TOLERANCE = config["tolerance"]


# ---------------------------------------------------------------------------------------------
# Recordings: found now, each loaded and validated now


RUN_FOLDERS = ("recordings", *config["run_folders"])
BATCH_SIZE = config["batch_size"]


def find_runs(lesson):
    """{run: recording} of a lesson in every run folder (pipeline.find_runs), paths as rules name
    them; a run name used twice stops the run."""
    try:
        found = pipeline.find_runs(lesson, RUN_FOLDERS)
    except RecordingError as error:
        stop(str(error))
    return {run: relative(path) for run, path in found.items()}


def check_recordings(runs):
    """Load and validate every recording; remember the ones that passed (by size and time)."""
    cache_file = Path(".snakemake/replaylab/checked-recordings.json")
    try:
        checked = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        checked = {}
    now = {}
    for lesson, found in runs.items():
        for path in found.values():
            stat = Path(path).stat()
            key = f"{lesson}:{path}"
            stamp = [stat.st_size, stat.st_mtime_ns]
            if checked.get(key) != stamp:
                try:
                    pipeline.check_recording(path, lesson)
                except RecordingError as error:
                    stop(str(error))
            now[key] = stamp
    if now != checked:
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            temporary = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(now), encoding="utf-8")
            temporary.replace(cache_file)
        except OSError:
            pass  # a read-only working copy: check them all again next time


def batches(lesson):
    """{batch: [recordings]}: runs are replayed in batches of about BATCH_SIZE, so that many small
    runs do not cost one job each. A run's batch depends on its name only (and on the number of
    batches, which doubles as the lesson grows), so changing one recording reruns its batch only.
    """
    names = sorted(RUNS[lesson])
    count = 1
    while count * BATCH_SIZE < len(names):
        count *= 2
    found = {}
    for run in names:
        index = int(hashlib.sha256(run.encode()).hexdigest()[:8], 16) % count
        found.setdefault(f"batch{index}of{count}", []).append(RUNS[lesson][run])
    return dict(sorted(found.items()))


def variants_of(lesson):
    return list(registry.lesson(lesson).variants)


def record_variant(wildcards):
    """The variant of a new run's file <run>-<variant>.json."""
    variant = wildcards.name.rsplit("-", 1)[-1]
    if variant not in variants_of(wildcards.lesson):
        stop(
            f"results/live/{wildcards.lesson}/{wildcards.name}.json: the name must end in -<variant>, one of {', '.join(variants_of(wildcards.lesson))}"
        )
    return variant


def live_recordings(wildcards):
    """The files of a new run: one per variant of its lesson."""
    return [
        f"results/live/{wildcards.lesson}/{wildcards.run}-{v}.json"
        for v in variants_of(wildcards.lesson)
    ]


def python_of_this_venv():
    """The python of Snakemake's own venv, named the same however Snakemake was started (`snakemake` runs
    .venv/bin/python3.11, `python -m snakemake` .venv/bin/python): it is a rule parameter, and a
    changed parameter would rerun every job."""
    candidate = Path(sys.prefix) / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


PYTHON = python_of_this_venv()
if config["record_lesson"] not in LESSONS:
    stop(
        f"{config_files()}: $.record_lesson: {config['record_lesson']!r} is not one of the configured lessons ({', '.join(LESSONS)})"
    )

RUNS = {lesson: find_runs(lesson) for lesson in LESSONS}
check_recordings(RUNS)
BATCHES = {lesson: batches(lesson) for lesson in LESSONS}


wildcard_constraints:
    lesson="|".join(LESSONS),
    run=r"[^/.][^/]*",
    batch=r"batch[0-9]+of[0-9]+",
    name=r"[A-Za-z0-9_-]+",


# ---------------------------------------------------------------------------------------------
# The code each job imports


class ImportGraph(modulefinder.ModuleFinder):
    """A ModuleFinder that also records which module imports which."""

    def __init__(self, path):
        super().__init__(path=path)
        self.edges = {}
        self._loading = []

    def load_module(self, fqname, fp, pathname, file_info):
        self._loading.append(fqname)
        try:
            return super().load_module(fqname, fp, pathname, file_info)
        finally:
            self._loading.pop()

    def import_module(self, partname, fqname, parent):
        found = super().import_module(partname, fqname, parent)
        if found is not None and self._loading:
            self.edges.setdefault(self._loading[-1], set()).add(found.__name__)
        return found

    def ensure_fromlist(self, m, fromlist, recursive=0):
        # `from package import submodule` skips import_module once the submodule is known.
        super().ensure_fromlist(m, fromlist, recursive)
        if self._loading:
            for sub in fromlist:
                found = self.modules.get(f"{m.__name__}.{sub}")
                if found is not None:
                    self.edges.setdefault(self._loading[-1], set()).add(found.__name__)


def source_files():
    """Every Python file the graph is made of: the library and the rule scripts."""
    return sorted(PACKAGE.rglob("*.py")) + sorted(SCRIPTS.glob("*.py"))


def lesson_parts():
    """Module names of every lesson's parts, imported by name in pipeline.lesson_module."""
    return sorted(
        f"replaylab.lessons.{path.parent.name}.{path.stem}"
        for path in PACKAGE.glob("lessons/*/*.py")
        if path.stem != "__init__"
    )


def scan_sources(finder):
    """Read every rule script, and every lesson part (imported by name, so unseen from a script)."""
    for script in sorted(SCRIPTS.glob("*.py")):
        with io.open_code(str(script)) as stream:
            finder.load_module(
                f"script:{script.stem}",
                stream,
                str(script),
                ("", "rb", modulefinder._PY_SOURCE),
            )
    for name in lesson_parts():
        try:
            finder.import_hook(name)
        except ImportError:
            pass


def build_import_graph():
    """{module: [modules it imports]} and {module: file} for the scripts and the lessons' parts.

    Only files under src/replaylab and scripts/ are read: the search path holds nothing else, so
    numpy, matplotlib and the standard library are never followed.
    """
    finder = ImportGraph([str(SCRIPTS), str(SRC)])
    try:
        scan_sources(finder)
    except SyntaxError as error:
        stop(f"{relative(error.filename)}, line {error.lineno}: {error.msg}")
    keep = (PACKAGE.resolve(), SCRIPTS.resolve())
    files = {}
    for name, found in finder.modules.items():
        if found.__file__ and not name.startswith("script:"):
            path = Path(found.__file__).resolve()
            if any(path.is_relative_to(folder) for folder in keep):
                files[name] = str(path.relative_to(ROOT.resolve()))
    edges = {name: sorted(targets) for name, targets in finder.edges.items()}
    return {"edges": edges, "files": files}


def fingerprint():
    """A hash of the contents of every source file and of this file: the cache's key."""
    digest = hashlib.sha256()
    for path in source_files() + [RULES / "common.smk"]:
        content = path.read_bytes()
        digest.update(f"{path.relative_to(ROOT)}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


@cache
def import_graph():
    """The import graph, cached in .snakemake/replaylab/ under the hash of the sources."""
    key = fingerprint()
    cached = Path(".snakemake/replaylab/import-graph.json")
    try:
        data = json.loads(cached.read_text(encoding="utf-8"))
        if data.get("key") == key:
            return data["graph"]
    except (OSError, ValueError):
        pass
    graph = build_import_graph()
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"key": key, "graph": graph}), encoding="utf-8")
        temporary.replace(cached)
    except OSError:
        pass  # a read-only working copy: compute it again next time
    return graph


def lesson_of(name):
    """'hunter' for replaylab.lessons.hunter and its modules, None otherwise."""
    parts = name.split(".")
    if parts[:2] == ["replaylab", "lessons"] and len(parts) > 2:
        return parts[2]
    return None


def followed(importer, imported, script, lesson):
    """Whether a job follows an import that modulefinder found (by default, yes).

    Two imports sit inside functions that only some jobs call; everything else is followed, so a
    new import can never be missed (an extra one only costs a rerun):
    - `replaylab.lessons.lab(lesson)` imports the lab of the lesson it is asked for and no other;
    - `replaylab.pipeline.write_index` alone imports `replaylab.index_page`.
    """
    if importer == "replaylab.lessons" and lesson_of(imported) is not None:
        return lesson_of(imported) == lesson
    if (importer, imported) == ("replaylab.pipeline", "replaylab.index_page"):
        return script == "index"
    return True


@cache
def code_files(script, lesson=None, roots=()):
    """The files of src/replaylab (and scripts/) that the job of `script` for `lesson` imports.

    `roots` are the modules it imports by name, which modulefinder cannot see:
    `pipeline.lesson_module(lesson, part)` and, for the index, the page of every lesson.
    """
    graph = import_graph()
    seen, todo = set(), [f"script:{script}", *roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for target in graph["edges"].get(name, ()):
            if followed(name, target, script, lesson):
                todo.append(target)
    return sorted(
        relative(ROOT / graph["files"][m]) for m in seen if m in graph["files"]
    )


def code(script, *parts, every_lesson=False, data=()):
    """Input function for `code=`: the files the job imports, and the package data it reads.

    `parts`: the modules of the job's lesson (or, with `every_lesson`, of every lesson of the
    configuration) that it imports by name (judge, scans, exercises, tables, figures, page).
    `data`: files of src/replaylab that it reads (the recording schema).
    """

    def files(wildcards):
        lesson = getattr(wildcards, "lesson", None)
        lessons = LESSONS if every_lesson else (lesson,)
        roots = tuple(
            f"replaylab.lessons.{l}.{part}" for l in lessons for part in parts
        )
        return (
            [relative(SCRIPTS / f"{script}.py")]
            + list(code_files(script, lesson, roots))
            + [relative(PACKAGE / name) for name in data]
        )

    files.__name__ = f"code_of_{script}"
    return files


# ---------------------------------------------------------------------------------------------
# What the lessons produce


def transcripts(wildcards):
    """The replayed batches of a lesson: folders of transcripts."""
    return expand(
        "results/{lesson}/transcripts/{batch}",
        lesson=wildcards.lesson,
        batch=BATCHES[wildcards.lesson],
    )


def batch_recordings(wildcards):
    return BATCHES[wildcards.lesson][wildcards.batch]


def lesson_outputs(lesson):
    """Every file of one lesson (its page, figures, tables and results)."""
    return [
        f"results/{lesson}/index.md",
        f"results/{lesson}/results.json",
        f"results/{lesson}/scorecard.csv",
        f"results/{lesson}/tables",
        f"results/{lesson}/figures",
    ]


def lesson_target(lesson):
    """Input function of the target rule of one lesson."""

    def files(wildcards):
        return lesson_outputs(lesson)

    files.__name__ = f"outputs_of_{lesson}"
    return files


def all_outputs(wildcards):
    return [file for lesson in LESSONS for file in lesson_outputs(lesson)] + [
        "results/index.md"
    ]


# ---------------------------------------------------------------------------------------------
# Running a job: its entry point in scripts/, called inside Snakemake's own process


class JobFailed(Exception):
    """A job that failed unexpectedly: its message names the log that holds the traceback."""


EXPECTED_FAILURES = (ReplayMismatch, RecordingError, UnknownLesson)

# One job at a time, even with --cores 2: jobs are Python, and two at once in one process only
# take turns on the interpreter lock (measured: slower than one after the other). It also keeps
# matplotlib, which is not thread-safe, in one thread at a time.
ONE_JOB_AT_A_TIME = threading.Lock()


@cache
def entry_point(name):
    """scripts/<name>.py as a module, loaded once per Snakemake process."""
    spec = importlib.util.spec_from_file_location(
        f"replaylab_rule_{name}", SCRIPTS / f"{name}.py"
    )
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def run_job(name, log, *args):
    """Call `main(*args)` of scripts/<name>.py, in this process: the default profile sets
    force-use-threads (a cluster executor implies it), so that a job costs no new Python, no
    imports and no second Snakemake.

    The log gets the job's time, or its error. A replay mismatch or a malformed input fails the
    job with its one-line message, under its own type; any other error with its type, message
    and the log holding its traceback. Either way, Snakemake shows a two-line stack of this file
    and the rule, never the library's traceback.
    """
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with ONE_JOB_AT_A_TIME, open(log, "w", encoding="utf-8") as stream:
        start = time.perf_counter()
        try:
            entry_point(name).main(*args)
        except EXPECTED_FAILURES as error:
            print(f"{type(error).__name__}: {error}", file=stream)
            failure = type(error)(str(error))
        except Exception as error:
            traceback.print_exc(file=stream)
            failure = JobFailed(
                f"{type(error).__name__}: {error} (the traceback is in {log})"
            )
        else:
            print(f"{name}: done in {time.perf_counter() - start:.2f} s", file=stream)
            return
    raise failure


def cancel_leftover_timers():
    """End the threading.Timer threads that Snakemake's scheduler leaves behind.

    Its job-rate limiter (100 jobs per second by default) starts a one-second Timer at each turn
    of the scheduler, and Python waits for the last one before it exits: up to 1 s more at the end
    of every run with jobs (measured). The run is over when the onsuccess and onerror hooks call
    this.
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
