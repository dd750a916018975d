"""Campaigns: many recorded runs per model, of every variant of the instances some lessons' families
take, to compare models.

This module plans a campaign (which runs, their names and files, their blocks) when a rule of the
campaign first asks (only when the campaign is a target), and gives the input functions of its
rules; its settings and their checks are `campaign_settings`, its recording job
`campaign_recording`. The workflow (workflow/rules/campaign.smk) replays, judges and scores the runs
with the lessons' own rules, and `replaylab.comparison` compares the models. An endpoint (a server,
or a provider with none) has a Snakemake resource of its own, of `max_connections` units.

A recording is a source, never an output Snakemake may remove: a recording job's output is its
block's list (results/campaigns/<name>/<lesson>/recorded/<block>.json, the recordings with the
digest of each), and the recordings lie beside it, in results/campaigns/<name>/recordings/. The job
records the block's runs that are not on disk (each written whole, or not at all), never one that
is; the list of a block whose runs are all on disk is written when the campaign is planned, so that
a recording changed by hand reruns its block's replay, and a missing one its recording job.
"""

import hashlib
import math
import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from replaylab.agents.recording import RecordingError, check_run_name
from replaylab.batches import write_list
from replaylab.campaign_settings import (
    Run,
    campaign_provider,
    model_names,
    models,
    unset_variables,
)
from replaylab.errors import InvalidInput
from replaylab.inputs import check_recordings
from replaylab.lessons import registry
from replaylab.selection import SelectionError, select

if TYPE_CHECKING:
    from replaylab.agents.clients import Provider
    from replaylab.campaign_settings import Model

FOLDER = "results/campaigns"


MOST_BATCHES = 32  # blocks per lesson of a campaign, unless a block would pass batch_size


RUNS_PER_CONNECTION = 16  # a block holds about this many runs per connection its job holds
# The most runs a campaign plans: its plan holds every run, so that a dry run of a million took
# 10 s and 330 MB here (bench/results.md), and seven million had taken 191 s and 1.8 GB.
MOST_RUNS = 1_000_000


CHECKED = ".snakemake/replaylab/checked-campaign-recordings.json"


