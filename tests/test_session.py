"""`replaylab session` driven the way an agent drives it: a real process behind a pipe, one message
written, its answer read, then the next. Every point of issue 11's first list has a test here."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

from helpers import RECORDINGS, cli
from replaylab.agents import recording
from replaylab.build import build
from replaylab.lessons import registry
from replaylab.physics.drift import max_energy_drift

TIMEOUT = 60  # seconds to wait for one answer; a session that hangs fails the test instead


class Session:
    """One `replaylab session` process: send a line, read the answer (never blocking forever)."""

    def __init__(self, cwd, *args):
        self.process = subprocess.Popen(
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
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {TIMEOUT} s"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

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
    return cli("replay", path, cwd=cwd)


# ---------------------------------------------------------------------------------------------
# Before the first message: everything the agent is given


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


def test_help_gives_the_message_format_with_an_example_that_is_true(tmp_path):
    help_text = cli("session", "--help").stdout
    assert '{"text": "...", "tool_calls": [{"id": "1", "name": TOOL,' in help_text
    # the example messages of the help (a call, then the answer), sent to a real session, get the lines the help shows
    sent = [json.loads(line[4:]) for line in help_text.splitlines() if line.startswith("  > ")]
    shown = [json.loads(line[4:]) for line in help_text.splitlines() if line.startswith("  < ")]
    assert len(sent) == len(shown) == 2 and sent[1]["tool_calls"][0]["name"] == "answer"
    s = Session(tmp_path, registry.names()[0], "--run", "typed")  # the lesson and the run of the help's example
    first = s.read()
    assert set(first) == {"lesson", "variant", "run", "recording", "system", "task", "tools", "limits", "protocol"}
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


@pytest.mark.parametrize("variant", ["symplectic-euler", "velocity-verlet"])
def test_hunter_variants_are_named_by_their_claim_not_its_truth(tmp_path, variant):
    s = Session(tmp_path, "hunter", "--variant", variant)
    header = s.read()
    seen = json.dumps({k: header[k] for k in ("variant", "run", "system", "task", "tools")}).lower()
    for word in ("false", "open", "true", "refuted"):
        assert not re.search(rf"\b{word}\b", seen.replace('"additionalproperties": false', "")), word
    s.close_input()
    s.wait()


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
        "not finished: the input ended before the agent ended the run",
        "decided by the build: no answer: the run ended without an accepted call of answer: not right"]


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
        b'{"text": "a", "api_key": "x"}': "line 9: unknown fields: api_key",
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
    out = cli("session", "hunter", *args, stdin=message, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""  # refused before anything was shown or read
    assert out.stderr.startswith(error) and len(out.stderr.splitlines()) == 1, out.stderr
    assert not (tmp_path / "results").exists()


def test_an_existing_recording_is_never_overwritten(tmp_path):
    target = tmp_path / "results" / "live" / "hunter" / "taken.json"
    target.parent.mkdir(parents=True)
    target.write_text("somebody's run")
    out = cli("session", "hunter", "--run", "taken", stdin="{}\n", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "replaylab: results/live/hunter/taken.json: a recording is already there, and a recorded run is never "
        "overwritten: choose another --run\n"
    )
    assert target.read_text() == "somebody's run"


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
    page = (tmp_path / "built" / "hunter" / "index.md").read_text()
    assert "Messages produced by: model-a (declared, not verified)" in page
    assert "not finished: the input ended before the agent ended the run" in page
