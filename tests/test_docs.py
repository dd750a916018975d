"""The README a newcomer reads in five minutes, and docs/ for the rest: every page linked, every
link found, and what they say of the answer tool checked against the code and real output."""

import csv
import json
import re
import sys

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import ROOT, environment, in_process
from helpers.workflow import prepared_copy, snakemake
from replaylab.agents import recording
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").iterdir())


def links(text):
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)


def test_the_readme_is_short_and_starts_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 200, len(lines)
    top = "\n".join(lines[:30])
    assert "\nmake        #" in top and "\nmake test   #" in top


def test_every_docs_page_is_linked_from_the_readme():
    linked = {link for link in links(README) if link.startswith("docs/")}
    assert PAGES and {f"docs/{page.name}" for page in PAGES} <= linked


def test_every_local_link_of_the_readme_and_the_docs_leads_to_a_file():
    for page in [ROOT / "README.md", ROOT / "config" / "README.md", *PAGES]:
        for link in links(page.read_text(encoding="utf-8")):
            if not link.startswith(("http://", "https://")):
                assert (page.parent / link).exists(), (page.name, link)


def test_no_page_describes_the_machinery_that_is_gone():
    for page in [ROOT / "README.md", ROOT / "config" / "README.md", *PAGES]:
        text = " ".join(page.read_text(encoding="utf-8").split())  # a phrase broken over two lines too
        for gone in ("force-use-threads", "worker process", "fork server", "runlock", "preloaded"):
            assert gone not in text, (page.name, gone)


# ---------------------------------------------------------------------------------------------
# What the docs say of the answer (issue 23), against the code and real output

SESSION_AND_MCP = (ROOT / "docs" / "session-and-mcp.md").read_text(encoding="utf-8")
RECORDING = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")


