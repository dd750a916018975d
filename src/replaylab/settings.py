"""The project's settings, read and checked once, as one frozen, typed object.

The configuration is config/config.yaml (for a campaign, with files of campaign settings over its
`campaign` section); the workflow has it already, merged by Snakemake. Either way `of` checks it as
a run of the workflow does (`configuration.check`: the JSON schema
workflow/schemas/config.schema.yaml, the one statement of each field's type and bounds, then what a
schema cannot say) and gives a `Settings`: the fields the workflow and the commands use, typed,
with paths resolved against the project's folder (never the current one). A problem is one
`InputError` line naming the file and the field.

- the workflow: `settings.of(config, source, folder, schema)` (Snakemake's merged configuration);
- `doctor`, `verify`: `settings.load(folder)`;
- `campaign`: `settings.read(folder, campaign_files)`, its options set over the section, then `of`.
"""

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab import configuration, project
from replaylab.agents.recording import printable
from replaylab.campaign_settings import Model, models

InputError = configuration.InputError

CONFIG = project.CONFIG
SCHEMA = Path("workflow") / "schemas" / "config.schema.yaml"
# The schema of the clone this library belongs to, for a project that is a folder of the user's
# own (the workflow used as a module): it runs that clone's workflow.
LIBRARY_SCHEMA = Path(__file__).resolve().parents[2] / SCHEMA
CAMPAIGNS = Path("results") / "campaigns"


@dataclass(frozen=True)
class CampaignSettings:
    """The `campaign` section, checked: its fields typed, its models as entries (a name alone is an
    entry of the section's provider); `section()` is the section as written, for the plan and for
    results/campaigns/<name>/campaign.yaml."""

    name: str
    provider: str | None
    models: tuple[Model, ...]
    lessons: tuple[str, ...]
    instances: object  # a selection of instances (replaylab.selection): seeds, all, a number, or {count, difficulty, seed}
    runs: int
    max_connections: int
    request_timeout: float
    max_retries: int
    max_tokens_per_run: int | None
    max_seconds_per_run: float | None
    detect: float
    _section: dict[str, Any] = field(repr=False, compare=False)

    @property
    def prices(self) -> dict[str, Any]:
        return copy.deepcopy(self._section["prices"])

    def section(self) -> dict[str, Any]:
        """A copy of the section as written (the short form of models kept): the plan's settings."""
        return copy.deepcopy(self._section)


@dataclass(frozen=True)
class Settings:
    """The configuration of one project, checked. `folder` is the project's: every path of the
    configuration is relative to it. `source` names where the configuration came from (its files,
    --config, a command's options), for a message."""

    folder: Path
    source: str
    lessons: tuple[str, ...]
    tolerance: float
    run_folders: tuple[Path, ...]  # absolute
    batch_size: int
    record_lesson: str
    record_run: str
    provider: str
    model: str
    seed: int
    campaign: CampaignSettings
    _config: dict[str, Any] = field(repr=False, compare=False)

    @property
    def recordings(self) -> Path:
        return self.folder / "recordings"

    @property
    def results(self) -> Path:
        return self.folder / "results"

    def campaign_folder(self, name: str | None = None) -> Path:
        """results/campaigns/<name>/ of the project (by default the configured campaign's)."""
        return self.folder / CAMPAIGNS / (name or self.campaign.name)

    def config(self) -> dict[str, Any]:
        """A copy of the whole configuration, checked, as plain data (what Snakemake's `config` holds)."""
        return copy.deepcopy(self._config)


def shown(path: str | Path, folder: str | Path) -> str:
    """A path as a message names it: relative to the project's folder when inside it, else as given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path(folder).resolve())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def schema_of(folder: str | Path) -> Path | None:
    """The configuration's schema: the project's own workflow/schemas/, else that of the clone this
    library is part of; None when there is neither."""
    return next((path for path in (Path(folder) / SCHEMA, LIBRARY_SCHEMA) if path.is_file()), None)


def read_mapping(path: str | Path, what: str, name: str | None = None) -> dict[str, Any]:
    """The YAML mapping of a file, or one `InputError` line naming it (`name`, by default the path
    as given) and what is wrong; `what` says what the file is."""
    import yaml

    name = name or str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{name}: no such file ({what})") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputError(f"{name}: not a YAML file: {printable(str(error).splitlines()[0])}") from None
    if not isinstance(data, dict):
        raise InputError(f"{name}: not a mapping of settings ({what})")
    return data


def read(folder: str | Path, campaign_files: Iterable[str | Path] = ()) -> tuple[dict[str, Any], str]:
    """(the configuration, unchecked, where it came from): the project's config/config.yaml, with
    each of `campaign_files` (YAML: a `campaign:` section, or its keys) set over its campaign
    section, in order. `campaign_files` are relative to the current folder, as a command line gives
    them."""
    folder = Path(folder)
    config = read_mapping(folder / CONFIG, "the workflow's configuration", str(CONFIG))
    sources = [str(CONFIG)]
    for path in campaign_files:
        given = read_mapping(path, "a campaign's settings", shown(path, folder))
        given = given["campaign"] if isinstance(given.get("campaign"), dict) else given
        section = config.get("campaign")
        config["campaign"] = {**(section if isinstance(section, dict) else {}), **given}
        sources.append(shown(path, folder))
    return config, " + ".join(sources)


def of(config: dict[str, Any], source: str, folder: str | Path = ".", schema: str | Path | None = None) -> Settings:
    """The settings of a configuration (a dict, such as Snakemake's `config`), checked as the
    workflow checks it: one `InputError` line for the first problem. As Snakemake's `config` must,
    `config` itself then holds each value as the schema types it (configuration.coerce)."""
    folder = Path(folder).resolve()
    schema = schema or schema_of(folder)
    if schema is None:
        raise InputError(f"{SCHEMA}: not found in {folder} nor beside replaylab's library: the configuration cannot be checked")
    configuration.check(config, source, schema)
    section = config["campaign"]
    campaign = CampaignSettings(
        name=section["name"], provider=section["provider"], models=tuple(models(section)), lessons=tuple(section["lessons"]),
        instances=copy.deepcopy(section["instances"]), runs=section["runs"], max_connections=section["max_connections"],
        request_timeout=section["request_timeout"], max_retries=section["max_retries"],
        max_tokens_per_run=section["max_tokens_per_run"], max_seconds_per_run=section["max_seconds_per_run"],
        detect=section["detect"], _section=copy.deepcopy(section))
    return Settings(
        folder=folder, source=source, lessons=tuple(config["lessons"]), tolerance=config["tolerance"],
        run_folders=tuple(folder / path for path in config["run_folders"]), batch_size=config["batch_size"],
        record_lesson=config["record_lesson"], record_run=config["record_run"], provider=config["provider"],
        model=config["model"], seed=config["seed"], campaign=campaign, _config=copy.deepcopy(config))


def load(folder: str | Path, campaign_files: Iterable[str | Path] = ()) -> Settings:
    """The settings of the project in `folder`: config/config.yaml (with `campaign_files` over its
    campaign section), read and checked."""
    config, source = read(folder, campaign_files)
    return of(config, source, folder)
