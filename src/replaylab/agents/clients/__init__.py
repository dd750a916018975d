"""Clients: who produces the model's messages. `recorded` (for a replay) and `authored` return
messages from a file, `scripted` runs a deterministic program, `interactive` reads messages from
stdin.

A client has `model`, `secrets` and `complete(system, conversation, tools) -> ModelMessage`.
Adding a provider is one module here with a `make_client()`.
"""

import importlib

from replaylab.agents.secrets import is_provider_name


class ProviderError(RuntimeError):
    """A provider failed; the text is cleaned of secrets and keeps the useful part (status, reason)."""


def load_provider(name):
    """The client module of a provider; the name is checked before it becomes a module name."""
    if not is_provider_name(name):
        raise ValueError(f"{name!r} is not a provider name")
    try:
        return importlib.import_module(f"replaylab.agents.clients.{name}")
    except ModuleNotFoundError:
        raise ValueError(f"no provider named {name!r}") from None
