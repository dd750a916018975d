"""`replaylab mcp` driven by the official MCP SDK's stdio client, as a coding agent or a desktop app
would drive it: real server processes, the allowlist's schemas and refusal texts, the recording
written after every call, and the workflow judging it. Servers over stdio: `slow` (`make test-all`);
the replays of their runs in this process."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers.pages import with_run_pages
from helpers import cli, environment, in_process, processes
from helpers.mcp import RawServer, readme_server
from helpers.workflow import prepared_copy, snakemake
from replaylab.agents import recording
from replaylab.lessons import registry
from replaylab.physics.drift import max_energy_drift
from replaylab.physics.projectile import range_without_drag

pytestmark = pytest.mark.slow  # servers over stdio, signals, and a Snakemake build of its own

CLIENT = types.Implementation(name="test-client", version="9.9")
SE = "symplectic Euler"


def parameters(cwd, *args):
    return StdioServerParameters(command=sys.executable, args=["-m", "replaylab", "mcp", *args], cwd=str(cwd),
                                 env=environment())  # the tests' environment: no key, this checkout's code


def drive(cwd, args, body):
    """Start `replaylab mcp ARGS` in `cwd`, initialize as CLIENT, run `body(session, init)`, disconnect."""

    async def main():
        async with stdio_client(parameters(cwd, *args)) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                init = await session.initialize()
                return await body(session, init)

    return anyio.run(main)


def drift(steps, periods, method=SE):
    return {"method": method, "steps_per_period": steps, "periods": periods}


def texts(result):
    return [c.text for c in result.content]


def replay(cwd, path):
    return in_process("replay", path, cwd=cwd)


def live(cwd, lesson, run):
    return cwd / "results" / "live" / lesson / f"{run}.json"


# ---------------------------------------------------------------------------------------------
# What the client sees: the allowlist's own schemas, the prompt, nothing else


def test_tools_carry_the_allowlists_schemas_and_the_prompt_holds_system_and_task(tmp_path):
    async def with_prompt(session, init):
        tools = await session.list_tools()
        prompts = await session.list_prompts()
        prompt = await session.get_prompt(prompts.prompts[0].name)
        return init, tools, prompts, prompt

    init, tools, prompts, prompt = drive(tmp_path, ["review", "--variant", "evidence", "--run", "look"], with_prompt)
    v = registry.lesson("review").variant("evidence")
    specs = {spec["name"]: spec for spec in v.allowlist().specs()}
    listed = {tool.name: tool for tool in tools.tools}
    assert set(listed) == set(specs) and "answer" in listed and "finish" not in listed  # the answer tool is the allowlist's own
    for name, spec in specs.items():
        assert listed[name].input_schema == spec["parameters"]  # minimum/maximum, required, no extra properties
        assert listed[name].description == spec["description"]
    check = listed["reproduce_check"].input_schema["properties"]["check"]
    assert (check["type"], check["minimum"], check["maximum"]) == ("integer", 1, 5)
    assert "1 clock, 2 purity, 3 limits, 4 convergence-order, 5 bounded-energy" in check["description"]
    assert listed["answer"].input_schema == v.answer.spec()["parameters"]
    assert listed["answer"].input_schema["properties"]["piece_2_failed"]["items"]["enum"] == [
        "clock", "purity", "limits", "convergence-order", "bounded-energy"]
    # a client that makes calls is told its limit in calls, never in messages
    assert v.system_for("mcp") in init.instructions and v.task in init.instructions
    assert "you may make at most 48 tool calls in all, the answer call included" in init.instructions
    assert not re.search(r"\bmessages?\b", init.instructions) and not re.search(r"\bfinish\b", init.instructions)
    assert "an accepted answer is echoed back, and ends the run" in init.instructions
    assert [p.name for p in prompts.prompts] == ["review-evidence"]
    (message,) = prompt.messages
    assert message.content.text == init.instructions
    # every call changes the run (budget, calls, its end): nothing is read-only or idempotent; the answer ends it
    hints = {name: tool.annotations for name, tool in listed.items()}
    assert all(h.read_only_hint is False and h.idempotent_hint is False and h.open_world_hint is False for h in hints.values())
    assert [name for name, h in hints.items() if h.destructive_hint] == ["answer"]
    # nothing else is exposed
    assert init.capabilities.resources is None and init.capabilities.tools is not None
    assert not live(tmp_path, "review", "look").exists()  # no call, no run


# ---------------------------------------------------------------------------------------------
# Calls: the recomputed number, the allowlist's refusals, the budget, the answer


HOSTILE = [
    ("os.system", {"command": "touch PWNED"}, "'os.system' is not an allowed tool; the allowed tools are: oscillator_energy_drift, answer"),
    ("oscillator_energy_drift ", drift(64, 20), "'oscillator_energy_drift ' is not an allowed tool; the allowed tools are: oscillator_energy_drift, answer"),
    ("oscillator_energy_drift", drift(2, 20), "steps_per_period must be between 4 and 200, got 2"),
    ("oscillator_energy_drift", drift(10**400, 20), f"steps_per_period must be between 4 and 200, got {10**400}"),
    ("oscillator_energy_drift", drift("64", 20), "steps_per_period must be a number, got str: send 64 as a number, without quotes"),
    ("oscillator_energy_drift", drift(32.5, 20), "steps_per_period must be an integer, got 32.5"),
    ("oscillator_energy_drift", {**drift(64, 20), "code": "__import__('os').system('touch PWNED')"}, "unknown arguments: code"),
    ("oscillator_energy_drift", {"method": SE, "periods": 20}, "missing arguments: steps_per_period"),
    ("oscillator_energy_drift", drift(64, 20, "os.system"),
     "method must be one of explicit Euler, symplectic Euler, velocity Verlet, Runge-Kutta 4, got 'os.system'"),
]


ANSWER = {"outcome": "counterexample", "method": SE, "steps_per_period": 64, "periods": 20,
          "explanation": "64 steps per period over 20 periods breaks the claim."}


def test_valid_and_hostile_calls_budget_and_answer(tmp_path):
    async def body(session, init):
        out = {"valid": await session.call_tool("oscillator_energy_drift", drift(64, 20))}
        out["hostile"] = [await session.call_tool(name, arguments) for name, arguments, _ in HOSTILE]
        out["float"] = await session.call_tool("oscillator_energy_drift", drift(16.0, 50))
        out["more"] = [await session.call_tool("oscillator_energy_drift", drift(100 + n, 20)) for n in range(6)]
        out["spent"] = await session.call_tool("oscillator_energy_drift", drift(32, 20))
        out["bad answer"] = await session.call_tool("answer", {"outcome": "counterexample", "method": SE})
        out["answer"] = await session.call_tool("answer", ANSWER)
        out["after"] = await session.call_tool("oscillator_energy_drift", drift(64, 20))
        return out

    out = drive(tmp_path, ["hunter", "--run", "hunt"], body)
    valid = out["valid"]
    assert not valid.is_error
    assert valid.structured_content == {"result": {"max_energy_drift": max_energy_drift(SE, 64, 20)}, "budget_left": 7, "calls_left": 47}
    assert texts(valid) == [json.dumps({"max_energy_drift": max_energy_drift(SE, 64, 20)}),
                            "Budget left: 7 of 8 experiments. Calls left, the answer included: 47."]
    for result, (_, _, reason) in zip(out["hostile"], HOSTILE):
        assert result.is_error and texts(result)[0] == reason and result.structured_content["budget_left"] == 7
    assert not (tmp_path / "PWNED").exists()
    assert out["float"].structured_content["result"] == {"max_energy_drift": max_energy_drift(SE, 16, 50)}
    assert [r.structured_content["budget_left"] for r in out["more"]] == [5, 4, 3, 2, 1, 0]
    assert out["spent"].is_error and texts(out["spent"])[0] == "the budget of 8 experiments is spent"
    bad = out["bad answer"]  # refused with the allowlist's reason: the run goes on, and the answer costs no experiment
    assert bad.is_error and texts(bad)[0] == "a counterexample names its experiment: missing steps_per_period, periods"
    assert (bad.structured_content["budget_left"], bad.structured_content["calls_left"]) == (0, 29)
    done = out["answer"]
    assert not done.is_error and done.structured_content == {
        "accepted": "counterexample symplectic Euler, 64 steps per period, 20 periods; the run has ended",
        "ended": "finished: the agent called answer, which ends the run", "finished": True,
        "recording": "results/live/hunter/hunt.json"}
    assert texts(done) == ["Accepted: counterexample symplectic Euler, 64 steps per period, 20 periods; the run has ended. "
                           "Recorded as results/live/hunter/hunt.json."]
    assert out["after"].is_error
    assert texts(out["after"])[0] == "the run has ended (finished: the agent called answer, which ends the run); nothing more is recorded"

    path = live(tmp_path, "hunter", "hunt")
    run = recording.load(path)
    assert run.transcript.finished
    calls = [c for step in run.transcript.steps for c in step.message.tool_calls]
    assert len(calls) == 1 + len(HOSTILE) + 1 + 6 + 1 + 2  # every call, the refused answer too, but the one after the end
    assert [len(step.message.tool_calls) for step in run.transcript.steps] == [4, 4, 4, 4, 4]
    assert calls[5].arguments == drift("64", 20)  # as the client sent it
    assert calls[-1].name == "answer" and calls[-1].arguments == ANSWER
    p = run.provenance
    assert (p["kind"], p["model"], p["client"]) == ("mcp", "unknown (not declared)", {"name": "test-client", "version": "9.9"})
    assert "model_declared" not in p and run.label == "Recorded run"
    out = replay(tmp_path, path)
    assert out.returncode == 0, out.stderr
    assert "replayed 18 calls (8 ran, 10 refused)" in out.stdout  # the experiments: the two answer calls are not among them
    assert out.stdout.strip().splitlines()[-2:] == [
        "finished with an answer (an accepted call of answer)",
        "decided by the build: answer counterexample symplectic Euler, 64 steps per period, 20 periods: right (the build "
        "ran it again: 0.0515672 against the limit 0.05, inside the claim's domain); supported: the hunt ran its "
        "counterexample and saw it break the claim (0.0515672)"]


def test_a_client_that_disconnects_without_an_answer_is_recorded_as_not_finished(tmp_path):
    async def body(session, init):
        await session.call_tool("oscillator_energy_drift", drift(200, 50, "velocity Verlet"))
        await session.call_tool("oscillator_energy_drift", drift(16, 50, "velocity Verlet"))

    drive(tmp_path, ["hunter", "--variant", "velocity-verlet", "--run", "left", "--model", "model-x"], body)
    path = live(tmp_path, "hunter", "left")
    run = recording.load(path)
    assert not run.transcript.finished and [len(s.results) for s in run.transcript.steps] == [2]
    assert run.provenance["model_declared"] is True and run.model == "model-x (declared, not verified)"
    out = replay(tmp_path, path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-2:] == [
        "not finished: the client closed the session without calling answer: recorded as not finished, with no answer",
        "decided by the build: no answer: the run ended without an accepted call of answer: not right"]


def test_the_message_limit_ends_the_run_with_the_call_that_reaches_it(tmp_path):
    """12 messages of 4 calls: 48 calls in all, the answer included. The 48th call ends the run: with
    no answer when it is an experiment, with the answer when it is the answer."""
    async def body(session, init):
        answers = [await session.call_tool("range_without_drag", {"speed": 25, "angle": 1 + n}) for n in range(49)]
        late = await session.call_tool("answer", {"low": 40, "high": 41})
        return answers, late

    answers, late = drive(tmp_path, ["projectile", "--run", "limit"], body)
    assert [a.structured_content["calls_left"] for a in answers[:48]] == list(range(47, -1, -1))
    assert texts(answers[45])[1] == "No budget of experiments. Calls left, the answer included: 2."
    assert texts(answers[46])[1] == "No budget of experiments. One call is left: call answer now, or the run ends with no answer."
    assert not answers[47].is_error
    assert answers[47].structured_content["result"] == {"range_m": range_without_drag(25, 48)}
    assert texts(answers[47])[1] == (
        "The run has ended: the call limit is reached (48 calls): the run has ended, not finished, with no answer. "
        "Nothing more is recorded."
    )
    assert answers[48].is_error and late.is_error and texts(late)[0].startswith("the run has ended (the call limit is reached")
    run = recording.load(live(tmp_path, "projectile", "limit"))
    assert [len(s.results) for s in run.transcript.steps] == [4] * 12 and not run.transcript.finished
    out = replay(tmp_path, live(tmp_path, "projectile", "limit"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-2:] == [
        "stopped at the message limit (not finished, no answer)",
        "decided by the build: no answer: the run ended without an accepted call of answer: not right"]

    async def answered_last(session, init):
        for n in range(47):
            await session.call_tool("range_without_drag", {"speed": 25, "angle": 1 + n})
        return await session.call_tool("answer", {"low": 40, "high": 41})

    last = drive(tmp_path, ["projectile", "--run", "last"], answered_last)
    assert not last.is_error and last.structured_content["finished"] is True
    run = recording.load(live(tmp_path, "projectile", "last"))
    assert [len(s.results) for s in run.transcript.steps] == [4] * 12 and run.transcript.finished


# ---------------------------------------------------------------------------------------------
# Killed midway: what is on disk is valid and replays


CLIENT_SCRIPT = textwrap.dedent("""
    import sys, anyio, mcp_types as types
    from mcp import ClientSession, MCPError
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "replaylab", "mcp", "hunter", "--run", "killed"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="doomed", version="1")) as s:
                await s.initialize()
                for steps in (200, 100, 64):
                    await s.call_tool("oscillator_energy_drift", {"method": "symplectic Euler", "steps_per_period": steps, "periods": 20})
                print("three calls made", flush=True)
                await anyio.sleep(600)

    anyio.run(main)
