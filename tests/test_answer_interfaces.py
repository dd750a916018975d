"""The typed answer (issue 23) through the three live interfaces, with the runs of the issue:
`replaylab session` behind a pipe, `replaylab mcp` through the official MCP client, and the OpenAI
client (`replaylab record --provider openai`) against a stand-in server on 127.0.0.1 with a fake
key. Every run is replayed by `replaylab replay` and judged by one real Snakemake build of a copy of
the project (the runs in results/live), which also runs a campaign of the scripted programs; each
run must be scored as its answer deserves, never as its experiments happen to cover the truth."""

import json
import subprocess
import sys

import anyio
import pandas as pd
import pytest
import yaml
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import mcp_types as types
from helpers import environment, in_process, processes, read_json_line
from helpers.model_server import FakeProvider, completion
from helpers.workflow import prepared_copy, snakemake
from replaylab.agents import recording
from replaylab.agents.live import ANSWERED, NO_ANSWER
from replaylab.lessons import registry

# sessions over pipes, MCP over stdio, a Snakemake build of its own (one worker makes it: tests/conftest.py)
pytestmark = [pytest.mark.workflow, pytest.mark.slow]

KEY = "sk-test-ANSWERKEY0123456789abcdefXYZ"  # fake: the stand-in server takes any key
TIMEOUT = 60  # seconds to wait for one line of a session; a hang fails the test instead
LIVE = "results/live"
CAMPAIGN = "answers"


# ---------------------------------------------------------------------------------------------
# The runs of the issue: each a lesson, a variant, its messages, and what it deserves


def rng(angle, dt=0.001):
    return ("range_with_drag", {"speed": 25, "angle": angle, "dt": dt})


def period(amplitude, dt=0.01):
    return ("pendulum_period", {"amplitude_deg": amplitude, "dt": dt})


def drift(steps, periods, method="velocity Verlet"):
    return ("oscillator_energy_drift", {"method": method, "steps_per_period": steps, "periods": periods})


def answer(**fields):
    return ("answer", fields)


# name: (lesson, variant, messages (a list of calls, or a text: a message without a tool call),
#        (answered, right, supported), the answer as `replaylab replay` words it)
RUNS = {
    "pendulum-fine": ("pendulum", "default", [[period(22), period(22.8), period(22.9), period(23)], [answer(low=22, high=23)]],
                      (True, True, True), "22 to 23 degrees"),
    "projectile-fine": ("projectile", "default", [[rng(39), rng(40), rng(40.75), rng(41)], [rng(42), answer(low=40, high=41)]],
                        (True, True, True), "40 to 41 degrees"),
    "projectile-covered": ("projectile", "default",
                           [[rng(40), rng(41), rng(45)], [answer(low=45, high=46, explanation="The best angle is 45 degrees.")]],
                           (True, False, False), "45 to 46 degrees"),
    "hunter-false": ("hunter", "velocity-verlet",
                     [[drift(16, 50)], [answer(outcome="counterexample", method="velocity Verlet", steps_per_period=16, periods=50)]],
                     (True, False, False), "counterexample velocity Verlet, 16 steps per period, 50 periods"),
    "hunter-none": ("hunter", "velocity-verlet", [[drift(16, 1), drift(16, 3)], [answer(outcome="none found")]],
                    (True, True, True), "none found"),
    "projectile-silent": ("projectile", "default", [[rng(40), rng(41)], "The best angle is between 40 and 41 degrees."],
                          (False, False, None), None),
    # data that fall across the bracket: 41 beats 42 but nothing below 41 was measured, so the top may lie below 41
    "projectile-across": ("projectile", "default", [[rng(41), rng(42)], [answer(low=41, high=42)]],
                          (True, False, False), "41 to 42 degrees"),
    # more experiments around the same top keep the support of the bracket they locate
    "projectile-more": ("projectile", "default", [[rng(38), rng(39), rng(40), rng(41)], [rng(42), rng(43), rng(40.5), rng(40.25)],
                                                  [answer(low=40, high=41)]], (True, True, True), "40 to 41 degrees"),
}
REFUSED = answer(low=40, high=42)  # a form the task rules out: not two adjacent whole degrees
REFUSAL = "high must be low + 1 (two adjacent whole degrees), got low 40 and high 42"

