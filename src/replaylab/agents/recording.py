"""Recording files: strict loading against the JSON schema, and atomic writing.

This is the one module of the harness that opens, writes, renames and syncs files.
"""

from __future__ import annotations

import datetime
import errno
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import jsonschema

from replaylab import __version__
from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript, stored
from replaylab.agents.secrets import Secret, clean, clean_text
from replaylab.errors import InvalidInput

if TYPE_CHECKING:
    from os import stat_result

FORMAT = "replaylab-recording/2"  # what every writer writes: runs that end with an answer
FORMAT1 = "replaylab-recording/1"  # still read: runs recorded before the answer tool, judged as no answer
KINDS = ("provider-api", "interactive", "mcp", "scripted", "authored")
LABELS = {
    "provider-api": "Recorded run",
    "interactive": "Recorded run",
    "mcp": "Recorded run",
    "scripted": "Scripted baseline (a program, not a language model)",
    "authored": "Authored example, not a recorded model run",
}


FilePath = str | Path  # a file's path, as the functions below take it


class RecordingError(InvalidInput):
    """A recording file that cannot be used; the text names the file, the field and the problem."""


RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
RUN_NAME_MAX = 100  # a file name, with the temporary file's prefix and suffix, stays far below 255 bytes


def check_run_name(name: object, where: str) -> str:
    """Refuse a run name that cannot be a file name here, before any work is done: `where` names
    the option or field that gave it (e.g. "--run")."""
    if not isinstance(name, str) or not RUN_NAME.fullmatch(name):
        raise RecordingError(
            f"{where}: {short(name)} is not a run name: letters, digits, '_', '.' and '-', "
            "starting with a letter or digit"
        )
    if len(name) > RUN_NAME_MAX:
        raise RecordingError(f"{where}: a run name has at most {RUN_NAME_MAX} characters, this one has {len(name)}")
    return name


# Characters that change what a terminal or a page shows instead of being shown: C0 and C1 controls
# (ESC starts the terminal's escape sequences, CR and LF split a line), line separators, bidi
# overrides and the other format characters (a zero-width space makes two names look the same). A
# field that is printed (names, model, group) may hold none; free text is escaped.
_UNSEEN = (  # C0 and C1 controls, line and paragraph separators, and the format characters (Unicode Cf)
    "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u08e2\\u180e"
    "\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb"
)
CONTROL = re.compile(f"[{_UNSEEN}]")
PRINTABLE_PATTERN = f"^[^{_UNSEEN}]*$"


