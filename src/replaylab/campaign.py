"""Campaigns: many recorded runs per model, of every variant of some lessons, to compare models.

This module checks the `campaign` section of the configuration when the workflow starts, plans
the campaign (which runs, their names and files, their blocks) when a rule of the campaign first
asks (only when the campaign is a target), and records a block of runs in one job. The workflow
(workflow/rules/campaign.smk) replays, judges and scores the runs with the lessons' own rules, and
`replaylab.comparison` compares the models.

Each model of a campaign is an entry of its own (`Model`): its provider, its server, its key's
variable and its generation settings; the short form `models: [a, b]` reads as entries of the
section's `provider`. An endpoint (a server, or a provider with none) has a Snakemake resource of
its own, of `max_connections` units.

A run's name says its model (made safe for a file name, `agents.names`), its variant and its
index: `org_2fmodel_3atag__default__007`. Its group, `<model>__<index>`, holds the runs of one
index of one model, so that the runs of a lesson judged per group (one of each variant) are judged
together.

A recording is a source, never an output Snakemake may remove: a recording job's output is its
block's list (results/campaigns/<name>/<lesson>/recorded/<block>.json, the recordings with the
digest of each), and the recordings lie beside it, in results/campaigns/<name>/recordings/. The job
records the block's runs that are not on disk (each written whole, or not at all), never one that
is; the list of a block whose runs are all on disk is written when the campaign is planned, so that
a recording changed by hand reruns its block's replay, and a missing one its recording job.
"""

import hashlib
import json
import logging
import math
import os
import queue
import sys
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from replaylab.agents import clients
from replaylab.agents.names import file_safe
from replaylab.agents.recording import RecordingError, check_run_name, check_text, printable
from replaylab.batches import write_list
from replaylab.inputs import check_recording, check_recordings
from replaylab.jobs import Failed
from replaylab.lessons import registry
from replaylab.selection import SelectionError, select

FOLDER = "results/campaigns"
MOST_BATCHES = 32  # blocks per lesson of a campaign, unless a block would pass batch_size
RUNS_PER_CONNECTION = 16  # a block holds about this many runs per connection its job holds
CHECKED = ".snakemake/replaylab/checked-campaign-recordings.json"


class RecordFailed(Failed):
    """Runs that could not be recorded: one line, with the provider's status and reason."""


# Settings a model's entry may not send: replaylab writes these fields of every request itself.
RESERVED_SETTINGS = ("model", "messages", "tools", "functions", "stream", "n")


@dataclass
class Model:
    """One model of a campaign: its name (asked of the server, and the start of its runs' names),
    its provider, where its server is (a URL, or the environment variable holding one), the
    environment variable of its key (never the key), and the generation settings sent with each of
    its requests."""

    name: str
    provider: str
    base_url: str | None = None
    base_url_env: str | None = None
    key_env: str | None = None
    settings: dict = field(default_factory=dict)

    @property
    def endpoint(self):
        """Who receives its requests: a provider with no server (scripted) is one endpoint; for a
        provider with one, its URL as written, or `$VARIABLE`."""
        found = unattended_provider(self.provider)
        if found is None or found.server is None:
            return self.provider
        if self.base_url:
            return self.base_url.rstrip("/")
        return f"${self.base_url_env or found.server}"

    def key_variable(self):
        found = unattended_provider(self.provider)
        return self.key_env or (found.key if found else None)

    def recorded(self):
        """What of the entry decides its runs (the key's variable does not)."""
        return {"name": self.name, "provider": self.provider, "endpoint": self.endpoint, "settings": self.settings}


def models(settings):
    """The models of a `campaign` section, as entries: a name alone (`models: [a, b]`, the short
    form) is an entry of the section's `provider`, as is an entry that names none."""
    found = []
    for entry in settings["models"]:
        entry = {"name": entry} if isinstance(entry, str) else dict(entry)
        entry.setdefault("provider", settings.get("provider"))
        entry["settings"] = dict(entry.get("settings") or {})
        found.append(Model(**entry))
    return found


def model_names(settings):
    return [entry if isinstance(entry, str) else entry["name"] for entry in settings["models"]]


