"""Helpers of the workflow, and no rules: the configuration, checked while Snakemake builds the
DAG, the recordings found and checked, and the input functions of the rules.

A malformed recording or configuration stops even a dry run with one line naming the file, the
JSON path of the field and what is wrong. Paths to the workflow's own files (scripts/, src/,
workflow/) come from this file's place, so that the workflow also runs as a module of a user's
Snakefile; paths to the user's data (config/, recordings/, results/) are relative to the working
directory.
"""

import hashlib
import json
import os
import sys
from functools import cache
from pathlib import Path

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

# This folder, wherever the workflow is used from (the working directory may be any other).
RULES = Path(str(workflow.current_basedir))
ROOT = RULES.parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
SCRIPTS = ROOT / "scripts"
# validate() reads a schema path relative to the file that calls it: this one.
CONFIG_SCHEMA = "../schemas/config.schema.yaml"

# The workflow's own library comes first, before any installed copy.
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))

from replaylab import campaign, pipeline, workers  # noqa: E402
from replaylab.agents.recording import RecordingError, json_path  # noqa: E402
from replaylab.batches import batches  # noqa: E402
from replaylab.import_graph import ImportGraph, ImportGraphError  # noqa: E402
from replaylab.lessons import registry  # noqa: E402


def stop(message):
    """End the run while the DAG is built: `message` alone on stderr, no traceback, exit code 1."""
    print(message, file=sys.stderr)
    sys.exit(1)


def relative(path):
    """A path as the rules name files: relative to the working directory."""
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
        if lesson not in registry.names():
            stop(
                f"{config_files()}: $.lessons[{index}]: {lesson!r} is not a lesson of replaylab; "
                f"the lessons are: {', '.join(registry.names())}"
            )
    if config["record_lesson"] not in config["lessons"]:
        stop(
            f"{config_files()}: $.record_lesson: {config['record_lesson']!r} is not one of the configured lessons ({', '.join(config['lessons'])})"
        )
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
    """{run: recording} of a lesson in every run folder (pipeline.find_runs), paths as rules name
    them; a run name used twice stops the run."""
    try:
        found = pipeline.find_runs(lesson, RUN_FOLDERS)
    except RecordingError as error:
        stop(str(error))
    return {run: relative(path) for run, path in found.items()}


def check_recordings(runs):
    """Load and validate every recording; remember the ones that passed (by size and time) with
    their group and the digest of their content. Returns ({lesson: {run: group}}, {lesson: {run:
    digest}}): a lesson judged per group replays and judges each group in one job, and a batch's
    list (batch_list) names the content of each of its recordings."""
    cache_file = Path(".snakemake/replaylab/checked-recordings.json")
    try:
        checked = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        checked = {}
    now, groups, digests, unknown = {}, {}, {}, []
    for lesson, found in runs.items():
        groups[lesson], digests[lesson] = {}, {}
        for run, path in found.items():
            stat = Path(path).stat()
            key = f"{lesson}:{path}"
            now[key] = [stat.st_size, stat.st_mtime_ns]
            known = checked.get(key)
            if isinstance(known, list) and known[:2] == now[key] and len(known) == 4:
                now[key] = known
            else:
                unknown.append((lesson, run, path))
    found = workers.check_all(
        [(path, lesson) for lesson, _, path in unknown], cores(), WORKER_PRELOAD
    )
    for (lesson, run, path), (group, digest) in zip(unknown, found):
        if group is None:
            stop(digest)  # the first malformed recording, in the order they were found
        now[f"{lesson}:{path}"] += [group, digest]
    for lesson, found in runs.items():
        for run, path in found.items():
            groups[lesson][run], digests[lesson][run] = now[f"{lesson}:{path}"][2:]
    if now != checked:
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            temporary = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(now), encoding="utf-8")
            temporary.replace(cache_file)
        except OSError:
            pass  # a read-only working copy: check them all again next time
    return groups, digests


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


wildcard_constraints:
    lesson="|".join(LESSONS),
    run=r"[^/.][^/]*",
    batch=r"batch[0-9]+of[0-9]+",
    name=r"[A-Za-z0-9_-]+",


# ---------------------------------------------------------------------------------------------
# Input functions


def variants_of(lesson):
    return list(registry.lesson(lesson).variants)


def record_variant(wildcards):
    """The variant of a new run's file <run>-<variant>.json (a variant name may hold '-' itself)."""
    ends = [
        v for v in variants_of(wildcards.lesson) if wildcards.name.endswith(f"-{v}")
    ]
    if not ends:
        stop(
            f"results/live/{wildcards.lesson}/{wildcards.name}.json: the name must end in -<variant>, one of {', '.join(variants_of(wildcards.lesson))}"
        )
    return max(ends, key=len)


def live_recordings(wildcards):
    """The files of a new run: one per variant of its lesson."""
    return [
        f"results/live/{wildcards.lesson}/{wildcards.run}-{v}.json"
        for v in variants_of(wildcards.lesson)
    ]


IMPORTS = ImportGraph([SCRIPTS, SRC])


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
