"""Secrets that never print, and the cleaning of everything a model or a provider sends back."""

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, NoReturn

from replaylab.agents.messages import ModelMessage, ToolCall

REDACTED = "[redacted]"


class Secret:
    """A value that shows as [redacted] everywhere; `reveal()` is called only where a request is made."""

    __slots__ = ("_value",)
    _value: str

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError("a secret must be a non-empty string")
        object.__setattr__(self, "_value", value)

    def reveal(self) -> str:
        return self._value

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("a Secret cannot be changed")

    def __str__(self) -> str:
        return REDACTED

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")


def _values(secrets: Iterable[Secret | str | None]) -> list[str]:
    return [s.reveal() if isinstance(s, Secret) else s for s in secrets if s]


def clean_text(text: str, secrets: Iterable[Secret | str | None]) -> str:
    for value in _values(secrets):
        text = text.replace(value, REDACTED)
    return text


def clean(value: Any, secrets: Iterable[Secret | str | None]) -> Any:
    """The value with every secret replaced, in strings, lists and dict keys and values."""
    if isinstance(value, str):
        return clean_text(value, secrets)
    if isinstance(value, dict):
        return {clean(k, secrets): clean(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean(v, secrets) for v in value)
    return value


def clean_message(message: ModelMessage, secrets: Iterable[Secret | str | None]) -> ModelMessage:
    """A model message with the secrets removed from its text, call ids, names and arguments."""
    if not secrets:
        return message
    calls = tuple(
        ToolCall(clean(c.id, secrets), clean(c.name, secrets), clean(c.arguments, secrets))
        for c in message.tool_calls
    )
    return replace(message, text=clean_text(message.text, secrets), tool_calls=calls)


def is_provider_name(name: object) -> bool:
    """A provider name is a plain lowercase identifier (it becomes part of a module name)."""
    return (
        isinstance(name, str)
        and name.isidentifier()
        and name.isascii()
        and name == name.lower()
        and not name.startswith("_")
    )