""")


def children(pid):
    try:
        found = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(p) for p in (task / "children").read_text().split()]
        return found
    except FileNotFoundError:
        return []


def test_a_client_killed_midway_leaves_a_valid_recording_that_replays(tmp_path):
    # the client and its server end with the test, whatever happens (helpers.processes)
    client = processes.start([sys.executable, "-c", CLIENT_SCRIPT], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "three calls made"
    (server,) = children(client.pid)
    client.send_signal(signal.SIGKILL)
    client.wait(timeout=30)
    assert processes.ended(server, 30), "the server outlived its client"  # its stdin closed: it ended the run and exited
    run = recording.load(live(tmp_path, "hunter", "killed"))
    assert [len(s.results) for s in run.transcript.steps] == [3] and not run.transcript.finished
    assert run.provenance["client"] == {"name": "doomed", "version": "1"}
    assert replay(tmp_path, live(tmp_path, "hunter", "killed")).returncode == 0


def test_a_server_killed_midway_leaves_what_it_had_written(tmp_path):
    async def body(session, init):
        for steps in (200, 100, 64, 32, 16):
            await session.call_tool("oscillator_energy_drift", drift(steps, 20))
        servers = [pid for pid in children(os.getpid()) if b"mcp" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        (server,) = servers
        os.kill(server, signal.SIGKILL)
        with pytest.raises(Exception):
            await session.call_tool("oscillator_energy_drift", drift(20, 20))

    drive(tmp_path, ["hunter", "--run", "cut"], body)
    run = recording.load(live(tmp_path, "hunter", "cut"))
    assert [len(s.results) for s in run.transcript.steps] == [4, 1] and not run.transcript.finished
    assert replay(tmp_path, live(tmp_path, "hunter", "cut")).returncode == 0


# ---------------------------------------------------------------------------------------------
# Options checked before serving; a new run name at every start; nothing overwritten


@pytest.mark.parametrize(
    "args, error",
    [
        (["hunter", "--run", "my run"], "replaylab: --run: 'my run' is not a run name"),
        (["hunter", "--variant", "open"], "replaylab: lesson hunter has no variant 'open'"),
        (["physics"], "replaylab: unknown lesson 'physics'"),
        (["hunter", "--model", "a\x1bb"], "replaylab: --model: 'a\\x1bb' is not a model name"),
    ],
)
def test_bad_options_are_one_line_before_serving(tmp_path, args, error):
    out = cli("mcp", *args, cwd=tmp_path, stdin="")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(error) and len(out.stderr.splitlines()) == 1, out.stderr


def test_an_existing_run_is_refused_and_each_start_gets_a_new_name(tmp_path):
    taken = live(tmp_path, "hunter", "taken")
    taken.parent.mkdir(parents=True)
    taken.write_text("a run")
    out = cli("mcp", "hunter", "--run", "taken", cwd=tmp_path, stdin="")
    assert out.returncode == 2 and "a recorded run is never overwritten" in out.stderr and taken.read_text() == "a run"

    async def one_call(session, init):
        await session.call_tool("oscillator_energy_drift", drift(64, 20))

    drive(tmp_path, ["hunter"], one_call)
    drive(tmp_path, ["hunter"], one_call)
    made = sorted(p.name for p in taken.parent.glob("mcp-*.json"))
    assert len(made) == 2, made


# ---------------------------------------------------------------------------------------------
# The workflow judges MCP runs like any run


@pytest.mark.workflow
def test_the_workflow_replays_and_judges_mcp_runs(prepared, tmp_path):
    copy = prepared_copy(prepared, tmp_path / "project")

    async def right(session, init):
        await session.call_tool("oscillator_energy_drift", drift(64, 20))
        await session.call_tool("answer", {**ANSWER, "explanation": "64/20 drifts by 5.2 %: a counterexample."})

    async def left(session, init):
        await session.call_tool("oscillator_energy_drift", drift(200, 20))

    drive(copy, ["hunter", "--out", "mcp-runs/hunter/m-right.json", "--model", "model-m"], right)
    drive(copy, ["hunter", "--out", "mcp-runs/hunter/m-left.json", "--model", "model-m"], left)
    config = copy / "config" / "config.yaml"
    config.write_text(config.read_text().replace("run_folders: []", "run_folders: [mcp-runs]"))
    snakemake(copy, "--cores", "1", "hunter")
    results = json.loads((copy / "results" / "hunter" / "results.json").read_text())
    right_run, left_run = results["verdicts"]["m-right"], results["verdicts"]["m-left"]
    assert right_run["experiments"]["outcome"] == "counterexample" and right_run["answer"] == {k: v for k, v in ANSWER.items() if k != "explanation"}
    assert right_run["explanation"] == "64/20 drifts by 5.2 %: a counterexample." and right_run["supported"] is True
    assert left_run["experiments"]["outcome"] == "inconclusive" and left_run["answer"] is None and left_run["supported"] is None
    (row,) = [r for r in results["scorecard"] if r["model"] == "model-m (declared, not verified)"]
    assert (row["runs"], row["answered"], row["right"], row["supported"]) == (2, 1, 1, 1)
    page = with_run_pages(copy / "results" / "hunter")
    assert "Through the MCP client test-client 9.9 (its name and version as it reported them)" in page
    assert "Messages produced by: model-m (declared, not verified)" in page
    assert "not finished: the client closed the session without calling answer" in page
    assert "finished with an answer (an accepted call of answer)" in page
    assert "**Run `m-right` answered: counterexample, symplectic Euler, 64 steps per period, 20 periods.** **The agent's answer is right" in page
    assert "**Run `m-left` gave no answer**" in page


# ---------------------------------------------------------------------------------------------
# The README's configuration, pasted into a client's configuration, starts the server as it is


def test_the_readme_desktop_snippet_starts_the_server_with_no_other_step(tmp_path):
    clone, config = readme_server(tmp_path)
    (server,) = config["mcpServers"].values()
    elsewhere = tmp_path / "the-clients-folder"
    elsewhere.mkdir()

    async def main():
        params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(elsewhere))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                await session.initialize()
                names = [tool.name for tool in (await session.list_tools()).tools]
                result = await session.call_tool("oscillator_energy_drift", drift(64, 20))
                await session.call_tool("answer", ANSWER)
                return names, result

    names, result = anyio.run(main)
    assert names == ["oscillator_energy_drift", "answer"] and not result.is_error
    (path,) = (clone / "mcp-runs" / "hunter").glob("mcp-*.json")
    run = recording.load(path)
    assert run.transcript.finished and run.model == "the-model-you-chose (declared, not verified)"
    assert not list(elsewhere.iterdir())  # nothing written where the client started it


def test_raw_protocol_lines_that_no_recording_could_hold_never_break_the_run(tmp_path):
    """Below the SDK's client: JSON-RPC lines written by hand. A control character in the client's
    name is made printable; arguments nested too deep are a tool error; none reaches the recording,
    and the next call is answered and recorded."""
    server = RawServer(tmp_path, "hunter", "--run", "raw")
    server.initialize("raw\u001b[31mclient")
    server.send('{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "oscillator_energy_drift", '
                '"arguments": {"periods": ' + "[" * 30 + "]" * 30 + "}}}")
    deep = server.answer(4)["result"]
    server.call(5, "oscillator_energy_drift", drift(64, 20))
    valid = server.answer(5)["result"]
    assert server.close()[0] == 0
    assert deep["isError"] and deep["content"][0]["text"].startswith(
        "the call cannot be recorded, so it did not run and costs nothing: $.arguments.periods[0]")
    assert valid["structuredContent"]["result"] == {"max_energy_drift": max_energy_drift(SE, 64, 20)}
    run = recording.load(live(tmp_path, "hunter", "raw"))
    assert [len(s.results) for s in run.transcript.steps] == [1]  # only the valid call
    assert run.provenance["client"] == {"name": "raw?[31mclient", "version": "0"}
    assert replay(tmp_path, live(tmp_path, "hunter", "raw")).returncode == 0


# ---------------------------------------------------------------------------------------------
# Issue 25: every request answered; what is recorded the reader reads; names claimed; signals


def call_line(request_id, name_json, arguments_json):
    return ('{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": {"name": %s, "arguments": %s}}'
            % (request_id, name_json, arguments_json)).encode()


UNANSWERED = [  # lines the SDK's own transport answers with nothing: the client would wait for ever
    (call_line(2, '"oscillator_energy_drift"', '{"method": "\\ud800", "steps_per_period": 64, "periods": 20}'), 2, -32600,
     "the request cannot be taken: $.params.arguments.method: a lone surrogate (\\ud800 to \\udfff: half of a character, not text)"),
    (call_line(3, '"\\udfff"', "{}"), 3, -32600, "the request cannot be taken: $.params.name: a lone surrogate"),
    (call_line(4, '"oscillator_energy_drift"', '{"method": "symplectic Euler", "steps_per_period": ' + "7" * 5000 + ', "periods": 20}'),
     4, -32600, "the request cannot be taken: $.params.arguments.steps_per_period: an integer of more than 1000 digits"),
    (b'[{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]', None, -32600,
     "a batch (a JSON array of messages) is not taken: send one message per line"),
    (b"\xff\xfe not UTF-8", None, -32700, "the line is not UTF-8 (byte 0xff at 0)"),
    (b"tools/list, please", None, -32700, "the line is not JSON: Expecting value at character 1"),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list"', None, -32700, "the line is not JSON: Expecting ',' delimiter"),
    (b'"tools/list"', None, -32600, "a JSON-RPC message is a JSON object, not str"),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "id": 8}', 8, -32600, "the request cannot be taken: the key 'id' appears twice"),
    (b'{"jsonrpc": "1.0", "id": 9, "method": "tools/list"}', 9, -32600, "the request cannot be taken: not a JSON-RPC 2.0 message"),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "x", "arguments": ' + b"[" * 5000 + b"]" * 5000 + b"}}",
     None, -32600, "the line is nested more than 64 levels deep"),
]


def test_every_request_gets_an_answer_with_its_id_when_it_can_be_read(tmp_path):
    """A lone surrogate, a 5000-digit integer, a batch, bytes that are not UTF-8, a line that is
    not JSON...: each is answered with its JSON-RPC error (-32700 parse error, -32600 invalid
    request), with the request's id when it can be read, and the server goes on."""
    server = RawServer(tmp_path, "hunter", "--run", "answered")
    server.initialize()
    for line, request_id, code, message in UNANSWERED:
        server.send(line)
        answer = server.read(timeout=30)
        assert answer["id"] == request_id and answer["error"]["code"] == code, (line[:80], answer)
        assert answer["error"]["message"].startswith(message), answer
    server.call(20, "oscillator_energy_drift", drift(64, 20))
    assert server.answer(20)["result"]["structuredContent"]["result"] == {"max_energy_drift": max_energy_drift(SE, 64, 20)}
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr
    path = live(tmp_path, "hunter", "answered")
    assert [len(s.results) for s in recording.load(path).transcript.steps] == [1]
    assert replay(tmp_path, path).returncode == 0


