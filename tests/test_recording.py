"""Recording files: round trip, strict loading with the file and JSON path in every error, atomic
writing, the exact text format, and the interactive client's JSON lines."""

import io
import json
import math
import os
import re

import pytest

from replaylab.agents import loop, recording
from replaylab.agents.clients import authored
from replaylab.agents.clients.interactive import InteractiveClient
from replaylab.agents.messages import ModelMessage, ToolCall, ToolResult
from replaylab.agents.recording import Recording, RecordingError
from replaylab.agents.tools import Allowlist, Parameter, Tool
from replaylab.lessons import registry
from replaylab.physics import projectile

MESSAGES = [
    ModelMessage(
        "First the vacuum range, then one run with drag. Winkel θ ≥ 30°",
        (
            ToolCall("1", "range_without_drag", {"speed": 25, "angle": 45}),
            ToolCall("2", "range_with_drag", {"speed": 25, "angle": 35, "dt": 0.01}),
        ),
    ),
    ModelMessage(
        "A few more, some of them refused.",
        (
            ToolCall("3", "range_with_drag", {"speed": 25, "angle": 40.0, "dt": 0.005}),
            ToolCall("4", "range_with_drag", {"speed": 25, "angle": 90, "dt": 0.01}),
            ToolCall("5", ["os.system"], {"cmd": ["rm", {"-rf": None}], "n": 10**30}),
            ToolCall("6", "range_with_drag", '{"speed": 25, "angle": 4'),
        ),
    ),
    ModelMessage("The best angle lies between 39 and 40 degrees."),
]


def make_recording(run="reference", messages=MESSAGES, kind="authored"):
    chosen = registry.lesson("projectile").variant("default")
    client = authored.client(messages)
    transcript = loop.run(client, chosen.system, chosen.task, chosen.allowlist(), chosen.max_steps)
    provenance = recording.provenance(kind, authored.MODEL, authored.HOW)
    return Recording("projectile", run, "default", "reference", provenance, transcript)


@pytest.fixture
def saved(tmp_path):
    rec = make_recording()
    path = tmp_path / "reference.json"
    recording.save(rec, path)
    return rec, path


# ---------------------------------------------------------------------------------------------
# Round trip and format


def test_round_trip_keeps_everything(saved):
    rec, path = saved
    loaded = recording.load(path)
    assert loaded == rec
    assert loaded.provenance == rec.provenance
    assert (loaded.lesson, loaded.run, loaded.variant, loaded.group) == ("projectile", "reference", "default", "reference")
    calls = [c for s in loaded.transcript.steps for c in s.message.tool_calls]
    assert calls[4].name == ["os.system"] and calls[4].arguments == {"cmd": ["rm", {"-rf": None}], "n": 10**30}
    assert calls[5].arguments == '{"speed": 25, "angle": 4'
    # saving the loaded run gives the same bytes
    again = path.with_name("again.json")
    recording.save(Recording(**{**loaded.__dict__, "run": "again"}), again)
    assert again.read_text("utf-8") == path.read_text("utf-8").replace('"run": "reference"', '"run": "again"')


def test_the_recorded_results_are_the_computed_ones(saved):
    rec, _ = saved
    first, second, last = rec.transcript.steps
    assert first.results == (
        ToolResult("1", "range_without_drag", True, {"range_m": projectile.range_without_drag(25, 45)}),
        ToolResult("2", "range_with_drag", True, {"range_m": projectile.range_with_drag(25, 35, 0.01)}),
    )
    assert [r.ok for r in second.results] == [True, False, False, False]
    assert second.results[1].content == {"error": "angle must be between 1 and 89, got 90"}
    assert second.results[3].content == {"error": "the arguments must be an object, got str"}
    assert rec.transcript.finished and last.results == ()