def connections_per_job(settings: dict[str, Any]) -> int:
    """The connections to each endpoint one recording job holds (a Snakemake resource per
    endpoint, `provider_connections_<n>`, of which there are `max_connections`): half of them, so
    that two jobs record at once and one's start and last runs overlap the other's runs; all of
    them when there are fewer than two."""
    return cast(int, max(1, settings["max_connections"] // 2))


def endpoints(settings: dict[str, Any]) -> dict[str, list[str]]:
    """{endpoint: [model names]} of a campaign, in the order of its models."""
    found: dict[str, list[str]] = {}
    for model in models(settings):
        found.setdefault(model.endpoint, []).append(model.name)
    return found


def resource_names(settings: dict[str, Any]) -> dict[str, str]:
    """{endpoint: the name of its Snakemake resource}: `provider_connections_<n>`, n from 0 in
    the order of `endpoints`."""
    return {endpoint: f"provider_connections_{n}" for n, endpoint in enumerate(endpoints(settings))}


class Campaign:
    """A campaign's plan, and the input functions of its rules. Nothing is planned until a rule of
    the campaign asks: a campaign of many runs costs nothing to a workflow that does not target it."""

    def __init__(self, settings: dict[str, Any], batch_size: int, stop: Callable[[object], object] | None = None,
                 source: str = "the configuration") -> None:
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
    def name(self) -> str:
        return cast(str, self.settings["name"])

    @property
    def folder(self) -> str:
        return f"{FOLDER}/{self.name}"

    @property
    def lessons(self) -> list[str]:
        return list(self.settings["lessons"])

    @cached_property
    def models(self) -> list["Model"]:
        return models(self.settings)

    @property
    def shown(self) -> dict[str, Any]:
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
    def connections(self) -> int:
        return connections_per_job(self.settings)

    @property
    def resources(self) -> dict[str, Callable[[Any], int]]:
        """What a recording job holds of each endpoint's resource (a block holds runs of every
        model): `job_connections` units."""
        return {name: self.job_connections for name in resource_names(self.settings).values()}

    def job_connections(self, wildcards: Any) -> int:
        """The connections of each endpoint a recording job holds: `connections`, or all of them
        when the campaign has a single block (no other job to share them with)."""
        alone = sum(len(blocks) for blocks in self.batches.values()) == 1
        return self.settings["max_connections"] if alone else self.connections

    # the plan

    def instances(self, lesson: str) -> list[str]:
        """The ids of the instances of a lesson the campaign takes (`instances:`, the seeds' own
        questions by default): drawn when the campaign is planned, never when the workflow only
        starts (a family is drawn in a fraction of a second, which every start would pay)."""
        return self._instances[lesson]

    @cached_property
    def _instances(self) -> dict[str, list[str]]:
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

    def runs(self, lesson: str) -> dict[str, Run]:
        """{run name: Run} of one lesson: every model, every instance taken, every variant of it,
        indices 1 to `runs`."""
        return self._runs[lesson]

    def size(self) -> int:
        """How many runs the plan holds, counted without planning them."""
        per_index = sum(len(registry.lesson(lesson).instance_variants(i)) for lesson in self.lessons for i in self.instances(lesson))
        return len(self.settings["models"]) * int(self.settings["runs"]) * per_index

    @cached_property
    def _runs(self) -> dict[str, dict[str, Run]]:
        size = self.size()
        if size > MOST_RUNS:  # before anything is planned: the plan's memory and time grow with it
            error = InvalidInput(f"{self.source}: $.campaign.runs: {self.settings['runs']} runs of each of "
                                 f"{len(self.settings['models'])} models make {size:,} runs, more than a campaign plans "
                                 f"({MOST_RUNS:,}): fewer runs, models or instances, or campaigns of their own")
            if self.stop is None:
                raise error
            self.stop(error)
        found: dict[str, dict[str, Run]] = {}
        for lesson in self.lessons:
            runs: dict[str, Run]
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

    def _check_names(self, runs: dict[str, Run]) -> None:
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

    def block_size(self, lesson: str) -> int:
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
    def batches(self) -> dict[str, dict[str, dict[str, Run]]]:
        """{lesson: {block: {run name: Run}}}, a block named runs<first>to<last>, in index order."""
        found: dict[str, dict[str, dict[str, Run]]] = {}
        for lesson in self.lessons:
            block, last = self.block_size(lesson), self.settings["runs"]
            blocks: dict[str, dict[str, Run]]
            blocks = found[lesson] = {}
            for name, run in sorted(self.runs(lesson).items(), key=lambda item: (item[1].index, item[0])):
                first = (run.index - 1) // block * block + 1
                blocks.setdefault(f"runs{first}to{min(first + block - 1, last)}", {})[name] = run
        return found

    def recording(self, lesson: str, name: str) -> str:
        return f"{self.folder}/recordings/{lesson}/{name}.json"

    def block_list(self, lesson: str, batch: str) -> str:
        """The list of a block: the output of its recording job, the input of its replay."""
        return f"{self.folder}/{lesson}/recorded/{batch}.json"

    @cached_property
    def prepared(self) -> dict[str, dict[str, dict[str, Run]]]:
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

    def targets(self, wildcards: Any) -> list[str]:
        """What the `campaign` target asks for: the comparison page, and every block's list, so
        that a block with runs to record (whose list `prepared` removed) has its recording job run,
        even when every result after it is there (Snakemake remakes a missing file only when a job
        that needs to run, or a target, asks for it)."""
        lists = [self.block_list(lesson, batch) for lesson, found in self.prepared.items() for batch in found]
        return [f"{self.folder}/index.md", *lists]

    def batch_list(self, wildcards: Any) -> str:
        assert wildcards.batch in self.prepared[wildcards.lesson]
        return self.block_list(wildcards.lesson, wildcards.batch)

    def priority(self, wildcards: Any) -> int:
        """The priority of a block's recording job: earlier blocks first (Snakemake starts the ready
        job of highest priority first), so that blocks fill one after another; below 0, the replay
        jobs' priority, so that a block whose runs are in replays first."""
        return -int(wildcards.batch.removeprefix("runs").split("to")[0])

    def transcript_files(self, lesson: str) -> list[str]:
        return [f"{self.folder}/{lesson}/transcripts/{batch}.jsonl" for batch in self.prepared[lesson]]

    def transcripts(self, wildcards: Any) -> list[str]:
        return self.transcript_files(wildcards.lesson)

    def judged(self, wildcards: Any) -> list[str]:
        """The verdicts of each replayed block of a lesson (`replay` judges its batch)."""
        return [f"{self.folder}/{wildcards.lesson}/judged/{batch}.json" for batch in self.prepared[wildcards.lesson]]

    def batch_group(self, wildcards: Any) -> str:
        """The cluster group of a replay job, as for the lessons' own (workflow/rules/common.smk)."""
        return "batches" if len(self.prepared[wildcards.lesson]) > 1 else "lesson"

    def all_transcripts(self, wildcards: Any) -> list[str]:
        return [file for lesson in self.lessons for file in self.transcript_files(lesson)]

    def unfinished(self, wildcards: Any) -> list[str]:
        """The partial files (replaylab.unfinished) of runs the campaign no longer asks for (a
        lowered `runs`): paid for and never completed, their spend is on the comparison's page,
        which is made again when they change. A partial file of a run the campaign asks for is not
        one: its recording job continues the run and removes it."""
        return [str(path) for lesson in self.lessons
                for path in sorted(Path(self.folder, "recordings", lesson).glob(".*.json.partial"))
                if path.name[1:].removesuffix(".json.partial") not in self.runs(lesson)]

    def lesson_files(self, name: str) -> Callable[[Any], list[str]]:
        """An input function: the file `name` of every lesson of the campaign."""

        def files(wildcards: Any) -> list[str]:
            return [f"{self.folder}/{lesson}/{name}" for lesson in self.lessons]

        files.__name__ = f"campaign_{name.split('.')[0]}"
        return files


def missing_imports(campaign: Campaign) -> str | None:
    """One line if a model of the campaign has a provider that imports its runs (inspect_ai) and
    some of them are not there (no rule can record them), else None."""
    imported = {model.name: model.provider for model in campaign.models
                if cast("Provider", campaign_provider(model.provider)).imported}
    missing = [(lesson, name, run) for lesson in campaign.lessons for name, run in campaign.runs(lesson).items()
               if run.model in imported and not os.path.lexists(campaign.recording(lesson, name))]
    if not missing:
        return None
    lesson, name, run = missing[0]
    return (f"{campaign.recording(lesson, name)}: missing ({len(missing)} of the campaign's runs are): runs of the provider "
            f"{imported[run.model]} are recorded by Inspect AI (inspect eval replaylab/{lesson} --model MODEL "
            f"--epochs {campaign.settings['runs']}) and brought in with: replaylab import-inspect LOG... --campaign {campaign.name}")


def recorded_elsewhere(campaign: Campaign) -> str | None:
    """One line if a model of the campaign has a provider whose runs Inspect AI records
    (inspect_ai), naming the configuration's field and what to do instead, else None:
    `replaylab campaign` records the runs it lacks and says what it sends, and no client of
    replaylab records such a run; `snakemake campaign` compares them once imported."""
    for index, (raw, model) in enumerate(zip(campaign.settings["models"], campaign.models)):
        provider = campaign_provider(model.provider)
        if provider is None or not provider.imported:
            continue
        field = f"$.campaign.models[{index}].provider" if isinstance(raw, dict) and "provider" in raw else "$.campaign.provider"
        files = " ".join(part for part in campaign.source.split(" + ") if part != "the options") or "config/config.yaml"
        lessons = campaign.lessons
        task = f"replaylab/{lessons[0]}" if len(lessons) == 1 else f"replaylab/LESSON (each of {', '.join(lessons)})"
        return (f"{campaign.source}: {field}: {model.provider!r} (model {model.name!r}): replaylab campaign cannot record "
                f"runs of Inspect AI: run inspect eval {task} --model {model.name} --epochs {campaign.settings['runs']}, "
                f"bring the logs in with replaylab import-inspect LOG... --campaign {campaign.name}, then compare with "
                f"snakemake campaign --configfile {files}")
    return None


def missing_runs(campaign: Campaign) -> dict[str, list[Run]]:
    """{model: [Run not on disk]}, in the order of the campaign's models: what `replaylab
    campaign` is to record. `InvalidInput` (`recorded_elsewhere`'s line) for a campaign with a
    model whose runs Inspect AI records: the command cannot record them."""
    problem = recorded_elsewhere(campaign)
    if problem:
        raise InvalidInput(problem)
    return not_on_disk(campaign)


def not_on_disk(campaign: Campaign) -> dict[str, list[Run]]:
    """{model: [Run not on disk]}, in the order of the campaign's models."""
    found: dict[str, list[Run]] = {model.name: [] for model in campaign.models}
    for lesson in campaign.lessons:
        for name, run in campaign.runs(lesson).items():
            if not os.path.lexists(campaign.recording(lesson, name)):
                found[run.model].append(run)
    return found


def unset_for_missing_runs(campaign: Campaign) -> str | None:
    """One line if a model with runs not on disk needs an environment variable (its key, its
    server's URL) that is not set, else None: the campaign target checks it before any job runs."""
    missing = not_on_disk(campaign)
    unset = unset_variables([model for model in campaign.models if missing[model.name]])
    return f"campaign {campaign.name}: {unset[0]}; nothing was sent" if unset else None


def scorecard_digests(root: str | Path) -> dict[str, str]:
    """{campaign folder: digest of its scorecard.json} of every campaign under `root` (a file the
    summary page's job takes as input, so that a campaign compared anew rewrites the summary)."""
    found = {}
    for path in sorted(Path(root).glob("*/scorecard.json")):
        try:
            found[path.parent.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
    return found
