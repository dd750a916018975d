"""The one reader of recordings (issue 16, cases 7, 8, 9, 11 and 16): each limit and each kind of
file is refused on one line that names the file and the field, the same way by the library, the
command line (replay, promote, record --from, doctor) and the workflow's dry run, before anything
else reads the file; never a traceback, a hang or an exit code other than 2."""

import json
import os

import pytest

from helpers import RECORDINGS, ROOT, cli, in_process
from helpers.bad import BAD, DEEP, NOT_A_FILE, VALID, changed, deep_arguments, make_not_a_file, nested
from replaylab.agents import recording
from replaylab.agents.recording import RecordingError

def write(folder, name, data, file_name="symplectic-euler.json"):
    path = folder / "hunter" / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def one_line(result, path, expected):
    """stderr is one line: replaylab: <file>: <what is wrong>."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith(f"replaylab: {path}: "), lines[0][:300]
    assert expected in lines[0], lines[0][:300]
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("name", sorted(BAD))
def test_the_reader_refuses_with_one_line_naming_the_file_and_field(tmp_path, name):
    data, expected = BAD[name]
    path = write(tmp_path, name, data)
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message, message[:300]
    assert "\n" not in message and len(message) < 400, message[:300]


@pytest.mark.parametrize("name", ["nested-500", "lone-surrogate", "integer-5000-digits", "duplicate-key", "ansi-in-model"])
def test_replay_promote_and_record_from_refuse_alike(tmp_path, name):
    data, expected = BAD[name]
    path = write(tmp_path, name, data)
    for args in (["replay", str(path)], ["promote", str(path), "--recordings", str(tmp_path / "recordings")],
                 ["record", "hunter", "--provider", "authored", "--from", str(path), "--run", "again"]):
        result = in_process(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr[-500:])
        one_line(result, path, expected)
        assert result.stdout == ""  # nothing was done: no step printed, no change shown
    assert not (tmp_path / "recordings").exists() and not (tmp_path / "results").exists()


def file_kinds(folder):
    """{name: what the reader says} of what a recording's name can be, and is not a regular file."""
    lesson = folder / "hunter"
    lesson.mkdir(parents=True, exist_ok=True)
    for kind in NOT_A_FILE:
        make_not_a_file(lesson / f"{kind}.json", kind)
    return NOT_A_FILE


def test_a_folder_a_dangling_link_a_link_loop_and_a_fifo_are_refused_without_hanging(tmp_path):
    for name, expected in file_kinds(tmp_path).items():
        path = tmp_path / "hunter" / f"{name}.json"
        with pytest.raises(RecordingError, match="^" + str(path).replace(".", r"\.") + ": " + expected.replace("(", r"\(").replace(")", r"\)")):
            recording.load(path)
        result = cli("replay", str(path), cwd=tmp_path)  # a process: a FIFO would block an ordinary open: timeout=120
        assert result.returncode == 2
        one_line(result, path, expected)


def test_doctor_reports_each_bad_file_on_its_line_and_goes_on(tmp_path):
    file_kinds(tmp_path)
    write(tmp_path, "dup", BAD["duplicate-key"][0], "dup.json")
    (tmp_path / "hunter" / "velocity-verlet.json").write_text((RECORDINGS / "hunter" / "velocity-verlet.json").read_text())
    result = cli("doctor", "--recordings", str(tmp_path), cwd=tmp_path)  # a process: its FIFO never hangs the tests
    assert result.returncode == 1 and "Traceback" not in result.stderr
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL recording")]
    assert len(failed) == 5, result.stdout
    assert any("the key 'run' appears twice" in line for line in failed)
    assert f"ok   recording {tmp_path / 'hunter' / 'velocity-verlet.json'}: loads and replays" in result.stdout