def test_saved_text_format(saved):
    rec, path = saved
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "format": "replaylab-recording/2",\n  "lesson": "projectile",\n')
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    assert "Winkel θ ≥ 30°".encode("utf-8") in raw  # UTF-8, not \\u escapes
    for literal in ("NaN", "Infinity"):
        assert literal not in text
    # arguments keep their JSON types
    assert '"speed": 25,' in text and '"speed": 25.0' not in text
    assert '"dt": 0.01\n' in text
    assert '"angle": 40.0,' in text
    data = json.loads(text)
    arguments = data["steps"][0]["tool_calls"][1]["arguments"]
    assert type(arguments["speed"]) is int and type(arguments["dt"]) is float
    assert type(data["steps"][1]["tool_calls"][0]["arguments"]["angle"]) is float
    assert list(data) == ["format", "lesson", "run", "variant", "group", "provenance", "system", "task", "steps",
                          "finished"]
    assert set(data["provenance"]) == {"kind", "model", "how", "recorded", "replaylab"}
    loaded = recording.load(path)
    loaded_arguments = loaded.transcript.steps[0].message.tool_calls[1].arguments
    assert type(loaded_arguments["speed"]) is int and type(loaded_arguments["dt"]) is float


def test_provenance_and_labels():
    p = recording.provenance("scripted", "a program", "how", seed=7, usage=None)
    assert p["kind"] == "scripted" and p["seed"] == 7 and "usage" not in p
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["recorded"])  # UTC, to the second
    with pytest.raises(ValueError):
        recording.provenance("guessed", "m", "h")
    labels = {k: make_recording(kind=k).label for k in recording.KINDS}
    assert labels == {
        "provider-api": "Recorded run",
        "interactive": "Recorded run",
        "mcp": "Recorded run",
        "scripted": "Scripted baseline (a program, not a language model)",
        "authored": "Authored example, not a recorded model run",
    }


def not_finite_recording():
    values = iter([math.inf, -math.inf, math.nan, 1.5])

    def measure(x):
        return {"value": next(values), "other": 2}

    allowlist = Allowlist([Tool("measure", "", (Parameter("x", "", 0, 1),), measure)])
    calls = tuple(ToolCall(str(i), "measure", {"x": 0.5}) for i in range(4))
    transcript = loop.run(authored.client([ModelMessage("", calls), ModelMessage("done")]), "s", "t", allowlist, 3)
    return Recording("projectile", "nonfinite", "default", "g", recording.provenance("authored", "m", "h"), transcript)


def test_not_finite_results_are_stored_as_null(tmp_path):
    rec = not_finite_recording()
    path = tmp_path / "nonfinite.json"
    recording.save(rec, path)
    data = json.loads(path.read_text("utf-8"))
    assert [r["content"]["value"] for r in data["steps"][0]["results"]] == [None, None, None, 1.5]
    loaded = recording.load(path)
    assert [r.content["value"] for r in loaded.transcript.steps[0].results] == [None, None, None, 1.5]
    assert loaded.transcript.steps[0].results[0].content["other"] == 2


# ---------------------------------------------------------------------------------------------
# Strict loading: one error naming the file and the JSON path