SESSION_RUNS = list(RUNS)
MCP_RUNS = ["projectile-covered", "hunter-none", "pendulum-fine", "projectile-across"]  # MCP has no message without a call
OPENAI_RUNS = ["projectile-fine", "hunter-false"]
LIMITED = "o-limited"  # the OpenAI run stopped by --max-tokens-per-run
LIMIT = 200  # tokens: more than one completion reports (120), less than two (240)


def path_of(copy, lesson, run):
    return copy / LIVE / lesson / f"{run}.json"


def answer_calls(run):
    """(call, result) of every call named answer in a recording, in order."""
    return [(c, r) for step in run.transcript.steps for c, r in zip(step.message.tool_calls, step.results) if c.name == "answer"]


# ---------------------------------------------------------------------------------------------
# `replaylab session`: a real process behind a pipe, one line written, its answer read


class Session:
    """One `replaylab session` process: send a line, read the answer (never blocking forever)."""

    def __init__(self, cwd, *args):
        self.process = processes.start([sys.executable, "-m", "replaylab", "session", *args], cwd=cwd,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=environment())
        self.buffer = b""

    def read(self):
        """The next JSON line on stdout, or None once stdout is closed."""
        value, self.buffer = read_json_line(self.process, self.buffer, TIMEOUT)
        return value

    def ask(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return self.read()

    def wait(self):
        code = self.process.wait(timeout=TIMEOUT)
        return code, self.process.stderr.read().decode()


def session_message(message, first_id):
    if isinstance(message, str):
        return {"text": message}
    return {"tool_calls": [{"id": str(first_id + i), "name": n, "arguments": a} for i, (n, a) in enumerate(message)]}


def type_session(copy, name):
    """Every message of the run typed into a session, one at a time; the refused answer first
    for projectile-fine. {"header", "replies", "after", "code", "stderr"}."""
    lesson, variant, messages, _, _ = RUNS[name]
    if name == "projectile-fine":
        messages = [[REFUSED], *messages]
    s = Session(copy, lesson, "--variant", variant, "--run", f"s-{name}")
    header, replies, ids = s.read(), [], 1
    for message in messages:
        replies.append(s.ask(session_message(message, ids)))
        ids += 0 if isinstance(message, str) else len(message)
    after = s.read()  # None: the session closed its output after the end
    code, stderr = s.wait()
    return {"header": header, "replies": replies, "after": after, "code": code, "stderr": stderr}


# ---------------------------------------------------------------------------------------------
# `replaylab mcp` through the official MCP client


CLIENT = types.Implementation(name="answer-test-client", version="1.0")


def drive(cwd, args, body):
    """Start `replaylab mcp ARGS` in `cwd`, initialize as CLIENT, run `body(session)`, disconnect."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "replaylab", "mcp", *args], cwd=str(cwd), env=environment())

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def call_mcp(copy, name):
    """The run's calls, one MCP call each (the refused answer first for projectile-covered), then
    one more experiment after the answer. {"tools", "results", "after"}."""
    lesson, variant, messages, _, _ = RUNS[name]
    calls = [c for message in messages for c in message]
    if name == "projectile-covered":
        calls = [REFUSED, *calls]
    later = calls[0] if calls[0] != REFUSED else calls[1]

    async def body(session):
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(n, a) for n, a in calls]
        return {"tools": tools, "results": results, "after": await session.call_tool(*later)}

    return {**drive(copy, [lesson, "--variant", variant, "--run", f"m-{name}"], body), "calls": calls}


def text_of(result):
    return [c.text for c in result.content]


# ---------------------------------------------------------------------------------------------
# The OpenAI client against a stand-in server


def scripted(messages):
    """The stand-in server's answers: one completion per message (120 tokens each), then one more
    that no run which ended may ever ask for."""
    answers, ids = [], 1
    for message in messages:
        if isinstance(message, str):
            answers.append((200, completion(message), {}, 0))
            continue
        calls = [(f"call_{ids + i}", n, json.dumps(a)) for i, (n, a) in enumerate(message)]
        ids += len(calls)
        answers.append((200, completion("", calls), {}, 0))
    return answers + [(200, completion("a message after the end"), {}, 0)]


def record_openai(copy, run, lesson, variant, messages, *options):
    with FakeProvider(scripted(messages)) as provider:
        out = in_process("record", lesson, "--provider", "openai", "--model", "fake-model", "--variant", variant, "--run", run,
                  "--max-retries", "0", *options, cwd=copy, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=provider.base_url))
        return {"out": out, "requests": provider.requests, "left": len(provider.answers)}


# ---------------------------------------------------------------------------------------------
# The runs, recorded once into one copy of the project, and one Snakemake build of them all


def campaign_config(copy):
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(name=CAMPAIGN, provider="scripted", models=["scripted-careful", "scripted-careless"],
                              lessons=["projectile"], runs=2)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


@pytest.fixture(scope="module")
def copy(prepared, tmp_path_factory):
    """A copy of the project (of `prepared`, tests/conftest.py: its lessons' jobs that read no
    recording are up to date) with the campaign of CAMPAIGN."""
    copied = prepared_copy(prepared, tmp_path_factory.mktemp("answers") / "project")
    campaign_config(copied)
    return copied


@pytest.fixture(scope="module")
def sessions(copy):
    return {name: type_session(copy, name) for name in SESSION_RUNS}


@pytest.fixture(scope="module")
def mcp_runs(copy):
    return {name: call_mcp(copy, name) for name in MCP_RUNS}


@pytest.fixture(scope="module")
def openai_runs(copy):
    found = {name: record_openai(copy, f"o-{name}", *RUNS[name][:3]) for name in OPENAI_RUNS}
    found["limited"] = record_openai(copy, LIMITED, "projectile", "default", [[rng(40), rng(41)], [answer(low=40, high=41)]],
                                     "--max-tokens-per-run", str(LIMIT))
    return found


@pytest.fixture(scope="module")
def built(copy, sessions, mcp_runs, openai_runs):
    """One real Snakemake run: the three lessons with results/live among the run folders, and the
    campaign; {lesson: its per-run table as written (text), indexed by run}."""
    snakemake(copy, "--cores", "2", "projectile", "pendulum", "hunter", "campaign", "--config", f"run_folders=[{LIVE}]")
    return {lesson: runs_csv(copy / "results" / lesson / "runs.csv.gz") for lesson in ("projectile", "pendulum", "hunter")}


def runs_csv(path):
    """The per-run table as its cells were written: text, '' for an empty cell."""
    return pd.read_csv(path, dtype=str, keep_default_na=False).set_index("run")


CELL = {True: "True", False: "False", None: ""}


def assert_scored(table, run, deserved):
    answered, right, supported = deserved
    row = table.loc[run]
    assert (row["answered"], row["right"], row["supported"]) == (CELL[answered], CELL[right], CELL[supported]), (run, dict(row))
    assert (row["wrong"] == "") == right, (run, row["wrong"])


def assert_replay_decides(copy, lesson, run, deserved, words):
    """`replaylab replay` of the recording: exit 0, and the build's decision names the answer as
    submitted, right or wrong, supported or not."""
    out = in_process("replay", path_of(copy, lesson, run), cwd=copy)
    assert out.returncode == 0, out.stderr
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("decided by the build: ")]
    answered, right, supported = deserved
    if not answered:
        assert line.startswith("decided by the build: no answer") and line.endswith(": not right"), line
        return line
    assert line.startswith(f"decided by the build: answer {words}: {'right (' if right else 'wrong, '}"), line
    assert ("; supported: " if supported else "; not supported: ") in line, line
    return line


# ---------------------------------------------------------------------------------------------
# session


def test_session_header_lists_the_answer_tool_with_its_schema(sessions):
    for name in ("projectile-fine", "hunter-none", "pendulum-fine"):
        header = sessions[name]["header"]
        lesson, variant = RUNS[name][:2]
        tools = {tool["name"]: tool for tool in header["tools"]}
        expected = {spec["name"]: spec for spec in registry.lesson(lesson).variant(variant).allowlist().specs()}
        assert tools == expected, name
        schema = tools["answer"]["parameters"]
        assert schema["additionalProperties"] is False and "explanation" not in schema["required"]
        assert schema["properties"]["explanation"]["type"] == "string"
        assert "finish" not in tools and '"answer"' in header["protocol"]
    projectile = {t["name"]: t for t in sessions["projectile-fine"]["header"]["tools"]}["answer"]["parameters"]
    assert projectile["required"] == ["low", "high"]
    assert [(projectile["properties"][k]["type"], projectile["properties"][k]["minimum"], projectile["properties"][k]["maximum"])
            for k in ("low", "high")] == [("integer", 1, 88), ("integer", 2, 89)]
    hunter = {t["name"]: t for t in sessions["hunter-none"]["header"]["tools"]}["answer"]["parameters"]
    assert hunter["required"] == ["outcome"] and hunter["properties"]["outcome"]["enum"] == ["counterexample", "none found"]


def test_session_a_refused_answer_gets_the_allowlists_reason_and_the_session_goes_on(sessions):
    first, *rest = sessions["projectile-fine"]["replies"]
    assert first["results"] == [{"call_id": "1", "ok": False, "content": {"error": REFUSAL}}]
    assert "end" not in first and first["messages_left"] == 11
    assert [r["ok"] for r in rest[0]["results"]] == [True] * 4 and "end" not in rest[0]
    assert rest[0]["results"][3]["content"]["range_m"] > 0


def test_session_an_accepted_answer_ends_the_session_with_end(copy, sessions):
    for name in ("projectile-fine", "projectile-covered", "hunter-false", "hunter-none", "pendulum-fine"):
        s = sessions[name]
        last = s["replies"][-1]
        echoed = {"accepted": f"{RUNS[name][4]}; the run has ended"}  # the answer in the agent's own terms
        assert last["results"][-1] == {"call_id": last["results"][-1]["call_id"], "ok": True, "content": echoed}, name
        assert last["end"] == {"finished": True, "reason": ANSWERED, "recording": f"{LIVE}/{RUNS[name][0]}/s-{name}.json"}, name
        assert all("end" not in reply for reply in s["replies"][:-1]), name
        assert s["after"] is None and s["code"] == 0, (name, s["stderr"])
        run = recording.load(path_of(copy, RUNS[name][0], f"s-{name}"))
        assert run.transcript.finished and answer_calls(run)[-1][1].ok
    rng_result = sessions["projectile-fine"]["replies"][2]["results"][0]
    assert rng_result["ok"] and rng_result["content"]["range_m"] > 0  # the experiment beside the answer ran


def test_session_a_message_without_tool_calls_ends_it_with_no_answer(copy, sessions):
    s = sessions["projectile-silent"]
    last = s["replies"][-1]
    assert last["results"] == [] and last["end"]["finished"] is True and last["end"]["reason"] == NO_ANSWER
    assert s["after"] is None and s["code"] == 0
    run = recording.load(path_of(copy, "projectile", "s-projectile-silent"))
    assert run.transcript.finished and answer_calls(run) == []


@pytest.mark.parametrize("name", SESSION_RUNS)
def test_session_runs_replay_and_are_decided_as_they_deserve(copy, sessions, name):
    lesson, _, _, deserved, words = RUNS[name]
    assert_replay_decides(copy, lesson, f"s-{name}", deserved, words)


@pytest.mark.parametrize("name", SESSION_RUNS)
def test_session_runs_are_scored_in_the_build_as_they_deserve(built, name):
    lesson, _, _, deserved, _ = RUNS[name]
    assert_scored(built[lesson], f"s-{name}", deserved)


def test_the_build_keeps_the_answers_fields_as_submitted(built):
    projectile, hunter = built["projectile"], built["hunter"]
    assert projectile.loc["s-projectile-covered", ["answer_low", "answer_high"]].tolist() == ["45", "46"]
    assert projectile.loc["s-projectile-silent", ["answer_low", "answer_high"]].tolist() == ["", ""]
    assert hunter.loc["s-hunter-none", ["answer_outcome", "answer_method"]].tolist() == ["none found", ""]
    assert hunter.loc["s-hunter-false", ["answer_outcome", "answer_method"]].tolist() == ["counterexample", "velocity Verlet"]
    # whole numbers as the agent submitted them, not turned into 16.0 by a column with empty cells
    assert hunter.loc["s-hunter-false", ["answer_steps_per_period", "answer_periods"]].tolist() == ["16", "50"]


# ---------------------------------------------------------------------------------------------
# MCP


def test_mcp_lists_exactly_the_allowlists_tools_answer_included_and_no_finish(mcp_runs):
    for name, found in mcp_runs.items():
        lesson, variant = RUNS[name][:2]
        specs = {spec["name"]: spec for spec in registry.lesson(lesson).variant(variant).allowlist().specs()}
        listed = {tool.name: tool for tool in found["tools"]}
        assert set(listed) == set(specs) and "answer" in listed and "finish" not in listed, name
        for tool_name, spec in specs.items():
            assert listed[tool_name].input_schema == spec["parameters"] and listed[tool_name].description == spec["description"]
    hunter = {tool.name: tool for tool in mcp_runs["hunter-none"]["tools"]}["answer"].input_schema
    assert hunter["properties"]["outcome"]["enum"] == ["counterexample", "none found"] and hunter["required"] == ["outcome"]


def test_mcp_a_refused_answer_returns_the_reason_as_an_error_and_the_run_goes_on(copy, mcp_runs):
    found = mcp_runs["projectile-covered"]
    refused, *rest = found["results"]
    assert refused.is_error and text_of(refused)[0] == REFUSAL and refused.structured_content["error"] == REFUSAL
    assert [r.is_error for r in rest] == [False] * len(rest)
    assert rest[0].structured_content["result"]["range_m"] > 0  # the next experiment ran
    run = recording.load(path_of(copy, "projectile", "m-projectile-covered"))
    (first, _), (last, result) = answer_calls(run)
    assert first.arguments == REFUSED[1] and result.ok and last.arguments["low"] == 45


def test_mcp_the_answer_ends_the_run_and_later_calls_get_the_run_has_ended_error(copy, mcp_runs):
    for name, found in mcp_runs.items():
        lesson = RUNS[name][0]
        accepted = found["results"][-1]
        assert not accepted.is_error and accepted.structured_content["finished"] is True, name
        assert accepted.structured_content["ended"] == ANSWERED
        echoed = f"{RUNS[name][4]}; the run has ended"  # the answer in the agent's own terms
        assert accepted.structured_content["accepted"] == echoed and text_of(accepted)[0].startswith(f"Accepted: {echoed}. "), name
        after = found["after"]
        assert after.is_error and text_of(after)[0] == f"the run has ended ({ANSWERED}); nothing more is recorded", name
        run = recording.load(path_of(copy, lesson, f"m-{name}"))
        recorded = [c for step in run.transcript.steps for c in step.message.tool_calls]
        assert run.transcript.finished and len(recorded) == len(found["calls"]), name  # the call after the end is not there
        assert recorded[-1].name == "answer"


@pytest.mark.parametrize("name", MCP_RUNS)
def test_mcp_runs_replay_and_are_judged_as_they_deserve(copy, built, mcp_runs, name):
    lesson, _, _, deserved, words = RUNS[name]
    assert_replay_decides(copy, lesson, f"m-{name}", deserved, words)
    assert_scored(built[lesson], f"m-{name}", deserved)


# ---------------------------------------------------------------------------------------------
# The OpenAI client


def test_openai_requests_offer_the_answer_function_with_its_schema(openai_runs):
    for name in OPENAI_RUNS:
        lesson, variant = RUNS[name][:2]
        (spec,) = [s for s in registry.lesson(lesson).variant(variant).allowlist().specs() if s["name"] == "answer"]
        for request in openai_runs[name]["requests"]:
            functions = {t["function"]["name"]: t for t in request["body"]["tools"]}
            assert functions["answer"]["type"] == "function", name
            assert functions["answer"]["function"]["parameters"] == spec["parameters"], name
            assert "finish" not in functions
    hunter = {t["function"]["name"]: t for t in openai_runs["hunter-false"]["requests"][0]["body"]["tools"]}
    assert hunter["answer"]["function"]["parameters"]["properties"]["steps_per_period"]["maximum"] == 200


def test_openai_the_answer_ends_the_recording_and_no_request_follows(copy, openai_runs):
    for name in OPENAI_RUNS:
        found = openai_runs[name]
        assert found["out"].returncode == 0, found["out"].stderr
        assert len(found["requests"]) == 2 and found["left"] == 1, name  # the scripted third answer was never asked for
        run = recording.load(path_of(copy, RUNS[name][0], f"o-{name}"))
        assert run.transcript.finished and len(run.transcript.steps) == 2 and answer_calls(run)[-1][1].ok
        # the last request was the one for the answering message: it carries the first message's results only
        assert [m["role"] for m in found["requests"][-1]["body"]["messages"]][-1] == "tool"
        assert len(found["requests"][-1]["body"]["messages"]) == 3 + len(RUNS[name][2][0])
        assert KEY not in found["out"].stdout + found["out"].stderr + path_of(copy, RUNS[name][0], f"o-{name}").read_text()


@pytest.mark.parametrize("name", OPENAI_RUNS)
def test_openai_runs_replay_and_are_judged_as_they_deserve(copy, built, openai_runs, name):
    lesson, _, _, deserved, words = RUNS[name]
    assert_replay_decides(copy, lesson, f"o-{name}", deserved, words)
    assert_scored(built[lesson], f"o-{name}", deserved)


def test_openai_a_token_limit_reached_by_the_last_message_voids_its_answer(copy, built, openai_runs):
    found = openai_runs["limited"]
    assert found["out"].returncode == 0, found["out"].stderr
    assert len(found["requests"]) == 2 and found["left"] == 1  # stopped after the message that reached the limit
    run = recording.load(path_of(copy, "projectile", LIMITED))
    assert run.transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": LIMIT, "used": 240}
    assert not run.transcript.finished and [c.name for c in run.transcript.steps[-1].message.tool_calls] == ["answer"]
    line = assert_replay_decides(copy, "projectile", LIMITED, (False, False, None), None)
    assert "max_tokens_per_run" in line
    assert_scored(built["projectile"], LIMITED, (False, False, None))
    assert built["projectile"].loc[LIMITED, ["answer_low", "answer_high"]].tolist() == ["", ""]


# ---------------------------------------------------------------------------------------------
# A campaign of the scripted programs: careful experiments, careless answers


def test_a_campaign_shows_the_careless_program_as_wrong_and_unsupported(copy, built):
    # careful experiments, a careless answer: its own data locate the maximum on the other side of its best angle
    folder = copy / "results" / "campaigns" / CAMPAIGN
    runs = runs_csv(folder / "projectile" / "runs.csv.gz")
    assert sorted(runs["model"].unique()) == ["scripted-careful", "scripted-careless"]
    for model, cells in {"scripted-careful": ("True", "True", "True"), "scripted-careless": ("True", "False", "False")}.items():
        rows = runs[runs["model"] == model]
        assert len(rows) == 2
        assert {tuple(r) for r in rows[["answered", "right", "supported"]].itertuples(index=False)} == {cells}, model
    card = pd.read_csv(folder / "scorecard.csv").set_index("model")
    assert card.loc["scripted-careless", ["runs", "answered", "right", "supported", "supported_wrong"]].tolist() == [2, 2, 0, 0, 0]
    assert card.loc["scripted-careful", ["runs", "answered", "right", "supported", "right_unsupported", "supported_wrong"]].tolist() == [
        2, 2, 2, 2, 0, 0]
    lesson_card = pd.read_csv(folder / "projectile" / "scorecard.csv").set_index("model")
    assert lesson_card.loc["scripted-careless", "right"] == 0 and lesson_card.loc["scripted-careful", "right"] == 2


# ---------------------------------------------------------------------------------------------
# The pages of these runs: what was answered, right or not, and why it is supported or not


def test_the_page_of_an_mcp_run_shows_the_instructions_its_client_received_and_its_calls_one_by_one(copy, built):
    page = (copy / "results" / "projectile" / "runs" / "m-projectile-across.md").read_text()
    v = registry.lesson("projectile").variant("default")
    assert "Instructions the MCP client received" in page and "System prompt given to the model" not in page
    assert "you may make at most 48 tool calls in all" in page and "**Message" not in page
    assert "| call | tool call (as the client sent it) |" in page and "| 3 | answer(" in page
    assert "System prompt given to the model" in (copy / "results" / "projectile" / "runs" / "s-projectile-across.md").read_text()
    assert v.task.split(" It is supported")[0] in " ".join(page.split())


def test_the_page_of_a_run_says_what_it_answered_whether_it_is_right_and_why_it_is_or_is_not_supported(copy, built):
    page = " ".join((copy / "results" / "projectile" / "runs" / "s-projectile-across.md").read_text().split())
    assert "Answer, as submitted with the tool `answer`: `{\"high\": 42, \"low\": 41}`" in page
    assert "Right: **wrong** (the best angle of the build's scan lies outside its bracket)" in page
    assert ("Supported by its own replayed experiments: no (its data do not locate the maximum: its longest throw at dt "
            "0.001 s is at 41 degrees, and it measured no shorter throw below that angle at dt 0.001 s)") in page
    lesson = " ".join((copy / "results" / "projectile" / "index.md").read_text().split())
    assert "Where the experiments of run `s-projectile-more` locate the maximum" in lesson
    assert "agent's bracket" not in lesson
    pendulum = " ".join((copy / "results" / "pendulum" / "index.md").read_text().split())
    assert "agent's bracket" not in pendulum and "not two adjacent whole degrees" not in pendulum
