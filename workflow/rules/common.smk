"""Helpers of the workflow, and no rules: most of them run while Snakemake builds the DAG.

- the configuration and the recordings of its lessons, each loaded and checked now (inputs.py), so that a
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
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from functools import cache
from pathlib import Path

import yaml
from snakemake_interface_executor_plugins.settings import ExecMode

ROOT = Path(workflow.basedir)  # the folder of the top-level Snakefile
SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
SCRIPTS = ROOT / "scripts"
RULES = ROOT / "workflow" / "rules"
CONFIG_SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"

# The workflow's own library comes first, before any installed copy (the rule scripts do the same).
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab import campaign, inputs, pipeline, runlock  # noqa: E402
from replaylab.agents.recording import RecordingError, printable  # noqa: E402
from replaylab.agents.replay import ReplayMismatch  # noqa: E402
from replaylab.lessons import UnknownLesson  # noqa: E402


def stop(message):
    """End the run while the DAG is built: `message` alone on stderr (its control characters
    escaped: it stays one line), no traceback, exit code 1."""
    print(printable(str(message)), file=sys.stderr)
    sys.exit(1)


def relative(path):
    """A path as the rules name files: relative to the working directory (the project's root)."""
    return os.path.relpath(path)


# ---------------------------------------------------------------------------------------------
# Interrupts and a killed run's lock


def interrupted(signum, frame):
    """Ctrl-C while the workflow is read and the DAG is built: one line, no traceback."""
    print(
        "snakemake: interrupted while the workflow was read; nothing was run",
        file=sys.stderr,
    )
    sys.exit(130)


def allow_interrupts():
    """From the first job on (`onstart`), Ctrl-C is Snakemake's again: it stops the jobs, marks
    their outputs incomplete, and the default profile's rerun-incomplete reruns them next time.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)


if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, interrupted)

# Only the Snakemake a person started removes a killed run's lock (runlock.hold), never a job's
# own Snakemake on a cluster node, which runs while the first one holds its lock.
if workflow.exec_mode == ExecMode.DEFAULT:
    try:
        stale = runlock.hold()
    except (OSError, TimeoutError):
        stale = (
            []
        )  # a read-only working copy, or a busy one: Snakemake's own lock check decides
    if stale:
        print(
            "snakemake: removed the lock of a run that was killed (no Snakemake of this workflow runs here)",
            file=sys.stderr,
        )


# ---------------------------------------------------------------------------------------------
# Configuration


def config_files():
    """Where the configuration came from, to name it in an error."""
    names = [relative(f) for f in workflow.configfiles]
    if workflow.config_settings.config:
        names.append("--config")
    return " + ".join(names) or "the configuration"


def check_config():
    """Check `config` (inputs.check_config: the schema, then what a schema cannot say); the first
    problem stops the run with one line naming the field."""
    with open(CONFIG_SCHEMA, encoding="utf-8") as stream:
        schema = yaml.safe_load(stream)
    try:
        inputs.check_config(config, schema, config_files())
    except inputs.InputError as error:
        stop(error)
    problem = campaign.check_provider(config["provider"], config_files())
    problem = problem or campaign.check(
        config["campaign"], config["lessons"], config_files()
    )
    if problem:
        stop(problem)


check_config()
LESSONS = tuple(config["lessons"])
TOLERANCE = config["tolerance"]


# ---------------------------------------------------------------------------------------------
# Recordings: found now, each loaded and validated now


RUN_FOLDERS = ("recordings", *config["run_folders"])
BATCH_SIZE = config["batch_size"]


def find_runs(lesson):
    """{run: recording} of a lesson in every run folder (inputs.find_runs), paths as rules name
    them; a run name used twice stops the run."""
    try:
        found = inputs.find_runs(lesson, RUN_FOLDERS)
    except RecordingError as error:
        stop(error)
    return {run: relative(path) for run, path in found.items()}


def check_recordings(runs):
    """Load and validate every recording now (inputs.check_recordings: those unchanged since they
    last passed, under the same checking code, are not read again)."""
    try:
        inputs.check_recordings(runs, ".snakemake/replaylab/checked-recordings.json")
    except RecordingError as error:
        stop(error)


def batches(runs):
    """{batch: [recordings]} of {run: recording}: runs are replayed in batches of about BATCH_SIZE,
    so that many small runs do not cost one job each. A run's batch depends on its name only (and
    on the number of batches, which doubles as the lesson grows), so changing one recording reruns
    its batch only.
    """
    names = sorted(runs)
    count = 1
    while count * BATCH_SIZE < len(names):
        count *= 2
    found = {}
    for run in names:
        index = int(hashlib.sha256(run.encode()).hexdigest()[:8], 16) % count
        found.setdefault(f"batch{index}of{count}", []).append(runs[run])
    return dict(sorted(found.items()))


def variants_of(lesson):
    return list(pipeline.lab(lesson).VARIANTS)


def python_of_this_venv():
    """The python of Snakemake's own venv, named the same however Snakemake was started (`snakemake` runs
    .venv/bin/python3.11, `python -m snakemake` .venv/bin/python): it is a rule parameter, and a
    changed parameter would rerun every job."""
    candidate = Path(sys.prefix) / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


PYTHON = python_of_this_venv()

RUNS = {lesson: find_runs(lesson) for lesson in LESSONS}
check_recordings(RUNS)
BATCHES = {lesson: batches(RUNS[lesson]) for lesson in LESSONS}
try:
    inputs.check_results(LESSONS)  # a folder of results/ changed by hand is not trusted
except inputs.DamagedResult as error:
    stop(error)


def run_names(wildcards):
    """Every run of a lesson: the judge and the render check that each has its transcript."""
    return sorted(RUNS[wildcards.lesson])


wildcard_constraints:
    lesson="|".join(LESSONS),
    batch=r"batch[0-9]+of[0-9]+",


# ---------------------------------------------------------------------------------------------
# Recording a new run (the `record` target): the files it would write, known now

RECORD_LESSON = config["record_lesson"]
RECORD_RUN = config["record_run"]
RECORD_PAGE = f"results/live/{RECORD_LESSON}/{RECORD_RUN}"
# {file name: variant}: each variant of the lesson is recorded as <record_run>-<variant>.json
RECORD_FILES = {f"{RECORD_RUN}-{v}": v for v in variants_of(RECORD_LESSON)}
# A recorded run is a source, never remade: rule record_run can only make a file that is not
# there yet, so that with run_folders: [results/live] no run found there is ever recorded again.
NOT_RECORDED = [
    name
    for name in RECORD_FILES
    if not os.path.lexists(f"results/live/{RECORD_LESSON}/{name}.json")
]
NOT_RECORDED_PATTERN = "|".join(map(re.escape, NOT_RECORDED)) or "(?!)"


def record_target(wildcards):
    """The page of the new run; its files must not exist yet (never overwritten)."""
    recorded = [name for name in RECORD_FILES if name not in NOT_RECORDED]
    if recorded:
        stop(
            f"results/live/{RECORD_LESSON}/{recorded[0]}.json: already exists, and a recorded run is never "
            "overwritten: choose another name (--config record_run=NAME), or move its files away"
        )
    return [RECORD_PAGE]


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


PAGE_WRITERS = ("render", "index", "live")


def followed(importer, imported, script, lesson):
    """Whether a job follows an import that modulefinder found (by default, yes).

    Two imports sit inside functions that only some jobs call; everything else is followed, so a
    new import can never be missed (an extra one only costs a rerun):
    - `replaylab.lessons.lab(lesson)` imports the lab of the lesson it is asked for and no other;
    - `replaylab.pipeline.write_index` alone imports `replaylab.index_page`;
    - `replaylab.pipeline.write_markdown_and_html` alone imports `replaylab.html_page`, for the
      jobs that write pages.
    """
    if importer == "replaylab.lessons" and lesson_of(imported) is not None:
        return lesson_of(imported) == lesson
    if (importer, imported) == ("replaylab.pipeline", "replaylab.index_page"):
        return script == "index"
    if (importer, imported) == ("replaylab.pipeline", "replaylab.html_page"):
        return script in PAGE_WRITERS
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


# What the jobs that write pages read of the package: the HTML page's template and style sheet.
TEMPLATES = ["templates/page.html", "templates/page.css"]


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
        f"results/{lesson}/index.html",
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
        "results/index.md",
        "results/index.html",
    ]


# ---------------------------------------------------------------------------------------------
# Running a job: its entry point in scripts/, called inside Snakemake's own process


class JobFailed(Exception):
    """A job that failed unexpectedly: its message names the log that holds the traceback."""


EXPECTED_FAILURES = (
    ReplayMismatch,
    RecordingError,
    UnknownLesson,
    inputs.DamagedResult,
)

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

    The log gets the job's time and what `main` returns (a note: the time of the HTML page), or
    its error on one line. A replay mismatch, a malformed input or a damaged result fails the job
    with its one-line message, under its own type; any other error (a bug) with its type and
    message, and its traceback in <log>.traceback, which the line names. Snakemake then shows that
    line and where the rule called this (two lines naming this file and the rule file), never the
    library's traceback, even with --show-failed-logs.
    """
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with ONE_JOB_AT_A_TIME, open(log, "w", encoding="utf-8") as stream:
        start = time.perf_counter()
        try:
            note = entry_point(name).main(*args)
        except EXPECTED_FAILURES as error:
            failure = type(error)(printable(str(error)))
        except Exception as error:
            where = Path(log).with_suffix(".traceback")
            with open(where, "w", encoding="utf-8") as details:
                # from the entry point on: this file's own frame, compiled by Snakemake,
                # would name a line that is not the one that ran
                traceback.print_exception(
                    type(error), error, error.__traceback__.tb_next, file=details
                )
            failure = JobFailed(
                f"{type(error).__name__}: {printable(str(error))} (a bug: the traceback is in {where})"
            )
        else:
            print(f"{name}: done in {time.perf_counter() - start:.2f} s", file=stream)
            if note:
                print(note, file=stream)
            return
        print(f"{type(failure).__name__}: {failure}", file=stream)
    raise failure


class RecordFailed(Exception):
    """`replaylab record` failed: its message is the command's own error line and the log's name."""


def record_job(log, lesson, variant, out, *, provider, model, seed, group):
    """Record one variant of a new run with scripts/record.py, in a process of its own, started with
    an argument list (no shell: a configuration value is never part of a command). What it prints
    goes to the log and to Snakemake's output; a failure is its last line (the one-line error).
    """
    command = [PYTHON, str(SCRIPTS / "record.py"), lesson, "--variant", variant]
    command += ["--provider", provider, f"--model={model}", "--seed", str(seed)]
    command += ["--group", group, "--out", out]
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as stream:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        last = ""
        for line in process.stdout:
            stream.write(line)
            stream.flush()
            print(line, end="", flush=True)
            last = line.strip() or last
    if process.wait() != 0:
        raise RecordFailed(f"{last} (the log: {log})")


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
