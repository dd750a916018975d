"""Recording files: strict loading against the JSON schema, and atomic writing.

This is the one module of the harness that opens, writes, renames and syncs files.
"""

import datetime
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jsonschema

from replaylab import __version__
from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript, stored
from replaylab.agents.secrets import clean, clean_text

FORMAT = "replaylab-recording/1"
KINDS = ("provider-api", "interactive", "mcp", "scripted", "authored")
LABELS = {
    "provider-api": "Recorded run",
    "interactive": "Recorded run",
    "mcp": "Recorded run",
    "scripted": "Scripted baseline (a program, not a language model)",
    "authored": "Authored example, not a recorded model run",
}


class RecordingError(ValueError):
    """A recording file that cannot be used; the text names the file, the field and the problem."""


RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
RUN_NAME_MAX = 100  # a file name, with the temporary file's prefix and suffix, stays far below 255 bytes


def check_run_name(name, where):
    """Refuse a run name that cannot be a file name here, before any work is done: `where` names
    the option or field that gave it (e.g. "--run")."""
    if not isinstance(name, str) or not RUN_NAME.fullmatch(name):
        raise RecordingError(
            f"{where}: {name!r} is not a run name: letters, digits, '_', '.' and '-', "
            "starting with a letter or digit"
        )
    if len(name) > RUN_NAME_MAX:
        raise RecordingError(f"{where}: a run name has at most {RUN_NAME_MAX} characters, this one has {len(name)}")
    return name


@dataclass
class Recording:
    lesson: str
    run: str
    variant: str
    group: str
    provenance: dict
    transcript: Transcript
    source: str = field(default="", compare=False)
    replayed: dict | None = None  # in a transcript written by a replay: {"from": recording path, "tolerance": ...}

    @property
    def label(self):
        return LABELS[self.provenance["kind"]]

    @property
    def model(self):
        return model_shown(self.provenance)


DECLARED = " (declared, not verified)"


def model_shown(provenance):
    """Who produced the messages, as pages and scorecards show it: a model named by whoever ran a
    session (`--model`) is marked as declared, so it is never grouped with one a provider reported."""
    return provenance.get("model", "") + (DECLARED if provenance.get("model_declared") else "")


def schema():
    text = resources.files("replaylab").joinpath("schemas/recording.schema.json").read_text("utf-8")
    return json.loads(text)


_VALIDATOR = None
_COMPILED = None


def _validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(schema())
    return _VALIDATOR


def _compiled():
    """The schema compiled to Python by fastjsonschema (about 15 times faster than jsonschema's
    validator, measured on recordings of 8 calls): the check of every recording that passes. The
    schema uses only keywords that mean the same in fastjsonschema's latest draft (2019-09) as in
    2020-12 (a test compares both validators), and no defaults are filled in."""
    global _COMPILED
    if _COMPILED is None:
        import fastjsonschema

        _COMPILED = fastjsonschema.compile(schema(), use_default=False, use_formats=False)
    return _COMPILED


def schema_errors(data):
    """The schema's errors of a recording's data, in jsonschema's words (none when it is valid):
    the compiled check first, jsonschema's validator for the message only when that fails."""
    import fastjsonschema

    try:
        _compiled()(data)
    except fastjsonschema.JsonSchemaException:
        return sorted(_validator().iter_errors(data), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return []


def json_path(parts):
    """A JSON path such as $.steps[0].results[1].content."""
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


class _NotFinite:
    def __init__(self, literal):
        self.literal = literal


def _parse_float(literal):
    """A float of the file; a literal too large for a float (1e999) is infinity, refused as NaN is."""
    value = float(literal)
    return value if math.isfinite(value) else _NotFinite(literal)


def _find_not_finite(value, path=()):
    if isinstance(value, _NotFinite):
        return path, value.literal
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _find_not_finite(item, path + (key,))
        if found:
            return found
    return None


def parse(text, source):
    """The validated JSON data of a recording's text, or `RecordingError`."""
    try:
        data = json.loads(text, parse_constant=_NotFinite, parse_float=_parse_float)
    except json.JSONDecodeError as error:
        raise RecordingError(f"{source}: not valid JSON: {error}") from None
    found = _find_not_finite(data)
    if found:
        where, literal = found
        raise RecordingError(
            f"{source}: {json_path(where)}: {literal} is not allowed (standard JSON only; "
            "a value that is not finite is recorded as null)"
        )
    errors = schema_errors(data)
    if errors:
        error = errors[0]
        raise RecordingError(f"{source}: {json_path(error.absolute_path)}: {_describe(error)}")
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
                    f"{result['call_id']!r} does not match the call's id {call['id']!r}"
                )
    return data