def test_a_value_the_model_sent_that_a_file_cannot_hold_is_kept_as_its_json_text(tmp_path):
    """What a model sends is recorded, whatever it is: nesting beyond the limit, an integer too long,
    half a character, infinity become the JSON text of the value, marked `as_json`, which the reader
    turns back into the value: the allowlist refuses it alike, with the same words, on replay."""
    from replaylab.agents import loop
    from replaylab.agents.clients import authored
    from replaylab.agents.messages import ModelMessage, ToolCall
    from replaylab.lessons import registry

    sent = [nested(70), {"periods": 10**1500}, {"method": "\ud800"}, float("inf")]
    calls = tuple(ToolCall(str(i), "oscillator_energy_drift", value) for i, value in enumerate(sent))
    v = registry.lesson("hunter").variant("symplectic-euler")
    transcript = loop.run(authored.client([ModelMessage("text \ud800 too", calls), ModelMessage("done")]),
                          v.system, v.task, v.allowlist(), v.max_steps)
    run = recording.Recording("hunter", "odd", "symplectic-euler", "g", recording.provenance("authored", "m", "h"), transcript)
    path = tmp_path / "odd.json"
    recording.save(run, path)
    stored = json.loads(path.read_text())["steps"][0]["tool_calls"]
    assert all(isinstance(c["arguments"], str) and c["as_json"] == ["arguments"] for c in stored), stored
    assert json.loads(stored[0]["arguments"]) == nested(70) and stored[2]["arguments"] == '{"method": "\\ud800"}'
    assert stored[3]["arguments"] == "Infinity"
    loaded = recording.load(path)
    arguments = [c.arguments for c in loaded.transcript.steps[0].message.tool_calls]
    assert arguments[0] == nested(70) and arguments[1] == {"periods": 10**1500} and arguments[2] == {"method": "\ud800"}
    assert arguments[3] == float("inf")
    assert loaded.transcript.steps[0].message.text == "text \ufffd too"
    assert [r.ok for r in loaded.transcript.steps[0].results] == [False] * 4
    errors = [r.content["error"] for r in transcript.steps[0].results]
    again = [v.allowlist().dispatch(c).content["error"] for c in loaded.transcript.steps[0].message.tool_calls]
    assert again == errors  # the same words as the agent read


def test_save_never_replaces_a_file_when_new(tmp_path):
    run = recording.load(RECORDINGS / "hunter" / "symplectic-euler.json")
    path = tmp_path / "symplectic-euler.json"
    path.write_text("mine")
    with pytest.raises(FileExistsError):
        recording.save(run, path, new=True)
    assert path.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["symplectic-euler.json"]
    recording.save(run, tmp_path / "new" / "symplectic-euler.json", new=True)
    assert recording.load(tmp_path / "new" / "symplectic-euler.json") == run


# ---------------------------------------------------------------------------------------------
# The words of each refusal, exactly


def refusal(tmp_path, change):
    path = write(tmp_path, "x", changed(change).encode())
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ")
    return text[len(f"{path}: "):]


