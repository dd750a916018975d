"""Helpers of the workflow, and no rules: the configuration, checked while Snakemake builds the
DAG, the recordings found and checked, and the input functions of the rules.

A malformed recording or configuration stops even a dry run with one line naming the file, the
JSON path of the field and what is wrong (the checks are in replaylab.inputs); so does a file of
results/ damaged by hand. A recorded run is a source: no rule ever writes one again.

Paths to the workflow's own files (scripts/, src/, workflow/) come from this file's place, so that
the workflow also runs as a module of a user's Snakefile; paths to the user's data (config/,
recordings/, results/) are relative to the working directory.
"""

import json
import os
import re
import signal
import sys
import threading
from functools import cache
from pathlib import Path

import yaml
from snakemake_interface_executor_plugins.settings import ExecMode

# This folder, wherever the workflow is used from (the working directory may be any other).
RULES = Path(str(workflow.current_basedir))
ROOT = RULES.parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
SCRIPTS = ROOT / "scripts"
CONFIG_SCHEMA = RULES.parent / "schemas" / "config.schema.yaml"

# The workflow's own library comes first, before any installed copy.
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab import campaign, inputs, runlock, workers  # noqa: E402
from replaylab.agents.recording import RecordingError, printable  # noqa: E402
from replaylab.batches import batches  # noqa: E402
from replaylab.import_graph import ImportGraph, ImportGraphError  # noqa: E402
from replaylab.lessons import registry  # noqa: E402
from snakemake.persistence import PersistenceBase  # noqa: E402

# Snakemake 9.27 compares each job's params with those of its last run and, when pandas is
# installed, imports pandas to do so (a no-op took 1.31 s with it, 1.09 s without), in case a
# param is a DataFrame. No param of this workflow is one: they are compared as plain values.
PersistenceBase._serialize_param = property(lambda self: self._serialize_param_builtin)


def stop(message):
    """End the run while the DAG is built: `message` alone on stderr (its control characters
    escaped: it stays one line), no traceback, exit code 1."""
    print(printable(str(message)), file=sys.stderr)
    sys.exit(1)


def relative(path):
    """A path as the rules name files: relative to the working directory."""
    return os.path.relpath(path)


# ---------------------------------------------------------------------------------------------
# Interrupts and a killed run's lock


def interrupted(signum, frame):
    """Ctrl-C while the workflow is read and the DAG is built: one line, no traceback. Once the
    jobs are scheduled, Ctrl-C is Snakemake's own (KeyboardInterrupt): it stops the jobs, marks
    their outputs incomplete, and the default profile's rerun-incomplete reruns them next time.
    (Checked here rather than in `onstart`, which Snakemake skips in a module's Snakefile.)
    """
    if workflow.scheduler is not None:
        raise KeyboardInterrupt
    print(
        "snakemake: interrupted while the workflow was read; nothing was run",
        file=sys.stderr,
    )
    sys.exit(130)


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
RUN_FOLDERS = ("recordings", *config["run_folders"])


# ---------------------------------------------------------------------------------------------
# Recordings: found now, each loaded and validated now


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
    last passed, under the same checking code, are not read again; the others in worker processes
    when there are many). Returns ({lesson: {run: group}}, {lesson: {run: digest}}): a lesson judged
    per group replays and judges each group in one job, and a batch's list (batch_list) names the
    content of each of its recordings."""
    try:
        return inputs.check_recordings(
            runs,
            ".snakemake/replaylab/checked-recordings.json",
            lambda items: workers.check_all(items, cores(), WORKER_PRELOAD),
        )
    except RecordingError as error:
        stop(error)


def cores():
    """The cores Snakemake was given (1 when none were, as in a dry run)."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


# What a worker process (replaylab.workers) imports once, before it is forked: the replay stage,
# and the lessons' lab and judge.
WORKER_PRELOAD = ["replaylab.pipeline"] + [
    f"{registry.lesson(lesson).package}.{part}"
    for lesson in config["lessons"]
    for part in ("lab", "judge")
]


def python_of_this_venv():
    """The python of Snakemake's own venv, named the same however Snakemake was started (`snakemake` runs
    .venv/bin/python3.11, `python -m snakemake` .venv/bin/python): it is a rule parameter, and a
    changed parameter would rerun every job."""
    candidate = Path(sys.prefix) / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


# What a render job imports on its first call (the pages' code, pandas, matplotlib and its
# drawing backend): loaded in a thread while the workers replay, or while a campaign's runs record
# (jobs.smk, workers.import_soon).
RENDER_IMPORTS = [
    "replaylab.render",
    "replaylab.lessons.scorecard",
    "replaylab.html_page",
    "matplotlib.backends.backend_agg",
] + [
    f"{registry.lesson(lesson).package}.{part}"
    for lesson in config["lessons"]
    for part in ("tables", "figures", "page")
]


PYTHON = python_of_this_venv()
RUNS = {lesson: find_runs(lesson) for lesson in LESSONS}
GROUPS, DIGESTS = check_recordings(RUNS)