def _describe(error):
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown field {', '.join(map(repr, extra))}"
    if error.validator == "required":
        return error.message.replace("is a required property", "is missing")
    return error.message


def from_data(data, source=""):
    steps = tuple(
        Step(
            ModelMessage(s["text"], tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in s["tool_calls"])),
            tuple(
                ToolResult(r["call_id"], c["name"], r["ok"], dict(r["content"]))
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
        replayed["from"] if replayed else source, dict(replayed) if replayed else None,
    )


def read(path):
    """The text of a recording file, or `RecordingError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordingError(f"{path}: no such file") from None
    except UnicodeDecodeError as error:
        raise RecordingError(f"{path}: not UTF-8 text ({error.reason})") from None


def load(path):
    """Read and validate one recording file."""
    return loads(read(path), path)


def loads(text, path):
    """The recording in `text`, the content of the file at `path`, validated: the one check of
    what a caller then copies or uses."""
    path = Path(path)
    recording = from_data(parse(text, str(path)), str(path))
    expected = path.stem
    if recording.run != expected:
        raise RecordingError(f"{path}: $.run: {recording.run!r} differs from the file name {expected!r}")
    return recording


def _as_sent(value):
    """What the model sent, as standard JSON can hold it: a value holding NaN or infinity (which a
    parser accepts, and the allowlist refused) is kept as its JSON text, which is refused alike."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return json.dumps(value)
    return value


def to_data(recording):
    t = recording.transcript
    data = {
        "format": FORMAT,
        "lesson": recording.lesson,
        "run": recording.run,
        "variant": recording.variant,
        "group": recording.group,
        "provenance": recording.provenance,
        "system": t.system,
        "task": t.task,
        "steps": [
            {
                "text": step.message.text,
                "tool_calls": [
                    {"id": c.id, "name": _as_sent(c.name), "arguments": _as_sent(c.arguments)}
                    for c in step.message.tool_calls
                ],
                "results": [
                    {"call_id": r.call_id, "ok": r.ok, "content": {k: stored(v) for k, v in r.content.items()}}
                    for r in step.results
                ],
            }
            for step in t.steps
        ],
        "finished": t.finished,
    }
    if t.stopped_by:
        data["stopped_by"] = t.stopped_by
    if recording.replayed:
        data["replayed"] = recording.replayed
    return data


def dumps(recording, secrets=()):
    """The file's text: 2-space JSON, UTF-8, standard JSON only, cleaned of secrets."""
    data = clean(to_data(recording), secrets)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return clean_text(text, secrets)


def save(recording, path, secrets=(), new=False):
    """Write atomically: a temporary file in the same folder, synced, then renamed over the target.
    `new=True` never replaces a file: `FileExistsError` if one is there."""
    text = dumps(recording, secrets)
    parse(text, str(path))  # never write a file that would not load
    write_atomic(path, text, new)


def _file_mode(path):
    """The permissions of the file being replaced, or those a new file gets under the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path, text, new=False):
    """Write text (or bytes) to a temporary file in the same folder, sync it, then rename it to
    `path`; with `new`, link it instead, which fails (`FileExistsError`) when `path` exists."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        binary = isinstance(text, bytes)
        with os.fdopen(handle, "wb" if binary else "w", encoding=None if binary else "utf-8") as stream:
            os.fchmod(stream.fileno(), _file_mode(path))  # mkstemp's 0600 would replace a readable file
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if new:
            os.link(temporary, path)  # fails if a file is there, whoever put it there meanwhile
            os.unlink(temporary)
        else:
            os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def provenance(kind, model, how, **extra):
    """Who made a run and when (`recorded`: UTC, to the second), with what the provider reported."""
    if kind not in KINDS:
        raise ValueError(f"unknown provenance kind {kind!r}")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    data = {
        "kind": kind,
        "model": model,
        "how": how,
        "recorded": now.isoformat().replace("+00:00", "Z"),
        "replaylab": __version__,
    }
    data.update({k: v for k, v in extra.items() if v is not None})
    return data
