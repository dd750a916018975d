"""A second, independent MCP client: the MCP Inspector's CLI mode (npm, pinned in clients/inspector)
lists the tools of `replaylab mcp` and makes one call, through npx as its documentation says.

`make inspector` installs it from the committed lock file. Without it the test skips, saying so;
in CI (CI=true) it fails instead, because CI installs it.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, processes
from helpers.mcp import readme_server
from replaylab.agents import recording
from replaylab.lessons import registry
from replaylab.physics.drift import max_energy_drift

pytestmark = pytest.mark.slow  # node, npx and a server over stdio

INSPECTOR = ROOT / "clients" / "inspector"
INSTALLED = INSPECTOR / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"


@pytest.fixture(scope="module")
def npx():
    found = shutil.which("npx")
    if found and INSTALLED.is_file():
        return found
    reason = "the MCP Inspector is not installed: run `make inspector` (npm ci in clients/inspector)"
    if not found:
        reason = "npx is not on the PATH (node and npm are needed for the MCP Inspector)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI installs it and must run this test")
    pytest.skip(reason)


def inspector(npx, cwd, *args):
    """`npx @modelcontextprotocol/inspector --cli` against `replaylab mcp hunter --run inspected`."""
    command = [npx, "--no", "@modelcontextprotocol/inspector", "--", "--cli", "--cwd", str(cwd),
               sys.executable, "-m", "replaylab", "mcp", "hunter", "--run", "inspected", *args]
    out = processes.run(command, 180, cwd=INSPECTOR)  # npx, node and the server end with the test
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(out.stdout)


def test_the_inspector_lists_the_tools_and_makes_one_call(npx, tmp_path):
    listed = inspector(npx, tmp_path, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    specs = {spec["name"]: spec for spec in registry.lesson("hunter").variant("symplectic-euler").allowlist().specs()}
    assert set(tools) == set(specs) == {"oscillator_energy_drift", "answer"}  # the answer tool ends a run; there is no finish
    for name, spec in specs.items():
        assert tools[name]["inputSchema"] == spec["parameters"]
    assert not (tmp_path / "results" / "live" / "hunter" / "inspected.json").exists()  # listing is no run

    called = inspector(npx, tmp_path, "--method", "tools/call", "--tool-name", "oscillator_energy_drift",
                       "--tool-arg", "method=symplectic Euler", "steps_per_period=64", "periods=20")
    expected = max_energy_drift("symplectic Euler", 64, 20)
    assert called["isError"] is False
    assert called["structuredContent"] == {"result": {"max_energy_drift": expected}, "budget_left": 7, "calls_left": 47}

    path = tmp_path / "results" / "live" / "hunter" / "inspected.json"
    run = recording.load(path)
    assert run.provenance["client"]["name"] == "inspector-cli"
    assert [r.content for s in run.transcript.steps for r in s.results] == [{"max_energy_drift": expected}]
    assert not run.transcript.finished  # the Inspector disconnects without an answer
    out = subprocess.run([sys.executable, "-m", "replaylab", "replay", str(path)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr


def test_the_readme_snippet_in_the_inspectors_configuration_starts_the_server(npx, tmp_path):
    clone, config = readme_server(tmp_path)
    (name,) = config["mcpServers"]
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    command = [npx, "--no", "@modelcontextprotocol/inspector", "--", "--cli", "--config", str(tmp_path / "mcp.json"),
               "--server", name, "--method", "tools/call", "--tool-name", "oscillator_energy_drift",
               "--tool-arg", "method=symplectic Euler", "steps_per_period=64", "periods=20"]
    out = processes.run(command, 180, cwd=INSPECTOR)  # npx, node and the server end with the test
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert json.loads(out.stdout)["structuredContent"]["result"] == {"max_energy_drift": max_energy_drift("symplectic Euler", 64, 20)}
    (path,) = (clone / "mcp-runs" / "hunter").glob("mcp-*.json")
    assert recording.load(path).provenance["client"]["name"] == "inspector-cli"
