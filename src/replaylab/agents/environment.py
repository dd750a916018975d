"""The one place that reads the process environment: the provider's key and settings.

A key is read once into a `Secret`; a missing key is one error that names the variable.
"""

import os

from replaylab.agents.secrets import Secret
from replaylab.errors import InvalidInput


class MissingKey(InvalidInput):
    pass


def secret(variable: str) -> Secret:
    value = os.environ.get(variable, "").strip()
    if not value:
        raise MissingKey(
            f"{variable} is not set: export it before recording with this provider, "
            "or record with --provider scripted (no key needed)"
        )
    return Secret(value)


def setting(variable: str) -> str | None:
    """A non-secret setting (such as a base URL), or None when unset or empty."""
    value = os.environ.get(variable, "").strip()
    return value or None


def is_set(variable: str) -> bool:
    return bool(os.environ.get(variable, "").strip())