def test_a_call_its_recording_could_not_hold_is_refused_before_it_runs_and_the_run_goes_on(tmp_path):
    """Calls of 3 MB each (refused for an unknown argument, and recorded as sent): the third would
    make a file over recording.MAX_BYTES, so it is refused before it runs, and not recorded."""
    async def body(session, init):
        big = [await session.call_tool("oscillator_energy_drift", {**drift(64, 20), "note": "x" * 3_000_000}) for _ in range(3)]
        valid = await session.call_tool("oscillator_energy_drift", drift(64, 20))
        done = await session.call_tool("answer", ANSWER)
        return big, valid, done

    big, valid, done = drive(tmp_path, ["hunter", "--run", "huge"], body)
    assert [texts(r)[0] for r in big[:2]] == ["unknown arguments: note"] * 2
    assert big[2].is_error and texts(big[2])[0].startswith(
        "the call cannot be recorded, so it did not run and costs nothing: the recording would hold ")
    assert "a recording holds at most 8388608" in texts(big[2])[0]
    assert valid.structured_content["budget_left"] == 7 and not done.is_error
    path = live(tmp_path, "hunter", "huge")
    assert path.stat().st_size <= recording.MAX_BYTES
    run = recording.load(path)
    assert [len(s.results) for s in run.transcript.steps] == [4] and run.transcript.finished
    assert replay(tmp_path, path).returncode == 0