def test_each_kind_of_schema_error_is_said_in_words(tmp_path):
    long_text = "x" * 300
    assert refusal(tmp_path, lambda d: d.__setitem__("variant", "v" * 101)) == (
        "$.variant: '" + "v" * 55 + "...' (101 characters) is 101 characters long, more than 100")
    assert refusal(tmp_path, lambda d: d["provenance"].__setitem__("request_ids", ["r"] * 1001)) == (
        "$.provenance.request_ids: 1001 items, more than 1000")
    assert refusal(tmp_path, lambda d: d.__setitem__("finished", long_text)) == (
        "$.finished: '" + "x" * 55 + "...' (300 characters) is not of type 'boolean'")
    assert refusal(tmp_path, lambda d: d.__setitem__("finished", "no")) == "$.finished: 'no' is not of type 'boolean'"
    assert refusal(tmp_path, lambda d: d.__setitem__("format", long_text)) == (
        "$.format: '" + "x" * 55 + "...' (300 characters) is not one of ['replaylab-recording/2', 'replaylab-recording/1']")
    assert refusal(tmp_path, lambda d: d["provenance"].__setitem__("kind", "guessed")) == (
        "$.provenance.kind: 'guessed' is not one of ['provider-api', 'interactive', 'mcp', 'scripted', 'authored']")
    assert refusal(tmp_path, lambda d: d["steps"][0]["results"][0]["content"].update({f"k{i}": 1 for i in range(100)})).startswith(
        "$.steps[0].results[0].content: {")
    assert refusal(tmp_path, lambda d: d.__setitem__("lesson", "Hunter")) == "$.lesson: 'Hunter' does not match '^[a-z][a-z0-9_]*$'"
    assert refusal(tmp_path, lambda d: d.__setitem__("group", "")) == "$.group: '' should be non-empty"
    assert refusal(tmp_path, lambda d: d.__setitem__("replayed", {"from": "x", "tolerance": -1})) == (
        "$.replayed.tolerance: -1 is less than the minimum of 0")
    assert refusal(tmp_path, lambda d: d["provenance"].__setitem__("how", "a\u202eb")) == (
        "$.provenance.how: 'a\\u202eb' holds the control character \\u202e at position 1: this field is printed, so it may hold none")
    assert refusal(tmp_path, lambda d: d.update({"zz": 1, "aa": 2})) == "$: unknown field 'aa', 'zz'"
    assert refusal(tmp_path, lambda d: d.update({"k" * 100: 1})) == "$: unknown field '" + "k" * 55 + "...' (100 characters)"
    assert refusal(tmp_path, lambda d: d["steps"][0]["results"][0]["content"].__setitem__("a b" + "k" * 100, [1])) == (
        "$.steps[0].results[0].content['a b" + "k" * 52 + "...' (103 characters)]: [1] is not of type 'number', 'string', 'boolean', 'null'")
    assert refusal(tmp_path, lambda d: d.pop("run")) == "$: 'run' is missing"


def test_short_json_path_and_printable():
    assert recording.short("abc") == "'abc'"
    assert recording.short("a" * 58) == "'" + "a" * 58 + "'"  # 60 characters: not cut
    assert recording.short("a" * 100, 20) == "'" + "a" * 15 + "...' (100 characters)"
    assert recording.short(list(range(100)), 20) == "[0, 1, 2, 3, 4, ...]"
    assert recording.json_path(["steps", 0, "results", 1, "content", "range_m"]) == "$.steps[0].results[1].content.range_m"
    assert recording.json_path(["content", "a b", "x\ny", "_ok9"]) == "$.content['a b']['x\\ny']._ok9"
    assert recording.json_path(["a"] * 13) == "$" + ".a" * 12 + "..."
    assert recording.json_path(["a"] * 12) == "$" + ".a" * 12
    assert recording.printable("a\x1b[1m\x00\x7f\x9f\u2028b\tc\nd", keep="\n") == "a\\x1b[1m\\x00\\x7f\\x9f\\u2028b\\x09c\nd"
    assert recording.printable("plain é 𝔘") == "plain é 𝔘"


def test_check_text_and_check_run_name_say_what_is_wrong():
    check = recording.check_text
    assert check("gpt-4o", "--model", 10) == "gpt-4o"
    for value, message in [(None, "--model: must be a non-empty text"), ("", "--model: must be a non-empty text"),
                           ("a\tb", "--model: 'a\\tb' holds the control character \\x09, which is printed"),
                           ("x" * 11, "--model: at most 10 characters, this one has 11")]:
        with pytest.raises(RecordingError) as caught:
            check(value, "--model", 10)
        assert str(caught.value) == message
    assert recording.check_run_name("a" * 100, "--run") == "a" * 100
    for name, message in [(5, "--run: 5 is not a run name"), ("-a", "--run: '-a' is not a run name"),
                          ("a/b", "--run: 'a/b' is not a run name"), ("a" * 101, "--run: a run name has at most 100 characters, this one has 101")]:
        with pytest.raises(RecordingError) as caught:
            recording.check_run_name(name, "--run")
        assert str(caught.value).startswith(message)