def run_batches(lesson, runs, groups):
    """{batch: [recordings]} of {run: recording}, in batches of about `batch_size` runs; in a
    lesson judged per group, the runs of a group ({run: group}) in one batch."""
    per_group = registry.lesson(lesson).judged == "group"
    return batches(runs, config["batch_size"], groups if per_group else None)


BATCHES = {
    lesson: run_batches(lesson, RUNS[lesson], GROUPS[lesson]) for lesson in LESSONS
}
BATCH_LISTS = Path(".snakemake/replaylab/batches")


def write_batch_lists():
    """Each batch's list of recordings, with the digest of each one's content, as the one input
    file of its replay job (rewritten only when it changes: a changed, added or removed recording
    reruns its batch, a recording put back as it was reruns nothing). Snakemake looks at every
    input file of every waiting job each time it schedules (its jobs' input sizes): with a
    recording per input, a lesson of 100,000 runs would spend more time there than replaying.
    """
    for lesson, found in BATCHES.items():
        paths = {path: run for run, path in RUNS[lesson].items()}
        for batch, recordings in found.items():
            entries = [[path, DIGESTS[lesson][paths[path]]] for path in recordings]
            text = (
                json.dumps(
                    {"lesson": lesson, "batch": batch, "recordings": entries}, indent=0
                )
                + "\n"
            )
            target = BATCH_LISTS / lesson / f"{batch}.json"
            try:
                if target.read_text(encoding="utf-8") == text:
                    continue
            except OSError:
                pass
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(target)


write_batch_lists()
try:
    inputs.check_results(LESSONS)  # a folder of results/ changed by hand is not trusted
except inputs.DamagedResult as error:
    stop(error)


def run_names(wildcards):
    """Every run of a lesson: the judge and the render check that each has its transcript."""
    return sorted(RUNS[wildcards.lesson])


wildcard_constraints:
    lesson="|".join(LESSONS),
    batch=r"batch[0-9]+of[0-9]+|runs[0-9]+to[0-9]+",  # a lesson's, a campaign's


# ---------------------------------------------------------------------------------------------
# Recording a new run (the `record` target): the files it would write, known now


def variants_of(lesson):
    return list(registry.lesson(lesson).variants)


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
# Input functions


IMPORTS = ImportGraph([SCRIPTS, SRC], ".snakemake/replaylab/imports.json")


@cache
def code_files(script, lessons, parts):
    """The files a job's entry point imports, and the `parts` of the `lessons` that it imports by
    a name computed at run time (through the registry), which no reading of the code can see.
    """
    roots = [registry.lesson(l).package for l in lessons]
    roots += [f"{registry.lesson(l).package}.{part}" for l in lessons for part in parts]
    try:
        found = IMPORTS.files(scripts=[SCRIPTS / f"{script}.py"], modules=roots)
    except ImportGraphError as error:
        stop(str(error))
    return [relative(path) for path in found]


# What the jobs that write pages read of the package: the HTML page's template and style sheet.
TEMPLATES = ["templates/page.html", "templates/page.css"]


def code(script, *parts, every_lesson=False, data=()):
    """Input function for `code=`: the files of scripts/ and src/replaylab that the job imports,
    and the package data it reads (`data`, e.g. the recording schema). `parts`: the modules of
    the job's lesson that it uses (of every configured lesson, with `every_lesson`)."""

    def files(wildcards):
        lesson = getattr(wildcards, "lesson", None)  # none for a campaign's comparison
        lessons = LESSONS if every_lesson else (lesson,) if lesson else ()
        return code_files(script, lessons, parts) + [
            relative(PACKAGE / name) for name in data
        ]

    files.__name__ = f"code_of_{script}"
    return files


def transcripts(wildcards):
    """The replayed batches of a lesson: folders of transcripts."""
    return expand(
        "results/{lesson}/transcripts/{batch}",
        lesson=wildcards.lesson,
        batch=BATCHES[wildcards.lesson],
    )


def judged(wildcards):
    """The verdicts of each replayed batch of a lesson (`replay` judges its batch)."""
    return expand(
        "results/{lesson}/judged/{batch}.json",
        lesson=wildcards.lesson,
        batch=BATCHES[wildcards.lesson],
    )


def batch_list(wildcards):
    """The list of a batch's recordings (write_batch_lists), the input file of its replay job."""
    return str(BATCH_LISTS / wildcards.lesson / f"{wildcards.batch}.json")


def several_batches(wildcards):
    """Whether the lesson's runs fill more than one replay job: then they run in processes of
    their own, side by side (jobs.smk), and on a cluster each batch may be a job of its own.
    """
    return len(BATCHES[wildcards.lesson]) > 1


def batch_group(wildcards):
    """The group of a replay job on a cluster (groups are inactive in a local run): a lesson of
    one batch stays one SLURM job with its other jobs (group `lesson`); the batches of a larger
    lesson are jobs of group `batches`, which a profile's `group-components` bundles by so many
    per SLURM job."""
    return "batches" if several_batches(wildcards) else "lesson"


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
