"""Clients, and the registry of providers: who produces the model's messages.

A client has `model`, `secrets` and `complete(system, conversation, tools) -> ModelMessage`; it may
also report `provenance_extra()` (what only it knows: token usage, request ids, server, seed) and
`tokens_used()` and `tokens_unbounded()` (for a per-run token limit: the tokens counted, and why a
count had no bound, which stops a limited run; loop.Limits).

A provider is a module of this package that registers itself when it is imported, with
`register(Provider(...))`: its name, how it makes a client from `Options`, what it reads from the
environment, its provenance kind (which decides the label pages show) and the command that
records one of its runs again. The command line, the workflow's configuration check, `doctor`,
the provenance of a recording and the re-record command of a replay mismatch all learn of
providers from `providers()` and `load_provider()`: adding a provider is adding one module here.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replaylab.agents.secrets import is_provider_name
from replaylab.errors import InvalidInput, ProviderFailed

if TYPE_CHECKING:
    from replaylab.agents.loop import Client
    from replaylab.agents.messages import ModelMessage
    from replaylab.agents.recording import Recording


class ProviderError(ProviderFailed):
    """A provider failed; the text is cleaned of secrets and keeps the useful part (status, reason)."""


@dataclass(frozen=True)
class Options:
    """What one recording asks of a provider, from the command line or a campaign."""

    lesson: str
    variant: str
    model: str | None = None
    seed: int = 0
    messages: Sequence[ModelMessage] = ()  # a provider that takes a file: the messages of --from FILE
    agent: Any = None  # the lesson's scripted baselines (its `agent` module)
    base_url: str | None = None
    timeout: float | None = None  # seconds per request
    max_retries: int | None = None  # retries of a request that failed in a way worth retrying
    key_variable: str | None = None  # the environment variable of the key (default: the provider's)
    settings: Any = None  # generation settings sent with every request ({name: value}), and recorded
    instance: Any = None  # the Instance of the lesson's family the run is of (None: the seed instance of the variant)


@dataclass(frozen=True)
class Provider:
    """What the rest of replaylab knows of a provider."""

    name: str  # --provider NAME, `provider:` of the configuration, provenance["provider"]
    kind: str  # provenance kind, one of agents.recording.KINDS: it decides the label of its runs
    make_client: Callable[[Options], Client] | None  # (Options) -> client; None when no client of replaylab makes its runs (mcp)
    describe: Callable[[Options], str] | None  # (Options) -> provenance "how": who wrote the messages, and how
    rerecord: Callable[[Recording], str]  # (recording) -> the command that records the run again
    run_name: Callable[[Options], str] | None = None  # (Options) -> a run's default name
    group: str = "live"  # the default group of its runs
    key: str | None = None  # the environment variable that holds its key, read when a client is made
    server: str | None = None  # the environment variable of its server's URL (doctor contacts it)
    models: tuple[str, ...] | None = None  # the models it knows; None: whatever its server knows
    default_model: str | None = None
    unattended: bool = False  # records with no person and no file: it may record campaigns
    takes_file: bool = False  # its messages come from --from FILE
    imported: bool = False  # its runs are recorded by another tool and imported (inspect_ai): a campaign takes them, never records one
    kind_of: Callable[[str], str] | None = None  # (model) -> the provenance kind of its runs of that model, when it depends on the model

    def kind_for(self, model: str) -> str:
        """The provenance kind of this provider's runs of `model` (which decides their label)."""
        return self.kind if self.kind_of is None else self.kind_of(model)


_REGISTERED: dict[str, Provider] = {}


def register(provider: Provider) -> Provider:
    """Called by a provider module when it is imported (under its module's name: `load_provider`
    finds it by that name)."""
    _REGISTERED[provider.name] = provider
    return provider


def load_provider(name: object) -> Provider:
    """The registered provider of that name; the name is checked before it becomes a module name."""
    if not is_provider_name(name):
        raise InvalidInput(f"{name!r} is not a provider name")
    try:
        importlib.import_module(f"replaylab.agents.clients.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"replaylab.agents.clients.{name}":
            raise  # the provider's own module is there, and lacks something it imports
        raise InvalidInput(f"no provider named {name!r}") from None
    if name not in _REGISTERED:
        raise InvalidInput(f"no provider named {name!r}")  # a module of clients that is not a provider
    return _REGISTERED[name]


def providers() -> dict[str, Provider]:
    """{name: Provider} of every provider module of this package, by name."""
    for found in pkgutil.iter_modules(__path__):
        if found.name not in _REGISTERED:
            try:
                load_provider(found.name)
            except ValueError:
                pass  # not a provider (the recorded-messages client of a replay), or not a provider's name
    return dict(sorted(_REGISTERED.items()))


def names(select: Callable[[Provider], object] | None = None) -> list[str]:
    """The names of the providers that `select(provider)` keeps (all by default)."""
    return [name for name, p in providers().items() if select is None or select(p)]


# Recordings made before provenance named the provider: the provider of each kind then.
_BY_KIND = {"provider-api": "openai", "scripted": "scripted", "authored": "authored", "interactive": "interactive", "mcp": "mcp"}


def provider_name(provenance: dict[str, Any]) -> str:
    """The name of the provider that made a recording, from its provenance."""
    return provenance.get("provider") or _BY_KIND[provenance["kind"]]


def command(*words: object) -> str:
    """A command as a shell reads it: each word quoted where needed."""
    return shlex.join(str(word) for word in words)


def record_command(recording: Recording, provider: str, *options: object) -> str:
    """`replaylab record` of one run of a provider, with its own options (the generic form)."""
    return command(
        "replaylab", "record", recording.lesson, "--variant", recording.variant, "--provider", provider, *options,
        "--run", recording.run, "--group", recording.group,
    )


LIVE_FOLDER = "results/live"  # where every new run is written


def rerecord_command(recording: Recording) -> str:
    """The command that records a run again, as its provider writes it (the generic form for a
    provider that this installation does not have). A run that lives where new runs are written
    (results/live) is recorded again under another name, `<run>-again`: a recorded run is never
    overwritten, so its own name would be refused."""
    source = (recording.source or "").replace("\\", "/")
    if f"{LIVE_FOLDER}/{recording.lesson}/" in source:
        recording = dataclasses.replace(recording, run=f"{recording.run}-again")
    name = provider_name(recording.provenance)
    try:
        provider = load_provider(name)
    except ValueError:
        return record_command(recording, name, "--model", recording.provenance["model"])
    return provider.rerecord(recording)