def test_what_else_a_file_name_can_be(tmp_path):
    import socket

    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "s.json"))
    try:
        with pytest.raises(RecordingError, match=r"s\.json: a socket, not a recording file$"):
            recording.load(tmp_path / "s.json")
    finally:
        server.close()
    with pytest.raises(RecordingError, match=r"null\.json: a device, not a recording file$"):
        (tmp_path / "null.json").symlink_to("/dev/null")
        recording.load(tmp_path / "null.json")
    too_long = tmp_path / ("n" * 300 + ".json")
    with pytest.raises(RecordingError, match=r": cannot be read: File name too long$"):
        recording.load(too_long)
    with pytest.raises(RecordingError, match=r"missing\.json: no such file$"):
        recording.load(tmp_path / "missing.json")


def test_the_schema_is_the_packaged_file():
    packaged = (ROOT / "src" / "replaylab" / "schemas" / "recording.schema.json").read_text(encoding="utf-8")
    assert recording.schema_text() == packaged and recording.schema() == json.loads(packaged)
    assert recording.PRINTABLE_PATTERN in packaged.replace("\\\\", "\\")


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    path = write(tmp_path, "x", VALID.encode())
    real_read = os.read
    monkeypatch.setattr(recording.os, "read", lambda handle, size: real_read(handle, size) + b" " * size)
    with pytest.raises(RecordingError, match=r": more than 8388608 bytes; a recording has at most 8388608 bytes$"):
        recording.load(path)


def test_values_a_file_cannot_hold_are_stored_as_text_and_the_rest_as_they_are():
    storable = recording._storable
    assert storable({"a": [1, 2.5, "x", None, True]}) and storable(nested(59))
    assert not storable(nested(60)) and not storable(float("nan")) and not storable(10**1000)
    assert storable(10**1000 - 1) and storable(True)
    assert not storable({"k\ud800": 1}) and not storable(["\udfff"]) and not storable({1: 2})
    assert recording._as_sent(float("inf")) == ("Infinity", True)
    text, as_json = recording._as_sent(10**5000)
    assert text.startswith("(a int that a recording cannot hold") and not as_json
    assert recording._as_sent({"a": 1}) == ({"a": 1}, False)
    assert recording.recording_text("a\ud800b") == "a\ufffdb" and recording.recording_text(5) == 5
    assert recording.nesting(5) == 0 and recording.nesting([]) == 1 and recording.nesting({"a": [(1,)]}) == 3


# ---------------------------------------------------------------------------------------------
# Each limit at its edge, and the reader against a file that changes while it is read (found by
# mutation testing: issue 16)


def loaded_or_refused(path):
    try:
        return recording.load(path)
    except RecordingError as error:
        return str(error)


def test_a_file_of_exactly_the_size_limit_loads_and_one_byte_more_is_refused(tmp_path):
    text = VALID.rstrip().encode()  # ends with "}": a file read one byte short is not JSON
    exact = write(tmp_path, "exact", b" " * (recording.MAX_BYTES - len(text)) + text)
    assert exact.stat().st_size == recording.MAX_BYTES
    assert recording.load(exact) == recording.loads(VALID, exact)
    over = write(tmp_path, "over", b" " * (recording.MAX_BYTES + 1 - len(text)) + text, "over/symplectic-euler.json")
    assert loaded_or_refused(over) == f"{over}: {recording.MAX_BYTES + 1} bytes; a recording has at most {recording.MAX_BYTES} bytes"


def test_a_file_read_in_short_pieces_loads_the_same(tmp_path, monkeypatch):
    """A read may return fewer bytes than asked (a network file system does): the pieces are joined
    as they are."""
    path = write(tmp_path, "x", VALID.encode())
    real_read = os.read
    monkeypatch.setattr(recording.os, "read", lambda handle, size: real_read(handle, min(size, 100)))
    assert recording.load(path) == recording.loads(VALID, path)


def test_a_file_that_never_ends_is_read_one_byte_past_the_limit_and_refused(tmp_path, monkeypatch):
    """A file some process keeps appending to: the reader takes at most MAX_BYTES + 1 bytes of it,
    then refuses it; it neither stops at the limit as if the file ended there, nor reads on."""
    path = write(tmp_path, "x", VALID.encode())
    taken = []

    def endless(handle, size):
        assert sum(taken) + size <= recording.MAX_BYTES + 1, f"asked for {size} bytes after {sum(taken)}"
        taken.append(min(size, 1 << 20))
        return b" " * taken[-1]

    monkeypatch.setattr(recording.os, "read", endless)
    assert loaded_or_refused(path) == f"{path}: more than {recording.MAX_BYTES} bytes; a recording has at most {recording.MAX_BYTES} bytes"
    assert sum(taken) == recording.MAX_BYTES + 1


