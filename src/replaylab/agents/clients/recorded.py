"""A client that returns recorded (or authored) messages in order; asking for more is an error,
unless the recorded input ended there (a run recorded as not finished before its message limit)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.agents.messages import ModelMessage


class OutOfMessages(RuntimeError):
    """The loop asked for a message the file does not have."""


class RecordedMessagesClient:
    secrets = ()

    def __init__(self, messages: Iterable[ModelMessage], model: str, input_ended: bool = False) -> None:
        self.model = model
        self._messages = list(messages)
        self._next = 0
        self._input_ended = input_ended

    def complete(self, system: str, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelMessage | None:
        if self._next >= len(self._messages):
            if self._input_ended:
                return None
            raise OutOfMessages(
                f"the run has {len(self._messages)} messages and the loop asked for message {self._next + 1}"
            )
        message = self._messages[self._next]
        self._next += 1
        return message


def make_client(messages: Iterable[ModelMessage], model: str) -> RecordedMessagesClient:
    return RecordedMessagesClient(messages, model)
