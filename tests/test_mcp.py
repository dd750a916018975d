"""`replaylab mcp` driven by the official MCP SDK's stdio client, as a coding agent or a desktop app
would drive it: real server processes, the allowlist's schemas and refusal texts, the recording
written after every call, and the workflow judging it."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import cli
from helpers.mcp import readme_server
from helpers.workflow import copy_project, snakemake
from replaylab.agents import recording
from replaylab.lessons import registry
from replaylab.physics.drift import max_energy_drift
from replaylab.physics.projectile import range_without_drag

CLIENT = types.Implementation(name="test-client", version="9.9")
SE = "symplectic Euler"


def parameters(cwd, *args):
    return StdioServerParameters(command=sys.executable, args=["-m", "replaylab", "mcp", *args], cwd=str(cwd))


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
    return cli("replay", path, cwd=cwd)


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
    assert set(listed) == set(specs) | {"finish"}
    for name, spec in specs.items():
        assert listed[name].input_schema == spec["parameters"]  # minimum/maximum, required, no extra properties
        assert listed[name].description == spec["description"]
    check = listed["reproduce_check"].input_schema["properties"]["check"]
    assert (check["type"], check["minimum"], check["maximum"]) == ("integer", 1, 5)
    assert "1 clock, 2 purity, 3 limits, 4 convergence-order, 5 bounded-energy" in check["description"]
    assert listed["finish"].input_schema == {
        "type": "object", "properties": {"answer": {"type": "string", "description": "your answer, as you would write it to the user"}},
        "required": ["answer"], "additionalProperties": False,
    }
    assert v.system in init.instructions and v.task in init.instructions
    assert [p.name for p in prompts.prompts] == ["review-evidence"]
    (message,) = prompt.messages
    assert v.system in message.content.text and v.task in message.content.text
    # nothing else is exposed
    assert init.capabilities.resources is None and init.capabilities.tools is not None
    assert not live(tmp_path, "review", "look").exists()  # no call, no run


# ---------------------------------------------------------------------------------------------
# Calls: the recomputed number, the allowlist's refusals, the budget, finish


HOSTILE = [
    ("os.system", {"command": "touch PWNED"}, "'os.system' is not an allowed tool"),
    ("oscillator_energy_drift ", drift(64, 20), "'oscillator_energy_drift ' is not an allowed tool"),
    ("oscillator_energy_drift", drift(2, 20), "steps_per_period must be between 4 and 200, got 2"),
    ("oscillator_energy_drift", drift(10**400, 20), f"steps_per_period must be between 4 and 200, got {10**400}"),
    ("oscillator_energy_drift", drift("64", 20), "steps_per_period must be a number, got str"),
    ("oscillator_energy_drift", drift(32.5, 20), "steps_per_period must be an integer, got 32.5"),
    ("oscillator_energy_drift", {**drift(64, 20), "code": "__import__('os').system('touch PWNED')"}, "unknown arguments: code"),
    ("oscillator_energy_drift", {"method": SE, "periods": 20}, "missing arguments: steps_per_period"),
    ("oscillator_energy_drift", drift(64, 20, "os.system"),
     "method must be one of explicit Euler, symplectic Euler, velocity Verlet, Runge-Kutta 4, got 'os.system'"),
]


def test_valid_and_hostile_calls_budget_and_finish(tmp_path):
    async def body(session, init):
        out = {"valid": await session.call_tool("oscillator_energy_drift", drift(64, 20))}
        out["hostile"] = [await session.call_tool(name, arguments) for name, arguments, _ in HOSTILE]
        out["float"] = await session.call_tool("oscillator_energy_drift", drift(16.0, 50))
        out["more"] = [await session.call_tool("oscillator_energy_drift", drift(100 + n, 20)) for n in range(6)]
        out["spent"] = await session.call_tool("oscillator_energy_drift", drift(32, 20))
        out["bad finish"] = await session.call_tool("finish", {"answer": 42})
        out["finish"] = await session.call_tool("finish", {"answer": "64 steps per period over 20 periods breaks the claim."})
        out["after"] = await session.call_tool("oscillator_energy_drift", drift(64, 20))
        return out

    out = drive(tmp_path, ["hunter", "--run", "hunt"], body)
    valid = out["valid"]
    assert not valid.is_error
    assert valid.structured_content == {"result": {"max_energy_drift": max_energy_drift(SE, 64, 20)}, "budget_left": 7, "calls_left": 43}
    assert texts(valid) == [json.dumps({"max_energy_drift": max_energy_drift(SE, 64, 20)}),
                            "Budget left: 7 of 8 experiments. Calls left before finish: 43."]
    for result, (_, _, reason) in zip(out["hostile"], HOSTILE):
        assert result.is_error and texts(result)[0] == reason and result.structured_content["budget_left"] == 7
    assert not (tmp_path / "PWNED").exists()
    assert out["float"].structured_content["result"] == {"max_energy_drift": max_energy_drift(SE, 16, 50)}
    assert [r.structured_content["budget_left"] for r in out["more"]] == [5, 4, 3, 2, 1, 0]
    assert out["spent"].is_error and texts(out["spent"])[0] == "the budget of 8 experiments is spent"
    assert out["bad finish"].is_error and texts(out["bad finish"])[0] == "finish takes one argument, answer (text)"
    assert not out["finish"].is_error and out["finish"].structured_content["finished"] is True
    assert out["after"].is_error and texts(out["after"])[0].startswith("the run has ended (finished")

    path = live(tmp_path, "hunter", "hunt")
    run = recording.load(path)
    assert run.transcript.finished
    calls = [c for step in run.transcript.steps for c in step.message.tool_calls]
    assert len(calls) == 1 + len(HOSTILE) + 1 + 6 + 1  # every call but the bad finish and the one after the end
    assert [len(step.message.tool_calls) for step in run.transcript.steps] == [4, 4, 4, 4, 2, 0]
    assert calls[5].arguments == drift("64", 20)  # as the client sent it
    assert run.transcript.steps[-1].message.text == "64 steps per period over 20 periods breaks the claim."
    p = run.provenance
    assert (p["kind"], p["model"], p["client"]) == ("mcp", "unknown (not declared)", {"name": "test-client", "version": "9.9"})
    assert "model_declared" not in p and run.label == "Recorded run"
    out = replay(tmp_path, path)
    assert out.returncode == 0, out.stderr
    assert "replayed 18 calls (8 ran, 10 refused)" in out.stdout
    assert out.stdout.strip().endswith("finished (the agent called finish with its answer)")


def test_a_client_that_disconnects_without_finish_is_recorded_as_not_finished(tmp_path):
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
    assert out.stdout.strip().endswith("not finished: the MCP client closed the session, or was stopped, before it called finish")


def test_the_message_limit_ends_the_run_with_the_call_that_reaches_it(tmp_path):
    async def body(session, init):
        answers = [await session.call_tool("range_without_drag", {"speed": 25, "angle": 1 + n}) for n in range(46)]
        finish = await session.call_tool("finish", {"answer": "too late"})
        return answers, finish

    answers, finish = drive(tmp_path, ["projectile", "--run", "limit"], body)
    assert [a.structured_content["calls_left"] for a in answers[:44]] == list(range(43, -1, -1))
    assert texts(answers[43])[1] == "No budget of experiments. No call is left: call finish now; another call ends the run, not finished."
    assert not answers[44].is_error
    assert answers[44].structured_content["result"] == {"range_m": range_without_drag(25, 45)}
    assert texts(answers[44])[1] == (
        "The run has ended: the message limit is reached (12 messages): the run has ended, not finished. Nothing more is recorded."
    )
    assert answers[45].is_error and finish.is_error
    run = recording.load(live(tmp_path, "projectile", "limit"))
    assert [len(s.results) for s in run.transcript.steps] == [4] * 11 + [1] and not run.transcript.finished
    out = replay(tmp_path, live(tmp_path, "projectile", "limit"))
    assert out.returncode == 0 and out.stdout.strip().endswith("stopped at the message limit (not finished)")


# ---------------------------------------------------------------------------------------------
# Killed midway: what is on disk is valid and replays


CLIENT_SCRIPT = textwrap.dedent("""
    import sys, anyio, mcp_types as types
    from mcp import ClientSession
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


