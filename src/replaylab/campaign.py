"""Campaigns: many recorded runs per model, of every variant of some lessons, to compare models.

This module plans a campaign from the `campaign` section of the configuration (which runs, their
names and files), checks that section when the workflow starts, and records one run in a process
of its own. The workflow (workflow/rules/campaign.smk) replays, judges and scores the runs with
the lessons' own rules, and `replaylab.comparison` compares the models.

A run's name says its model (made safe for a file name, `agents.names`), its variant and its
index: `org_2fmodel_3atag__default__007`. Its group, `<model>__<index>`, holds the runs of one
index of one model, so that the runs of a lesson judged per group (one of each variant) are judged
together.
"""

import base64
import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from replaylab.inputs import check_recording
from replaylab.workers import done_line
from replaylab.agents import clients
from replaylab.agents.names import file_safe
from replaylab.agents.recording import RecordingError, check_run_name, check_text
from replaylab.lessons import registry

FOLDER = "results/campaigns"
MOST_BATCHES = 32  # replay batches per lesson of a campaign, unless a batch would pass batch_size


class RecordFailed(Exception):
    """A run that could not be recorded: one line, with the provider's status and reason."""


@dataclass(frozen=True)
class Run:
    lesson: str
    variant: str
    model: str
    index: int  # from 1

    @property
    def name(self):
        return f"{file_safe(self.model)}__{self.variant}__{self.index:03d}"

    @property
    def group(self):
        return f"{file_safe(self.model)}__{self.index:03d}"

    @property
    def seed(self):
        return self.index - 1


class Campaign:
    """A campaign's plan, and the input functions of its rules."""

    def __init__(self, settings, batch_size):
        """`settings`: the `campaign` section of the configuration; `batch_size`: about how many
        runs a replay job takes at most (the configuration's)."""
        self.settings = settings
        self._runs = {lesson: self._plan(lesson) for lesson in self.lessons}
        self.batches = {lesson: self._batches(lesson, batch_size) for lesson in self.lessons}

    @property
    def name(self):
        return self.settings["name"]

    @property
    def folder(self):
        return f"{FOLDER}/{self.name}"

    @property
    def shown(self):
        """The settings that the comparison page shows (a change reruns the comparison only)."""
        keys = ("name", "provider", "models", "runs", "max_tokens_per_run", "max_seconds_per_run", "prices")
        return {key: self.settings[key] for key in keys}

    @property
    def lessons(self):
        return list(self.settings["lessons"])

    def runs(self, lesson):
        """{run name: Run} of one lesson: every model, every variant, indices 1 to `runs`."""
        return self._runs[lesson]

    def _plan(self, lesson):
        found = {}
        for model in self.settings["models"]:
            for index in range(1, self.settings["runs"] + 1):
                for variant in registry.lesson(lesson).variants:
                    run = Run(lesson, variant, model, index)
                    found[run.name] = run
        return found

    def _batches(self, lesson, batch_size):
        """{batch: [recordings]}: the runs of a block of consecutive indices (every model and
        variant) per batch, named runs<first>to<last>. Runs are recorded in index order, so a
        batch is replayed and judged as soon as its runs are in, while the next ones record: only
        the last batch is left when the last run lands. A block holds about `max_connections`
        runs, doubled until there are at most MOST_BATCHES blocks (or a batch would pass
        `batch_size`). Raising `runs` adds batches or changes the last one only, until the block
        doubles."""
        per_index = len(self.settings["models"]) * len(registry.lesson(lesson).variants)
        runs = self.settings["runs"]
        block = max(1, math.ceil(self.settings["max_connections"] / per_index))
        while math.ceil(runs / block) > MOST_BATCHES and 2 * block * per_index <= batch_size:
            block *= 2
        found = {}
        for name, run in self.runs(lesson).items():
            first = (run.index - 1) // block * block + 1
            batch = f"runs{first}to{min(first + block - 1, runs)}"
            found.setdefault(batch, []).append(self.recording(lesson, name))
        return {batch: sorted(recordings) for batch, recordings in found.items()}

    def priority(self, wildcards):
        """The priority of the job that records "<lesson>/<run>": earlier indices first (Snakemake
        starts the ready job of highest priority first), so that batches fill one after another;
        below 0, the replay jobs' priority, so that a batch whose runs are in replays first."""
        lesson, name = wildcards.unrecorded.split("/")
        return -self.runs(lesson)[name].index

    def recording(self, lesson, name):
        return f"{self.folder}/recordings/{lesson}/{name}.json"

    def recordings(self, lesson):
        """{run name: the file it is recorded to}."""
        return {name: self.recording(lesson, name) for name in self.runs(lesson)}

    def all_recordings(self):
        return [path for lesson in self.lessons for path in self.recordings(lesson).values()]

    def comparison_page(self, starting):
        """The comparison page, the input of the `campaign` target, which Snakemake asks for first.
        When `starting` (not a dry run) with runs to record, the server of the recording processes
        starts now, while Snakemake builds the rest of its DAG, not when the first run is due."""
        if starting and self.not_recorded():
            start_recorders(self)
        return f"{self.folder}/index.md"

    def not_recorded(self):
        """"<lesson>/<run>" of every run whose file is not there yet: the only files the recording
        rule may make. A recorded run is a source: no rule records it again, whatever changed."""
        return [
            f"{lesson}/{name}"
            for lesson in self.lessons
            for name, path in self.recordings(lesson).items()
            if not os.path.lexists(path)
        ]

    # input functions of the rules

    def batch_recordings(self, wildcards):
        return self.batches[wildcards.lesson][wildcards.batch]

    def transcript_folders(self, lesson):
        return [f"{self.folder}/{lesson}/transcripts/{batch}" for batch in self.batches[lesson]]

    def transcripts(self, wildcards):
        return self.transcript_folders(wildcards.lesson)

    def judged(self, wildcards):
        """The verdicts of each replayed batch of a lesson (`replay` judges its batch)."""
        return [f"{self.folder}/{wildcards.lesson}/judged/{batch}.json" for batch in self.batches[wildcards.lesson]]

    def several_batches(self, wildcards):
        return len(self.batches[wildcards.lesson]) > 1

    def batch_group(self, wildcards):
        """The cluster group of a replay job, as for the lessons' own (workflow/rules/common.smk)."""
        return "batches" if self.several_batches(wildcards) else "lesson"

    def all_transcripts(self, wildcards):
        return [folder for lesson in self.lessons for folder in self.transcript_folders(lesson)]

    def lesson_files(self, name):
        """An input function: the file `name` of every lesson of the campaign."""

        def files(wildcards):
            return [f"{self.folder}/{lesson}/{name}" for lesson in self.lessons]

        files.__name__ = f"campaign_{name.split('.')[0]}"
        return files


