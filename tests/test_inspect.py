"""The lessons as Inspect AI tasks, and Inspect's logs brought back as recordings (the `inspect`
extra, docs/inspect.md): real Inspect evals, with its mockllm model and with its openai provider
against the stand-in OpenAI server on 127.0.0.1 (fake key); the logs imported, replayed by
`replaylab replay`, and judged by a real Snakemake run of the workflow and a campaign.

They need inspect_ai, which only .venv-inspect holds (`make inspect-test`): elsewhere they skip,
and under CI=true they fail instead (.ci/run installs it). REPLAYLAB_INSPECT=0 skips them on
purpose (.ci/run's `make test-all`, in the core venv; they run in a step of their own).
"""

import csv
import json
import math
import os
import sys
from collections import defaultdict

import pytest

if os.environ.get("REPLAYLAB_INSPECT") == "0":
    pytest.skip("REPLAYLAB_INSPECT=0: the Inspect AI tests are turned off", allow_module_level=True)
try:
    import inspect_ai  # noqa: F401
except ModuleNotFoundError:
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail("the Inspect AI tests must run under CI=true, but inspect_ai is not installed "
                    "(make inspect-env)", pytrace=False)
    pytest.skip("inspect_ai is not installed: these tests run in .venv-inspect (make inspect-test)", allow_module_level=True)

import shutil
import subprocess

import pandas as pd
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.log import EvalSampleLimit, read_eval_log, write_eval_log
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall
from inspect_ai.util._json import json_schema_dump

from helpers import RECORDINGS, cli, environment
from helpers.model_server import FakeProvider, completion
from helpers.workflow import configure, copy_project, first_error_line, snakemake
from replaylab.agents import recording as recording_io
from replaylab.agents.clients import rerecord_command
from replaylab.agents.loop import AFTER_ANSWER
from replaylab.inspect_tasks import listing
from replaylab.inspect_tasks.convert import LIMIT
from replaylab.inspect_tasks.tasks import TASKS
from replaylab.lessons import registry
from replaylab.lessons.scorecard import read_runs_table

# Inspect 0.3.285's retry settings use a parameter tenacity deprecates: not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
KEY = "sk-fake-INSPECT0123456789abcdef"
INSPECT = [sys.executable, "-m", "inspect_ai"]  # the `inspect` command of this venv


# ---------------------------------------------------------------------------------------------
# Scripted model messages


def reference_steps(lesson, variant):
    """The messages of a lesson's committed reference run of that variant: (text, [(id, name, arguments)])."""
    for path in sorted((RECORDINGS / lesson).glob("*.json")):
        data = json.loads(path.read_text())
        if data["variant"] == variant:
            return [(s["text"], [(c["id"], c["name"], c["arguments"]) for c in s["tool_calls"]]) for s in data["steps"]]
    raise AssertionError(f"no reference run of {lesson}/{variant}")


def output(text, calls, tokens=(100, 20)):
    """One model message as mockllm gives it, with usage set (without it, mockllm counts tokens
    with tiktoken, which downloads its encoding)."""
    return ModelOutput(model="scripted-by-the-test", choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, model="scripted-by-the-test", source="generate",
                                     tool_calls=[ToolCall(id=i, function=f, arguments=a) for i, f, a in calls] or None),
        stop_reason="tool_calls" if calls else "stop")],
        usage=ModelUsage(input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens)))


TOOLS_SEEN = {}  # (lesson, variant): the tools mockllm was given, as Inspect gives a model them


def scripted(scripts):
    """mockllm's custom_outputs: the next message of the script of the sample's variant (found by
    its system text and task), whatever order Inspect runs the samples in."""
    by_prompts = {}
    for (lesson, variant), steps in scripts.items():
        v = registry.lesson(lesson).variant(variant)
        by_prompts[(v.system, v.task)] = (lesson, variant), steps

    def next_output(input, tools, tool_choice, config):
        key, steps = by_prompts[(input[0].text, input[1].text)]
        TOOLS_SEEN[key] = tools
        return output(*steps[sum(m.role == "assistant" for m in input)])

    return next_output


def mock(name, scripts):
    return get_model(f"mockllm/{name}", custom_outputs=scripted(scripts))


SEED_VARIANTS = sum(len(lesson.variants) for lesson in registry.lessons())  # one reference run each
REFERENCES = {(lesson, v): reference_steps(lesson, v) for lesson in registry.names() for v in registry.lesson(lesson).variants}
CARELESS = [  # careful experiments, a refused call, a refused answer, then a wrong answer and a call after it
    ("Coarse first.", [("c1", "range_with_drag", {"speed": 25, "angle": 40, "dt": 0.001}),
                       ("c2", "range_with_drag", {"speed": 25, "angle": 41, "dt": 0.001}),
                       ("c3", "range_with_drag", {"speed": 25, "angle": 95, "dt": 0.001})]),
    ("Answer.", [("c4", "answer", {"low": 45, "high": 44})]),
    ("Answer again.", [("c5", "answer", {"low": 44, "high": 45}), ("c6", "range_without_drag", {"speed": 25, "angle": 45})]),
]
SILENT = [("I would rather not call anything.", [])]
ENDLESS = [(f"Try {a}.", [(f"e{a}", "range_without_drag", {"speed": 25, "angle": a})]) for a in range(30, 42)]  # 12 messages