def test_a_second_server_given_the_same_run_fails_at_start_and_tells_its_client_why(tmp_path):
    async def body(session, init):
        path = live(tmp_path, "hunter", "same")
        assert path.exists()  # claimed at start, before any call
        second = RawServer(tmp_path, "hunter", "--run", "same")
        refused = second.initialize()
        code, stderr = second.wait()

        async def official():  # what the SDK's own client shows: the reason, not "connection closed"
            async with stdio_client(parameters(tmp_path, "hunter", "--run", "same")) as (read, write):
                async with ClientSession(read, write, client_info=CLIENT) as other:
                    await other.initialize()

        with pytest.raises(Exception) as shown:
            await official()
        await session.call_tool("oscillator_energy_drift", drift(64, 20))
        return refused, code, stderr, shown.value

    refused, code, stderr, shown = drive(tmp_path, ["hunter", "--run", "same"], body)
    line = ("results/live/hunter/same.json: a recording is already there, and a recorded run is never overwritten: "
            "choose another --run")
    assert code == 2 and stderr == f"replaylab: {line}\n"
    assert refused == {"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": line}}
    while isinstance(shown, BaseExceptionGroup):  # the client's task groups around the SDK's MCPError
        (shown,) = shown.exceptions
    assert isinstance(shown, MCPError) and str(shown) == line
    run = recording.load(live(tmp_path, "hunter", "same"))
    assert [len(s.results) for s in run.transcript.steps] == [1]  # the first server's run, untouched