def write(tmp_path, data, name="reference.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def load_error(path):
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    return str(caught.value)


def good_data():
    return recording.to_data(make_recording())


@pytest.mark.parametrize(
    "where, expected_path",
    [
        (lambda d: d["steps"][0], "$.steps[0]"),
        (lambda d: d["steps"][1]["tool_calls"][2], "$.steps[1].tool_calls[2]"),
        (lambda d: d["steps"][0]["results"][1], "$.steps[0].results[1]"),
        (lambda d: d["provenance"].setdefault("usage", {"input_tokens": 1}), "$.provenance.usage"),
    ],
)
def test_unknown_keys_deeper(tmp_path, where, expected_path):
    data = good_data()
    where(data)["secret"] = 1
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: {expected_path}: unknown field 'secret'"


def test_wrong_type_in_a_result_value(tmp_path):
    data = good_data()
    data["steps"][0]["results"][0]["content"]["range_m"] = [1.0]
    path = write(tmp_path, data)
    message = load_error(path)
    assert message.startswith(f"{path}: $.steps[0].results[0].content.range_m: ")
    assert "is not of type" in message


@pytest.mark.parametrize(
    "change, expected",
    [
        # a field that is not in the format
        (lambda d: d.__setitem__("api_key", "sk-test-FAKE0123456789abcdef"), "$: unknown field 'api_key'"),
        (lambda d: d["provenance"].__setitem__("api_key", "x"), "$.provenance: unknown field 'api_key'"),
        # a value of the wrong type
        (lambda d: d["steps"][0].__setitem__("text", 5), "$.steps[0].text: 5 is not of type 'string'"),
        (lambda d: d.__setitem__("finished", "yes"), "$.finished: 'yes' is not of type 'boolean'"),
        (lambda d: d["steps"][0]["results"][0].__setitem__("ok", 1), "$.steps[0].results[0].ok: 1 is not of type 'boolean'"),
        (lambda d: d["steps"][0]["tool_calls"][0].__setitem__("id", 1), "$.steps[0].tool_calls[0].id: 1 is not of type 'string'"),
        (lambda d: d["provenance"].__setitem__("seed", 1.5), "$.provenance.seed: 1.5 is not of type 'integer'"),
        (lambda d: d.__setitem__("steps", {}), "$.steps: {} is not of type 'array'"),
        # a field that is missing
        (lambda d: d["provenance"].pop("model"), "$.provenance: 'model' is missing"),
        (lambda d: d.pop("finished"), "$: 'finished' is missing"),
        (lambda d: d.pop("task"), "$: 'task' is missing"),
        (lambda d: d["steps"][1]["tool_calls"][0].pop("arguments"), "$.steps[1].tool_calls[0]: 'arguments' is missing"),
        (lambda d: d["steps"][0]["results"][0].pop("content"), "$.steps[0].results[0]: 'content' is missing"),
    ],
)
def test_one_error_names_the_file_the_field_and_the_problem(tmp_path, change, expected):
    data = good_data()
    change(data)
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: {expected}"


def test_results_length_differs_from_calls(tmp_path):
    data = good_data()
    data["steps"][0]["results"].pop()
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: $.steps[0].results: 1 results for 2 tool calls"
    data = good_data()
    data["steps"][2]["results"].append({"call_id": "9", "ok": True, "content": {}})
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: $.steps[2].results: 1 results for 0 tool calls"


def test_result_call_id_must_match(tmp_path):
    data = good_data()
    data["steps"][0]["results"][1]["call_id"] = "7"
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: $.steps[0].results[1].call_id: '7' does not match the call's id '2'"


NOT_FINITE_TEXT = "is not allowed (standard JSON only; a value that is not finite is recorded as null)"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_not_finite_literal_in_a_recorded_number(tmp_path, literal):
    data = good_data()
    value = data["steps"][0]["results"][1]["content"]["range_m"]
    path = tmp_path / "reference.json"
    text = json.dumps(data, indent=2)
    assert text.count(repr(value)) == 1
    path.write_text(text.replace(repr(value), literal), encoding="utf-8")
    assert load_error(path) == f"{path}: $.steps[0].results[1].content.range_m: {literal} {NOT_FINITE_TEXT}"


def test_not_finite_literal_in_recorded_arguments(tmp_path):
    data = good_data()
    path = tmp_path / "reference.json"
    text = json.dumps(data, indent=2).replace('"dt": 0.005', '"dt": NaN')
    path.write_text(text, encoding="utf-8")
    assert load_error(path) == f"{path}: $.steps[1].tool_calls[0].arguments.dt: NaN {NOT_FINITE_TEXT}"


@pytest.mark.parametrize("text", ["", "{", "{'format': 1}", '{"a": 1,}', "[1, 2", "null garbage"])
def test_invalid_json(tmp_path, text):
    path = tmp_path / "reference.json"
    path.write_text(text, encoding="utf-8")
    assert load_error(path).startswith(f"{path}: not valid JSON: ")


def test_not_an_object_and_not_utf8_and_no_file(tmp_path):
    path = tmp_path / "reference.json"
    path.write_text("[]", encoding="utf-8")
    assert load_error(path).startswith(f"{path}: $: ")
    path.write_bytes(b'{"text": "\xff\xfe"}')
    assert load_error(path).startswith(f"{path}: not UTF-8 text")
    assert load_error(tmp_path / "missing.json") == f"{tmp_path / 'missing.json'}: no such file"


def test_run_name_must_be_the_file_name(tmp_path):
    path = write(tmp_path, good_data(), name="other.json")
    assert load_error(path) == f"{path}: $.run: 'reference' differs from the file name 'other'"


def test_format_must_be_one_that_is_read(tmp_path):
    """Every writer writes format 2; format 1 (runs before the answer tool) is still read, as such;
    any other format is refused, naming the ones that are read."""
    data = good_data()
    assert data["format"] == recording.FORMAT == "replaylab-recording/2"
    data["format"] = "replaylab-recording/3"
    path = write(tmp_path, data)
    assert load_error(path) == f"{path}: $.format: 'replaylab-recording/3' is not one of ['replaylab-recording/2', 'replaylab-recording/1']"
    data["format"] = recording.FORMAT1
    old = recording.load(write(tmp_path, data))
    assert old.format == "replaylab-recording/1" and old.format1
    assert not recording.load(write(tmp_path, good_data())).format1


def test_unknown_provenance_kind(tmp_path):
    data = good_data()
    data["provenance"]["kind"] = "guessed"
    path = write(tmp_path, data)
    assert load_error(path).startswith(f"{path}: $.provenance.kind: ")


# ---------------------------------------------------------------------------------------------
# Atomic writing


def snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


class Unserializable:
    pass


def test_unserializable_object_leaves_the_old_file(saved):
    rec, path = saved
    before = snapshot(path.parent)
    bad = make_recording(messages=[ModelMessage("", (ToolCall("1", "range_without_drag", {"speed": Unserializable()}),)),
                                   ModelMessage("done")])
    with pytest.raises(TypeError):
        recording.save(bad, path)
    assert snapshot(path.parent) == before


def test_failing_rename_leaves_the_old_file_and_no_temporary_file(saved, monkeypatch):
    rec, path = saved
    before = snapshot(path.parent)
    changed = make_recording(messages=[ModelMessage("changed")])

    def failing_replace(src, dst):
        assert os.path.exists(src) and os.path.dirname(src) == str(path.parent)
        raise OSError("disk full")

    monkeypatch.setattr(recording.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        recording.save(changed, path)
    assert snapshot(path.parent) == before


def test_failing_fsync_on_a_new_file_leaves_nothing(tmp_path, monkeypatch):
    def failing_fsync(fd):
        raise OSError("io error")

    monkeypatch.setattr(recording.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="io error"):
        recording.save(make_recording(), tmp_path / "reference.json")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(params=["unnamed", "named"])
def temporary_kind(request, monkeypatch):
    """write_atomic's two ways: a file of no name (O_TMPFILE, this machine's), or, where a folder
    cannot hold one, a named temporary file."""
    if request.param == "named":
        monkeypatch.setattr(recording, "_unnamed_file", lambda folder: None)
    return request.param


@pytest.mark.parametrize("stop", [OSError(28, "no space left on device"), KeyboardInterrupt()], ids=["disk-full", "ctrl-c"])
@pytest.mark.parametrize("new", [False, True], ids=["replace", "new"])
def test_a_write_stopped_half_way_leaves_no_file_behind(tmp_path, monkeypatch, temporary_kind, stop, new):
    """A write that fails (disk full) or is interrupted (Ctrl-C) after half its bytes leaves the
    folder as it was: no half-written file, no temporary file."""
    path = tmp_path / "run.json"
    if not new:
        path.write_text("before\n")
    before = snapshot(tmp_path)
    real_write = os.write

    def half(handle, data):
        real_write(handle, bytes(data[: len(data) // 2]))
        raise stop

    monkeypatch.setattr(recording.os, "write", half)
    with pytest.raises(type(stop)):
        recording.write_atomic(path, "x" * 10_000 + "\n", new=new)
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("new", [False, True], ids=["replace", "new"])
def test_a_write_interrupted_at_its_rename_leaves_no_temporary_file(tmp_path, monkeypatch, temporary_kind, new):
    """Ctrl-C at the last step of a write (the link or the rename that names the file): the target
    is as it was, or whole, and no temporary file is left (the leftover once found by the
    campaign's Ctrl-C test)."""
    path = tmp_path / "run.json"
    if not new:
        path.write_text("before\n")
    real = {"link": os.link, "replace": os.replace}

    def interrupted(name):
        def call(*args, **kwargs):
            real[name](*args, **kwargs)
            raise KeyboardInterrupt
        return call

    for name in real:
        monkeypatch.setattr(recording.os, name, interrupted(name))
    with pytest.raises(KeyboardInterrupt):
        recording.write_atomic(path, "after\n", new=new)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert path.read_text() in ("before\n", "after\n")


def test_write_atomic_keeps_the_mode_of_the_file_it_replaces(tmp_path, temporary_kind):
    path = tmp_path / "run.json"
    path.write_text("before\n")
    path.chmod(0o640)
    recording.write_atomic(path, b"after\n")
    assert path.read_bytes() == b"after\n" and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_save_refuses_what_would_not_load(tmp_path):
    rec = make_recording(run="bad/name")
    with pytest.raises(RecordingError):
        recording.save(rec, tmp_path / "x.json")
    assert list(tmp_path.iterdir()) == []


def test_a_successful_save_replaces_the_old_file_and_leaves_no_temporary(saved):
    rec, path = saved
    changed = make_recording(messages=[ModelMessage("changed")])
    recording.save(changed, path)
    assert [p.name for p in path.parent.iterdir()] == ["reference.json"]
    assert recording.load(path).transcript.steps[0].message.text == "changed"


# ---------------------------------------------------------------------------------------------
# The interactive client: one message per line (bytes), an error line for anything else


def projectile_allowlist():
    return registry.lesson("projectile").variant("default").allowlist()


def lines(*messages):
    return io.BytesIO(b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages))


def test_interactive_client_reads_messages_and_answers_bad_lines_with_one_error_each():
    stdin = lines(
        {"text": "two calls", "tool_calls": [
            {"id": "a", "name": "range_without_drag", "arguments": {"speed": 25, "angle": 45}},
            {"id": "b", "name": "range_with_drag", "arguments": {"speed": 25, "angle": 90, "dt": 0.01}},
        ]},
        b"this is not json",
        b"",
        b"[1, 2]",
        {"text": "x", "extra": 1},
        b"\xff\xfe not UTF-8",
        b'{"text": "\\ud800"}',
        b"[" * 30 + b"]" * 30,
        b'{"tool_calls": [{"name": "f", "arguments": {"n": ' + b"9" * 5000 + b"}}]}",
        {"tool_calls": [{"id": "c", "name": "range_with_drag", "arguments": {"speed": 25, "angle": 35, "dt": 0.01}}]},
    )
    stdout = io.StringIO()
    transcript = loop.run(InteractiveClient(stdin, stdout), "s", "t", projectile_allowlist(), max_steps=10)

    out = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [o["line"] for o in out] == [2, 3, 4, 5, 6, 7, 8, 9]
    assert out[0]["error"].startswith("line 2: the line is not valid JSON")
    del out[1]  # a blank line gets its answer too (test_session.py says which)
    assert out[1]["error"] == "line 4: a message must be a JSON object"
    assert out[2]["error"] == ('line 5: unknown fields: \'extra\'; a message is {"text": "...", "tool_calls": '
                               '[{"id": "1", "name": "TOOL", "arguments": {"ARGUMENT": "VALUE"}}]}')
    assert out[3]["error"] == "line 6: the line is not valid UTF-8 (byte 0xff at 0)"
    assert out[4]["error"] == "line 7: $.text: a lone surrogate is not text"
    assert out[5]["error"] == "line 8: $[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 24 levels deep"
    assert out[6]["error"].startswith("line 9: the line holds a number that cannot be read")
    # the end of input ends the run, not finished, and adds no step
    assert not transcript.finished
    assert [len(s.message.tool_calls) for s in transcript.steps] == [2, 1]
    assert [r.ok for r in transcript.steps[0].results] == [True, False]
    assert transcript.steps[0].message.text == "two calls"
    assert transcript.model == InteractiveClient().model


def test_interactive_line_nested_beyond_the_parser_is_one_error_line():
    stdout = io.StringIO()
    client = InteractiveClient(lines(b"[" * 100000 + b"]" * 100000, {"text": "done"}), stdout)
    assert client.complete("s", [], []) == ModelMessage("done", ())
    (error,) = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert error["line"] == 1 and "nested" in error["error"]


def test_interactive_line_too_long_is_skipped_to_its_end():
    from replaylab.agents.clients.interactive import MAX_LINE_BYTES

    stdout = io.StringIO()
    long_line = json.dumps({"text": "x" * (MAX_LINE_BYTES + 10)}).encode()
    client = InteractiveClient(lines(long_line, {"text": "short"}), stdout)
    assert client.complete("s", [], []) == ModelMessage("short", ())
    assert json.loads(stdout.getvalue()) == {"error": f"line 1: longer than {MAX_LINE_BYTES} bytes", "line": 1}


def test_interactive_message_without_tool_calls_ends_the_run():
    stdin = lines(
        {"text": "one", "tool_calls": [{"id": "1", "name": "range_without_drag", "arguments": {"speed": 25, "angle": 45}}]},
        {"text": "I am done"},
        {"text": "never read", "tool_calls": [{"id": "2", "name": "range_without_drag", "arguments": {"speed": 25, "angle": 30}}]},
    )
    transcript = loop.run(InteractiveClient(stdin, io.StringIO()), "s", "t", projectile_allowlist(), max_steps=10)
    assert transcript.finished and len(transcript.steps) == 2
    assert transcript.steps[1].message.text == "I am done"
    assert json.loads(stdin.readline())["text"] == "never read"


def test_interactive_empty_input_ends_at_once_not_finished():
    stdout = io.StringIO()
    transcript = loop.run(InteractiveClient(io.BytesIO(b""), stdout), "s", "t", projectile_allowlist(), max_steps=10)
    assert not transcript.finished and transcript.steps == ()
    assert stdout.getvalue() == ""


def test_interactive_hostile_calls_are_refused_as_data(tmp_path):
    target = tmp_path / "pwned"
    code = f"__import__('pathlib').Path({str(target)!r}).touch()"
    stdin = lines(
        {"tool_calls": [
            {"id": "1", "name": code, "arguments": {}},
            {"id": "2", "name": "range_without_drag", "arguments": {"speed": code, "angle": 45}},
            {"id": "3", "name": "range_without_drag", "arguments": code},
        ]},
    )
    # a call without an id, whose speed is the literal Infinity that Python's parser accepts
    stdin = io.BytesIO(
        stdin.getvalue().rstrip(b"\n")[:-2] + b', {"name": "range_without_drag", "arguments": {"speed": Infinity, "angle": 45}}]}\n'
    )
    transcript = loop.run(InteractiveClient(stdin, io.StringIO()), "s", "t", projectile_allowlist(), max_steps=3)
    (step,) = transcript.steps
    assert [r.ok for r in step.results] == [False] * 4
    assert step.results[3] == ToolResult("call-4", "range_without_drag", False, {"error": "speed must be finite, got inf"})
    assert not target.exists()
    assert not transcript.finished


def test_interactive_not_finite_result_is_null_for_the_agent():
    from replaylab.agents.clients.interactive import results_data

    results = [ToolResult("0", "m", True, {"value": math.inf}), ToolResult("1", "m", True, {"value": math.nan}),
               ToolResult("2", "m", True, {"value": 2.5})]
    assert json.dumps(results_data(results), allow_nan=False) == (
        '[{"call_id": "0", "ok": true, "content": {"value": null}}, '
        '{"call_id": "1", "ok": true, "content": {"value": null}}, '
        '{"call_id": "2", "ok": true, "content": {"value": 2.5}}]'
    )


def test_a_run_whose_model_sent_nan_or_infinity_can_be_saved(tmp_path):
    """NaN and Infinity reach validation as floats and are refused; the file (standard JSON only)
    keeps such a call as its JSON text, which is refused alike."""
    sent = json.loads('{"speed": NaN, "angle": 45, "extra": [Infinity]}')
    messages = [
        ModelMessage("", (ToolCall("1", "range_without_drag", sent), ToolCall("2", float("nan"), {"speed": 25}),
                          ToolCall("3", "range_without_drag", {"speed": 25, "angle": 45}))),
        ModelMessage("done"),
    ]
    rec = make_recording(run="nan-args", messages=messages)
    assert [r.ok for r in rec.transcript.steps[0].results] == [False, False, True]
    path = tmp_path / "nan-args.json"
    recording.save(rec, path)
    text = path.read_text("utf-8")
    data = json.loads(text, parse_constant=lambda literal: pytest.fail(f"{literal} in the file"))
    calls = data["steps"][0]["tool_calls"]
    assert calls[0]["arguments"] == '{"speed": NaN, "angle": 45, "extra": [Infinity]}'
    assert calls[1]["name"] == "NaN"
    assert calls[2]["arguments"] == {"speed": 25, "angle": 45}
    loaded = recording.load(path)
    assert [r.ok for r in loaded.transcript.steps[0].results] == [False, False, True]


def test_a_saved_file_gets_ordinary_permissions_not_the_temporary_files(tmp_path):
    umask = os.umask(0o022)
    try:
        path = tmp_path / "reference.json"
        recording.save(make_recording(), path)
        assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
        path.chmod(0o640)
        recording.save(make_recording(messages=[ModelMessage("changed")]), path)
        assert path.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its permissions
    finally:
        os.umask(umask)