def run_eval(tasks, models, log_dir, **limits):
    logs = inspect_eval(tasks, model=models, log_dir=str(log_dir), display="none", **limits)
    assert all(log.status == "success" for log in logs), [(log.status, log.error) for log in logs]
    return logs


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Inspect evals, in this process: every lesson's reference messages (right); projectile
    played carelessly (wrong), silently (no call) and without end (the message limit); hunter
    played by replaylab's scripted-mixed program (the model replaylab/<program>), two epochs."""
    folder = tmp_path_factory.mktemp("inspect-logs")
    right = run_eval([TASKS[lesson]() for lesson in registry.names()], mock("references", REFERENCES), folder / "right")
    other = run_eval(TASKS["projectile"](), [mock("careless", {("projectile", "default"): CARELESS}),
                                             mock("silent", {("projectile", "default"): SILENT}),
                                             mock("endless", {("projectile", "default"): ENDLESS})], folder / "other",
                     log_format="json")
    programs = run_eval(TASKS["hunter"](), "replaylab/scripted-mixed", folder / "programs", epochs=2)
    return ({log.eval.task_registry_name.split("/")[1]: log for log in right}
            | {log.eval.model.split("/")[1]: log for log in other + programs})


def sample_scores(log):
    return {s.id: s.scores["replaylab_judge"] for s in log.samples}


# ---------------------------------------------------------------------------------------------
# The tasks


def test_every_tool_reaches_the_model_with_the_allowlists_schema(logs):
    """What the model is given of each tool is the allowlist's spec, verbatim; the one keyword
    Inspect's schema type drops is uniqueItems (the allowlist still refuses a name given twice)."""
    seen = 0
    for lesson in registry.lessons():
        for name, variant in lesson.variants.items():
            given = TOOLS_SEEN[(lesson.name, name)]
            specs = variant.allowlist().specs()
            assert [t.name for t in given] == [s["name"] for s in specs]
            for spec, tool in zip(specs, given):
                expected = json.loads(json.dumps(spec["parameters"]))
                for field in expected["properties"].values():
                    field.pop("uniqueItems", None)
                assert tool.description == spec["description"]
                assert json_schema_dump(tool.parameters) == expected, (lesson.name, spec["name"])
                seen += 1
    assert seen == sum(len(v.allowlist().specs()) for lesson in registry.lessons() for v in lesson.variants.values())
    assert seen > len(registry.names())  # every tool of every variant, and more than one a lesson


def test_the_tasks_score_like_the_judge(logs):
    for lesson in registry.names():
        log = logs[lesson]
        assert log.eval.task_registry_name == f"replaylab/{lesson}"
        assert log.plan.steps[0].solver == "replaylab/allowlist_loop"
        assert log.eval.config.turn_limit == 12
        scores = sample_scores(log)
        assert sorted(scores) == sorted(registry.lesson(lesson).variants)
        for variant, score in scores.items():
            assert score.value == {"right": 1.0, "answered": 1.0, "supported": 1.0}, (lesson, variant, score.explanation)
            assert score.explanation.startswith("answer ") and ": right (" in score.explanation
        metrics = {s.name: s.metrics["accuracy"].value for s in log.results.scores}
        assert metrics == {"right": 1.0, "answered": 1.0, "supported": 1.0}
    careless = sample_scores(logs["careless"])["default"]
    assert careless.value["right"] == 0.0 and careless.value["answered"] == 1.0
    assert json.loads(careless.answer) == {"low": 44, "high": 45}
    assert "wrong, the best angle of the build's scan lies outside its bracket" in careless.explanation
    assert sample_scores(logs["silent"])["default"].value == {"right": 0.0, "answered": 0.0, "supported": 0.0}
    endless = logs["endless"].samples[0]
    assert endless.limit is None and endless.store["replaylab:finished"] is False
    assert sum(m.role == "assistant" for m in endless.messages) == 12
    assert endless.scores["replaylab_judge"].value["answered"] == 0.0


def test_every_call_goes_through_the_allowlist(logs):
    """A refusal is the tool's error, in the allowlist's words; a refused answer lets the run go
    on; a call after the accepted answer is refused; the answer ends the sample."""
    messages = logs["careless"].samples[0].messages
    errors = {m.tool_call_id: m.error.message for m in messages if m.role == "tool" and m.error}
    assert errors == {"c3": "angle must be between 1 and 89, got 95",
                      "c4": "high must be low + 1 (two adjacent whole degrees), got low 45 and high 44", "c6": AFTER_ANSWER}
    tool = [m for m in messages if m.role == "tool" and m.tool_call_id == "c1"][0]
    assert set(json.loads(tool.text)) == {"range_m"} and tool.error is None
    assert messages[-1].role == "tool" and messages[-1].tool_call_id == "c6"


