"""`replaylab session` driven the way an agent drives it: a real process behind a pipe, one message
written, its answer read, then the next (those tests are `slow`: `make test-all`). What a session
says before it reads a message, and its replays, run in this process (`in_process`). Every point of
issue 11's first list has a test here."""

import json
import re
import shutil
import signal
import subprocess
import sys

import pytest

from helpers.pages import with_run_pages
from helpers import RECORDINGS, cli, in_process, processes, read_json_line
from replaylab.agents import recording
from replaylab.build import build
from replaylab.lessons import registry
from replaylab.physics.drift import max_energy_drift

TIMEOUT = 60  # seconds to wait for one answer; a session that hangs fails the test instead


class Session:
    """One `replaylab session` process: send a line, read the answer (never blocking forever)."""

    def __init__(self, cwd, *args):
        self.process = processes.start(  # ended with the test, whatever happens to it
            [sys.executable, "-m", "replaylab", "session", *args],
            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.buffer = b""

    def send(self, message):
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def read(self):
        """The next JSON line on stdout, or None when stdout closed."""
        value, self.buffer = read_json_line(self.process, self.buffer, TIMEOUT)
        return value

    def ask(self, message):
        self.send(message)
        return self.read()

    def close_input(self):
        self.process.stdin.close()

    def wait(self):
        code = self.process.wait(timeout=TIMEOUT)
        return code, self.process.stderr.read().decode()


def call(i, name, **arguments):
    return {"id": str(i), "name": name, "arguments": arguments}


def drift(i, steps, periods, method="symplectic Euler"):
    return call(i, "oscillator_energy_drift", method=method, steps_per_period=steps, periods=periods)


def saved(cwd, lesson, run):
    return recording.load(cwd / "results" / "live" / lesson / f"{run}.json")


def replay_cli(cwd, path):
    return in_process("replay", path, cwd=cwd)


# ---------------------------------------------------------------------------------------------
# Before the first message: everything the agent is given


@pytest.mark.slow  # a session process driven over its pipe
def test_the_session_shows_system_task_tools_bounds_and_limits_before_the_first_message(tmp_path):
    s = Session(tmp_path, "hunter", "--variant", "velocity-verlet", "--run", "seen")
    header = s.read()  # nothing sent yet
    v = registry.lesson("hunter").variant("velocity-verlet")
    assert header["system"] == v.system and header["task"] == v.task
    assert "Velocity Verlet keeps the oscillator's energy within 4 %" in header["task"]
    assert header["limits"] == {"messages": 12, "calls_per_message": 4, "budget": 8}
    tool, answer = header["tools"]  # the experiment tool, then the answer tool that ends the run
    assert answer == v.answer.spec() and answer["name"] == "answer"
    assert answer["parameters"]["properties"]["outcome"]["enum"] == ["counterexample", "none found"]
    assert answer["parameters"]["required"] == ["outcome"] and answer["parameters"]["additionalProperties"] is False
    assert "End the run by calling the tool answer" in header["system"] and 'call of the tool "answer"' in header["protocol"]
    steps = tool["parameters"]["properties"]["steps_per_period"]
    assert (steps["type"], steps["minimum"], steps["maximum"]) == ("integer", 4, 200)
    assert tool["parameters"]["properties"]["method"]["enum"][2] == "velocity Verlet"
    assert tool["parameters"]["additionalProperties"] is False
    assert (header["variant"], header["run"]) == ("velocity-verlet", "seen")
    assert header["recording"] == "results/live/hunter/seen.json"
    # the file already exists, valid and empty, before the first message
    assert saved(tmp_path, "hunter", "seen").transcript.steps == ()
    s.close_input()
    assert s.wait()[0] == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_help_gives_the_message_format_with_an_example_that_is_true(tmp_path):
    help_text = in_process("session", "--help").stdout
    assert '{"text": "...", "tool_calls": [{"id": "1", "name": TOOL,' in help_text
    # the example messages of the help (a call, then the answer), sent to a real session, get the lines the help shows
    sent = [json.loads(line[4:]) for line in help_text.splitlines() if line.startswith("  > ")]
    shown = [json.loads(line[4:]) for line in help_text.splitlines() if line.startswith("  < ")]
    assert len(sent) == len(shown) == 2 and sent[1]["tool_calls"][0]["name"] == "answer"
    s = Session(tmp_path, registry.names()[0], "--run", "typed")  # the lesson and the run of the help's example
    first = s.read()
    assert set(first) == {"lesson", "instance", "variant", "run", "recording", "system", "task", "tools", "limits", "protocol"}
    assert '{"text": "...", "tool_calls": [{"id": "1", "name": TOOL,' in first["protocol"]  # as the help says
    answer = s.ask(sent[0])
    assert set(answer) == set(shown[0]) and answer["results"][0]["ok"] is True
    assert answer["results"][0]["content"] == pytest.approx(shown[0]["results"][0]["content"], rel=1e-12)
    assert (answer["message"], answer["budget_left"], answer["messages_left"]) == (1, None, 11)
    end = s.ask(sent[1])
    assert end == shown[1]
    assert end["end"] == {"finished": True, "reason": "finished: the agent called answer, which ends the run",
                          "recording": "results/live/projectile/typed.json"}
    assert s.wait()[0] == 0
    assert saved(tmp_path, "projectile", "typed").transcript.finished


# ---------------------------------------------------------------------------------------------
# What the agent sees never gives the answer away


@pytest.mark.slow  # a session process driven over its pipe
@pytest.mark.parametrize("variant", ["symplectic-euler", "velocity-verlet"])
def test_hunter_variants_are_named_by_their_claim_not_its_truth(tmp_path, variant):
    s = Session(tmp_path, "hunter", "--variant", variant)
    header = s.read()
    seen = json.dumps({k: header[k] for k in ("variant", "run", "system", "task", "tools")}).lower()
    for word in ("false", "open", "true", "refuted"):
        assert not re.search(rf"\b{word}\b", seen.replace('"additionalproperties": false', "")), word
    s.close_input()
    s.wait()


@pytest.mark.slow  # a session process driven over its pipe
def test_evidence_reviewer_sees_each_check_by_number_and_name(tmp_path):
    s = Session(tmp_path, "review", "--variant", "evidence", "--run", "checks")
    header = s.read()
    tool = next(t for t in header["tools"] if t["name"] == "reproduce_check")
    numbered = "1 clock, 2 purity, 3 limits, 4 convergence-order, 5 bounded-energy"
    assert numbered in tool["description"] and numbered in tool["parameters"]["properties"]["check"]["description"]
    answer = s.ask({"tool_calls": [call(i, "reproduce_check", check=i, candidate=2) for i in (1, 3, 5)]})
    assert [r["content"]["check"] for r in answer["results"]] == ["clock", "limits", "bounded-energy"]
    assert answer["results"][2]["content"]["passed"] == 0.0
    s.close_input()
    s.wait()


# ---------------------------------------------------------------------------------------------
# Results say the budget left; 16.0 is an integer


@pytest.mark.slow  # a session process driven over its pipe
def test_each_result_line_says_the_budget_left(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "budget")
    s.read()
    first = s.ask({"text": "Two, and one refused.", "tool_calls": [drift(1, 64, 20), drift(2, 32, 20), drift(3, 2, 20)]})
    assert [r["ok"] for r in first["results"]] == [True, True, False]
    assert first["results"][2]["content"] == {"error": "steps_per_period must be between 4 and 200, got 2"}
    assert (first["budget_left"], first["messages_left"]) == (6, 11)
    calls = [drift(i, 16 + i, 50) for i in range(4, 8)]
    second = s.ask({"tool_calls": calls})
    assert second["budget_left"] == 2
    third = s.ask({"tool_calls": [drift(8, 40, 50), drift(9, 41, 50), drift(10, 42, 50)]})
    assert third["budget_left"] == 0
    assert third["results"][2]["content"] == {"error": "the budget of 8 experiments is spent"}
    s.send({"text": "Done."})
    assert s.read()["end"]["finished"] is True
    assert s.wait()[0] == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_an_integer_valued_float_is_taken_and_a_fraction_refused(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "floats")
    s.read()
    answer = s.ask({"tool_calls": [drift(1, 16.0, 50.0), drift(2, 32.5, 20)]})
    assert answer["results"][0] == {
        "call_id": "1", "ok": True, "content": {"max_energy_drift": max_energy_drift("symplectic Euler", 16, 50)}
    }
    assert answer["results"][1]["content"] == {"error": "steps_per_period must be an integer, got 32.5"}
    s.close_input()
    s.wait()
    run = saved(tmp_path, "hunter", "floats")
    assert run.transcript.steps[0].message.tool_calls[0].arguments["steps_per_period"] == 16.0  # as sent
    assert replay_cli(tmp_path, tmp_path / "results/live/hunter/floats.json").returncode == 0


# ---------------------------------------------------------------------------------------------
# Every end is announced with the last results; the agent's next write never hangs


@pytest.mark.slow  # a session process driven over its pipe
def test_the_message_limit_is_announced_with_the_last_results_and_the_session_exits(tmp_path):
    s = Session(tmp_path, "projectile", "--run", "limit")
    assert s.read()["limits"]["messages"] == 12
    for number in range(1, 13):
        answer = s.ask({"text": f"message {number}", "tool_calls": [call(number, "range_without_drag", speed=25, angle=number)]})
        assert answer["message"] == number and answer["results"][0]["ok"] is True
        assert answer["messages_left"] == 12 - number
        assert ("end" in answer) == (number == 12)
    assert answer["end"] == {
        "finished": False,
        "reason": "the message limit is reached (12 messages): the run has ended, not finished, with no answer",
        "recording": "results/live/limit/limit.json".replace("limit/limit", "projectile/limit"),
    }
    assert s.read() is None  # stdout closed: nothing more will come
    code, stderr = s.wait()
    assert code == 0 and "12 message(s)" in stderr
    # the agent's next write fails at once (the session is gone), it never hangs
    with pytest.raises(BrokenPipeError):
        for _ in range(100):
            s.send({"text": "message 13"})
    run = saved(tmp_path, "projectile", "limit")
    assert len(run.transcript.steps) == 12 and not run.transcript.finished
    out = replay_cli(tmp_path, tmp_path / "results/live/projectile/limit.json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-2:] == [
        "stopped at the message limit (not finished, no answer)",
        "decided by the build: no answer: the run ended without an accepted call of answer: not right"]


@pytest.mark.slow  # a session process driven over its pipe
def test_closing_stdin_after_one_message_is_recorded_as_not_finished(tmp_path):
    s = Session(tmp_path, "projectile", "--run", "crashed")
    s.read()
    assert s.ask({"tool_calls": [call(1, "range_without_drag", speed=25, angle=45)]})["message"] == 1
    s.close_input()
    end = s.read()
    assert end == {"end": {"finished": False, "reason": "the input ended before the agent ended the run: recorded as not finished, with no answer",
                           "recording": "results/live/projectile/crashed.json"}}
    assert s.wait()[0] == 0
    run = saved(tmp_path, "projectile", "crashed")
    assert not run.transcript.finished and len(run.transcript.steps) == 1  # no empty step added
    out = replay_cli(tmp_path, tmp_path / "results/live/projectile/crashed.json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-2:] == [
        "not finished: the input ended before the agent ended the run: recorded as not finished, with no answer",
        "decided by the build: no answer: the run ended without an accepted call of answer: not right"]


@pytest.mark.slow  # a session process driven over its pipe
def test_a_killed_session_keeps_every_message_it_answered(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "killed")
    s.read()
    s.ask({"tool_calls": [drift(1, 64, 20)]})
    s.ask({"tool_calls": [drift(2, 32, 20)]})
    s.process.send_signal(signal.SIGKILL)
    s.wait()
    run = saved(tmp_path, "hunter", "killed")
    assert len(run.transcript.steps) == 2 and not run.transcript.finished
    assert replay_cli(tmp_path, tmp_path / "results/live/hunter/killed.json").returncode == 0


# ---------------------------------------------------------------------------------------------
# Bad lines: one error line each, and the session goes on


@pytest.mark.slow  # a session process driven over its pipe
def test_bad_lines_get_one_error_line_each_and_the_run_is_never_lost(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "robust")
    s.read()
    assert s.ask({"tool_calls": [drift(1, 64, 20)]})["budget_left"] == 7
    bad = {
        b"\xff\xfe\x00 not UTF-8": "line 2: the line is not valid UTF-8 (byte 0xff at 0)",
        b"[" * 5000 + b"]" * 5000: "line 3: the line is nested more than 24 levels deep",
        b'{"text": "\\ud800", "tool_calls": []}': "line 4: $.text: a lone surrogate is not text",
        b'{"tool_calls": [{"id": "2", "name": "oscillator_energy_drift", "arguments": ' + b"[" * 40 + b"]" * 40 + b"}]}":
            "line 5: $.tool_calls[0].arguments[0]",
        b'{"text": "cut off"': "line 6: the line is not valid JSON: Expecting ',' delimiter at the end of the line",
        b'{"text" "a"}': "line 7: the line is not valid JSON: Expecting ':' delimiter at character 9",
        b'{"text": "cut': "line 8: the line is not valid JSON: Unterminated string starting at character 10",
        b'{"text": "a", "api_key": "x"}': "line 9: unknown fields: 'api_key'; a message is {",
        b'{"text": "a", "text": "b"}': "line 10: the key 'text' appears twice",
    }
    for line, start in bad.items():
        answer = s.ask(line)
        assert set(answer) == {"error", "line"} and answer["error"].startswith(start), answer
    second = s.ask({"tool_calls": [drift(3, 32, 20)]})
    assert (second["message"], second["budget_left"]) == (2, 6)
    s.ask({"text": "Counterexample: 64 steps per period over 20 periods."})
    assert s.wait()[0] == 0
    run = saved(tmp_path, "hunter", "robust")
    assert [len(step.results) for step in run.transcript.steps] == [1, 1, 0] and run.transcript.finished


# ---------------------------------------------------------------------------------------------
# Every option is checked before the first message; nothing is ever overwritten


@pytest.mark.parametrize(
    "args, error",
    [
        (["--run", "my run"], "replaylab: --run: 'my run' is not a run name"),
        (["--run", "x" * 101], "replaylab: --run: a run name has at most 100 characters"),
        (["--variant", "false"], "replaylab: lesson hunter has no variant 'false'; its variants are: symplectic-euler, velocity-verlet"),
        (["--group", "a;b"], "replaylab: --group: 'a;b' is not a group name"),
        (["--model", "gpt\n5"], "replaylab: --model: 'gpt\\n5' is not a model name"),
        (["--model", ""], "replaylab: --model: '' is not a model name"),
        (["--run", "mine", "--out", "elsewhere/other.json"], "replaylab: --out elsewhere/other.json: the file name must be the run's name, mine.json"),
        (["--out", "blocked/mine.json"], "replaylab: blocked/mine.json: cannot write the recording"),
    ],
)
def test_every_option_is_checked_before_the_first_message(tmp_path, args, error):
    (tmp_path / "blocked").write_text("a file where a folder should be")
    message = json.dumps({"text": "typed, then lost?", "tool_calls": [drift(1, 64, 20)]}) + "\n"
    out = in_process("session", "hunter", *args, stdin=message, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""  # refused before anything was shown or read
    assert out.stderr.startswith(error) and len(out.stderr.splitlines()) == 1, out.stderr
    assert not (tmp_path / "results").exists()


def test_an_existing_recording_is_never_overwritten(tmp_path):
    target = tmp_path / "results" / "live" / "hunter" / "taken.json"
    target.parent.mkdir(parents=True)
    target.write_text("somebody's run")
    out = in_process("session", "hunter", "--run", "taken", stdin="{}\n", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "replaylab: results/live/hunter/taken.json: a recording is already there, and a recorded run is never "
        "overwritten: choose another --run\n"
    )
    assert target.read_text() == "somebody's run"


@pytest.mark.slow  # a session process driven over its pipe
def test_a_run_its_session_still_writes_is_neither_promoted_nor_taken_by_a_second_session(tmp_path):
    """Issue 38, 13: the session owns its run name until it ends: `promote` refuses the unfinished
    run, a second session of that name is refused even with the file moved away; once the session
    has ended, the run is promoted and nothing writes it again."""
    path, recordings = tmp_path / "results/live/hunter/owned.json", tmp_path / "recordings"
    s = Session(tmp_path, "hunter", "--run", "owned")
    s.read()
    s.ask({"tool_calls": [drift(1, 64, 20)]})
    refused = in_process("promote", "results/live/hunter/owned.json", "--recordings", recordings, cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (f"replaylab: results/live/hunter/owned.json: this run is still being written by process "
                              f"{s.process.pid} (a session or an MCP server): promote it once that has ended\n")
    assert not recordings.exists()
    path.rename(tmp_path / "moved.json")
    second = cli("session", "hunter", "--run", "owned", stdin="", cwd=tmp_path)
    assert (second.returncode, second.stdout) == (1, "")
    assert second.stderr == (f"replaylab: results/live/hunter/owned.json: this run is being written by process "
                             f"{s.process.pid} (a session or an MCP server): choose another --run, or wait until it has "
                             "ended\n")
    assert not path.exists()
    assert s.ask({"tool_calls": [drift(2, 32, 20)]})["message"] == 2  # the first session goes on
    s.close_input()
    assert s.read()["end"]["finished"] is False and s.wait()[0] == 0
    assert len(saved(tmp_path, "hunter", "owned").transcript.steps) == 2
    promoted = in_process("promote", "results/live/hunter/owned.json", "--recordings", recordings, cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    assert (recordings / "hunter" / "owned.json").exists() and list(path.parent.iterdir()) == []


@pytest.mark.slow  # a session process killed
def test_a_killed_sessions_run_name_is_free_at_once(tmp_path):
    """`kill -9` leaves the session's mark behind, but the kernel let go of its lock: the run is
    promoted, and its name taken by a new session, with no step by hand."""
    s = Session(tmp_path, "hunter", "--run", "gone")
    s.read()
    s.ask({"tool_calls": [drift(1, 64, 20)]})
    s.process.send_signal(signal.SIGKILL)
    s.wait()
    assert (tmp_path / "results/live/hunter/.gone.json.owner").exists()
    promoted = in_process("promote", "results/live/hunter/gone.json", "--recordings", tmp_path / "recordings", cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    again = Session(tmp_path, "hunter", "--run", "gone")
    assert again.read()["run"] == "gone"
    again.close_input()
    assert again.read()["end"]["finished"] is False and again.wait()[0] == 0
    assert sorted(p.name for p in (tmp_path / "results/live/hunter").iterdir()) == ["gone.json"]  # its mark removed


# ---------------------------------------------------------------------------------------------
# The declared model: recorded as declared, shown so on the page, grouped by in the scorecard


def type_session(cwd, run, model, messages):
    s = Session(cwd, "hunter", "--run", run, *(["--model", model] if model else []))
    s.read()
    for message in messages:
        s.ask(message)
    if messages[-1].get("tool_calls"):
        s.close_input()
    assert s.wait()[0] == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_declared_models_are_recorded_as_declared_shown_so_and_scored_apart(tmp_path):
    right = [{"tool_calls": [drift(1, 64, 20)]}, {"text": "64/20 breaks the claim.", "tool_calls": [
        call(2, "answer", outcome="counterexample", method="symplectic Euler", steps_per_period=64, periods=20)]}]
    wrong = [{"tool_calls": [drift(1, 200, 20)]}, {"text": "No counterexample.", "tool_calls": [call(2, "answer", outcome="none found")]}]
    type_session(tmp_path, "a1", "model-a", right)
    type_session(tmp_path, "a2", "model-a", wrong)
    type_session(tmp_path, "b1", "model-b", right)
    type_session(tmp_path, "anon", None, [{"tool_calls": [drift(1, 100, 20)]}])  # input closed: not finished
    run = saved(tmp_path, "hunter", "a1")
    assert run.provenance["model"] == "model-a" and run.provenance["model_declared"] is True
    assert "declared with --model" in run.provenance["how"]
    assert "model_declared" not in saved(tmp_path, "hunter", "anon").provenance

    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS / "hunter", recordings / "hunter")
    build(["hunter"], recordings, tmp_path / "built", progress=lambda text: None,
          run_folders=[tmp_path / "results" / "live"])
    results = json.loads((tmp_path / "built" / "hunter" / "results.json").read_text())
    rows = {(r["model"], r["task"]): (r["runs"], r["answered"], r["right"], r["supported"]) for r in results["scorecard"]}
    assert rows[("model-a (declared, not verified)", "symplectic-euler claim")] == (2, 2, 1, 2)  # none found is supported, and wrong
    assert rows[("model-b (declared, not verified)", "symplectic-euler claim")] == (1, 1, 1, 1)
    assert rows[("interactive session (a person or a program on stdin)", "symplectic-euler claim")][:3] == (1, 0, 0)  # not finished
    page = with_run_pages(tmp_path / "built" / "hunter")
    assert "Messages produced by: model-a (declared, not verified)" in page
    assert "not finished: the input ended before the agent ended the run" in page


# ---------------------------------------------------------------------------------------------
# Issue 25: what the session writes is what its reader reads; every line gets its answer; signals


@pytest.mark.slow  # a session process driven over its pipe
def test_a_message_its_recording_could_not_hold_is_refused_before_it_runs_and_the_session_goes_on(tmp_path):
    """Nine messages of 1 MB would make a file over recording.MAX_BYTES (8 MiB), and one of 1001
    calls one the schema refuses: each is refused on its error line before it runs (no budget is
    spent), the later lines are read, and the file on disk replays."""
    s = Session(tmp_path, "hunter", "--run", "huge")
    s.read()
    for i in range(8):
        answer = s.ask({"text": "x" * 1_000_000, "tool_calls": [drift(i, 64, 20)]})
        assert answer["message"] == i + 1 and answer["budget_left"] == 7 - i
    ninth = s.ask({"text": "x" * 1_000_000, "tool_calls": [drift(9, 100, 20)]})
    assert set(ninth) == {"error", "line"} and ninth["line"] == 9
    assert ninth["error"].startswith("line 9: the message cannot be recorded, so it did not run and costs nothing: "
                                     "the recording would hold 9")
    assert "a recording holds at most 8388608" in ninth["error"]
    many = s.ask({"tool_calls": [call(i, "answer", outcome="none found") for i in range(1001)]})
    assert many["error"] == ("line 10: the message cannot be recorded, so it did not run and costs nothing: the "
                             "recording's reader would refuse it: $.steps[8].results: 1001 items, more than 1000")
    last = s.ask({"tool_calls": [call("a", "answer", outcome="none found")]})  # read, run and recorded
    assert last["message"] == 9 and last["budget_left"] == 0 and last["end"]["finished"] is True
    code, stderr = s.wait()
    assert code == 0 and stderr == ("wrote results/live/hunter/huge.json (9 message(s); finished: the agent called "
                                    "answer, which ends the run)\n")
    path = tmp_path / "results/live/hunter/huge.json"
    assert path.stat().st_size <= recording.MAX_BYTES
    run = recording.load(path)
    assert len(run.transcript.steps) == 9 and run.transcript.finished
    assert run.notes[0]["what"].startswith("2 line(s) of the session's input were refused")
    out = replay_cli(tmp_path, path)
    assert out.returncode == 0, out.stderr


@pytest.mark.slow  # a session process driven over its pipe
def test_an_empty_line_gets_an_answer_so_a_line_by_line_driver_never_waits_for_ever(tmp_path):
    s = Session(tmp_path, "projectile", "--run", "blank")
    s.read()
    for number, line in enumerate([b"", b"   ", b"\t\r"], start=1):
        answer = s.ask(line)
        assert answer == {"error": f"line {number}: an empty line is no message: send one JSON object per line, "
                                   'such as {"text": "..."}', "line": number}
    assert s.ask({"tool_calls": [call(1, "range_without_drag", speed=25, angle=45)]})["message"] == 1
    s.close_input()
    assert s.read()["end"]["finished"] is False
    assert s.wait()[0] == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_a_call_in_openais_shape_is_taken_and_a_malformed_one_is_shown_the_shape(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "shapes")
    header = s.read()
    openai = {"id": "call_1", "type": "function", "function": {
        "name": "oscillator_energy_drift", "arguments": json.dumps({"method": "symplectic Euler", "steps_per_period": 64, "periods": 20})}}
    as_text = {"id": "call_2", "type": "function", "function": {"name": "oscillator_energy_drift", "arguments": "steps 64"}}
    answer = s.ask({"tool_calls": [openai, as_text]})
    assert answer["results"][0] == {"call_id": "call_1", "ok": True, "content": {"max_energy_drift": max_energy_drift("symplectic Euler", 64, 20)}}
    assert answer["results"][1]["ok"] is False and answer["results"][1]["content"]["error"].startswith("the arguments must be an object")
    shape = ('a call is {"id": "1", "name": "oscillator_energy_drift", "arguments": {"method": "explicit Euler", '
             '"steps_per_period": 4, "periods": 1}}, or in OpenAI\'s shape {"id": "1", "type": "function", "function": '
             '{"name": "oscillator_energy_drift", "arguments": "{\\"method\\": \\"explicit Euler\\", '
             '\\"steps_per_period\\": 4, \\"periods\\": 1}"}}')
    bad = {
        "line 2: tool_calls[0]: unknown fields: 'tool'; ": {"tool_calls": [{"id": "1", "tool": "oscillator_energy_drift"}]},
        "line 3: tool_calls[0]: the call has no name; ": {"tool_calls": [{"id": "1"}]},
        "line 4: tool_calls[0]: a call is a JSON object, not str; ": {"tool_calls": ["oscillator_energy_drift"]},
        "line 5: tool_calls[0]: type must be 'function', got 'tool'; ": {"tool_calls": [{**openai, "type": "tool"}]},
        "line 6: tool_calls[0]: function must be an object with a name and arguments, not str; ": {"tool_calls": [{**openai, "function": "x"}]},
        "line 7: tool_calls[0]: function: unknown fields: 'parameters'; ": {"tool_calls": [{**openai, "function": {"name": "x", "parameters": {}}}]},
    }
    for start, message in bad.items():
        assert s.ask(message) == {"error": start + shape, "line": int(start.split()[1][:-1])}
    call = shape.removeprefix("a call is ").split(", or in OpenAI")[0]  # a message with the wrong fields: its shape
    assert s.ask({"calls": [openai]}) == {"error": f'line 8: unknown fields: \'calls\'; a message is {{"text": "...", "tool_calls": [{call}]}}', "line": 8}
    s.close_input()
    assert s.read()["end"]["finished"] is False and s.wait()[0] == 0
    run = saved(tmp_path, "hunter", "shapes")
    assert run.transcript.steps[0].message.tool_calls[0].arguments == {"method": "symplectic Euler", "steps_per_period": 64, "periods": 20}
    assert run.transcript.steps[0].message.tool_calls[1].arguments == "steps 64"  # as sent: text that is not JSON
    assert header["tools"][0]["name"] == "oscillator_energy_drift"
    assert replay_cli(tmp_path, tmp_path / "results/live/hunter/shapes.json").returncode == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_two_calls_with_one_id_are_refused_saying_which_id(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "ids")
    s.read()
    answer = s.ask({"tool_calls": [drift("a", 64, 20), drift("b", 32, 20), drift("a", 16, 20)]})
    assert answer == {"error": "line 1: tool_calls[2]: the id 'a' is the id of tool_calls[0] too: each call of a "
                               "message has its own id", "line": 1}
    assert s.ask({"tool_calls": [drift("a", 64, 20)]})["budget_left"] == 7  # the refused line cost nothing
    s.close_input()
    s.read()
    assert s.wait()[0] == 0


@pytest.mark.slow  # a session process driven over its pipe
def test_refused_lines_are_noted_in_the_recording_and_the_hundredth_ends_the_session(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "sloppy")
    s.read()
    assert s.ask({"tool_calls": [drift(1, 64, 20)]})["message"] == 1
    for number in range(2, 101):
        answer = s.ask(b"not a message")
        assert set(answer) == {"error", "line"} and answer["line"] == number
    last = s.ask(b"not a message")
    assert last["line"] == 101 and last["end"] == {
        "finished": False, "recording": "results/live/hunter/sloppy.json",
        "reason": "100 lines were refused (not messages, or messages the recording could not hold): the session has "
                  "ended, not finished, with no answer"}
    assert s.read() is None  # nothing more is read
    code, stderr = s.wait()
    assert code == 0 and "(1 message(s); 100 lines were refused" in stderr
    run = saved(tmp_path, "hunter", "sloppy")
    assert run.notes == ({"where": "$.steps", "what": "100 line(s) of the session's input were refused, not messages "
                          "or messages the recording could not hold, and are not among its steps; the first, line 2: "
                          "the line is not valid JSON: Expecting value at character 1"},)
    out = replay_cli(tmp_path, tmp_path / "results/live/hunter/sloppy.json")
    assert out.returncode == 0, out.stderr
    assert "not finished: 100 lines were refused" in out.stdout


@pytest.mark.slow  # a session process driven over its pipe
@pytest.mark.parametrize("signum, code, how", [(signal.SIGINT, 130, "interrupted (SIGINT, Ctrl-C)"),
                                               (signal.SIGTERM, 143, "stopped (SIGTERM)")])
def test_a_signal_ends_the_session_with_its_end_line_the_run_recorded_as_not_finished(tmp_path, signum, code, how):
    s = Session(tmp_path, "hunter", "--run", "stopped")
    s.read()
    s.ask({"tool_calls": [drift(1, 64, 20)]})
    s.process.send_signal(signum)  # while it waits for the next line
    reason = f"the session was {how} before the agent ended the run: recorded as not finished, with no answer"
    assert s.read() == {"end": {"finished": False, "reason": reason, "recording": "results/live/hunter/stopped.json"}}
    assert s.read() is None
    exit_code, stderr = s.wait()
    assert exit_code == code
    assert stderr == f"replaylab: stopped by {signal.Signals(signum).name}; wrote results/live/hunter/stopped.json (1 message(s); {reason})\n"
    run = saved(tmp_path, "hunter", "stopped")
    assert run.ended == reason and not run.transcript.finished
    out = replay_cli(tmp_path, tmp_path / "results/live/hunter/stopped.json")
    assert out.returncode == 0 and f"not finished: {reason}" in out.stdout


@pytest.mark.slow  # a session process driven over its pipe
def test_a_session_killed_without_a_word_is_shown_so(tmp_path):
    s = Session(tmp_path, "hunter", "--run", "gone")
    s.read()
    s.ask({"tool_calls": [drift(1, 64, 20)]})
    s.process.send_signal(signal.SIGKILL)
    s.wait()
    out = replay_cli(tmp_path, tmp_path / "results/live/hunter/gone.json")
    assert out.returncode == 0
    assert "not finished: its recorder stopped without saying why (it was killed, or its machine stopped)" in out.stdout


def test_start_up_errors_are_a_json_line_on_stdout_under_json(tmp_path):
    taken = tmp_path / "results" / "live" / "hunter" / "taken.json"
    taken.parent.mkdir(parents=True)
    taken.write_text("somebody's run")
    out = in_process("session", "hunter", "--run", "taken", "--json", stdin="{}\n", cwd=tmp_path)
    line = ("results/live/hunter/taken.json: a recording is already there, and a recorded run is never overwritten: "
            "choose another --run")
    assert out.returncode == 2 and out.stderr == f"replaylab: {line}\n"
    assert [json.loads(x) for x in out.stdout.splitlines()] == [{"error": line}]
    out = in_process("session", "astronomy", "--json", stdin="", cwd=tmp_path)
    assert out.returncode == 2 and json.loads(out.stdout)["error"].startswith("unknown lesson 'astronomy'")
    assert in_process("session", "astronomy", stdin="", cwd=tmp_path).stdout == ""  # without --json: stdout stays the agent's


def test_help_says_that_out_ends_in_the_runs_name(tmp_path):
    help_text = " ".join(in_process("session", "--help").stdout.split())
    assert "--out PATH/RUN.json the file to write, named after the run: it must end in RUN.json" in help_text
    assert "exit code 130" in help_text
    out = in_process("session", "hunter", "--out", "elsewhere/run.txt", stdin="", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("replaylab: --out elsewhere/run.txt: the file name must be the run's name")
