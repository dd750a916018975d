"""A campaign's settings: its models (each an entry of its own: provider, server, key's variable,
generation settings), the names of their runs, and the checks of the `campaign` section that its
schema cannot make, run when the workflow starts (never a plan: their cost does not grow with the
campaign).

A run's name says its model (made safe for a file name, `agents.names`), its variant and its index:
`org_2fmodel_3atag__default__007`, and, for an instance other than the seeds' own questions, the
instance: `model__lesson-017__default__007`. Its group, `<model>__<index>` (with the instance
when it names one), holds the runs of one index of one model of one instance, so that the runs of a
lesson judged per group (one of each variant) are judged together.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.agents import clients, environment
from replaylab.agents.names import file_safe
from replaylab.agents.recording import RecordingError, check_run_name, check_text
from replaylab.lessons import registry


@dataclass(frozen=True)
class Run:
    lesson: str
    variant: str
    model: str
    index: int  # from 1
    instance: str | None = None  # an instance of the lesson's family; None: the seed instance of the variant
    seed_instance: bool = True  # whether it is one of the seeds' own questions (named as before the families)

    @property
    def name(self) -> str:
        if self.seed_instance:
            return f"{file_safe(self.model)}__{self.variant}__{self.index:03d}"
        return f"{file_safe(self.model)}__{self.instance}__{self.variant}__{self.index:03d}"

    @property
    def group(self) -> str:
        if self.seed_instance:
            return f"{file_safe(self.model)}__{self.index:03d}"
        return f"{file_safe(self.model)}__{self.instance}__{self.index:03d}"

    @property
    def seed(self) -> int:
        return self.index - 1


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
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        """Who receives its requests: a provider with no server (scripted) is one endpoint; for a
        provider with one, its URL as written, or `$VARIABLE`."""
        found = unattended_provider(self.provider)
        if found is None or found.server is None:
            return self.provider
        if self.base_url:
            return self.base_url.rstrip("/")
        return f"${self.base_url_env or found.server}"

    def key_variable(self) -> str | None:
        found = unattended_provider(self.provider)
        return self.key_env or (found.key if found else None)

    def recorded(self) -> dict[str, Any]:
        """What of the entry decides its runs (the key's variable does not)."""
        return {"name": self.name, "provider": self.provider, "endpoint": self.endpoint, "settings": self.settings}


def models(settings: dict[str, Any]) -> list[Model]:
    """The models of a `campaign` section, as entries: a name alone (`models: [a, b]`, the short
    form) is an entry of the section's `provider`, as is an entry that names none."""
    found = []
    entry: Any
    for entry in settings["models"]:
        entry = {"name": entry} if isinstance(entry, str) else dict(entry)
        entry.setdefault("provider", settings.get("provider"))
        entry["settings"] = dict(entry.get("settings") or {})
        found.append(Model(**entry))
    return found


def model_names(settings: dict[str, Any]) -> list[str]:
    return [entry if isinstance(entry, str) else entry["name"] for entry in settings["models"]]


def unattended_provider(name: object) -> clients.Provider | None:
    """The provider of that name if it records without a person or a file, else None."""
    try:
        provider = clients.load_provider(name)
    except ValueError:
        return None
    return provider if provider.unattended else None


def campaign_provider(name: object) -> clients.Provider | None:
    """The provider of that name if a campaign can take its runs: one that records them without a
    person, or one whose runs another tool records and `replaylab import-inspect --campaign`
    brings in (inspect_ai); else None."""
    try:
        provider = clients.load_provider(name)
    except ValueError:
        return None
    return provider if provider.unattended or provider.imported else None


def check_provider(name: object, source: str, where: str = "$.provider", imported: bool = False) -> str | None:
    """One line if `name` is not a registered provider that records without a person (or, with
    `imported`, one whose runs are imported), else None. (The configuration's schema cannot list
    the providers: they are the registry's.)"""
    found = campaign_provider(name) if imported else unattended_provider(name)
    if found is None:
        what = "a provider that records without a person" + (" or whose runs are imported" if imported else "")
        names = clients.names(lambda p: p.unattended or (imported and p.imported))
        return f"{source}: {where}: {name!r} is not {what}; the providers are: {', '.join(names)}"
    return None


def model_option(provider: str, model: str) -> str:
    """What the `record` target passes as --model: the configured model for a provider that asks a
    server for any model, nothing (its default program) for one with models of its own."""
    found = unattended_provider(provider)
    return model if found is not None and found.models is None else ""


def normalized(section: Any) -> Any:
    """The `campaign` section with each model as an entry (a name alone is `{name: NAME}`), as the
    schema checks it: its short form `models: [a, b]` reads as entries of the section's provider."""
    if not isinstance(section, dict) or not isinstance(section.get("models"), list):
        return section
    return {**section, "models": [{"name": m} if isinstance(m, str) else m for m in section["models"]]}


def _not_finite(value: Any, where: str) -> str | None:
    """The first NaN in a setting's value (NaN passes every bound of the schema), as a path."""
    if isinstance(value, float) and math.isnan(value):
        return where
    if isinstance(value, dict):
        return next((found for k, v in value.items() if (found := _not_finite(v, f"{where}.{k}"))), None)
    if isinstance(value, list):
        return next((found for i, v in enumerate(value) if (found := _not_finite(v, f"{where}[{i}]"))), None)
    return None


def check_model(settings: dict[str, Any], index: int, source: str) -> str | None:
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
    assert provider is not None  # check_provider found it
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


def check(settings: dict[str, Any], lessons: Sequence[str], source: str) -> str | None:
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


def unset_variables(found: Iterable[Model]) -> list[str]:
    """One line per environment variable that models of `found` need and that is not set: a
    server's (`base_url_env`) and a key's. Names only, never values."""
    wanted: dict[tuple[str | None, str], list[str]] = {}
    for model in found:
        provider = unattended_provider(model.provider)
        if provider is None or provider.server is None:
            continue
        if model.base_url_env and not model.base_url:
            wanted.setdefault((model.base_url_env, "the URL of the server"), []).append(model.name)
        wanted.setdefault((model.key_variable(), "the key"), []).append(model.name)
    return [f"{variable} is not set: it holds {what} of {', '.join(names)}"
            for (variable, what), names in wanted.items() if variable and not environment.is_set(variable)]


def model_options(model: Model) -> dict[str, Any]:
    """What of a model's entry its provider's client takes: the server's URL (read from its
    variable when the entry names one), the key's variable, the settings."""
    base_url = model.base_url or (environment.setting(model.base_url_env) if model.base_url_env else None)
    return {"base_url": base_url, "key_variable": model.key_env, "settings": dict(model.settings)}