def test_a_variant_that_is_not_one_is_one_line(tmp_path):
    """Inspect prints the task's one line (with --display none it prints nothing at all)."""
    out = subprocess.run([*INSPECT, "eval", "replaylab/hunter", "-T", "variant=nosuch", "--model", "mockllm/model",
                          "--log-dir", str(tmp_path)], capture_output=True, text=True, env=environment(COLUMNS="200"),
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 1
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    assert lines == ["replaylab/hunter: -T variant=nosuch: not a variant of hunter (its variants: symplectic-euler, velocity-verlet)"], out
    assert not list(tmp_path.iterdir())  # no log: the eval never started


# ---------------------------------------------------------------------------------------------
# Through Inspect's openai provider, against the stand-in server on 127.0.0.1


def chat_completions(steps):
    """The stand-in server's answers: each message as a chat completion (arguments as JSON text)."""
    return [(200, completion(text, [(i, name, json.dumps(arguments)) for i, name, arguments in calls]), {}, 0)
            for text, calls in steps]


OPENAI_MESSAGES = 1 + len(REFERENCES[("projectile", "default")])  # a refused call, then the reference run


@pytest.fixture(scope="module")
def openai_log(tmp_path_factory):
    """`inspect eval replaylab/projectile` as a user runs it, through Inspect's openai provider and
    the stand-in server (a refused call first, then the reference run's messages), with a fake key."""
    folder = tmp_path_factory.mktemp("inspect-openai")
    steps = [("First a throw out of bounds.", [("o1", "range_without_drag", {"speed": 25, "angle": 95})])]
    steps += REFERENCES[("projectile", "default")]
    with FakeProvider(chat_completions(steps)) as server:
        out = subprocess.run(
            [*INSPECT, "eval", "replaylab/projectile", "-T", "variant=default", "--model", "openai/gpt-4o-mini",
             "--model-base-url", server.base_url, "-M", "responses_api=false", "--log-dir", str(folder / "logs"),
             "--display", "none"],
            capture_output=True, text=True, cwd=folder, env=environment(OPENAI_API_KEY=KEY), timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        requests = server.requests
    (path,) = (folder / "logs").glob("*.eval")
    return path, requests


def test_the_openai_provider_sends_the_allowlist_and_its_refusals(openai_log):
    path, requests = openai_log
    assert [r["path"] for r in requests] == ["/v1/chat/completions"] * OPENAI_MESSAGES
    first = requests[0]["body"]
    assert first["messages"][0] == {"role": "system", "content": registry.lesson("projectile").variant("default").system}
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    specs = {s["name"]: s["parameters"] for s in registry.lesson("projectile").variant("default").allowlist().specs()}
    assert tools == specs  # bounds and all, as the allowlist gives them
    refusal = [m for m in requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert len(refusal) == 1 and "angle must be between 1 and 89, got 95" in refusal[0]["content"]
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in requests)
    assert KEY not in path.read_bytes().decode("latin-1")
    (sample,) = read_eval_log(str(path)).samples
    assert sample.scores["replaylab_judge"].value == {"right": 1.0, "answered": 1.0, "supported": 1.0}


# ---------------------------------------------------------------------------------------------
# Importing the logs


def log_paths(logs, *names):
    return [logs[name].location for name in names]


@pytest.fixture(scope="module")
def imported(tmp_path_factory, logs, openai_log):
    """Every sample of every log above, imported into one folder (a run folder of the workflow)."""
    folder = tmp_path_factory.mktemp("inspect-runs")
    paths = log_paths(logs, *registry.names(), "careless", "silent", "endless", "scripted-mixed") + [str(openai_log[0])]
    out = cli("import-inspect", *paths, "--out", folder)
    assert out.returncode == 0, out.stderr
    written = sorted(folder.glob("*/*.json"))
    assert len(written) == SEED_VARIANTS + 3 + 4 + 1  # every seed variant's reference, 3 projectile runs, 4 hunter, 1 openai
    assert out.stdout.splitlines()[-1] == (f"imported {len(written)} runs from {len(registry.names()) + 5} Inspect logs; each "
                                           "replayed through the current code first")
    return folder


def test_each_imported_recording_replays(imported):
    for path in sorted(imported.glob("*/*.json")):
        out = cli("replay", path)
        assert out.returncode == 0, (path.name, out.stderr)
        assert "every result agrees with the recording" in out.stdout
        assert "decided by the build: " in out.stdout


def test_an_imported_recording_says_where_it_came_from(imported, logs, openai_log):
    log = read_eval_log(str(openai_log[0]))
    (path,) = imported.glob(f"projectile/inspect-{log.eval.eval_id}-default-e1.json")
    run = recording_io.load(path)
    p = run.provenance
    assert (p["kind"], p["provider"], p["model"], run.label) == ("provider-api", "inspect_ai", "openai/gpt-4o-mini", "Recorded run")
    assert p["how"].startswith("Recorded through Inspect AI 0.3.285: the model answered through Inspect's openai provider")
    assert p["inspect"] == {"version": "0.3.285", "provider": "openai", "model": "openai/gpt-4o-mini", "model_reported": "fake-model",
                            "eval_id": log.eval.eval_id, "run_id": log.eval.run_id, "task": "replaylab/projectile",
                            "sample_id": "default", "epoch": 1, "log": openai_log[0].name}
    assert p["server"] == log.eval.model_base_url.split("//")[1].split("/")[0]
    assert p["usage"] == {"input_tokens": 100 * OPENAI_MESSAGES, "output_tokens": 20 * OPENAI_MESSAGES}
    assert p["request_ids"] == [f"req-{i}" for i in range(1, OPENAI_MESSAGES + 1)]
    assert run.group == f"inspect-{log.eval.eval_id}-e1" and run.transcript.finished
    assert KEY not in path.read_text()
    steps = run.transcript.steps
    assert len(steps) == OPENAI_MESSAGES
    assert steps[0].results[0].ok is False and steps[0].results[0].content == {"error": "angle must be between 1 and 89, got 95"}
    scripted = recording_io.load(imported / "projectile" / f"inspect-{logs['careless'].eval.eval_id}-default-e1.json")
    assert (scripted.provenance["kind"], scripted.label) == ("scripted", "Scripted baseline (a program, not a language model)")
    assert rerecord_command(run) == "inspect eval replaylab/projectile -T variant=default --model openai/gpt-4o-mini"


def test_importing_again_writes_nothing(imported, logs, tmp_path):
    """The same import again leaves every file as it is and says so; a file of another run under a
    name the import would write is never overwritten: one line, and nothing written."""
    before = {p: p.stat().st_mtime_ns for p in imported.rglob("*")}
    out = cli("import-inspect", *log_paths(logs, "pendulum", "careless"), "--out", imported)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["replaylab: 2 runs already imported (the same file is there): left as they are"]
    assert out.stdout.splitlines()[-1] == ("imported 0 runs from 2 Inspect logs, 2 already there; each replayed through the "
                                           "current code first")
    assert {p: p.stat().st_mtime_ns for p in imported.rglob("*")} == before
    folder = tmp_path / "runs"
    shutil.copytree(imported / "pendulum", folder / "pendulum")
    (victim,) = folder.glob(f"pendulum/inspect-{logs['pendulum'].eval.eval_id}-*.json")
    victim.write_text(victim.read_text().replace('"recorded"', '"recorded" ', 1))  # another text under its name
    out = cli("import-inspect", *log_paths(logs, "projectile", "pendulum"), "--out", folder)
    assert out.returncode == 2
    line, = out.stderr.strip().splitlines()
    assert line.startswith(f"replaylab: {victim}: already exists, and a recorded run is never overwritten")
    assert not (folder / "projectile").exists()


def test_a_log_edited_to_hold_a_wrong_result_is_caught(tmp_path, logs):
    log = read_eval_log(logs["projectile"].location)
    (sample,) = log.samples
    tool = next(m for m in sample.messages if m.role == "tool" and m.error is None)
    content = json.loads(tool.text)
    key = next(iter(content))
    recorded = content[key] * 1.5
    tool.content = json.dumps({key: recorded})
    forged = tmp_path / "forged.eval"
    write_eval_log(log, str(forged))
    out = cli("import-inspect", forged, "--out", tmp_path / "runs")
    assert out.returncode == 3
    line, = out.stderr.strip().splitlines()
    assert line.startswith(f"replaylab: {forged}: sample default epoch 1: message 1, call 1, tool {tool.function}: "
                           f"{key} was {recorded!r} when recorded and is ")
    assert "record the run again with: inspect eval replaylab/projectile -T variant=default --model mockllm/references" in line
    assert not (tmp_path / "runs").exists()


def test_what_is_not_a_whole_run_is_refused_in_one_line(tmp_path, logs):
    cut = run_eval(TASKS["projectile"](), mock("references", REFERENCES), tmp_path / "cut", message_limit=4)
    out = cli("import-inspect", logs["pendulum"].location, cut[0].location, "--out", tmp_path / "runs")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"replaylab: {cut[0].location}: sample default epoch 1: Inspect's message limit (4) ended the sample inside the run; "
        "replaylab replays only a run that it or its own limits ended (tokens, seconds) (run it again without --message-limit)"]
    assert not (tmp_path / "runs").exists()  # the pendulum log was fine: nothing written either
    text = tmp_path / "notes.eval"
    text.write_text("not a log")
    out = cli("import-inspect", text, "--out", tmp_path / "runs")
    assert out.returncode == 2 and out.stderr.startswith(f"replaylab: {text}: not an Inspect log (")
    assert len(out.stderr.strip().splitlines()) == 1
    out = cli("import-inspect", tmp_path / "nosuch.eval", "--out", tmp_path / "runs")
    assert (out.returncode, out.stderr) == (2, f"replaylab: {tmp_path / 'nosuch.eval'}: no such file\n")
    out = cli("import-inspect", logs["pendulum"].location, "--out", tmp_path / "runs", "--campaign", "c", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, "replaylab: import-inspect: give either --out FOLDER or --campaign NAME\n")
    out = cli("import-inspect", logs["pendulum"].location, "--campaign", "../up", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("replaylab: --campaign: '../up' is not a campaign name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut", "notes.eval"]


def test_a_token_limit_is_the_runs_own_limit(tmp_path):
    """Inspect's token limit is replaylab's max_tokens_per_run: the run stops there, not finished,
    with no answer (Inspect drops the message that crossed it), and replays so."""
    (log,) = run_eval(TASKS["projectile"](), mock("references", REFERENCES), tmp_path / "logs", token_limit=250)
    (sample,) = log.samples
    assert sample.limit.type == "token"
    assert sample.scores["replaylab_judge"].value["right"] == 0.0
    assert "stopped by its limit max_tokens_per_run" in sample.scores["replaylab_judge"].explanation
    out = cli("import-inspect", log.location, "--out", tmp_path / "runs")
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "runs" / "projectile").glob("*.json")
    run = recording_io.load(path)
    assert run.transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": 250, "used": 360}
    assert len(run.transcript.steps) == 2 and not run.transcript.finished
    out = cli("replay", path)
    assert out.returncode == 0, out.stderr


def test_without_the_extra_import_inspect_is_one_line(tmp_path):
    code = ("import sys; sys.modules['inspect_ai'] = None\n"
            "from replaylab.cli import main; sys.exit(main(['import-inspect', 'x.eval', '--out', 'runs']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2
    assert out.stderr == ('replaylab: import-inspect needs the inspect extra (inspect-ai): pip install -c constraints.txt -e ".[inspect]", '
                          "or use .venv-inspect (make inspect-env)\n")


# ---------------------------------------------------------------------------------------------
# Judged by the workflow, and compared in a campaign


CAMPAIGN = """campaign:
  name: inspect
  provider: inspect_ai
  models: [openai/gpt-4o-mini, mockllm/careless]
  lessons: [projectile]
  runs: 1
  max_connections: 4
  request_timeout: 60
  max_retries: 4
  max_tokens_per_run: null
  max_seconds_per_run: null
  prices: {}
"""


@pytest.mark.workflow
def test_the_workflow_judges_them_like_any_run(tmp_path, logs, openai_log, imported):
    copy = copy_project(tmp_path / "project")
    shutil.copytree(imported, copy / "inspect-runs")
    configure(copy, run_folders=["inspect-runs"])
    out = cli("import-inspect", openai_log[0], logs["careless"].location, "--campaign", "inspect", cwd=copy)
    assert out.returncode == 0, out.stderr
    (copy / "inspect-campaign.yaml").write_text(CAMPAIGN)
    snakemake(copy, "--cores", "2", "all", "campaign", "--configfile", "config/config.yaml", "inspect-campaign.yaml")
    inspect_scores = {}
    for log in [*logs.values(), read_eval_log(str(openai_log[0]))]:
        lesson = log.eval.task_registry_name.split("/")[1]
        for s in log.samples:
            inspect_scores[(lesson, f"inspect-{log.eval.eval_id}-{s.id}-e{s.epoch}")] = s.scores["replaylab_judge"]
    seen = 0
    for lesson in registry.names():
        table = read_runs_table(copy / "results" / lesson / "runs.csv.gz")
        for row in table[table["run"].str.startswith("inspect-")].to_dict("records"):
            score = inspect_scores[(lesson, row["run"])]
            assert score.value["right"] == float(row["right"]), (lesson, row["run"])
            assert score.value["answered"] == float(row["answered"])
            assert score.value["supported"] == (0.0 if pd.isna(row["supported"]) else float(row["supported"]))
            seen += 1
    assert seen == len(inspect_scores) == SEED_VARIANTS + 3 + 4 + 1
    groups = json.loads((copy / "results" / "review" / "results.json").read_text())["groups"]
    assert f"inspect-{logs['review'].eval.eval_id}-e1 [mockllm/references]" in groups  # the reviewers decided together
    page = (copy / "results" / "projectile" / "index.md").read_text()
    assert "openai/gpt-4o-mini" in page and "mockllm/careless" in page
    comparison = (copy / "results" / "campaigns" / "inspect" / "index.md").read_text()
    assert ("Models: openai/gpt-4o-mini (**Recorded run**), mockllm/careless (**Scripted baseline (a program, not a "
            "language model)**), through the provider `inspect_ai`. 1 run per model") in comparison
    card = json.loads((copy / "results" / "campaigns" / "inspect" / "scorecard.json").read_text())
    assert {(r["model"], r["runs"], r["right"]) for r in card["scorecard"]} == {("openai/gpt-4o-mini", 1, 1), ("mockllm/careless", 1, 0)}
    # a campaign of more runs than were imported: no rule can record them, one line says how to import them
    (copy / "more.yaml").write_text(CAMPAIGN.replace("runs: 1", "runs: 2"))
    out = snakemake(copy, "-n", "campaign", "--configfile", "config/config.yaml", "more.yaml", check=False)
    assert out.returncode == 1
    assert first_error_line(out) == (
        "results/campaigns/inspect/recordings/projectile/openai_2fgpt-4o-mini__default__002.json: missing (2 of the campaign's "
        "runs are): runs of the provider inspect_ai are recorded by Inspect AI (inspect eval replaylab/projectile --model MODEL "
        "--epochs 2) and brought in with: replaylab import-inspect LOG... --campaign inspect")


def test_the_model_replaylab_plays_the_scripted_baselines(imported, logs):
    """`--model replaylab/<program>`: epoch N plays the program with seed N-1, message for message
    as replaylab's own scripted provider does."""
    from replaylab.agents import loop
    from replaylab.agents.clients import Options
    from replaylab.agents.clients.scripted import make_client

    lesson = registry.lesson("hunter")
    log = logs["scripted-mixed"]
    calls = {}
    for sample in log.samples:
        run = recording_io.load(imported / "hunter" / f"inspect-{log.eval.eval_id}-{sample.id}-e{sample.epoch}.json")
        v = lesson.variant(sample.id)
        client = make_client(Options("hunter", sample.id, model="scripted-mixed", seed=sample.epoch - 1, agent=lesson.part("agent")))
        own = loop.run(client, v.system, v.task, v.allowlist(), v.max_steps)
        assert [s.message for s in run.transcript.steps] == [s.message for s in own.steps]
        assert run.label == "Scripted baseline (a program, not a language model)"
        calls[(sample.id, sample.epoch)] = [c.arguments for s in run.transcript.steps for c in s.message.tool_calls]
    assert sorted(calls) == [(v, e) for v in lesson.variants for e in (1, 2)]
    assert all(calls[(v, 1)] != calls[(v, 2)] for v in lesson.variants)  # another seed, another run


def test_a_task_takes_the_instances_of_its_family_and_each_run_is_judged_against_its_own(tmp_path):
    """`-T instances=4`: the dataset is four instances of the pendulum's family drawn by seed 0, one
    sample each, named by its instance; the careful program (the model replaylab/scripted-careful)
    answers each right, and every imported run names its instance and replays against it."""
    from replaylab.selection import select

    lesson = registry.lesson("pendulum")
    task = TASKS["pendulum"](instances="4")
    chosen = select(lesson, 4)
    samples = {sample.id: sample.metadata for sample in task.dataset}
    assert sorted(samples) == sorted(f"{i}.default" for i in chosen)
    assert all(meta["instance"] == sample_id.split(".")[0] and meta["difficulty"] == lesson.instance(meta["instance"]).difficulty
               for sample_id, meta in samples.items())
    (log,) = run_eval(task, "replaylab/scripted-careful", tmp_path / "logs")
    assert all(score.value["right"] == 1.0 for score in sample_scores(log).values())
    out = cli("import-inspect", str(log.location), "--out", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    runs = [recording_io.load(path) for path in sorted((tmp_path / "runs" / "pendulum").glob("*.json"))]
    assert sorted(run.instance for run in runs) == sorted(chosen)
    for run in runs:
        line = cli("replay", str(tmp_path / "runs" / "pendulum" / f"{run.run}.json")).stdout.splitlines()[-1]
        assert line.startswith("decided by the build: answer ") and ": right (the exact crossing is at " in line, line
    bad = subprocess.run([*INSPECT, "eval", "replaylab/pendulum", "-T", "instances=100000", "--model", "mockllm/model",
                          "--log-dir", str(tmp_path / "none")], capture_output=True, text=True, env=environment(), timeout=120)
    said = " ".join((bad.stdout + bad.stderr).split())  # Inspect wraps its lines
    assert bad.returncode != 0 and f"-T instances: asks for 100000 instances of pendulum, whose family has {len(lesson.instances)}" in said


# ---------------------------------------------------------------------------------------------
# Without gaps (issue 37): the tasks listed, error bars over instances, a log's score checked,
# a cancelled eval beside its retry, and a campaign of Inspect's runs


def test_inspect_list_tasks_shows_every_lessons_task(tmp_path):
    """`inspect list tasks` reads a file's code for @task functions and never runs it, so the
    tasks replaylab registers from its registry are not listed: `python -m
    replaylab.inspect_tasks.listing` writes the task file docs/inspect.md names, one written-out
    task per lesson, which Inspect lists (from its folder, and given its path) and runs."""
    out = subprocess.run([sys.executable, "-m", "replaylab.inspect_tasks.listing"], capture_output=True, text=True,
                         cwd=tmp_path, env=environment(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"wrote {listing.DEFAULT}: the tasks {', '.join(registry.names())}")
    expected = sorted(f"{listing.DEFAULT}@{name}" for name in registry.names())
    for args in ([], [listing.DEFAULT]):
        listed = subprocess.run([*INSPECT, "list", "tasks", *args], capture_output=True, text=True, cwd=tmp_path,
                                env=environment(), timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split() == expected
    (log,) = run_eval(f"{tmp_path / listing.DEFAULT}@hunter", "replaylab/scripted-careful", tmp_path / "logs")
    scores = sample_scores(log)
    assert sorted(scores) == sorted(registry.lesson("hunter").variants)
    assert all(score.value == {"right": 1.0, "answered": 1.0, "supported": 1.0} for score in scores.values())
    again = subprocess.run([sys.executable, "-m", "replaylab.inspect_tasks.listing"], capture_output=True, text=True,
                           cwd=tmp_path, env=environment(), timeout=120)
    assert again.returncode == 0, again.stderr  # its own file: written again
    (tmp_path / "mine.py").write_text("x = 1\n")
    refused = subprocess.run([sys.executable, "-m", "replaylab.inspect_tasks.listing", "mine.py"], capture_output=True,
                             text=True, cwd=tmp_path, env=environment(), timeout=120)
    assert (refused.returncode, refused.stderr) == (
        2, "replaylab: mine.py: exists and is not a task file this command wrote: give another path, or delete it first\n")
    assert (tmp_path / "mine.py").read_text() == "x = 1\n"
    with pytest.raises(PrerequisiteError, match=r"^old\.py: written for the lessons a, b; replaylab's are now "):
        listing.check("old.py", ("a", "b"))  # a file written before the registry changed refuses to load


def clustered_error(means, instance_of):
    """The standard error of the mean of per-sample values clustered by instance, written out:
    sqrt(C/(C-1) * sum over instances of (sum of its samples' deviations)^2) / N."""
    mean = sum(means.values()) / len(means)
    deviations = defaultdict(float)
    for sample, value in means.items():
        deviations[instance_of[sample]] += value - mean
    clusters = len(deviations)
    return math.sqrt(clusters / (clusters - 1) * sum(d * d for d in deviations.values())) / len(means)


def test_epochs_are_reduced_to_their_mean_and_the_error_counts_instances(tmp_path):
    """Each sample's epochs are reduced to their mean (the task's reducer, kept with --epochs), and
    `replaylab/stderr` is the standard error over instances, clustered (a review instance has a
    sample per reviewer); with one instance it is nan, never 0."""
    (many,) = run_eval(TASKS["projectile"](instances="6"), "replaylab/scripted-mixed", tmp_path / "many", epochs=2)
    (groups,) = run_eval(TASKS["review"](instances="3"), "replaylab/scripted-mixed", tmp_path / "groups", epochs=2)
    (one,) = run_eval(TASKS["projectile"](), "replaylab/scripted-mixed", tmp_path / "one", epochs=2)
    errors = {}
    for name, log in (("many", many), ("groups", groups), ("one", one)):
        assert (log.eval.config.epochs, log.eval.config.epochs_reducer) == (2, ["mean"])
        (reduced,) = log.reductions
        assert reduced.reducer == "mean"
        instance_of = {s.id: s.metadata["instance"] for s in log.samples}
        for key in ("right", "answered", "supported"):
            runs = defaultdict(list)
            for s in log.samples:
                runs[s.id].append(s.scores["replaylab_judge"].value[key])
            assert all(len(values) == 2 for values in runs.values())
            means = {sample: sum(values) / 2 for sample, values in runs.items()}
            assert {r.sample_id: r.value[key] for r in reduced.samples} == means
            (result,) = [r for r in log.results.scores if r.name == key]
            assert result.reducer == "mean"
            assert result.metrics["accuracy"].value == pytest.approx(sum(means.values()) / len(means), abs=1e-12)
            error = result.metrics["replaylab/stderr"].value
            if len(set(instance_of.values())) < 2:
                assert math.isnan(error), (name, key)
            else:
                assert error == pytest.approx(clustered_error(means, instance_of), abs=1e-12), (name, key)
            errors[(name, key)] = error
    assert len(set(s.metadata["instance"] for s in many.samples)) == 6 and errors[("many", "right")] > 0
    assert len(set(s.metadata["instance"] for s in groups.samples)) == 3 and len(groups.samples) == 3 * 3 * 2
    assert math.isnan(errors[("one", "right")])


def import_table(folder):
    with open(folder / "inspect-imports.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def test_every_imported_run_has_a_row_and_its_logs_score_agrees(imported):
    rows = import_table(imported)
    assert sorted(row["file"] for row in rows) == sorted(p.relative_to(imported).as_posix() for p in imported.glob("*/*.json"))
    assert {row["inspect_score_agrees"] for row in rows} == {"true"}
    assert all(row[f"inspect_{key}"] == row[key] for row in rows for key in ("right", "answered", "supported"))


def test_a_log_whose_score_disagrees_is_imported_with_a_warning(tmp_path, logs):
    """A log's score (edited here, or computed by other code) is never used: the run is judged
    again, one line names the log and the sample whose score differs, and its row says so."""
    log = read_eval_log(logs["projectile"].location)
    (sample,) = log.samples
    assert sample.scores["replaylab_judge"].value == {"right": 1.0, "answered": 1.0, "supported": 1.0}
    sample.scores["replaylab_judge"].value["right"] = 0.0
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    out = cli("import-inspect", edited, logs["pendulum"].location, "--out", tmp_path / "runs")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"replaylab: warning: {edited}: sample default epoch 1: the log's score (right 0, answered 1, supported 1) is not "
        "replaylab's judgement of the replayed run (right 1, answered 1, supported 1); the log's score is not used "
        "(edited, or scored by other code?)"]
    rows = {row["log"]: row for row in import_table(tmp_path / "runs")}
    assert (rows["edited.eval"]["inspect_right"], rows["edited.eval"]["right"], rows["edited.eval"]["inspect_score_agrees"]) == (
        "0", "1", "false")
    assert rows[os.path.basename(logs["pendulum"].location)]["inspect_score_agrees"] == "true"
    (path,) = (tmp_path / "runs" / "projectile").glob("*.json")
    line = cli("replay", path).stdout.splitlines()[-1]
    assert line.startswith("decided by the build: answer ") and ": right (" in line, line  # replaylab's judgement, not the log's


def cancelled_copy(log, path, kept=1):
    """A log of `log`'s eval as Ctrl-C leaves it: status cancelled, its first samples only."""
    log = read_eval_log(log.location)
    log.status, log.samples, log.results, log.reductions = "cancelled", log.samples[:kept], None, None
    write_eval_log(log, str(path))
    return path


def test_a_cancelled_log_beside_its_retry_is_skipped_and_alone_is_refused(tmp_path):
    task = TASKS["hunter"]
    (whole_log,) = run_eval(task(), "replaylab/scripted-careful", tmp_path / "first")
    cancelled = cancelled_copy(whole_log, tmp_path / "cancelled.eval")
    (retried,) = eval_retry(str(cancelled), log_dir=str(tmp_path / "retry"), display="none")
    assert retried.status == "success" and retried.eval.task_id == whole_log.eval.task_id
    out = cli("import-inspect", cancelled, retried.location, "--out", tmp_path / "runs")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [f"replaylab: {cancelled}: skipped: its eval's status is 'cancelled', and "
                                       f"{retried.location} is its retry (the same task id {whole_log.eval.task_id})"]
    written = sorted(p.name for p in (tmp_path / "runs").glob("*/*.json"))
    assert written == sorted(f"inspect-{retried.eval.eval_id}-{s.id}-e1.json" for s in retried.samples) and len(written) == 2
    # the same eval run again from the start (not a retry) holds every sample: the cancelled one is skipped too
    (again,) = run_eval(task(), "replaylab/scripted-careful", tmp_path / "again")
    out = cli("import-inspect", again.location, cancelled, "--out", tmp_path / "again-runs")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [f"replaylab: {cancelled}: skipped: its eval's status is 'cancelled', and "
                                       f"{again.location} is its retry (the same task, arguments and model, and every sample)"]
    # alone, or beside a log of another eval, it is refused, and nothing is written
    (another,) = run_eval(TASKS["projectile"](), "replaylab/scripted-careful", tmp_path / "another")
    for given in ([cancelled], [cancelled, another.location]):
        out = cli("import-inspect", *given, "--out", tmp_path / "none")
        assert out.returncode == 2
        assert out.stderr.splitlines() == [
            f"replaylab: {cancelled}: the eval's status is 'cancelled', and no log given is its retry: only a whole eval "
            f"is imported; complete it with `inspect eval-retry {cancelled}` and import the retry's log (with this one, "
            "or alone)"]
    assert not (tmp_path / "none").exists()


CAMPAIGN_OF_MODELS = CAMPAIGN.replace("  provider: inspect_ai\n", "  provider: scripted\n").replace(
    "models: [openai/gpt-4o-mini, mockllm/careless]",
    "models: [scripted-careful, {name: openai/gpt-4o-mini, provider: inspect_ai}]")


def test_replaylab_campaign_refuses_a_model_of_inspect_ai_at_plan_time(tmp_path):
    """`replaylab campaign` records the runs it lacks, and Inspect AI records these: one line names
    the file and the field, and says what to do instead; nothing is written, a dry run too."""
    copy = copy_project(tmp_path / "project")
    (copy / "inspect-campaign.yaml").write_text(CAMPAIGN)
    (copy / "mixed.yaml").write_text(CAMPAIGN_OF_MODELS)
    for config, field, model in (("inspect-campaign.yaml", "$.campaign.provider", "openai/gpt-4o-mini"),
                                 ("mixed.yaml", "$.campaign.models[1].provider", "openai/gpt-4o-mini")):
        for dry in (["--dry-run"], []):
            out = cli("campaign", "--config", config, *dry, cwd=copy)
            assert out.returncode == 2, out.stderr
            assert out.stderr.splitlines() == [
                f"replaylab: config/config.yaml + {config}: {field}: 'inspect_ai' (model {model!r}): replaylab campaign "
                f"cannot record runs of Inspect AI: run inspect eval replaylab/projectile --model {model} "
                "--epochs 1, bring the logs in with replaylab import-inspect LOG... --campaign inspect, then compare with "
                f"snakemake campaign --configfile config/config.yaml {config}"]
            assert out.stdout == ""
    assert not (copy / "results").exists()


# ---------------------------------------------------------------------------------------------
# Hostile logs: one line each, nothing written, memory bounded


def test_a_zip_bomb_is_refused_before_anything_is_decompressed(tmp_path, logs):
    """A log whose zip states an entry that grows more than MAX_RATIO times (1 GiB of spaces, about
    1 MB on disk), or more than MAX_LOG_BYTES in all (200 entries of a MiB), inside a real log, is
    one line, in a process that stays small."""
    import zipfile

    from replaylab.inspect_tasks import importer

    def bomb(name, entries, size):
        path = tmp_path / name
        shutil.copy(logs["projectile"].location, path)
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
            for number in range(entries):
                with archive.open(f"samples/padding-{number}.json", "w", force_zip64=True) as stream:
                    for _ in range(size // 2**20):
                        stream.write(b" " * 2**20)
        return path

    code = ("import re, sys; from replaylab.cli import main; code = main(sys.argv[1:]); "  # VmHWM: this process's peak, in KiB
            "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1], file=sys.stderr); sys.exit(code)")
    large, many = bomb("large.eval", 1, 2**30), bomb("many.eval", 200, 2**20)
    for path in (large, many):
        assert path.stat().st_size < 4 * 2**20
    with zipfile.ZipFile(large) as archive:
        packed = archive.getinfo("samples/padding-0.json").compress_size
    with zipfile.ZipFile(many) as archive:
        total = sum(entry.file_size for entry in archive.infolist())
    said = {large: f"its entry samples/padding-0.json would grow from {packed / 2**10:.0f} KiB to 1024 MiB once decompressed, "
                   f"more than {importer.MAX_RATIO} times: not an Inspect log (a zip bomb?); nothing was decompressed",
            many: f"{total / 2**20:.0f} MiB once decompressed (from {many.stat().st_size / 2**20:.1f} MiB), more "
                  f"than a log imported at once may hold ({importer.MAX_LOG_BYTES // 2**20} MiB); nothing was decompressed"}
    for path, line in said.items():
        out = subprocess.run([sys.executable, "-c", code, "import-inspect", str(path), "--out", str(tmp_path / "runs")],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2
        shown, peak_kib = out.stderr.strip().splitlines()
        assert shown == f"replaylab: {path}: {line}"
        assert int(peak_kib) < 400 * 1024  # KiB: the interpreter with replaylab and Inspect imported, nothing decompressed
    assert not (tmp_path / "runs").exists()


def edited_log(logs, name, path, edit):
    log = read_eval_log(logs[name].location)
    for sample in log.samples:
        edit(sample)
    write_eval_log(log, str(path))
    return path


def test_malformed_metadata_and_limits_are_one_line_naming_the_log_and_the_sample(tmp_path, logs):
    def variant_list(sample):
        sample.metadata["variant"] = ["default"]

    def variant_dict(sample):
        sample.metadata["variant"] = {"name": "default"}

    def limit_text(sample):
        sample.limit = EvalSampleLimit(type="token", limit=100)
        sample.store[LIMIT] = "much"

    def limit_nan(sample):
        sample.limit = EvalSampleLimit(type="token", limit=100)
        sample.store[LIMIT] = {"value": float("nan")}

    cases = {variant_list: "metadata variant: list ['default'], not the name of one (the sample was not made by replaylab's task)",
             variant_dict: "metadata variant: dict {'name': 'default'}, not the name of one (the sample was not made by "
                           "replaylab's task)",
             limit_text: f"store {LIMIT}: str 'much', not {{\"value\": a finite number}}",
             limit_nan: f"store {LIMIT}: dict {{'value': nan}}, not {{\"value\": a finite number}}"}
    for edit, said in cases.items():
        path = edited_log(logs, "projectile", tmp_path / f"{edit.__name__}.json", edit)
        out = cli("import-inspect", path, "--out", tmp_path / "runs")
        assert (out.returncode, out.stderr) == (2, f"replaylab: {path}: sample default epoch 1: {said}\n"), edit.__name__
    assert not (tmp_path / "runs").exists()


def test_two_sample_ids_of_one_file_name_are_named_as_such(tmp_path, logs):
    log = read_eval_log(logs["scripted-mixed"].location)
    first = next(s for s in log.samples if s.epoch == 1)
    twin = first.model_copy(deep=True)
    first.id, twin.id = "a b", "a/b"
    log.samples = [first, twin]
    path = tmp_path / "twins.eval"
    write_eval_log(log, str(path))
    out = cli("import-inspect", path, "--out", tmp_path / "runs")
    assert out.returncode == 2
    assert out.stderr == (f"replaylab: {path}: sample a/b epoch 1: the same run name as {path}: sample a b epoch 1 "
                          f"(inspect-{log.eval.eval_id}-a-b-e1.json): two samples whose ids differ only in characters a file "
                          "name cannot hold; give them ids of letters, digits, '_', '.' and '-'\n")
    assert not (tmp_path / "runs").exists()


def test_an_import_interrupted_while_writing_removes_what_it_wrote_and_runs_again_whole(tmp_path, logs, monkeypatch):
    """Ctrl-C after some files are written: those are removed, the table is not touched, and the
    same command then imports every run."""
    from replaylab.inspect_tasks import importer

    paths = log_paths(logs, "careless", "silent", "endless", "scripted-mixed")
    out = tmp_path / "runs"
    real_save, saved = recording_io.save, []

    def save_then_interrupt(recording, path, *args, **kwargs):
        if len(saved) == 3:
            raise KeyboardInterrupt
        real_save(recording, path, *args, **kwargs)
        saved.append(path)

    monkeypatch.setattr(recording_io, "save", save_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        importer.import_logs(paths, out, say=lambda line: None)
    assert len(saved) == 3 and not any(p.exists() for p in saved)
    assert list(out.rglob("*.json")) == [] and not (out / importer.IMPORTS).exists()
    monkeypatch.setattr(recording_io, "save", real_save)
    done = cli("import-inspect", *paths, "--out", out)
    assert done.returncode == 0, done.stderr
    assert len(list(out.rglob("*.json"))) == 7 and len(import_table(out)) == 7