def fenced_blocks(text):
    """The text of each fenced code block of a Markdown page."""
    blocks, current = [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_no_page_names_the_finish_tool_that_answer_replaced():
    for page in [ROOT / "README.md", *PAGES]:
        assert "`finish`" not in page.read_text(encoding="utf-8"), page.name


def test_the_readme_lesson_table_names_every_lesson_and_every_field_of_its_answer():
    rows = {line.split("|")[1].strip().strip("`"): line for line in README.splitlines() if line.startswith("| `")}
    assert set(registry.names()) <= set(rows), sorted(rows)
    for name in registry.names():
        fields = set()
        for variant in registry.lesson(name).variants.values():
            fields |= set(variant.answer.spec()["parameters"]["properties"]) - {"explanation"}
            assert variant.answer.name == ANSWER
        missing = [f for f in sorted(fields) if f"`{f}`" not in rows[name]]
        assert fields and not missing, (name, missing)


def test_the_session_example_is_what_a_session_answers(tmp_path):
    """The agent's lines of docs/session-and-mcp.md, piped into a session, get exactly the
    lines the page shows (the first line, cut short there, aside), and the replay ends with the
    verdict the page shows."""
    (block,) = [b for b in fenced_blocks(SESSION_AND_MCP) if b.startswith("< {\"lesson\"")]
    lines = block.splitlines()
    sent = [line[2:] for line in lines if line.startswith("> ")]
    shown = [line[2:] for line in lines[1:] if line.startswith("< ")]
    out = in_process("session", "projectile", "--run", "typed", "--model", "my-model", stdin="\n".join(sent) + "\n", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    header, *answers = out.stdout.splitlines()
    assert answers == shown
    assert json.loads(header)["limits"] == json.loads(lines[0][2:].replace('"tools": [...]', '"tools": []'))["limits"]
    (verdict,) = [b for b in fenced_blocks(SESSION_AND_MCP) if b.startswith("finished with an answer") and "40 to 41" in b]
    replayed = in_process("replay", "results/live/projectile/typed.json", cwd=tmp_path)
    assert replayed.returncode == 0 and replayed.stdout.endswith(verdict), replayed.stdout


def test_the_recording_page_lists_every_field_of_a_recording():
    table = [line for line in RECORDING.splitlines() if line.startswith("| `")]
    listed = {name for line in table for name in re.findall(r"`(\w+)`", line.split("|")[1])}
    assert listed == set(recording.schema()["properties"])


def test_the_recording_page_shows_the_promote_verdict_of_a_scripted_hunt(tmp_path):
    (block,) = [b for b in fenced_blocks(RECORDING) if "$ replaylab promote" in b]
    (shown,) = [line.strip() for line in block.splitlines() if line.strip().startswith("verdict: ")]
    recorded = in_process("record", "hunter", "--variant", "velocity-verlet", "--run", "mine", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout.splitlines()[-3:] == [line for line in block.splitlines()[2:5]]
    replayed = in_process("replay", "results/live/hunter/mine.json", cwd=tmp_path)
    assert replayed.returncode == 0 and replayed.stdout.splitlines()[-1] == shown.replace("verdict: ", "decided by the build: ")


@pytest.mark.slow  # a server over stdio, driven by the official client
def test_the_mcp_texts_of_the_page_are_what_a_real_client_reads(tmp_path):
    """docs/session-and-mcp.md quotes what an MCP client reads: a result, the calls left, the
    refusals, the end; here the official client makes those calls, and the replay of its run ends
    with the verdict the page shows."""
    experiment = {"method": "symplectic Euler", "steps_per_period": 64, "periods": 20}
    calls = [("oscillator_energy_drift", experiment), ("oscillator_energy_drift", {**experiment, "steps_per_period": 2}),
             ("answer", {"outcome": "counterexample", "method": "symplectic Euler"}),
             ("answer", {"outcome": "counterexample", **experiment}), ("oscillator_energy_drift", experiment)]

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "replaylab", "mcp", "hunter", "--runs", "mcp-runs"],
                                       cwd=str(tmp_path), env=environment())
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = [tool.name for tool in (await session.list_tools()).tools]
                return names, [[c.text for c in (await session.call_tool(name, arguments)).content] for name, arguments in calls]

    names, texts = anyio.run(main)
    assert names == ["oscillator_energy_drift", "answer"]
    (path,) = (tmp_path / "mcp-runs" / "hunter").glob("mcp-*.json")
    shown = [texts[0][0], texts[0][1].removeprefix("Budget left: 7 of 8 experiments. "), texts[1][0], texts[2][0],
             texts[3][0].split(" Recorded as ")[0], texts[4][0].split(" (")[0]]
    assert shown == ['{"max_energy_drift": 0.05156720861978181}', "Calls left, the answer included: 47.",
                     "steps_per_period must be between 4 and 200, got 2",
                     "a counterexample names its experiment: missing steps_per_period, periods",
                     "Accepted: counterexample symplectic Euler, 64 steps per period, 20 periods; the run has ended.", "the run has ended"]
    page = " ".join(SESSION_AND_MCP.split())  # the page's lines joined, as a reader reads them
    for text in [*shown, texts[0][1]]:
        assert f"`{text}" in page, text
    (verdict,) = [b for b in fenced_blocks(SESSION_AND_MCP) if b.startswith("finished with an answer") and "counterexample" in b]
    replayed = in_process("replay", path, cwd=tmp_path)
    assert replayed.returncode == 0 and replayed.stdout.endswith(verdict), replayed.stdout


@pytest.mark.workflow
@pytest.mark.slow  # a Snakemake build of its own
def test_the_workflow_page_shows_the_scorecard_of_100_generated_hunts(prepared, tmp_path):
    """docs/workflow.md's scorecard of `replaylab generate hunter --count 100` is the build's own,
    its first columns, row by row."""
    text = (ROOT / "docs" / "workflow.md").read_text(encoding="utf-8")
    (block,) = [b for b in fenced_blocks(text) if b.startswith("model,task,runs,answered,right")]
    header, *rows = [line.removesuffix(",...") for line in block.splitlines()]
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=2000)
    out = in_process("generate", "hunter", "--count", "100", "--out", "generated", cwd=copy)
    assert out.returncode == 0, out.stderr
    snakemake(copy, "hunter", "--cores", "2", "--config", "run_folders=[generated]")
    built = (copy / "results" / "hunter" / "scorecard.csv").read_text().splitlines()
    columns = len(header.split(","))
    cut = [",".join(f'"{c}"' if "," in c else c for c in cells[:columns]) for cells in csv.reader(built)]
    assert cut[0] == header
    assert rows == [row for row in cut[1:] if "baseline" in row]  # the reference hunts' rows are left out there