def unattended_provider(name):
    """The provider of that name if it records without a person or a file, else None."""
    try:
        provider = clients.load_provider(name)
    except ValueError:
        return None
    return provider if provider.unattended else None


def check_provider(name, source, where="$.provider"):
    """One line if `name` is not a registered provider that records without a person, else None.
    (The configuration's schema cannot list the providers: they are the registry's.)"""
    if unattended_provider(name) is None:
        return (f"{source}: {where}: {name!r} is not a provider that records without a person; "
                f"the providers are: {', '.join(clients.names(lambda p: p.unattended))}")
    return None


def model_option(provider, model):
    """What the `record` target passes as --model: the configured model for a provider that asks a
    server for any model, nothing (its default program) for one with models of its own."""
    found = unattended_provider(provider)
    return model if found is not None and found.models is None else ""


def check(settings, lessons, source):
    """The first problem of the `campaign` section that the schema cannot see, as one line
    (`source`: the configuration's files), or None."""
    problem = check_provider(settings["provider"], source, "$.campaign.provider")
    if problem:
        return problem
    provider = unattended_provider(settings["provider"])
    for index, lesson in enumerate(settings["lessons"]):
        if lesson not in lessons:
            known = "" if lesson in registry.names() else " (nor a lesson of replaylab)"
            return (f"{source}: $.campaign.lessons[{index}]: {lesson!r} is not one of the configured lessons{known}: "
                    f"{', '.join(lessons)}")
    for option in ("request_timeout", "max_seconds_per_run"):  # YAML's .inf passes the schema's minimum
        value = settings[option]
        if value is not None and not math.isfinite(value):
            return f"{source}: $.campaign.{option}: {value} is not a finite number"
    for model, price in settings["prices"].items():
        for side in ("input", "output"):
            if not math.isfinite(price[side]):
                return f"{source}: $.campaign.prices.{model}.{side}: {price[side]} is not a finite number"
    for index, model in enumerate(settings["models"]):
        where = f"{source}: $.campaign.models[{index}]"
        try:
            check_text(model, where, 200)  # printed on the pages and in every line about its runs
        except RecordingError as error:
            return str(error)
        if provider.models is not None and model not in provider.models:
            return f"{where}: {model!r} is not a model of the {provider.name} provider; its models are: {', '.join(provider.models)}"
        if not file_safe(model)[:1].isalnum():
            return f"{where}: {model!r}: a model name must start with a letter or a digit"
        longest = max((Run(lesson, v, model, settings["runs"]) for lesson in settings["lessons"]
                       for v in registry.lesson(lesson).variants), key=lambda run: len(run.name))
        try:
            check_run_name(longest.name, where)
        except RecordingError as error:
            return f"{error} (the name of its run {longest.name!r})"
    for model in settings["prices"]:
        if model not in settings["models"]:
            return f"{source}: $.campaign.prices.{model}: not one of the campaign's models ({', '.join(settings['models'])})"
    return None


