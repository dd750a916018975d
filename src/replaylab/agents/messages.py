"""The shapes of a conversation between a model and the harness.

`ToolCall.name` and `.arguments` hold whatever the model sent (any JSON value): they are data,
never trusted, and are only ever checked by the allowlist.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: Any
    arguments: Any


def stored(value: Any) -> Any:
    """A result's value as recordings, transcripts and sessions write it: a number that is not
    finite becomes null ("not measured"), which standard JSON can hold."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass(frozen=True)
class ToolResult:
    """`ok=True` with a mapping of result names to numbers, or `ok=False` with {"error": text}."""

    call_id: str
    name: Any
    ok: bool
    content: dict[str, Any]


@dataclass(frozen=True)
class ModelMessage:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Step:
    message: ModelMessage
    results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class Transcript:
    model: str
    system: str
    task: str
    steps: tuple[Step, ...] = field(default_factory=tuple)
    finished: bool = False
    stopped_by: dict[str, Any] | None = None  # a per-run limit that ended the run: {"limit", "allowed", "used"}


def conversation_for(task: str, steps: Iterable[Step]) -> list[dict[str, Any]]:
    """The request a model receives next: the task, then each message followed by its results."""
    conversation: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for step in steps:
        conversation.append({"role": "assistant", "message": step.message})
        conversation.extend({"role": "tool", "result": result} for result in step.results)
    return conversation


def exchanges(conversation: Iterable[dict[str, Any]]) -> list[tuple[ToolCall | None, ToolResult]]:
    """Every (ToolCall, ToolResult) pair the model has seen so far, in order."""
    pairs: list[tuple[ToolCall | None, ToolResult]] = []
    pending: dict[str, ToolCall] = {}
    for item in conversation:
        if item["role"] == "assistant":
            pending = {call.id: call for call in item["message"].tool_calls}
        elif item["role"] == "tool":
            result = item["result"]
            pairs.append((pending.get(result.call_id), result))
    return pairs