def test_a_run_its_server_still_writes_is_neither_promoted_nor_taken_by_a_second_server(tmp_path):
    """Issue 38, 13: one run name, one writer until it ends. `promote` refuses the run while its
    server runs (it is not finished, and the server would write it again under the same name); a
    second server of that name is refused even when the file was moved away meanwhile."""
    path, recordings = live(tmp_path, "hunter", "owned"), tmp_path / "recordings"
    server = RawServer(tmp_path, "hunter", "--run", "owned")
    server.initialize()
    server.call(1, "oscillator_energy_drift", drift(64, 20))
    assert not server.answer(1)["result"]["isError"]
    before = path.read_bytes()
    busy = (f"replaylab: {path.relative_to(tmp_path)}: this run is still being written by process {server.process.pid} "
            "(a session or an MCP server): promote it once that has ended\n")
    for dry in ([], ["--dry-run"]):
        refused = cli("promote", path.relative_to(tmp_path), "--recordings", recordings, *dry, cwd=tmp_path)
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", busy)
    assert path.read_bytes() == before and not recordings.exists()

    path.rename(tmp_path / "moved.json")  # the name is free on disk, not to another writer
    second = cli("mcp", "hunter", "--run", "owned", cwd=tmp_path, stdin="")
    assert second.returncode == 1 and second.stdout == ""
    assert second.stderr == (f"replaylab: {path.relative_to(tmp_path)}: this run is being written by process "
                             f"{server.process.pid} (a session or an MCP server): choose another --run, or wait until it "
                             "has ended\n")
    assert not path.exists()
    server.call(2, "oscillator_energy_drift", drift(32, 20))
    assert not server.answer(2)["result"]["isError"]
    assert server.close()[0] == 0
    assert [len(s.results) for s in recording.load(path).transcript.steps] == [2]  # the first server's, whole

    promoted = cli("promote", path.relative_to(tmp_path), "--recordings", recordings, cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    assert (recordings / "hunter" / "owned.json").exists() and not path.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == []  # no mark left behind


def test_servers_started_in_the_same_second_claim_two_names(tmp_path):
    fraction = time.time() % 1
    if fraction > 0.05:  # both start at the beginning of one second: the clock is what this test is about
        time.sleep(1 - fraction)
    servers = [RawServer(tmp_path, "hunter") for _ in range(2)]
    paths = []
    for n, server in enumerate(servers):
        server.initialize()
        server.call(1, "oscillator_energy_drift", drift(64 + n, 20))
        assert not server.answer(1)["result"]["isError"]
    for server in servers:
        code, stderr = server.close()
        assert code == 0 and "Traceback" not in stderr, stderr
        paths.append(re.search(r"recorded in (\S+)", stderr).group(1))
    assert len(set(paths)) == 2, paths
    for n, path in enumerate(paths):
        run = recording.load(tmp_path / path)
        assert run.transcript.steps[0].message.tool_calls[0].arguments == drift(64 + n, 20)
        assert replay(tmp_path, tmp_path / path).returncode == 0


def test_a_server_that_ends_with_no_call_removes_the_empty_recording_it_claimed(tmp_path):
    server = RawServer(tmp_path, "hunter", "--run", "unused")
    server.initialize()
    assert live(tmp_path, "hunter", "unused").exists()
    code, stderr = server.close()
    assert code == 0 and stderr.splitlines()[-1] == (
        "replaylab mcp: no call was made: the empty recording it had claimed, results/live/hunter/unused.json, was removed")
    assert not live(tmp_path, "hunter", "unused").exists()


@pytest.mark.parametrize("signum, code, how", [(signal.SIGINT, 130, "interrupted (SIGINT, Ctrl-C)"),
                                               (signal.SIGTERM, 143, "stopped (SIGTERM)")])
def test_a_signal_ends_an_idle_server_at_once_with_its_recording_on_disk(tmp_path, signum, code, how):
    server = RawServer(tmp_path, "hunter", "--run", "idle")
    server.initialize()
    server.call(1, "oscillator_energy_drift", drift(64, 20))
    server.answer(1)
    started = time.monotonic()
    server.process.send_signal(signum)  # idle: stdin open, nothing sent
    exit_code, stderr = server.wait()
    assert time.monotonic() - started < 10 and exit_code == code
    reason = f"the server was {how} before the agent ended the run: recorded as not finished, with no answer"
    assert stderr.splitlines()[-1] == (f"replaylab mcp: stopped by {signal.Signals(signum).name}; wrote "
                                       f"results/live/hunter/idle.json (1 call; {reason})")
    assert len(stderr.splitlines()) == 2 and "nothing half-written" not in stderr
    out = replay(tmp_path, live(tmp_path, "hunter", "idle"))
    assert out.returncode == 0 and f"not finished: {reason}" in out.stdout


def test_a_signal_with_calls_pending_ends_the_server_with_one_true_line(tmp_path):
    server = RawServer(tmp_path, "hunter", "--run", "busy")
    server.initialize()
    for n in range(60):  # sent, none read: they are pending when the signal comes
        server.call(n + 1, "oscillator_energy_drift", drift(4 + n, 1000))
    server.process.send_signal(signal.SIGINT)
    code, stderr = server.wait()
    assert code == 130 and "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 2 and lines[1].startswith("replaylab mcp: stopped by SIGINT; "), stderr
    path = live(tmp_path, "hunter", "busy")
    if path.exists():  # the signal may come before the first call ran: then nothing was recorded, and it says so
        assert "wrote results/live/hunter/busy.json" in lines[1]
        assert replay(tmp_path, path).returncode == 0
    else:
        assert "no call was made" in lines[1]


def test_a_server_stopped_before_any_call_removes_its_claim_and_says_so(tmp_path):
    server = RawServer(tmp_path, "hunter", "--run", "early")
    server.initialize()
    server.process.send_signal(signal.SIGTERM)
    code, stderr = server.wait()
    assert code == 143 and stderr.splitlines()[-1] == (
        "replaylab mcp: stopped by SIGTERM; no call was made: the empty recording it had claimed, "
        "results/live/hunter/early.json, was removed")
    assert not live(tmp_path, "hunter", "early").exists()


# ---------------------------------------------------------------------------------------------
# Issue 38: memory bounded by backpressure, an answer for every id, a prompt's error, a refused start


RSS_LIMIT = 150 * 1024 * 1024  # an idle server holds about 95 MB


def test_a_client_that_writes_and_never_reads_holds_the_server_to_bounded_memory(tmp_path):
    """Requests written as fast as the pipe takes them, for 20 s, no answer read: once its answers
    wait, the server stops reading and the client's writes wait in the pipe, so its memory stays
    flat, under RSS_LIMIT (with unbounded queues it grew by about 35 MB a second, 700 MB at 20 s).
    Nothing is lost: once read, every request written has its one answer."""
    server = RawServer(tmp_path, "hunter", "--run", "flood")
    server.initialize()
    fd, written, stop, done = server.process.stdin.fileno(), [0], threading.Event(), threading.Event()

    def flood():  # blocks of 100 requests, until told to stop
        try:
            while not stop.is_set():
                ids = range(written[0] + 1, written[0] + 101)
                os.write(fd, b"".join(b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list"}\n' % n for n in ids))
                written[0] = ids[-1]
        except OSError:  # the server was ended
            pass
        done.set()

    threading.Thread(target=flood, daemon=True).start()
    samples = []  # (s, RSS, requests written)
    for second in range(1, 21):
        time.sleep(1)
        samples.append((second, server.rss_bytes(), written[0]))
    assert max(rss for _, rss, _ in samples) < RSS_LIMIT, samples
    late = [rss for s, rss, _ in samples if s > 10]
    assert max(late) - min(late) < 10 * 1024 * 1024, samples  # flat, not growing slowly
    assert len({count for s, _, count in samples if s > 10}) == 1, samples  # backpressure: the writes wait
    stop.set()
    answers = []
    while not (len(answers) == written[0] and done.wait(5) and len(answers) == written[0]):
        answers += server.read_many(100, timeout=60)  # a block's answers: then the server reads on
    assert sorted(a["id"] for a in answers) == list(range(1, written[0] + 1))
    assert all(a["result"]["tools"] == answers[0]["result"]["tools"] for a in answers)
    server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
    assert server.read() == {"jsonrpc": "2.0", "id": "last", "result": {}}  # and nothing more before it
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr, stderr


INVALID_IDS = [b"null", b"true", b"false", b"6.5", b"1e3", b"[1]", b"[]", b'{"n": 1}']


def test_a_request_whose_id_is_not_a_string_or_an_integer_gets_invalid_request_with_id_null(tmp_path):
    """JSON-RPC 2.0: a request with an id of another kind is an invalid request, answered with id
    null; the SDK took it for a notification, and answered nothing. Each line gets one answer (the
    ping after it comes next), a notification none, and a valid id is answered as before."""
    server = RawServer(tmp_path, "hunter", "--run", "ids")
    server.initialize()
    for method in ("tools/list", "tools/call", "ping", "notifications/initialized"):
        for raw in INVALID_IDS:
            server.send(b'{"jsonrpc": "2.0", "id": %s, "method": "%s", "params": {}}' % (raw, method.encode()))
            server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
            answer = server.read(timeout=30)
            assert answer == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": answer["error"]["message"]}}, (raw, answer)
            assert answer["error"]["message"].startswith("the request cannot be taken: the id is "), answer
            assert server.read(timeout=30)["id"] == "after", raw
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no id: a notification, never answered
    for request_id in (7, -7, "7", "", 10**30):
        server.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert server.read(timeout=30) == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr, stderr


def test_an_unknown_prompt_is_invalid_params_naming_it_without_a_traceback(tmp_path):
    server = RawServer(tmp_path, "hunter", "--run", "prompt")
    server.initialize()
    for n, name in enumerate(["hunter", "hunter-symplectic-euler ", "x" * 10_000]):
        server.send({"jsonrpc": "2.0", "id": n + 1, "method": "prompts/get", "params": {"name": name}})
        error = server.answer(n + 1)["error"]
        assert error["code"] == -32602 and error["message"].startswith(f"no prompt named {recording.short(name)}"), error
        assert error["message"].endswith("; the prompt is hunter-symplectic-euler") and len(error["message"]) < 200
    server.send({"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "hunter-symplectic-euler"}})
    assert server.answer(9)["result"]["messages"][0]["content"]["text"]
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr and len(stderr.splitlines()) == 2, stderr


def test_a_refused_start_reads_20_mb_of_input_in_linear_time_and_answers_the_request_after_it(tmp_path):
    """The refused start answers the client's first request, reading what comes before it line by
    line: 20 MB in one line (over the longest line a server reads) took 6.4 s, each read copying
    all the line before it, and 60 MB went past its 10 s wait, unanswered. Now the line too long is
    one error, and the request after it gets the reason, at once."""
    taken = live(tmp_path, "hunter", "taken")
    taken.parent.mkdir(parents=True)
    taken.write_text("{}")
    server = RawServer(tmp_path, "hunter", "--run", "taken")
    assert server.process.stderr.readline().startswith(b"replaylab: results/live/hunter/taken.json: a recording")
    started = time.monotonic()
    server.process.stdin.write(b"x" * (20 << 20) + b"\n")
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    too_long, refused = server.read(timeout=30), server.read(timeout=30)
    code, _ = server.wait()
    assert time.monotonic() - started < 3 and code == 2
    assert too_long == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"the line is longer than {recording.MAX_BYTES + 65536} bytes"}}
    assert refused["id"] == 1 and refused["error"]["code"] == -32000
    assert refused["error"]["message"].startswith("results/live/hunter/taken.json: a recording is already there")