def test_a_read_error_is_one_line_naming_the_file(tmp_path, monkeypatch):
    import errno

    path = write(tmp_path, "x", VALID.encode())

    def failing(handle, size):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(recording.os, "read", failing)
    assert loaded_or_refused(path) == f"{path}: cannot be read: Input/output error"


def checked_then(monkeypatch, change):
    """The reader's check of the path, followed at once by `change` (another process's)."""
    real_check = recording.regular_file

    def check_then_change(path):
        found = real_check(path)
        change(path)
        return found

    monkeypatch.setattr(recording, "regular_file", check_then_change)


def test_a_file_removed_after_its_check_is_one_line(tmp_path, monkeypatch):
    path = write(tmp_path, "x", VALID.encode())
    checked_then(monkeypatch, os.remove)
    assert loaded_or_refused(path) == f"{path}: cannot be read: No such file or directory"


def test_a_pipe_put_in_place_of_the_checked_file_is_refused_without_waiting(tmp_path, monkeypatch):
    """A FIFO that replaces the file between the check and the open: opened without blocking, it
    is seen for what it is at once (an ordinary open would wait for a writer forever)."""
    import threading

    path = write(tmp_path, "x", VALID.encode())
    checked_then(monkeypatch, lambda p: (os.remove(p), os.mkfifo(p)))
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(loaded_or_refused(path)))
    reader.start()
    reader.join(timeout=10)
    waited = reader.is_alive()
    if waited:  # release the reader: a writer opens the pipe
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert not waited, "the reader waited on the pipe"
    assert outcome == [f"{path}: not a regular file any more"]


def test_nesting_and_integers_at_the_limits_load_and_one_more_is_refused(tmp_path):
    """The file's own nesting around a call's arguments is 5, so arguments nested 59 deep reach the
    64 levels allowed (what `save` stores as it is), 60 go beyond; an integer may have 1000 digits."""
    at_limit = write(tmp_path, "a", deep_arguments(59), "a/symplectic-euler.json")
    assert recording.nesting(recording.load(at_limit).transcript.steps[0].message.tool_calls[0].arguments) == 59
    beyond = write(tmp_path, "b", deep_arguments(60), "b/symplectic-euler.json")
    assert loaded_or_refused(beyond) == f"{beyond}: {DEEP} (arrays and objects inside each other)"
    for digits, sign in [(1000, ""), (1000, "-")]:
        path = write(tmp_path, "i", VALID.replace('"periods": 20', f'"periods": {sign}{"9" * digits}', 1).encode(), "i/symplectic-euler.json")
        assert recording.load(path).transcript.steps[0].message.tool_calls[0].arguments["periods"] == int(sign + "9" * digits)
    path = write(tmp_path, "j", VALID.replace('"periods": 20', f'"periods": -{"9" * 1001}', 1).encode(), "j/symplectic-euler.json")
    assert loaded_or_refused(path) == (
        f"{path}: $.steps[0].tool_calls[0].arguments.periods: an integer of 1001 digits; at most 1000 digits are allowed")


def test_a_lone_surrogate_is_named_as_a_key_or_as_a_value(tmp_path):
    for arguments, where, what in [('{"\\ud800x": 1}', "", "the key '\\ud800x'"),
                                   ('{"method": "a\\udfff"}', ".method", "'a\\udfff'")]:
        text = changed(lambda d: d["steps"][0]["tool_calls"][0].__setitem__("arguments", "@@")).replace('"@@"', arguments)
        path = write(tmp_path, "s", text.encode())
        assert loaded_or_refused(path) == (
            f"{path}: $.steps[0].tool_calls[0].arguments{where}: {what} holds a lone surrogate "
            "(\\ud800 to \\udfff: half of a character, not text)")