def gone(pid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return True
        time.sleep(0.1)
    return False


def test_a_client_killed_midway_leaves_a_valid_recording_that_replays(tmp_path):
    client = subprocess.Popen([sys.executable, "-c", CLIENT_SCRIPT], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().strip() == "three calls made"
        (server,) = children(client.pid)
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=30)
        assert gone(server, 30), "the server outlived its client"  # its stdin closed: it ended the run and exited
    finally:
        if client.poll() is None:
            client.kill()
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
def test_the_workflow_replays_and_judges_mcp_runs(tmp_path):
    copy = copy_project(tmp_path / "project")

    async def right(session, init):
        await session.call_tool("oscillator_energy_drift", drift(64, 20))
        await session.call_tool("finish", {"answer": "64/20 drifts by 5.2 %: a counterexample."})

    async def left(session, init):
        await session.call_tool("oscillator_energy_drift", drift(200, 20))

    drive(copy, ["hunter", "--out", "mcp-runs/hunter/m-right.json", "--model", "model-m"], right)
    drive(copy, ["hunter", "--out", "mcp-runs/hunter/m-left.json", "--model", "model-m"], left)
    config = copy / "config" / "config.yaml"
    config.write_text(config.read_text().replace("run_folders: []", "run_folders: [mcp-runs]"))
    snakemake(copy, "--cores", "1", "hunter")
    results = json.loads((copy / "results" / "hunter" / "results.json").read_text())
    assert results["verdicts"]["m-right"]["verdict"]["outcome"] == "counterexample"
    assert results["verdicts"]["m-left"]["verdict"]["outcome"] == "inconclusive"
    (row,) = [r for r in results["scorecard"] if r["model"] == "model-m (declared, not verified)"]
    assert (row["runs"], row["right"]) == (2, 1)
    page = (copy / "results" / "hunter" / "index.md").read_text()
    assert "Through the MCP client test-client 9.9 (its name and version as it reported them)" in page
    assert "Messages produced by: model-m (declared, not verified)" in page
    assert "not finished: the MCP client closed the session, or was stopped, before it called finish" in page
    assert "finished (the agent called finish with its answer)" in page


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
                await session.call_tool("finish", {"answer": "64/20 breaks the claim."})
                return names, result

    names, result = anyio.run(main)
    assert names == ["oscillator_energy_drift", "finish"] and not result.is_error
    (path,) = (clone / "mcp-runs" / "hunter").glob("mcp-*.json")
    run = recording.load(path)
    assert run.transcript.finished and run.model == "the-model-you-chose (declared, not verified)"
    assert not list(elsewhere.iterdir())  # nothing written where the client started it


def test_raw_protocol_lines_that_no_recording_could_hold_never_break_the_run(tmp_path):
    """Below the SDK's client: JSON-RPC lines written by hand, with a lone surrogate (which JSON's
    \\ud800 escape can carry), a control character in the client's name, arguments nested too deep
    and bytes that are not UTF-8. None reaches the recording; the next call is answered and recorded."""
    server = subprocess.Popen([sys.executable, "-m", "replaylab", "mcp", "hunter", "--run", "raw"], cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(line):
        server.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        server.stdin.flush()

    def answer(request_id):
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == request_id:
                return message["result"]

    def call(request_id, name, arguments_json):
        return ('{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": %s, "arguments": %s}}'
                % (request_id, name, arguments_json))

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw\u001b[31mclient", "version": "0"}}}))
        answer(1)
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        send(call(2, '"oscillator_energy_drift"', '{"method": "\\ud800", "steps_per_period": 64, "periods": 20}'))
        send(call(3, '"\\udfff"', "{}"))
        send(b"\xff\xfe not UTF-8")
        send(call(4, '"oscillator_energy_drift"', '{"periods": ' + "[" * 30 + "]" * 30 + "}"))
        send(call(5, '"oscillator_energy_drift"', json.dumps(drift(64, 20))))
        deep, valid = answer(4), answer(5)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    assert deep["isError"] and deep["content"][0]["text"].startswith("the call cannot be recorded: $.arguments.periods[0]")
    assert valid["structuredContent"]["result"] == {"max_energy_drift": max_energy_drift(SE, 64, 20)}
    run = recording.load(live(tmp_path, "hunter", "raw"))
    assert [len(s.results) for s in run.transcript.steps] == [1]  # only the valid call, whatever else the SDK did
    assert run.provenance["client"] == {"name": "raw?[31mclient", "version": "0"}
    assert replay(tmp_path, live(tmp_path, "hunter", "raw")).returncode == 0