def printable(text: str, keep: str = "") -> str:
    """`text` with every control character (but those in `keep`, e.g. a message's line breaks)
    shown as its escape, such as \\x1b: it can then neither move the cursor, colour a terminal,
    nor split the one line of a message."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return CONTROL.sub(escape, text)


def check_text(value: object, where: str, max_length: int) -> str:
    """Refuse a value for a printed field (a model, a group) before any work is done: `where` names
    the option or field."""
    if not isinstance(value, str) or not value:
        raise RecordingError(f"{where}: must be a non-empty text")
    found = CONTROL.search(value)
    if found:
        raise RecordingError(f"{where}: {short(value)} holds the control character {printable(found.group())}, which is printed")
    if len(value) > max_length:
        raise RecordingError(f"{where}: at most {max_length} characters, this one has {len(value)}")
    return value


@dataclass
class Recording:
    lesson: str
    run: str
    variant: str
    group: str
    provenance: dict[str, Any]
    transcript: Transcript
    source: str = field(default="", compare=False)
    replayed: dict[str, Any] | None = None  # in a transcript written by a replay: {"from": recording path, "tolerance": ...}
    format: str = FORMAT
    ended: str | None = None  # a run recorded as it happens (session, MCP): why it ended, as the agent was told
    notes: tuple[dict[str, Any], ...] = ()  # what the recording holds otherwise than it came: ({"where": JSON path, "what": ...}, ...)
    instance: str | None = None  # the instance of the lesson's family; None: the seed instance of the variant
    partial: dict[str, Any] | None = None  # only in an unfinished run's partial file (recorder): {"next", "why"}

    @property
    def format1(self) -> bool:
        """Recorded before runs ended with an answer: replayed with the prompts of that format, judged as no answer."""
        return self.format == FORMAT1

    @property
    def label(self) -> str:
        return LABELS[self.provenance["kind"]]

    @property
    def model(self) -> str:
        return model_shown(self.provenance)


DECLARED = " (declared, not verified)"


def model_shown(provenance: dict[str, Any]) -> str:
    """Who produced the messages, as pages and scorecards show it: a model named by whoever ran a
    session (`--model`) is marked as declared, so it is never grouped with one a provider reported."""
    return cast(str, provenance.get("model", "")) + (DECLARED if provenance.get("model_declared") else "")


def schema_text() -> str:
    return resources.files("replaylab").joinpath("schemas/recording.schema.json").read_text("utf-8")


def schema() -> Any:
    return json.loads(schema_text())


_VALIDATOR: Any = None
_COMPILED: Callable[[Any], Any] | None = None


def _validator() -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(schema())
    return _VALIDATOR


def compiled_schema() -> Callable[[Any], Any]:
    """The schema compiled to Python by fastjsonschema (about 15 times faster than jsonschema's
    validator, measured on recordings of 8 calls): the check of every recording that passes. The
    schema uses only keywords that mean the same in fastjsonschema's latest draft (2019-09) as in
    2020-12 (a test compares both validators), and no defaults are filled in."""
    global _COMPILED
    if _COMPILED is None:
        import fastjsonschema

        _COMPILED = fastjsonschema.compile(schema(), use_default=False, use_formats=False)
    return _COMPILED


_COMPILED_REPLAY_PARTS: Callable[[Any], Any] | None = None


def replay_parts_errors(data: Any) -> list[Any]:
    """The schema's errors of a replay's transcript (as `schema_errors` gives them), made from a
    recording checked when it was read: the compiled check of only what the replay made (each
    step's results, and `replayed`), the whole schema for the message when that fails."""
    return [] if replay_parts_fit(data) else schema_errors(data)


def replay_parts_fit(data: Any) -> bool:
    """Whether what a replay made of a recording checked when it was read (each step's results, and
    `replayed`, where `data` has them) fits the schema: its compiled check alone."""
    import fastjsonschema

    global _COMPILED_REPLAY_PARTS
    if _COMPILED_REPLAY_PARTS is None:
        whole = schema()
        results = whole["properties"]["steps"]["items"]["properties"]["results"]
        step = {"type": "object", "properties": {"results": results}}
        parts = {"type": "object", "properties": {"steps": {"type": "array", "items": step}, "replayed": whole["properties"]["replayed"]}}
        _COMPILED_REPLAY_PARTS = fastjsonschema.compile(parts, use_default=False, use_formats=False)
    try:
        _COMPILED_REPLAY_PARTS(data)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def schema_errors(data: Any) -> list[Any]:
    """The schema's errors of a recording's data, in jsonschema's words (none when it is valid):
    the compiled check first, jsonschema's validator for the message only when that fails."""
    import fastjsonschema

    try:
        compiled_schema()(data)
    except fastjsonschema.JsonSchemaException:
        return sorted(_validator().iter_errors(data), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return []


def json_path(parts: Sequence[Any], limit: int = 12) -> str:
    """A JSON path such as $.steps[0].results[1].content; a key that is not a plain name is quoted
    (it cannot break the line), and a path deeper than `limit` is cut."""
    text = "$"
    for part in list(parts)[:limit]:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if _SIMPLE_KEY.fullmatch(part) else f"[{short(part)}]"
    return text + ("..." if len(parts) > limit else "")


# Limits of what a recording may hold, checked before anything else reads it: the longest run a
# lesson allows is far below each (a dozen messages of a few calls: tens of kilobytes).
MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64  # arrays and objects inside each other, counted from the file's top
MAX_INT_DIGITS = 1000  # Python itself refuses to read an integer of more than 4300 digits
CALL_DEPTH = 5  # the file's own nesting around a tool call's name and arguments
MAX_CALLS = 1000  # tool calls (and results) of one message, as the schema bounds them
MAX_TOKENS = 10**12  # a count of tokens a recording holds (the schema's maximum): a run uses far fewer
_SURROGATE = re.compile("[\ud800-\udfff]")
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class _Refused:
    """What the parser put in place of a value the file must not hold: refused with its JSON path."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _not_finite(literal: str) -> _Refused:
    return _Refused(f"{literal} is not allowed (standard JSON only; a value that is not finite is recorded as null)")


def _parse_float(literal: str) -> float | _Refused:
    """A float of the file; a literal too large for a float (1e999) is infinity, refused as NaN is."""
    value = float(literal)
    return value if math.isfinite(value) else _not_finite(literal)


def _parse_int(literal: str) -> int | _Refused:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Refused(f"an integer of {digits} digits; at most {MAX_INT_DIGITS} digits are allowed")
    return int(literal)


def key_twice(pairs: Sequence[tuple[Any, Any]]) -> Any:
    """The first key of a JSON object's (key, value) pairs that appears twice, or None."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) == len(keys):
        return None
    return next(key for i, key in enumerate(keys) if key in keys[:i])


def _unique_keys(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any] | _Refused:
    twice = key_twice(pairs)
    if twice is not None:
        return _Refused(f"the key {short(twice)} appears twice (the keys of a JSON object are unique)")
    return dict(pairs)


class KeyTwice(InvalidInput):
    """A JSON object with a key twice, in text read where no last one may win."""


def unique_keys(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any]:
    """json.loads' `object_pairs_hook` for JSON read outside a recording (a session's line, a model's
    tool arguments): an object with a key twice raises KeyTwice."""
    twice = key_twice(pairs)
    if twice is not None:
        raise KeyTwice(f"the key {short(twice)} appears twice in an object (the keys of a JSON object are unique)")
    return dict(pairs)


def short(value: object, limit: int = 60) -> str:
    """The repr of a value, cut to about `limit` characters, so that a message stays one short line."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return f"{text[: limit - 4]}...{text[-1]}{size}"


def _walk(data: Any) -> Iterator[tuple[tuple[Any, ...], int, Any]]:
    """(JSON path, nesting, value) of every value of parsed JSON data, in the file's order, without
    recursion; `nesting` counts the arrays and objects around the value."""
    todo: list[tuple[tuple[Any, ...], int, Any]] = [((), 0, data)]
    while todo:
        path, depth, value = todo.pop()
        yield path, depth, value
        items: Iterable[tuple[Any, Any]]
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        todo.extend(reversed([(path + (key,), depth + 1, item) for key, item in items]))


def nesting(value: Any) -> int:
    """How deep arrays and objects (lists, tuples and dicts) lie inside each other in `value`."""
    deepest = 0
    todo: list[tuple[int, Any]] = [(1, value)]
    while todo:
        depth, item = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, (list, tuple)):
            deepest = max(deepest, depth)
            todo.extend((depth + 1, x) for x in item)
    return deepest


def _first_problem(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """(JSON path, problem) of the first value the file must not hold, or None: a refused literal,
    nesting beyond the limit, or text that is not Unicode (a lone surrogate, half of a character)."""
    for path, depth, value in _walk(data):
        if isinstance(value, _Refused):
            return path, value.problem
        if depth >= MAX_DEPTH and isinstance(value, (dict, list)):
            return path, f"nested more than {MAX_DEPTH} levels deep (arrays and objects inside each other)"
        keys = value if isinstance(value, dict) else [value] if isinstance(value, str) else []
        for text in keys:
            if _SURROGATE.search(text):
                what = "the key " if isinstance(value, dict) else ""
                return path, f"{what}{short(text)} holds a lone surrogate (\\ud800 to \\udfff: half of a character, not text)"
    return None


def parse_json(text: str, source: str) -> Any:
    """The data of a JSON text (a recording, or a file of messages) within the limits: nesting and
    the size of integers, unique keys, Unicode text, standard JSON only. `RecordingError` naming
    `source` and the JSON path otherwise."""
    try:
        data = json.loads(
            text, parse_constant=_not_finite, parse_float=_parse_float, parse_int=_parse_int,
            object_pairs_hook=_unique_keys,
        )
    except json.JSONDecodeError as error:
        raise RecordingError(f"{source}: not valid JSON: {error}") from None
    except RecursionError:  # the parser refuses about a thousand levels, far beyond the limit
        raise RecordingError(f"{source}: nested more than {MAX_DEPTH} levels deep (arrays and objects inside each other)") from None
    found = _first_problem(data)
    if found:
        where, problem = found
        raise RecordingError(f"{source}: {json_path(where)}: {problem}")
    return data


def parse(text: str, source: str) -> Any:
    """The validated JSON data of a recording's text, or `RecordingError`: one pass of checks
    (`_checked_at_once`) for a text that passes them all, the checks one by one, each naming
    what it finds, for any other."""
    data = _checked_at_once(text)
    return validate(parse_json(text, source), source) if data is None else data


class _Doubt(Exception):
    """Raised while `_checked_at_once` parses: a value the one pass cannot vouch for."""


def _doubt(*_: Any) -> NoReturn:
    raise _Doubt


def _pairs_once(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):  # a key twice
        raise _Doubt
    return found


def _may_hold_surrogate(text: str) -> bool:
    """Whether parsing `text` may give a lone surrogate: it can only come from an escape (\\ud800
    to \\udfff, found here with every other escape \\ud... or \\uD...) or from text not decoded
    from UTF-8 (which UTF-8 cannot encode). Two searches and, for text that is not ASCII, an
    encoding, each in C."""
    if "\\ud" in text or "\\uD" in text:
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_INT_LIMIT = 10**MAX_INT_DIGITS


def _within_limits(value: Any, depth: int) -> bool:
    """Whether every value inside `value` (an object or array at `depth`) is one a file may hold:
    containers nested less than MAX_DEPTH deep, finite numbers, integers within MAX_INT_DIGITS."""
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return False
        elif kind is int:
            if not -_INT_LIMIT < item < _INT_LIMIT:
                return False
        elif kind is dict or kind is list:
            if depth + 1 >= MAX_DEPTH or not _within_limits(item, depth + 1):
                return False
    return True


def _checked_at_once(text: str) -> Any:
    """The data of a recording's text that passes every check of `parse_json` and `validate` (the
    same checks: no lone surrogate, unique keys, standard JSON, the limits, the compiled schema,
    one result per call with its id), made in one pass and without a word for what fails; None
    for any other text, which the checks one by one then describe."""
    import fastjsonschema

    if _may_hold_surrogate(text):
        return None
    try:
        data = json.loads(text, parse_constant=_doubt, object_pairs_hook=_pairs_once)
    except (_Doubt, ValueError, RecursionError):  # JSONDecodeError, and an integer Python will not read
        return None
    if type(data) is not dict or not _within_limits(data, 0):
        return None
    try:
        compiled_schema()(data)
    except fastjsonschema.JsonSchemaException:
        return None
    for step in data["steps"]:
        calls, results = step["tool_calls"], step["results"]
        if len(calls) != len(results) or any(r["call_id"] != c["id"] for c, r in zip(calls, results)):
            return None
    return data


def validate(data: Any, source: str) -> Any:
    """The data of a recording, checked against the schema and for what a schema cannot say (one
    result per call, with the call's id); `RecordingError` naming the first problem otherwise."""
    errors = schema_errors(data)
    if errors:
        error = errors[0]
        raise RecordingError(f"{source}: {json_path(error.absolute_path)}: {describe(error)}")
    for i, step in enumerate(data["steps"]):
        if len(step["results"]) != len(step["tool_calls"]):
            raise RecordingError(
                f"{source}: {json_path(('steps', i, 'results'))}: {len(step['results'])} results "
                f"for {len(step['tool_calls'])} tool calls"
            )
        for j, (call, result) in enumerate(zip(step["tool_calls"], step["results"])):
            if result["call_id"] != call["id"]:
                raise RecordingError(
                    f"{source}: {json_path(('steps', i, 'results', j, 'call_id'))}: "
                    f"{short(result['call_id'])} does not match the call's id {short(call['id'])}"
                )
    return data


def describe(error: Any) -> str:
    """What is wrong, in words, on one short line: a long value is cut (`short`)."""
    instance = error.instance
    if error.validator == "additionalProperties":
        extra = sorted(set(instance) - set(error.schema["properties"]))
        return f"unknown field {', '.join(map(short, extra))}"
    if error.validator == "required":
        return cast(str, error.message).replace("is a required property", "is missing")
    if error.validator == "pattern" and error.validator_value == PRINTABLE_PATTERN:
        found = CONTROL.search(instance)
        assert found is not None  # the pattern refused a control character
        return (
            f"{short(instance)} holds the control character {printable(found.group())} at position {found.start()}: "
            "this field is printed, so it may hold none"
        )
    if error.validator == "maxLength":
        return f"{short(instance)} is {len(instance)} characters long, more than {error.validator_value}"
    if error.validator == "maxItems":
        return f"{len(instance)} items, more than {error.validator_value}"
    return cast(str, error.message).replace(repr(instance), short(instance))


def _sent(call: dict[str, Any], field: str) -> Any:
    """A call's name or arguments as the model sent them: a value recorded as its JSON text (it held
    NaN, infinity or half a character, which a file of standard JSON cannot) is read back."""
    value = call[field]
    if field not in call.get("as_json", ()):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):  # not the JSON text a writer made: the call is refused as text
        return value


def from_data(data: Any, source: str = "") -> Recording:
    steps = tuple(
        Step(
            ModelMessage(s["text"], tuple(ToolCall(c["id"], _sent(c, "name"), _sent(c, "arguments")) for c in s["tool_calls"])),
            tuple(
                ToolResult(r["call_id"], _sent(c, "name"), r["ok"], dict(r["content"]))
                for c, r in zip(s["tool_calls"], s["results"])
            ),
        )
        for s in data["steps"]
    )
    transcript = Transcript(
        data["provenance"]["model"], data["system"], data["task"], steps, data["finished"], data.get("stopped_by")
    )
    replayed = data.get("replayed")
    return Recording(
        data["lesson"], data["run"], data["variant"], data["group"], dict(data["provenance"]), transcript,
        replayed["from"] if replayed else source, dict(replayed) if replayed else None, data["format"],
        data.get("ended"), tuple(data.get("notes", ())), data.get("instance"), data.get("partial"),
    )


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def regular_file(path: FilePath) -> stat_result:
    """`os.stat` of a regular file (a symbolic link to one is fine), or `RecordingError` saying what
    is there instead: nothing, a dangling link, a link loop, a folder, a pipe, a device."""
    where = printable(str(path))
    try:
        found = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise RecordingError(f"{where}: a symbolic link to a file that does not exist") from None
        raise RecordingError(f"{where}: no such file") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RecordingError(f"{where}: a loop of symbolic links") from None
        raise RecordingError(f"{where}: cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(found.st_mode):
        raise RecordingError(f"{where}: {_file_kind(found.st_mode)}, not a recording file")
    if found.st_size > MAX_BYTES:
        raise RecordingError(f"{where}: {found.st_size} bytes; a recording has at most {MAX_BYTES} bytes")
    return found


def read(path: FilePath) -> str:
    """The text of a recording file (or of a file of messages), or `RecordingError`: a regular file
    of at most MAX_BYTES of UTF-8. Opened without blocking, so that a pipe put in its place cannot
    hang the reader."""
    where = printable(str(path))
    regular_file(path)
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        raise RecordingError(f"{where}: cannot be read: {error.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):  # replaced since it was looked at
            raise RecordingError(f"{where}: not a regular file any more")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            chunk = os.read(handle, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise RecordingError(f"{where}: cannot be read: {error.strerror}") from None
    finally:
        os.close(handle)
    if size > MAX_BYTES:
        raise RecordingError(f"{where}: more than {MAX_BYTES} bytes; a recording has at most {MAX_BYTES} bytes")
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as error:
        raise RecordingError(f"{where}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def load(path: FilePath) -> Recording:
    """Read and validate one recording file."""
    return loads(read(path), path)


def loads(text: str, path: FilePath) -> Recording:
    """The recording in `text`, the content of the file at `path`, validated: the one check of
    what a caller then copies or uses."""
    return loads_with_data(text, path)[0]


def loads_with_data(text: str, path: FilePath) -> tuple[Recording, Any]:
    """(the recording, its data as checked) of `text`, the content of the file at `path`: what
    `loads` checks, and the data, for a caller that writes it again (a replay's transcript)."""
    path = Path(path)
    where = printable(str(path))
    data = parse(text, where)
    recording = from_data(data, str(path))
    expected = path.stem
    if recording.run != expected:
        raise RecordingError(f"{where}: $.run: {short(recording.run)} differs from the file name {short(expected)}")
    return recording, data


def _storable(value: Any) -> bool:
    """Whether a value the model sent can be stored as it is: within the limits a recording is read
    with, and only standard JSON (finite numbers, whole characters)."""
    if nesting(value) + CALL_DEPTH > MAX_DEPTH:
        return False
    for _, _, item in _walk(value):
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 10**MAX_INT_DIGITS:
            return False
        texts = item if isinstance(item, dict) else [item] if isinstance(item, str) else []
        if any(not isinstance(text, str) or _SURROGATE.search(text) for text in texts):
            return False
    return True


def _as_sent(value: Any) -> tuple[Any, bool]:
    """(what the model sent, as a recording can hold it; whether that is its JSON text): a value the
    file could not hold as it is (NaN or infinity, which a parser accepts and the allowlist refused;
    nesting or an integer beyond the file's limits; half a character) is kept as its JSON text, in
    ASCII, which the reader turns back into the value (`as_json`), so that the replay meets the same
    value and the same refusal. A value that has no JSON text (nested beyond Python's recursion, an
    integer too long to print) is kept as a text saying so, which the allowlist refuses."""
    if _storable(value):
        return value, False
    try:
        return json.dumps(value, ensure_ascii=True), True
    except (ValueError, RecursionError):
        return f"(a {type(value).__name__} that a recording cannot hold: nested too deep or an integer too long)", False


def call_data(call: ToolCall) -> dict[str, Any]:
    """A tool call as a recording holds it."""
    name, name_as_json = _as_sent(call.name)
    arguments, arguments_as_json = _as_sent(call.arguments)
    data: dict[str, Any] = {"id": recording_text(call.id), "name": name, "arguments": arguments}
    as_json = [field for field, flag in (("name", name_as_json), ("arguments", arguments_as_json)) if flag]
    if as_json:
        data["as_json"] = as_json
    return data


def has_surrogate(text: str) -> bool:
    """Whether a text holds a lone surrogate (half of a character, which UTF-8 cannot encode)."""
    return bool(_SURROGATE.search(text))


def recording_text(value: Any) -> Any:
    """Text as a recording holds it: a lone surrogate (half of a character, which UTF-8 cannot
    encode) becomes the replacement character."""
    return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value



def result_data(result: ToolResult) -> dict[str, Any]:
    """A tool call's result as a recording holds it."""
    content = {k: recording_text(stored(v)) for k, v in result.content.items()}
    return {"call_id": recording_text(result.call_id), "ok": result.ok, "content": content}


def to_data(recording: Recording) -> dict[str, Any]:
    t = recording.transcript
    data: dict[str, Any] = {
        "format": recording.format,
        "lesson": recording.lesson,
        "run": recording.run,
        "variant": recording.variant,
        **({"instance": recording.instance} if recording.instance is not None else {}),
        "group": recording.group,
        "provenance": recording.provenance,
        "system": recording_text(t.system),
        "task": recording_text(t.task),
        "steps": [
            {
                "text": recording_text(step.message.text),
                "tool_calls": [call_data(c) for c in step.message.tool_calls],
                "results": [result_data(r) for r in step.results],
            }
            for step in t.steps
        ],
        "finished": t.finished,
    }
    if t.stopped_by:
        data["stopped_by"] = t.stopped_by
    if recording.ended:
        data["ended"] = recording.ended
    if recording.notes:
        data["notes"] = list(recording.notes)
    if recording.replayed:
        data["replayed"] = recording.replayed
    if recording.partial:
        data["partial"] = recording.partial
    return data


def dumps(recording: Recording, secrets: Iterable[Secret | str | None] = ()) -> str:
    """The file's text: 2-space JSON, UTF-8, standard JSON only, cleaned of secrets."""
    data = clean(to_data(recording), secrets)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return clean_text(text, secrets)


def save(recording: Recording, path: FilePath, secrets: Iterable[Secret | str | None] = (),
         new: bool = False) -> None:
    """Write atomically: a temporary file in the same folder, synced, then renamed over the target.
    The text is read back first as a reader would: a file that would not load is never written.
    `new=True` never replaces a file (a recorded run is never overwritten): `FileExistsError` if
    one is there, whoever put it there meanwhile."""
    text = dumps(recording, secrets)
    loads(text, path)
    write_atomic(path, text, new)


def refuse_existing(path: FilePath, remedy: str) -> None:
    """`RecordingError` if a file (or anything) is at `path`: checked before a run is recorded, so
    that no work is done, or paid for, that could not be saved."""
    if os.path.lexists(path):
        raise RecordingError(f"{printable(str(path))}: already exists, and a recorded run is never overwritten: {remedy}")


def _file_mode(path: FilePath) -> int:
    """The permissions of the file being replaced, or those a new file gets under the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: FilePath, text: str | bytes, new: bool = False) -> None:
    """Write text (or bytes) to a file of no name in the same folder, sync it, then give it its
    name: `path` itself with `new` (a link, which fails, `FileExistsError`, when `path` exists),
    else a temporary name renamed over `path`. Whatever stops the process meanwhile (Ctrl-C, a
    kill, a daemon thread ended with its process), no named temporary file is left, but for the
    instant between a replacing write's link and its rename; where the folder cannot hold a file
    of no name, a named temporary file, removed on any exception."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    mode = _file_mode(path)  # mkstemp's 0600 would replace a readable file
    handle = _unnamed_file(path.parent)
    if handle is None:
        _write_named(path, data, mode, new)
        return
    try:
        _fill(handle, data, mode)
        if new:
            _link(handle, path)  # fails if a file is there, whoever put it there meanwhile
        else:
            temporary = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
            try:
                _link(handle, temporary)
                os.replace(temporary, path)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
    finally:
        os.close(handle)


_PROC_FD = "/proc/self/fd"


def _unnamed_file(folder: Path) -> int | None:
    """A file of no name in `folder` (O_TMPFILE, linked to a name once whole), or None where the
    system or the folder's file system has none."""
    if not hasattr(os, "O_TMPFILE") or not os.path.isdir(_PROC_FD):
        return None
    try:
        return os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except OSError:  # EOPNOTSUPP, EISDIR (an old kernel), EINVAL: a file system without it
        return None


def _link(handle: int, path: Path) -> None:
    """Give the unnamed file `handle` the name `path` (linkat through /proc, following the link)."""
    folder = os.open(_PROC_FD, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(str(handle), path, src_dir_fd=folder)
    finally:
        os.close(folder)


def _fill(handle: int, data: bytes, mode: int) -> None:
    os.fchmod(handle, mode)
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]
    os.fsync(handle)


def _write_named(path: Path, data: bytes, mode: int, new: bool) -> None:
    """`write_atomic` through a named temporary file, removed on any exception (Ctrl-C included)."""
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            _fill(handle, data, mode)
        finally:
            os.close(handle)
        if new:
            os.link(temporary, path)  # fails if a file is there, whoever put it there meanwhile
            os.unlink(temporary)
        else:
            os.replace(temporary, path)
    except BaseException:
        if temporary is not None and os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def provenance(kind: str, model: str, how: str, **extra: Any) -> dict[str, Any]:
    """Who made a run and when (`recorded`: UTC, to the second), with what the provider reported."""
    if kind not in KINDS:
        raise ValueError(f"unknown provenance kind {kind!r}")
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    data = {
        "kind": kind,
        "model": model,
        "how": how,
        "recorded": now.isoformat().replace("+00:00", "Z"),
        "replaylab": __version__,
    }
    data.update({k: v for k, v in extra.items() if v is not None})
    return data