def record_arguments(settings, run, out):
    """The arguments of `replaylab record` for one run (a list: no shell ever reads them)."""
    arguments = [
        "record", run.lesson, "--variant", run.variant, "--provider", settings["provider"], "--model", run.model,
        "--seed", str(run.seed), "--run", run.name, "--group", run.group, "--out", str(out),
        "--timeout", str(settings["request_timeout"]), "--max-retries", str(settings["max_retries"]),
    ]
    for option in ("max_tokens_per_run", "max_seconds_per_run"):
        if settings[option] is not None:
            arguments += [f"--{option.replace('_', '-')}", str(settings[option])]
    return arguments


def last_error(log):
    """The line in which `replaylab record` said why it failed (the last line that names it)."""
    lines = Path(log).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    said = [line for line in lines if line.startswith("replaylab: ")]
    return (said or lines or ["no output"])[-1]


def recorders(campaign):
    """How recording processes start: as forks of a server process that has imported, once, what
    a recording imports (the command line, the pipeline, the lessons' agents, and the modules the
    provider's clients need, such as an SDK): a new Python would spend about a second of a
    processor on imports for each run. Each run still has a process of its own; the server starts
    with the first run, in the workflow's environment and with its search path. `__main__` (the
    `snakemake` script) is imported there once too: else each process would import it again."""
    context = multiprocessing.get_context("forkserver")
    lessons = [f"{registry.lesson(lesson).package}.agent" for lesson in campaign.lessons]
    provider = clients.load_provider(campaign.settings["provider"])
    context.set_forkserver_preload(
        ["__main__", "replaylab.cli", "replaylab.pipeline", *lessons, *provider.preload, "replaylab.agents.preloaded"]
    )
    return context


def start_recorders(campaign):
    """Start the server of the recording processes now, while Snakemake builds its DAG: its imports
    take about a second of the other processor, which the first runs would otherwise wait for."""
    recorders(campaign)
    multiprocessing.forkserver.ensure_running()


# multiprocessing reads a process's exit status once, from a pipe; its start() also reads those of
# the other processes that have ended. Two threads reading one status at once leave one of them
# without it (it then says 255), so starts and status reads take turns; the waits do not.
_STATUS = threading.Lock()


def _record_here(arguments, log):
    """The body of a recording process: `replaylab record`, its output and errors into the log."""
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    from replaylab import cli

    sys.exit(cli.main(arguments))


def record(campaign, lesson, name, out, log):
    """Record one run in a process of its own (its output and errors go to `log`); a run that
    fails raises `RecordFailed` with the provider's status and reason, never its key."""
    run = campaign.runs(lesson).get(name)
    if run is None:
        raise RecordFailed(f"{out}: {name!r} is not a run of the campaign {campaign.name} (see its models, lessons and runs)")
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    process = recorders(campaign).Process(
        target=_record_here, args=(record_arguments(campaign.settings, run, out), str(log)), name=f"record {name}")
    start, began = time.perf_counter(), time.time()
    with _STATUS:
        process.start()
    multiprocessing.connection.wait([process.sentinel])
    with _STATUS:
        process.join()
    if process.exitcode != 0:
        raise RecordFailed(f"{out}: not recorded: {last_error(log)}")
    with open(log, "a", encoding="utf-8") as stream:
        print(done_line("record", start, began), file=stream)


def incomplete_marker(folder, path):
    """Where Snakemake's file persistence (the default) marks `path` as the output of a job that
    started and was not seen to end: .snakemake/incomplete/<urlsafe base64 of the path>, cut into
    parts that fit a file name (snakemake/persistence/file.py, Snakemake 9)."""
    longest = (os.pathconf(folder, "PC_NAME_MAX") or 255) if os.name == "posix" else 255
    encoded = base64.urlsafe_b64encode(str(path).encode()).decode()
    parts = [encoded[i : i + longest - 1] for i in range(0, len(encoded), longest - 1)]
    return Path(folder, *["@" + part for part in parts[:-1]], parts[-1])


def keep_interrupted_runs(paths, metadata=".snakemake"):
    """Unmark the recordings that Snakemake marked incomplete but that are whole (they load).

    `replaylab record` writes a run whole or not at all. When Snakemake is interrupted (Ctrl-C, a
    killed process) just as a run has been written, the run is complete but Snakemake, which did
    not see its job end, has it marked incomplete: it would refuse to go on, or with
    --rerun-incomplete delete the run and send it to the provider again. This does what
    `snakemake --cleanup-metadata FILE` does for each such run. Returns the runs kept."""
    folder = Path(metadata) / "incomplete"
    if not folder.is_dir():
        return []
    kept = []
    for path in paths:
        marker = incomplete_marker(folder, path)
        if not (marker.is_file() and Path(path).is_file()):
            continue
        try:
            check_recording(path)
        except RecordingError:
            continue  # not whole: Snakemake reports it as incomplete
        marker.unlink()
        kept.append(path)
    return kept