@dataclass(frozen=True)
class Run:
    lesson: str
    variant: str
    model: str
    index: int  # from 1
    instance: str | None = None  # an instance of the lesson's family; None: the seed instance of the variant
    seed_instance: bool = True  # whether it is one of the seeds' own questions (named as before the families)

    @property
    def name(self):
        if self.seed_instance:
            return f"{file_safe(self.model)}__{self.variant}__{self.index:03d}"
        return f"{file_safe(self.model)}__{self.instance}__{self.variant}__{self.index:03d}"

    @property
    def group(self):
        if self.seed_instance:
            return f"{file_safe(self.model)}__{self.index:03d}"
        return f"{file_safe(self.model)}__{self.instance}__{self.index:03d}"

    @property
    def seed(self):
        return self.index - 1


def connections_per_job(settings):
    """The connections to each endpoint one recording job holds (a Snakemake resource per
    endpoint, `provider_connections_<n>`, of which there are `max_connections`): half of them, so
    that two jobs record at once and one's start and last runs overlap the other's runs; all of
    them when there are fewer than two."""
    return max(1, settings["max_connections"] // 2)


def endpoints(settings):
    """{endpoint: [model names]} of a campaign, in the order of its models."""
    found = {}
    for model in models(settings):
        found.setdefault(model.endpoint, []).append(model.name)
    return found


def resource_names(settings):
    """{endpoint: the name of its Snakemake resource}: `provider_connections_<n>`, n from 0 in
    the order of `endpoints`."""
    return {endpoint: f"provider_connections_{n}" for n, endpoint in enumerate(endpoints(settings))}


class Campaign:
    """A campaign's plan, and the input functions of its rules. Nothing is planned until a rule of
    the campaign asks: a campaign of many runs costs nothing to a workflow that does not target it."""

    def __init__(self, settings, batch_size, stop=None, source="the configuration"):
        """`settings`: the `campaign` section of the configuration; `batch_size`: about how many
        runs a replay job takes at most (the configuration's); `stop(error)`: what the workflow
        does with a malformed recording, or a selection of instances its families cannot give,
        found when the campaign is planned (by default, raise it); `source`: where the settings
        came from, to name them in an error."""
        self.settings = settings
        self.batch_size = batch_size
        self.stop = stop
        self.source = source

    @property
    def name(self):
        return self.settings["name"]

    @property
    def folder(self):
        return f"{FOLDER}/{self.name}"

    @property
    def lessons(self):
        return list(self.settings["lessons"])

    @cached_property
    def models(self):
        return models(self.settings)

    @property
    def shown(self):
        """The settings that the comparison page shows (a change reruns the comparison only): the
        models by name, with `provider` the providers of all of them (one name when they share it),
        and each model's entry in `entries` (without its key's variable)."""
        keys = ("name", "runs", "max_tokens_per_run", "max_seconds_per_run", "prices")
        shown = {key: self.settings[key] for key in keys}
        shown["models"] = [model.name for model in self.models]
        shown["provider"] = ", ".join(dict.fromkeys(model.provider for model in self.models))
        shown["entries"] = [model.recorded() for model in self.models]
        return shown

    @property
    def connections(self):
        return connections_per_job(self.settings)

    @property
    def resources(self):
        """What a recording job holds of each endpoint's resource (a block holds runs of every
        model): `job_connections` units."""
        return {name: self.job_connections for name in resource_names(self.settings).values()}

    def job_connections(self, wildcards):
        """The connections of each endpoint a recording job holds: `connections`, or all of them
        when the campaign has a single block (no other job to share them with)."""
        alone = sum(len(blocks) for blocks in self.batches.values()) == 1
        return self.settings["max_connections"] if alone else self.connections

    # the plan

    def instances(self, lesson):
        """The ids of the instances of a lesson the campaign takes (`instances:`, the seeds' own
        questions by default): drawn when the campaign is planned, never when the workflow only
        starts (a family is drawn in a fraction of a second, which every start would pay)."""
        return self._instances[lesson]

    @cached_property
    def _instances(self):
        found = {}
        for lesson in self.lessons:
            try:
                found[lesson] = select(registry.lesson(lesson), self.settings["instances"],
                                       f"{self.source}: $.campaign.instances ({lesson})")
            except SelectionError as error:
                if self.stop is None:
                    raise
                self.stop(error)
        return found

    def runs(self, lesson):
        """{run name: Run} of one lesson: every model, every instance taken, every variant of it,
        indices 1 to `runs`."""
        return self._runs[lesson]

    @cached_property
    def _runs(self):
        found = {}
        for lesson in self.lessons:
            runs = found[lesson] = {}
            family = registry.lesson(lesson)
            for model in model_names(self.settings):
                for index in range(1, self.settings["runs"] + 1):
                    for instance in self.instances(lesson):
                        for variant in family.instance_variants(instance):
                            run = Run(lesson, variant, model, index, instance, family.instance(instance).seed)
                            runs[run.name] = run
            self._check_names(runs)
        return found

    def _check_names(self, runs):
        """The longest run name of a lesson's plan as a file name: one line when it is too long."""
        longest = max(runs.values(), key=lambda run: len(run.name), default=None)
        if longest is None:
            return
        try:
            check_run_name(longest.name, f"{self.source}: $.campaign.models: {longest.model!r}")
        except RecordingError as error:
            if self.stop is None:
                raise
            self.stop(f"{error} (the name of its run {longest.name!r})")

    def block_size(self, lesson):
        """How many consecutive indices (every model and variant of each) a block holds: about
        RUNS_PER_CONNECTION runs per connection of its job (a recording job's start, its imports and
        the lesson's caches, costs about a second of a processor: a job must record enough runs to
        make that small), at most `batch_size` runs, doubled until a lesson has at most
        MOST_BATCHES blocks (unless a block would pass `batch_size`). Raising `runs` adds blocks or
        changes the last one only, until the block doubles."""
        family = registry.lesson(lesson)
        per_index = len(self.settings["models"]) * sum(len(family.instance_variants(i)) for i in self.instances(lesson))
        block = max(1, math.ceil(RUNS_PER_CONNECTION * self.connections / per_index))
        block = max(1, min(block, self.batch_size // per_index))
        while math.ceil(self.settings["runs"] / block) > MOST_BATCHES and 2 * block * per_index <= self.batch_size:
            block *= 2
        return block

    @cached_property
    def batches(self):
        """{lesson: {block: {run name: Run}}}, a block named runs<first>to<last>, in index order."""
        found = {}
        for lesson in self.lessons:
            block, last = self.block_size(lesson), self.settings["runs"]
            blocks = found[lesson] = {}
            for name, run in sorted(self.runs(lesson).items(), key=lambda item: (item[1].index, item[0])):
                first = (run.index - 1) // block * block + 1
                blocks.setdefault(f"runs{first}to{min(first + block - 1, last)}", {})[name] = run
        return found

    def recording(self, lesson, name):
        return f"{self.folder}/recordings/{lesson}/{name}.json"

    def block_list(self, lesson, batch):
        """The list of a block: the output of its recording job, the input of its replay."""
        return f"{self.folder}/{lesson}/recorded/{batch}.json"

    @cached_property
    def prepared(self):
        """The blocks, once each block's list is up to date: written for a block whose runs are all
        on disk (with their digests), removed for a block with runs to record, so that its
        recording job runs. Done when a rule of the campaign first asks, after every recording on
        disk is checked (a malformed one is one `RecordingError` line, or `stop`)."""
        found = {
            lesson: {name: path for name in self.runs(lesson) if os.path.lexists(path := self.recording(lesson, name))}
            for lesson in self.lessons
        }
        try:
            _, digests = check_recordings(found, CHECKED)
        except RecordingError as error:
            if self.stop is None:
                raise
            self.stop(error)
        for lesson, blocks in self.batches.items():
            for batch, runs in blocks.items():
                target = Path(self.block_list(lesson, batch))
                if all(name in found[lesson] for name in runs):
                    write_list(target, lesson, batch, [[found[lesson][name], digests[lesson][name]] for name in runs])
                elif target.exists():
                    target.unlink()
        return self.batches

    # input functions of the rules

    def targets(self, wildcards):
        """What the `campaign` target asks for: the comparison page, and every block's list, so
        that a block with runs to record (whose list `prepared` removed) has its recording job run,
        even when every result after it is there (Snakemake remakes a missing file only when a job
        that needs to run, or a target, asks for it)."""
        lists = [self.block_list(lesson, batch) for lesson, found in self.prepared.items() for batch in found]
        return [f"{self.folder}/index.md", *lists]

    def batch_list(self, wildcards):
        assert wildcards.batch in self.prepared[wildcards.lesson]
        return self.block_list(wildcards.lesson, wildcards.batch)

    def priority(self, wildcards):
        """The priority of a block's recording job: earlier blocks first (Snakemake starts the ready
        job of highest priority first), so that blocks fill one after another; below 0, the replay
        jobs' priority, so that a block whose runs are in replays first."""
        return -int(wildcards.batch.removeprefix("runs").split("to")[0])

    def transcript_folders(self, lesson):
        return [f"{self.folder}/{lesson}/transcripts/{batch}" for batch in self.prepared[lesson]]

    def transcripts(self, wildcards):
        return self.transcript_folders(wildcards.lesson)

    def judged(self, wildcards):
        """The verdicts of each replayed block of a lesson (`replay` judges its batch)."""
        return [f"{self.folder}/{wildcards.lesson}/judged/{batch}.json" for batch in self.prepared[wildcards.lesson]]

    def batch_group(self, wildcards):
        """The cluster group of a replay job, as for the lessons' own (workflow/rules/common.smk)."""
        return "batches" if len(self.prepared[wildcards.lesson]) > 1 else "lesson"

    def all_transcripts(self, wildcards):
        return [folder for lesson in self.lessons for folder in self.transcript_folders(lesson)]

    def lesson_files(self, name):
        """An input function: the file `name` of every lesson of the campaign."""

        def files(wildcards):
            return [f"{self.folder}/{lesson}/{name}" for lesson in self.lessons]

        files.__name__ = f"campaign_{name.split('.')[0]}"
        return files


# ---------------------------------------------------------------------------------------------
# The checks of the `campaign` section (what its schema cannot say)


def unattended_provider(name):
    """The provider of that name if it records without a person or a file, else None."""
    try:
        provider = clients.load_provider(name)
    except ValueError:
        return None
    return provider if provider.unattended else None


def campaign_provider(name):
    """The provider of that name if a campaign can take its runs: one that records them without a
    person, or one whose runs another tool records and `replaylab import-inspect --campaign`
    brings in (inspect_ai); else None."""
    try:
        provider = clients.load_provider(name)
    except ValueError:
        return None
    return provider if provider.unattended or provider.imported else None


def check_provider(name, source, where="$.provider", imported=False):
    """One line if `name` is not a registered provider that records without a person (or, with
    `imported`, one whose runs are imported), else None. (The configuration's schema cannot list
    the providers: they are the registry's.)"""
    found = campaign_provider(name) if imported else unattended_provider(name)
    if found is None:
        what = "a provider that records without a person" + (" or whose runs are imported" if imported else "")
        names = clients.names(lambda p: p.unattended or (imported and p.imported))
        return f"{source}: {where}: {name!r} is not {what}; the providers are: {', '.join(names)}"
    return None


def missing_imports(campaign):
    """One line if a model of the campaign has a provider that imports its runs (inspect_ai) and
    some of them are not there (no rule can record them), else None."""
    imported = {model.name: model.provider for model in campaign.models if campaign_provider(model.provider).imported}
    missing = [(lesson, name, run) for lesson in campaign.lessons for name, run in campaign.runs(lesson).items()
               if run.model in imported and not os.path.lexists(campaign.recording(lesson, name))]
    if not missing:
        return None
    lesson, name, run = missing[0]
    return (f"{campaign.recording(lesson, name)}: missing ({len(missing)} of the campaign's runs are): runs of the provider "
            f"{imported[run.model]} are recorded by Inspect AI (inspect eval replaylab/{lesson} --model MODEL "
            f"--epochs {campaign.settings['runs']}) and brought in with: replaylab import-inspect LOG... --campaign {campaign.name}")


def missing_runs(campaign):
    """{model: [Run not on disk]}, in the order of the campaign's models."""
    found = {model.name: [] for model in campaign.models}
    for lesson in campaign.lessons:
        for name, run in campaign.runs(lesson).items():
            if not os.path.lexists(campaign.recording(lesson, name)):
                found[run.model].append(run)
    return found


def unset_for_missing_runs(campaign):
    """One line if a model with runs not on disk needs an environment variable (its key, its
    server's URL) that is not set, else None: the campaign target checks it before any job runs."""
    missing = missing_runs(campaign)
    unset = unset_variables([model for model in campaign.models if missing[model.name]])
    return f"campaign {campaign.name}: {unset[0]}; nothing was sent" if unset else None


def scorecard_digests(root):
    """{campaign folder: digest of its scorecard.json} of every campaign under `root` (a file the
    summary page's job takes as input, so that a campaign compared anew rewrites the summary)."""
    found = {}
    for path in sorted(Path(root).glob("*/scorecard.json")):
        try:
            found[path.parent.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
    return found


def model_option(provider, model):
    """What the `record` target passes as --model: the configured model for a provider that asks a
    server for any model, nothing (its default program) for one with models of its own."""
    found = unattended_provider(provider)
    return model if found is not None and found.models is None else ""


def normalized(section):
    """The `campaign` section with each model as an entry (a name alone is `{name: NAME}`), as the
    schema checks it: its short form `models: [a, b]` reads as entries of the section's provider."""
    if not isinstance(section, dict) or not isinstance(section.get("models"), list):
        return section
    return {**section, "models": [{"name": m} if isinstance(m, str) else m for m in section["models"]]}


def _not_finite(value, where):
    """The first NaN in a setting's value (NaN passes every bound of the schema), as a path."""
    if isinstance(value, float) and math.isnan(value):
        return where
    if isinstance(value, dict):
        return next((found for k, v in value.items() if (found := _not_finite(v, f"{where}.{k}"))), None)
    if isinstance(value, list):
        return next((found for i, v in enumerate(value) if (found := _not_finite(v, f"{where}[{i}]"))), None)
    return None


def check_model(settings, index, source):
    """The first problem of the model `index` of the section, as one line, or None."""
    raw = settings["models"][index]
    at = f"{source}: $.campaign.models[{index}]"
    model = models(settings)[index]
    if model.provider is None:
        return f"{at}: names no provider: give it `provider:` (scripted or openai), or give the campaign one"
    problem = check_provider(model.provider, source, f"$.campaign.models[{index}].provider"
                             if isinstance(raw, dict) and "provider" in raw else "$.campaign.provider", imported=True)
    if problem:
        return problem
    provider = campaign_provider(model.provider)
    where = at if isinstance(raw, str) else f"{at}.name"
    try:
        check_text(model.name, where, 200)  # printed on the pages and in every line about its runs
    except RecordingError as error:
        return str(error)
    if provider.models is not None and model.name not in provider.models:
        return f"{where}: {model.name!r} is not a model of the {provider.name} provider; its models are: {', '.join(provider.models)}"
    if not file_safe(model.name)[:1].isalnum():
        return f"{where}: {model.name!r}: a model name must start with a letter or a digit"
    families = [registry.lesson(lesson) for lesson in settings["lessons"]]  # the seeds' questions; the plan checks the rest
    longest = max((Run(family.name, v, model.name, settings["runs"], i.id, i.seed) for family in families
                   for v, i in family.seeds.items()), key=lambda run: len(run.name))
    try:
        check_run_name(longest.name, where)
    except RecordingError as error:
        return f"{error} (the name of its run {longest.name!r})"
    if provider.server is None:
        for key in ("base_url", "base_url_env", "key_env", "settings"):
            if isinstance(raw, dict) and raw.get(key) not in (None, {}):
                return f"{at}.{key}: the {provider.name} provider has no server: it takes no {key}"
        return None
    if model.base_url and model.base_url_env:
        return f"{at}: give base_url or base_url_env, not both"
    if model.base_url and "@" in model.base_url.split("://", 1)[-1].split("/", 1)[0]:
        return f"{at}.base_url: holds a user part (a key?): a URL is written in the results; give the key's variable in key_env"
    for key in model.settings:
        if key in RESERVED_SETTINGS:
            return f"{at}.settings.{key}: replaylab sets this field of every request itself; it cannot be a setting"
    found = _not_finite(model.settings, f"{at}.settings")
    return f"{found}: nan is not a finite number" if found else None


def check(settings, lessons, source):
    """The first problem of the `campaign` section that the schema cannot see, as one line
    (`source`: the configuration's files), or None. Never plans the campaign: its cost does not
    grow with `runs`."""
    if settings.get("provider") is not None:
        problem = check_provider(settings["provider"], source, "$.campaign.provider", imported=True)
        if problem:
            return problem
    for index, lesson in enumerate(settings["lessons"]):
        if lesson not in lessons:
            known = "" if lesson in registry.names() else " (nor a lesson of replaylab)"
            return (f"{source}: $.campaign.lessons[{index}]: {lesson!r} is not one of the configured lessons{known}: "
                    f"{', '.join(lessons)}")
    for option in ("request_timeout", "max_seconds_per_run"):  # NaN passes every bound of the schema
        value = settings[option]
        if value is not None and math.isnan(value):
            return f"{source}: $.campaign.{option}: {value} is not a finite number"
    for model, price in settings["prices"].items():
        for side in ("input", "output"):
            if math.isnan(price[side]):
                return f"{source}: $.campaign.prices.{model}.{side}: {price[side]} is not a finite number"
    names = model_names(settings)
    for index in range(len(names)):
        problem = check_model(settings, index, source)
        if problem:
            return problem
        if names[index] in names[:index]:
            return f"{source}: $.campaign.models[{index}]: {names[index]!r} is a model of the campaign already: each needs a name of its own"
    for model in settings["prices"]:
        if model not in names:
            return f"{source}: $.campaign.prices.{model}: not one of the campaign's models ({', '.join(names)})"
    return None


# ---------------------------------------------------------------------------------------------
# A block's recording job


PROGRESS = ".snakemake/replaylab/progress"  # {campaign}/{lesson}.{block}.json: what a recording job is doing


def progress_file(campaign, lesson, batch):
    return Path(PROGRESS, campaign, f"{lesson}.{batch}.json")


class Progress:
    """What a recording job is doing, in a small file that `replaylab campaign` reads while it
    waits: runs to record, recorded, failed, running (each run has one request in flight at most)
    and the requests retried (the SDK's own retries, counted from its log). Rewritten whole at
    each change; never holds a key (numbers only)."""

    def __init__(self, path, todo):
        self.path = Path(path) if path else None
        self.counts = {"todo": todo, "recorded": 0, "failed": 0, "running": 0, "retries": 0}
        self.lock = threading.Lock()
        self.write()

    def add(self, **changes):
        with self.lock:
            for key, change in changes.items():
                self.counts[key] += change
            self.write()

    def write(self):
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(json.dumps(self.counts))
        os.replace(temporary, self.path)

    def count_retries(self):
        """Count the SDK's retries: it logs each at INFO on `openai._base_client`."""
        progress = self

        class Retries(logging.Handler):
            def emit(self, record):
                if str(record.msg).startswith("Retrying request"):
                    progress.add(retries=1)

        logger = logging.getLogger("openai._base_client")
        logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
        logger.propagate = False  # the job's own output stays as it was
        logger.addHandler(Retries())


def record_block(campaign, lesson, batch, listing, connections, log=sys.stdout, progress=None):
    """Record the runs of one block that are not on disk, `connections[endpoint]` at a time for
    each endpoint (threads, each waiting on its provider), then write the block's list
    (`listing`). A run's file appears whole when the run is done (`cli.record_new`), or not at all;
    a run on disk is never recorded again. What is recorded goes to `log`; a run that fails is one
    line there and on stderr; the others are recorded, and the job then fails with `RecordFailed`
    (its list is not written, so the next run records what is missing). `progress`: the file
    `Progress` keeps up to date.

    The threads are daemon threads: when the job is interrupted (Ctrl-C, or its Snakemake gone,
    replaylab.jobs), the process ends at once and its requests with it; a run it was writing at
    that moment leaves at most a hidden temporary file, which the next job of the block removes."""
    runs = campaign.batches[lesson][batch]
    paths = {name: Path(campaign.recording(lesson, name)) for name in runs}
    todo = [name for name, path in paths.items() if not os.path.lexists(path)]
    for name in todo:
        for leftover in paths[name].parent.glob(f".{name}.json.*.tmp"):  # of a job that was killed
            leftover.unlink()
    by_name = {model.name: model for model in campaign.models}
    by_endpoint = {}
    for name in todo:
        model = by_name[runs[name].model]
        by_endpoint.setdefault(model.endpoint, []).append((runs[name], paths[name]))
    for endpoint in by_endpoint:  # a server's variable that is not set: one line, before any request
        missing = unset_variables([m for m in campaign.models if m.endpoint == endpoint])
        if missing:
            raise RecordFailed(f"{lesson}/{batch}: {missing[0]}")
    at_once = sum(min(connections[endpoint], len(work)) for endpoint, work in by_endpoint.items())
    print(f"{lesson}/{batch}: {len(todo)} of {len(runs)} runs to record, {at_once} at a time", file=log, flush=True)
    tracker = Progress(progress, len(todo))
    tracker.count_retries()
    failures = _record_all(by_endpoint, campaign.settings, connections, log, tracker)
    if failures:
        raise RecordFailed(f"{len(failures)} of {len(todo)} runs of {lesson}/{batch} not recorded; the first: {failures[0]}")
    entries = []
    for name, path in paths.items():
        check_recording(path, lesson)
        entries.append([str(path), hashlib.sha256(path.read_bytes()).hexdigest()])
    write_list(listing, lesson, batch, entries)


def unset_variables(found):
    """One line per environment variable that models of `found` need and that is not set: a
    server's (`base_url_env`) and a key's. Names only, never values."""
    from replaylab.agents import environment

    wanted = {}
    for model in found:
        provider = unattended_provider(model.provider)
        if provider is None or provider.server is None:
            continue
        if model.base_url_env and not model.base_url:
            wanted.setdefault((model.base_url_env, "the URL of the server"), []).append(model.name)
        wanted.setdefault((model.key_variable(), "the key"), []).append(model.name)
    return [f"{variable} is not set: it holds {what} of {', '.join(names)}"
            for (variable, what), names in wanted.items() if variable and not environment.is_set(variable)]


def _record_all(by_endpoint, settings, connections, log, progress):
    """Record each (run, path) of `by_endpoint` ({endpoint: work}) in daemon threads,
    `connections[endpoint]` for each endpoint; the failures' lines."""
    from replaylab import cli  # the command line's recording of one run (and the provider's SDK)

    failures, lock, threads = [], threading.Lock(), []

    def worker(todo):
        while True:
            try:
                run, path = todo.get_nowait()
            except queue.Empty:
                return
            progress.add(running=1)
            try:
                cli.record_new(recording_request(settings, run), path)
                with lock:
                    print(f"recorded {path}", file=log, flush=True)
                progress.add(running=-1, recorded=1)
            except Exception as error:  # a provider's failure, or a bug: this run's line, the others go on
                line = f"{path}: not recorded: {printable(str(error))}"
                with lock:
                    failures.append(line)
                    print(line, file=log, flush=True)
                    print(line, file=sys.stderr, flush=True)
                progress.add(running=-1, failed=1)

    for endpoint, work in by_endpoint.items():
        todo = queue.Queue()
        for item in work:
            todo.put(item)
        threads += [threading.Thread(target=worker, args=(todo,), daemon=True, name=f"record-{len(threads) + i}")
                    for i in range(min(connections[endpoint], len(work)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.5)  # a join with a timeout: Ctrl-C reaches this thread at once
    return failures


def model_options(model):
    """What of a model's entry its provider's client takes: the server's URL (read from its
    variable when the entry names one), the key's variable, the settings."""
    from replaylab.agents import environment

    base_url = model.base_url or (environment.setting(model.base_url_env) if model.base_url_env else None)
    return {"base_url": base_url, "key_variable": model.key_env, "settings": dict(model.settings)}


def recording_request(settings, run):
    """What `cli.record_new` needs to record one run of the campaign."""
    from replaylab.agents import loop
    from replaylab.cli import Request

    model = next(m for m in models(settings) if m.name == run.model)
    lesson = registry.lesson(run.lesson)
    instance = lesson.instance_of(run)
    options = clients.Options(run.lesson, run.variant, run.model, run.seed, (), lesson.part("agent"),
                              timeout=settings["request_timeout"], max_retries=settings["max_retries"],
                              instance=instance, **model_options(model))
    limits = loop.Limits(settings["max_tokens_per_run"], settings["max_seconds_per_run"])
    return Request(clients.load_provider(model.provider), options, lesson.variant_of(run), run.name, run.group, limits,
                   instance.id)
