"""Tools and the allowlist: the only way a model's request reaches a simulation.

Every text here is part of the harness's behaviour (the model reads it, the pages print it) and
is the one docs/harness.md states (sections 2 and 3). A model's tool name is only ever used as a
key of the allowlist.

Every variant's allowlist also holds the `answer` tool (`answer_tool`): the one way a run ends
with an answer. Its arguments are typed and bounded like an experiment's, it is checked by the
same allowlist, and it costs no experiment; its accepted call ends the run (agents/loop.py).
"""

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from replaylab.agents.messages import ToolCall, ToolResult


ANSWER = "answer"  # the name of every lesson's answer tool; no experiment may take it


class Refused(Exception):
    """A call the allowlist does not run; its text is what the model reads."""


def _shown_number(value: int | float) -> str:
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # longer than Python prints by default (4300 digits)
            return f"an integer of {_digit_count(value)} digits"
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def _shown_name(name: object) -> str:
    try:
        return repr(name)
    except ValueError:  # holds an int longer than Python prints (4300 digits)
        if isinstance(name, int):
            return _shown_number(name)
        return f"a {type(name).__name__} holding an integer too long to print"


def _json_kind(value: object) -> str:
    """What a value that is not text is, in JSON's words: a refusal shows its kind, never its
    Python type's name as if it had been sent ('list')."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return "a number"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else f"a {type(value).__name__}"


def _quoted_number(value: object) -> str:
    """The hint for a number sent as text ("25"): how to send it instead; nothing for anything else."""
    if isinstance(value, str) and len(value) <= 30:
        try:
            number = float(value)
        except ValueError:
            return ""
        if math.isfinite(number):
            return f": send {value.strip()} as a number, without quotes"
    return ""


def _digit_count(value: int) -> int:
    value = abs(value)
    digits = int(math.log10(value)) + 1
    if 10 ** (digits - 1) > value:
        digits -= 1
    elif 10**digits <= value:
        digits += 1
    return digits


@dataclass(frozen=True)
class Parameter:
    """A bounded number. `integer=True` takes an integer-valued float (16.0, which JSON Schema counts
    as an integer and JSON clients send) as the int 16, and refuses any other float (32.5)."""

    name: str
    description: str
    low: float
    high: float
    integer: bool = False
    optional: bool = False  # an answer's field that only some answers give

    def validate(self, value: Any) -> int | float:
        name = self.name
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Refused(f"{name} must be a number, got {type(value).__name__}{_quoted_number(value)}")
        if self.integer and isinstance(value, float) and not value.is_integer():  # nan and inf too
            raise Refused(f"{name} must be an integer, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise Refused(f"{name} must be finite, got {value!r}")
        if not self.low <= value <= self.high:
            raise Refused(
                f"{name} must be between {self.low:g} and {self.high:g}, got {_shown_number(value)}"
            )
        return int(value) if self.integer else value

    def spec(self) -> dict[str, Any]:
        return {
            "type": "integer" if self.integer else "number",
            "description": self.description,
            "minimum": self.low,
            "maximum": self.high,
        }


@dataclass(frozen=True)
class Choice:
    """One of a fixed list of names (case- and space-sensitive)."""

    name: str
    description: str
    options: tuple[str, ...]
    optional: bool = False

    def validate(self, value: Any) -> str:
        if not isinstance(value, str) or value not in self.options:
            shown = repr(value) if isinstance(value, str) else _json_kind(value)
            raise Refused(f"{self.name} must be one of {', '.join(self.options)}, got {shown}")
        return value

    def spec(self) -> dict[str, Any]:
        return {"type": "string", "description": self.description, "enum": list(self.options)}


@dataclass(frozen=True)
class Names:
    """A list of distinct names from a fixed list (possibly empty): an answer that names things,
    such as the checks that failed."""

    name: str
    description: str
    options: tuple[str, ...]
    optional: bool = False

    def validate(self, value: Any) -> list[str]:
        if not isinstance(value, list):
            raise Refused(f"{self.name} must be a list of names ({', '.join(self.options)}), got {_json_kind(value) if not isinstance(value, str) else 'text'}")
        for item in value:
            if not isinstance(item, str) or item not in self.options:
                shown = repr(item) if isinstance(item, str) else _json_kind(item)
                raise Refused(f"{self.name} may only hold {', '.join(self.options)}, got {shown}")
        twice = next((item for i, item in enumerate(value) if item in value[:i]), None)
        if twice is not None:
            raise Refused(f"{self.name} names {twice!r} twice")
        return list(value)

    def spec(self) -> dict[str, Any]:
        return {
            "type": "array",
            "description": self.description,
            "items": {"type": "string", "enum": list(self.options)},
            "uniqueItems": True,
        }


@dataclass(frozen=True)
class Text:
    """Free text of bounded length (an answer's explanation): shown, never judged."""

    name: str
    description: str
    max_length: int
    optional: bool = True

    def validate(self, value: Any) -> str:
        if not isinstance(value, str):
            raise Refused(f"{self.name} must be text, got {type(value).__name__}")
        if len(value) > self.max_length:
            raise Refused(f"{self.name} has at most {self.max_length} characters, got {len(value)}")
        return value

    def spec(self) -> dict[str, Any]:
        return {"type": "string", "description": self.description, "maxLength": self.max_length}


Field = Parameter | Choice | Names | Text  # a tool's parameter, or an answer's field


@dataclass(frozen=True)
class Tool:
    """A named function and its parameters. `ends_run`: the answer tool, whose accepted call ends
    the run and costs no experiment. `check`: refuses validated arguments that do not go together
    (an answer's fields), with `Refused`."""

    name: str
    description: str
    parameters: tuple[Field, ...]
    function: Callable[..., Mapping[str, Any]]
    ends_run: bool = False
    check: Callable[[dict[str, Any]], object] | None = None

    def validate(self, arguments: object) -> dict[str, Any]:
        """The arguments as the function receives them (an optional one only when given), or
        `Refused` with the reason."""
        if not isinstance(arguments, dict):
            raise Refused(f"the arguments must be an object, got {type(arguments).__name__}")
        declared, required = self._names
        if not arguments.keys() <= declared:
            raise Refused(f"unknown arguments: {', '.join(sorted(str(k) for k in arguments if k not in declared))}")
        if not required <= arguments.keys():
            raise Refused(f"missing arguments: {', '.join(sorted(required - arguments.keys()))}")
        validated = {p.name: p.validate(arguments[p.name]) for p in self.parameters if p.name in arguments}
        if self.check is not None:
            self.check(validated)
        return validated

    @functools.cached_property
    def _names(self) -> tuple[frozenset[str], frozenset[str]]:
        """(the parameters' names, those of the parameters that are not optional): looked up by
        every call (a replay and its judge validate each call)."""
        return frozenset(p.name for p in self.parameters), frozenset(p.name for p in self.parameters if not p.optional)

    def spec(self) -> dict[str, Any]:
        """The JSON schema the model sees."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": {p.name: p.spec() for p in self.parameters},
                "required": [p.name for p in self.parameters if not p.optional],
                "additionalProperties": False,
            },
        }


EXPLANATION = Text(
    "explanation", "optional: why you answer so, in your own words (shown with the answer, never judged)", 4000
)


ACCEPTED_KEY = "accepted"  # the key of an accepted answer's result: the answer echoed in words


def answer_tool(description: str, parameters: Iterable[Field], check: Callable[[dict[str, Any]], object] | None = None,
                echo: Callable[[dict[str, Any]], str] | None = None) -> Tool:
    """The answer tool of a variant: its fields (`parameters`, then the optional explanation),
    typed and bounded; its accepted call ends the run. It runs nothing: its result echoes the
    answer in words (`echo(fields)`, the fields as validated, without the explanation), so that an
    agent and its operator see what was taken."""

    def answer(**fields: Any) -> dict[str, str]:
        fields.pop(EXPLANATION.name, None)
        words = echo(fields) if echo is not None else ", ".join(f"{k} {_echoed(v)}" for k, v in fields.items())
        return {ACCEPTED_KEY: f"{words}; the run has ended"}

    return Tool(ANSWER, description, tuple(parameters) + (EXPLANATION,), answer, ends_run=True, check=check)


def _echoed(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return str(value)


class Allowlist:
    """Named tools and an optional budget of experiments; each new allowlist has a fresh budget."""

    def __init__(self, tools: Iterable[Tool], budget: int | None = None) -> None:
        self.tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self.tools:
                raise ValueError(f"duplicate tool name: {tool.name}")
            self.tools[tool.name] = tool
        if budget is not None and budget < 1:
            raise ValueError(f"the budget must be at least 1, got {budget}")
        self.budget = budget
        self.used = 0

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self.tools.values()]

    def ends_run(self, name: object) -> bool:
        """Whether a call of this name, once accepted, ends the run (the answer tool)."""
        return isinstance(name, str) and name in self.tools and self.tools[name].ends_run

    def check(self, name: object, arguments: object) -> tuple[Tool, dict[str, Any]]:
        """The tool and validated arguments of a call, or `Refused`. Runs nothing, costs nothing."""
        if not isinstance(name, str) or name not in self.tools:
            raise Refused(f"{_shown_name(name)} is not an allowed tool; the allowed tools are: {', '.join(self.tools)}")
        tool = self.tools[name]
        return tool, tool.validate(arguments)

    def dispatch(self, call: ToolCall) -> ToolResult:
        """Run one call if it passes, and return its `ToolResult` (never raises for bad input)."""
        try:
            tool, arguments = self.check(call.name, call.arguments)
            if tool.ends_run:  # the answer: no experiment, no budget
                return ToolResult(call.id, call.name, True, dict(tool.function(**arguments)))
            if self.budget is not None and self.used >= self.budget:
                raise Refused(f"the budget of {self.budget} experiments is spent")
        except Refused as refusal:
            return refused(call, str(refusal))
        self.used += 1
        try:
            content = tool.function(**arguments)
        except (ValueError, RuntimeError) as error:
            return refused(call, str(error))
        return ToolResult(call.id, call.name, True, dict(content))


def refused(call: ToolCall, reason: str) -> ToolResult:
    return ToolResult(call.id, call.name, False, {"error": reason})