def test_the_schema_checks_are_built_when_first_needed(tmp_path, monkeypatch):
    """Both checks are made on first use (no cache filled by an earlier test): the compiled one
    accepts a valid recording, jsonschema's names what is wrong in one that is not."""
    monkeypatch.setattr(recording, "_COMPILED", None)
    monkeypatch.setattr(recording, "_VALIDATOR", None)
    assert recording.schema_errors(json.loads(VALID)) == [] and recording._COMPILED is not None
    assert recording._VALIDATOR is None  # asked only for the words of a failure
    errors = recording.schema_errors(json.loads(changed(lambda d: d.__setitem__("finished", "no"))))
    assert [(list(e.absolute_path), e.message) for e in errors] == [(["finished"], "'no' is not of type 'boolean'")]
    assert refusal(tmp_path, lambda d: d.__setitem__("group", "")) == "$.group: '' should be non-empty"


def test_of_several_errors_at_one_depth_the_first_by_its_path_is_named(tmp_path):
    """The message does not depend on the order in which jsonschema finds the errors (it checks
    `variant` before `group`, the order of the schema's properties)."""
    assert refusal(tmp_path, lambda d: d.update(variant="", group="")) == "$.group: '' should be non-empty"
    assert refusal(tmp_path, lambda d: d.update(variant="", group="g", finished="no")) == "$.finished: 'no' is not of type 'boolean'"


def test_a_refused_run_name_says_what_a_run_name_is():
    with pytest.raises(RecordingError) as caught:
        recording.check_run_name("-a", "--run")
    assert str(caught.value) == "--run: '-a' is not a run name: letters, digits, '_', '.' and '-', starting with a letter or digit"


def test_a_replayed_transcript_names_the_recording_it_replayed(tmp_path):
    """A transcript written by a replay is loaded with the recording it came from as its source:
    the command that records the run again reads that recording, not the transcript."""
    from replaylab.agents.clients import authored

    source = "recordings/hunter/symplectic-euler.json"
    text = changed(lambda d: d.__setitem__("replayed", {"from": source, "tolerance": 1e-9}))
    transcript = write(tmp_path / "transcripts", "t", text.encode())
    loaded = recording.load(transcript)
    assert loaded.source == source and loaded.replayed == {"from": source, "tolerance": 1e-9}
    assert f"--from {source} " in authored.rerecord(loaded)
    assert recording.load(RECORDINGS / "hunter" / "symplectic-euler.json").source == str(RECORDINGS / "hunter" / "symplectic-euler.json")


def test_a_recording_is_written_in_utf8_whatever_the_locale(tmp_path):
    """The file is UTF-8 under an ASCII locale too (LC_CTYPE=C without Python's UTF-8 mode)."""
    import locale

    run = recording.loads(changed(lambda d: d.__setitem__("task", "Winkel θ ≥ 30°, 𝔘")), "symplectic-euler.json")
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        recording.save(run, tmp_path / "symplectic-euler.json")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert recording.load(tmp_path / "symplectic-euler.json") == run
    assert "Winkel θ ≥ 30°, 𝔘".encode() in (tmp_path / "symplectic-euler.json").read_bytes()


def test_a_count_of_tokens_is_bounded_where_it_is_read(tmp_path):
    """A count no run reaches (10**30 made every render overflow, issue 25 case 8) is refused by the
    reader; null, what a writer records for a count the provider got wrong, is read."""
    assert refusal(tmp_path, lambda d: d["provenance"].__setitem__("usage", {"input_tokens": 10**30, "output_tokens": 1})) == (
        "$.provenance.usage.input_tokens: 1000000000000000000000000000000 is greater than the maximum of 1000000000000")
    assert refusal(tmp_path, lambda d: d["provenance"].__setitem__("usage", {"input_tokens": -1})) == (
        "$.provenance.usage.input_tokens: -1 is less than the minimum of 0")
    path = write(tmp_path, "x", changed(lambda d: d["provenance"].__setitem__("usage", {"input_tokens": None, "output_tokens": 5})).encode())
    assert recording.load(path).provenance["usage"] == {"input_tokens": None, "output_tokens": 5}
