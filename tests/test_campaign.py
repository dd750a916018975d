"""`snakemake campaign`, run for real in a temporary copy of the project: with the scripted
provider as configured (no key), and with the openai provider against the stand-in model server
on 127.0.0.1 (tests/model_server.py), which counts requests in flight and conversations.
"""

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from helpers import ROOT, environment, python
from helpers.model_server import ModelServer
from helpers.workflow import copy_project, first_error_line
from replaylab.agents import recording
from replaylab.agents.names import model_of
from replaylab.campaign import MOST_BATCHES, Campaign
from replaylab.comparison import fisher_exact
from replaylab.workers import read_done_line

pytestmark = pytest.mark.workflow

KEY = "sk-test-CAMPAIGNKEY0123456789abcdef"
LESSON_RUNS = {"projectile": 1, "hunter": 2, "review": 3}  # variants per lesson; each variant is a task of its own
CONFIGURED = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["lessons"]


def project(tmp_path, **settings):
    """A copy of the project whose campaign section is the configured one, changed by `settings`."""
    copy = copy_project(tmp_path / "project", batch_size=50)
    configure(copy, **settings)
    return copy


def configure(copy, **settings):
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(settings)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def snakemake(copy, *arguments, server=None, cores=8, **options):
    env = environment()
    if server is not None:
        env.update(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), *arguments], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=900, **options)


def recordings(copy, lesson="projectile", name="baseline"):
    return sorted((copy / "results" / "campaigns" / name / "recordings" / lesson).glob("*.json"))


def files_holding(copy, text):
    found = []
    for path in sorted(copy.rglob("*")):
        if text in str(path):
            found.append(str(path))
        elif path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if text.encode() in data or (path.suffix == ".gz" and text.encode() in gzip.decompress(data)):
                found.append(str(path.relative_to(copy)))
    return found


def links(page):
    return re.findall(r"\]\(([^)]+)\)", page)


# ---------------------------------------------------------------------------------------------
# The configured campaign: the scripted provider, no key


def test_the_configured_campaign_from_clean_with_no_key(tmp_path):
    copy = project(tmp_path)
    result = snakemake(copy, "campaign", cores=4)
    assert result.returncode == 0, result.stderr[-5000:]
    folder = copy / "results" / "campaigns" / "baseline"

    # 2 programs x 5 runs of every variant of the three lessons, each recorded by a job of its own
    for lesson, variants in LESSON_RUNS.items():
        found = recordings(copy, lesson)
        assert len(found) == 2 * 5 * variants
        for path in found:
            run = recording.load(path)
            model, variant, index = path.stem.split("__")
            assert (run.provenance["provider"], run.provenance["model"], run.variant) == ("scripted", model_of(model), variant)
            assert run.group == f"{model}__{index}" and 1 <= int(index) <= 5
            assert path.stat().st_mode & 0o222 == 0  # protected: read-only
    assert result.stderr.count("Recording ") == 60
    assert not list(copy.glob("results/live"))  # campaigns never write into results/live

    # the comparison is the same group-by as each lesson's scorecard of the same runs
    compared = json.loads((folder / "scorecard.json").read_text())
    rows = {(r["lesson"], r["task"], r["model"]): r for r in compared["scorecard"]}
    assert len(rows) == 2 * sum(LESSON_RUNS.values())  # each reviewer is scored on its own answer, a task of its own
    counted = ("runs", "answered", "right", "supported", "right_unsupported", "supported_wrong", "low", "high", "mistakes")
    for lesson in LESSON_RUNS:
        for r in json.loads((folder / lesson / "scorecard.json").read_text())["scorecard"]:
            mine = rows[(lesson, r["task"], r["model"])]
            assert [mine[k] for k in counted] == [r[k] for k in counted]
    for (lesson, task, model), r in rows.items():
        assert r["runs"] == 5
        assert r["right"] + sum(m["runs"] for m in r["mistakes"]) == 5
        if model == "scripted-careful":  # the careful strategy answers, right and supported, by construction
            assert (r["answered"], r["right"], r["supported"]) == (5, 5, 5), (lesson, task)
    mixed = [r for r in rows.values() if r["model"] == "scripted-mixed"]
    assert any(r["right"] < 5 for r in mixed)  # the mixed program is wrong on purpose, sometimes
    # among its strategies, the careless one experiments well and answers carelessly: supported, and wrong
    assert rows[("projectile", "default", "scripted-mixed")]["supported_wrong"] >= 1
    for pair in compared["comparisons"]:
        a, b = (rows[(pair["lesson"], pair["task"], m)] for m in pair["models"])
        assert pair["p_value"] == fisher_exact(a["right"], a["runs"], b["right"], b["runs"])
    csv_lines = (folder / "scorecard.csv").read_text().splitlines()
    assert csv_lines[0].startswith("lesson,task,model,runs,answered,right,rate,wilson95_low,wilson95_high,conclusive,"
                                   "supported,right_unsupported,supported_wrong")
    assert len(csv_lines) == 1 + len(rows)

    # the page: at a glance who is right more often and how sure that is; every run links to its transcript
    page = (folder / "index.md").read_text()
    assert "## At a glance" in page and "(figures/comparison.png)" in page
    glance = page.split("\n## At a glance\n")[1].split("\n## ")[0]
    models = ("scripted-careful", "scripted-mixed")
    assert f"| lesson and task | {' | '.join(models)} |" in glance
    cells = {(m[1], m[2]): (m[3], m[4]) for m in re.finditer(r"^\| \[(\w+)\]\([^)]*\) `([^`]+)` \| (.+?) \| (.+?) \|$", glance, re.M)}
    assert len(cells) == len(rows) // 2
    for (lesson, task), shown in cells.items():  # each task's highest share in bold, both on a tie
        best = max(rows[(lesson, task, model)]["right"] for model in models)
        for cell, model in zip(shown, models):
            right = rows[(lesson, task, model)]["right"]
            assert cell.strip("*").startswith(f"{right}/5 (") and cell.startswith("**") == (right == best), (lesson, task, cell)
    assert "Fisher's exact test, two-sided" in page
    assert "| answered | right | 95 % interval | supported by its own experiments | right, not supported | supported, wrong |" in page
    transcripts = [link for link in links(page) if link.endswith(".json")]
    assert len(transcripts) == 10 + 20 + 30
    assert all((folder / link).is_file() for link in transcripts)
    assert all((folder / link).is_file() for link in links(page) if not link.startswith("http"))
    assert (folder / "figures" / "comparison.png").read_bytes()[:4] == b"\x89PNG"

    again = snakemake(copy, "campaign", cores=4)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


# ---------------------------------------------------------------------------------------------
# Against the stand-in server


STAND_IN = {"provider": "openai", "models": ["org/model-a:v1", "model-b"], "lessons": ["projectile"], "runs": 10,
            "max_connections": 3, "request_timeout": 5, "max_retries": 4}


def test_at_most_max_connections_in_flight_every_429_retried_and_the_key_nowhere(tmp_path):
    copy = project(tmp_path, **STAND_IN, prices={"org/model-a:v1": {"input": 2.5, "output": 10}})
    with ModelServer(KEY, latency=0.1, careful=["org/model-a:v1"], rate_limit_every=6, retry_after=0.05,
                     drop_every=17) as server:
        result = snakemake(copy, "campaign", server=server)
        port = server.server.server_address[1]
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert server.max_in_flight == 3  # never more than max_connections, and it reached it
    assert server.statuses[429] >= 3 and server.statuses["dropped"] >= 1
    found = recordings(copy)
    assert len(found) == 20  # no run lost
    assert sum(server.started.values()) == 20  # and none sent twice
    runs = [recording.load(path) for path in found]
    assert all(run.transcript.finished for run in runs)
    # each answer 200 is a step of exactly one recording: the 429s and dropped connections were retried
    assert sum(len(run.provenance["request_ids"]) for run in runs) == server.statuses[200]
    # each recording job's log ends with its time (they keep no benchmark file)
    for path in found:
        log = copy / "logs" / "campaigns" / "baseline" / "record" / "projectile" / f"{path.stem}.log"
        assert re.fullmatch(r"record: done in [0-9.]+ s, from [0-9.]+ to [0-9.]+ \(seconds since 1970\)",
                            log.read_text().splitlines()[-1])
    assert not (copy / "benchmarks" / "campaigns" / "baseline" / "record").exists()
    assert sum(run.provenance["usage"]["input_tokens"] for run in runs) == server.usage["input_tokens"]
    assert {run.provenance["server"] for run in runs} == {f"127.0.0.1:{port}"}
    assert {p.name.split("__")[0] for p in found} == {"org_2fmodel-a_3av1", "model-b"}
    page = (copy / "results" / "campaigns" / "baseline" / "index.md").read_text()
    assert "| lesson and task | org/model-a:v1 | model-b |" in page
    assert "mean tokens" in page and "not reported" not in page
    assert "mean cost (USD)" in page and "| no price |" in page  # model-b has no price

    # tokens and cost per model: the means of what the provider reported for each of its runs
    rows = {r["model"]: r for r in json.loads((copy / "results" / "campaigns" / "baseline" / "scorecard.json").read_text())["scorecard"]}
    for model in STAND_IN["models"]:
        usage = [run.provenance["usage"] for run in runs if run.provenance["model"] == model]
        assert rows[model]["mean_tokens"] == pytest.approx(sum(u["input_tokens"] + u["output_tokens"] for u in usage) / 10)
    cost = [(u["input_tokens"] * 2.5 + u["output_tokens"] * 10) / 1e6
            for u in (run.provenance["usage"] for run in runs if run.provenance["model"] == "org/model-a:v1")]
    assert rows["org/model-a:v1"]["mean_cost_usd"] == pytest.approx(sum(cost) / 10)
    assert rows["model-b"]["mean_cost_usd"] is None

    assert files_holding(copy, KEY) == []
    assert KEY not in output

    # replayed in blocks of indices (2 runs a model, about max_connections runs), each as soon as
    # its runs are in: the first block's replay began before the last run ended
    logs = copy / "logs" / "campaigns" / "baseline"
    blocks = [f"runs{first}to{first + 1}" for first in range(1, 11, 2)]
    judged = copy / "results" / "campaigns" / "baseline" / "projectile" / "judged"
    assert sorted(path.stem for path in judged.glob("*.json")) == sorted(blocks)
    replayed = [path.stem for path in (judged.parent / "transcripts" / "runs1to2").glob("*.json")]
    assert sorted(replayed) == sorted(f"{model}__default__00{i}" for model in ("org_2fmodel-a_3av1", "model-b") for i in (1, 2))
    begins = read_done_line(logs / "projectile" / "replay" / "runs1to2.log")[2]
    assert begins < max(read_done_line(path)[3] for path in (logs / "record" / "projectile").glob("*.log"))


def test_a_campaign_is_replayed_in_few_blocks_of_whole_groups():
    settings = {"name": "big", "models": ["a", "b"], "lessons": ["hunter"], "runs": 1000, "max_connections": 8}
    plan = Campaign(settings, batch_size=500)
    blocks = plan.batches["hunter"]
    assert len(blocks) == 32 == MOST_BATCHES  # 2 models x 2 variants x 32 indices a block
    assert list(blocks)[:2] == ["runs1to32", "runs33to64"] and list(blocks)[-1] == "runs993to1000"
    batch_of = {path: batch for batch, paths in blocks.items() for path in paths}
    assert len(batch_of) == 4000  # each run in one block
    groups = {}
    for name, run in plan.runs("hunter").items():
        groups.setdefault(run.group, set()).add(batch_of[plan.recording("hunter", name)])
    assert all(len(found) == 1 for found in groups.values())  # a group (judged together) in one block
    # more runs: new blocks or a longer last block; every other block as it was
    more = Campaign({**settings, "runs": 1010}, batch_size=500).batches["hunter"]
    assert {batch: paths for batch, paths in more.items() if batch != "runs993to1010"} == {
        batch: paths for batch, paths in blocks.items() if batch != "runs993to1000"}
    # a block never passes batch_size: then more blocks
    small = Campaign(settings, batch_size=50).batches["hunter"]
    assert len(small) == 125 and {len(paths) for paths in small.values()} == {32}
    # a small campaign: blocks of about max_connections runs, to replay while the next ones record
    assert list(Campaign({**settings, "runs": 10}, batch_size=500).batches["hunter"]) == ["runs1to2", "runs3to4", "runs5to6", "runs7to8", "runs9to10"]


def test_a_run_that_still_fails_fails_its_own_job_and_keep_going_records_the_rest(tmp_path):
    copy = project(tmp_path, **{**STAND_IN, "models": ["good", "broken"], "runs": 2, "max_retries": 1})
    with ModelServer(KEY, careful=["good"], failing=["broken"]) as server:
        result = snakemake(copy, "--keep-going", "campaign", server=server)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert [p.name for p in recordings(copy)] == ["good__default__001.json", "good__default__002.json"]
    line = ("results/campaigns/baseline/recordings/projectile/broken__default__001.json: not recorded: "
            "replaylab: the provider answered 500: Error code: 500 - The server had an error")
    assert line in output
    log = copy / "logs" / "campaigns" / "baseline" / "record" / "projectile" / "broken__default__001.log"
    assert log.read_text().strip() == line.split("not recorded: ")[1]
    assert files_holding(copy, KEY) == [] and KEY not in output


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_a_stopped_campaign_records_only_what_is_missing(tmp_path, stop):
    copy = project(tmp_path, **STAND_IN)
    with ModelServer(KEY, latency=0.2, careful=["org/model-a:v1"]) as server:
        env = {**environment(), "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url}
        started = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "8", "campaign"], cwd=copy, env=env,
                                   start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while len(recordings(copy)) < 6 and time.monotonic() < deadline and started.poll() is None:
            time.sleep(0.05)
        os.killpg(started.pid, stop)  # the whole process group, as Ctrl-C in a terminal, or kill -9 of all
        started.wait(timeout=300)
        while server.in_flight and time.monotonic() < deadline:  # requests the server still answers to no one
            time.sleep(0.05)
        kept = {path.name: path.read_bytes() for path in recordings(copy)}
        assert 6 <= len(kept) < 20
        conversations = sum(server.started.values())
        if stop == signal.SIGKILL:
            unlock = snakemake(copy, "--unlock", server=server)  # a killed Snakemake leaves its lock
            assert unlock.returncode == 0, unlock.stderr[-3000:]
        again = snakemake(copy, "campaign", server=server)
        assert again.returncode == 0, again.stderr[-5000:]
        assert sum(server.started.values()) - conversations == 20 - len(kept)  # only the missing runs
        assert len(recordings(copy)) == 20
        assert all(path.read_bytes() == kept[path.name] for path in recordings(copy) if path.name in kept)

        if stop == signal.SIGINT:  # raising runs records only the new ones
            configure(copy, runs=12)
            conversations, requests = sum(server.started.values()), server.requests
            more = snakemake(copy, "campaign", server=server)
            assert more.returncode == 0, more.stderr[-5000:]
            assert sum(server.started.values()) - conversations == 4
            new = [recording.load(p) for p in recordings(copy) if p.name.endswith(("__011.json", "__012.json"))]
            assert len(new) == 4 and len(recordings(copy)) == 24
            assert server.requests - requests == sum(len(run.provenance["request_ids"]) for run in new)
            # and replays only their block of indices (the blocks hold 2): the others' verdicts stand
            assert re.findall(r"campaign's runs of projectile, (runs[0-9]+to[0-9]+)", more.stderr) == ["runs11to12"]
    assert files_holding(copy, KEY) == []


# ---------------------------------------------------------------------------------------------
# A recorded run is a source; no value reaches a shell; damaged results are one line (issue 16)


SMALL = {"lessons": ["projectile", "hunter"], "runs": 1, "models": ["scripted-careful"]}  # 3 runs


def snapshot(copy):
    return {path.name: path.read_bytes() for lesson in SMALL["lessons"] for path in recordings(copy, lesson)}


def test_a_recorded_campaign_run_is_never_recorded_again(tmp_path):
    copy = project(tmp_path, **SMALL)
    assert snakemake(copy, "campaign").returncode == 0
    before = snapshot(copy)
    assert len(before) == 3
    # the recording rule's code and the recording settings change; the runs are also read as
    # sources by the default target: no run is recorded again, and none changes
    rules = copy / "workflow" / "rules" / "campaign.smk"
    text = rules.read_text()
    assert text.count("        record_campaign_run(") == 1
    rules.write_text(text.replace("        record_campaign_run(", '        print("a changed rule")\n        record_campaign_run('))
    configure(copy, request_timeout=7, max_retries=1)
    for target in (["campaign"], ["--config", "run_folders=[results/campaigns/baseline/recordings]"]):
        result = snakemake(copy, *target)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        assert "Recording " not in output and "campaign_record" not in output
        assert snapshot(copy) == before
    # a run is recorded again only when its file is deleted by hand: that one alone
    gone = recordings(copy, "hunter")[0]
    gone.chmod(0o644)
    gone.unlink()
    result = snakemake(copy, "campaign")
    assert result.returncode == 0 and result.stderr.count("Recording ") == 1
    assert f"Recording hunter/{gone.stem} for the campaign baseline" in result.stderr
    assert {name: data for name, data in snapshot(copy).items() if name != gone.name} == {
        name: data for name, data in before.items() if name != gone.name}


def test_no_campaign_setting_reaches_a_shell(tmp_path):
    hostile = ["m;touch PWNED", "m$(touch PWNED2)`touch PWNED3`"]
    copy = project(tmp_path, provider="openai", models=hostile, lessons=["projectile"], runs=1)
    with ModelServer(KEY) as server:
        result = snakemake(copy, "campaign", server=server)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not list(copy.rglob("PWNED*"))
    assert sorted(recording.load(path).provenance["model"] for path in recordings(copy)) == sorted(hostile)


def test_a_damaged_campaign_results_folder_is_one_line(tmp_path):
    copy = project(tmp_path, **SMALL)
    assert snakemake(copy, "campaign").returncode == 0
    lesson = copy / "results" / "campaigns" / "baseline" / "projectile"
    (batch,) = (lesson / "transcripts").iterdir()
    (transcript,) = batch.glob("*.json")
    removed = transcript.read_bytes()
    transcript.unlink()
    result = snakemake(copy, "-n", "campaign")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert first_error_line(result) == (f"results/campaigns/baseline/projectile/transcripts/{batch.name}: {transcript.name} "
                                         "was removed after the build: delete it (Snakemake builds it again when a job needs it)")
    transcript.write_bytes(removed)
    judged = lesson / "judged" / f"{batch.name}.json"
    judged.write_text("")
    result = snakemake(copy, "-n", "campaign")
    assert result.returncode == 1 and first_error_line(result) == (
        f"results/campaigns/baseline/projectile/judged/{batch.name}.json: not the whole JSON file the build wrote (emptied or cut "
        "after the build): delete it (Snakemake builds it again when a job needs it)")
    judged.unlink()
    assert snakemake(copy, "campaign").returncode == 0
    (lesson / "runs.csv.gz").write_bytes(b"")  # read by the comparison only, which reruns: one line
    result = snakemake(copy, "campaign")
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert "DamagedResult in file" in result.stderr and (
        "\nresults/campaigns/baseline/projectile/runs.csv.gz: not the table the build wrote (No columns to parse from file): "
        "delete it, or run with --forcerun campaign_render\n") in result.stderr


# ---------------------------------------------------------------------------------------------
# A wrong campaign section stops even a dry run, with one line


@pytest.mark.parametrize("settings,line", [
    ({"provider": "authored"},
     "config/config.yaml: $.campaign.provider: 'authored' is not a provider that records without a person; "
     "the providers are: openai, scripted"),
    ({"provider": "no_such"},
     "config/config.yaml: $.campaign.provider: 'no_such' is not a provider that records without a person; "
     "the providers are: openai, scripted"),
    ({"models": ["gpt-x"]},
     "config/config.yaml: $.campaign.models[0]: 'gpt-x' is not a model of the scripted provider; "
     "its models are: scripted-careful, scripted-careless, scripted-mixed"),
    ({"provider": "openai", "models": ["/odd"]},
     "config/config.yaml: $.campaign.models[0]: '/odd': a model name must start with a letter or a digit"),
    ({"lessons": ["projectile", "orbit"]},
     "config/config.yaml: $.campaign.lessons[1]: 'orbit' is not one of the configured lessons "
     f"(nor a lesson of replaylab): {', '.join(CONFIGURED)}"),
    ({"max_connections": 0}, "config/config.yaml: $.campaign.max_connections: 0 is less than the minimum of 1"),
    ({"prices": {"other": {"input": 1, "output": 2}}},
     "config/config.yaml: $.campaign.prices.other: not one of the campaign's models (scripted-careful, scripted-mixed)"),
    ({"request_timeout": float("inf")}, "config/config.yaml: $.campaign.request_timeout: inf is not a finite number"),
    ({"prices": {"scripted-careful": {"input": 1, "output": float("inf")}}},
     "config/config.yaml: $.campaign.prices.scripted-careful.output: inf is not a finite number"),
    ({"provider": "openai", "models": ["gpt\x1b[31m"]},
     "config/config.yaml: $.campaign.models[0]: 'gpt\\x1b[31m' holds the control character \\x1b, which is printed"),
])
def test_a_wrong_campaign_section_stops_a_dry_run_with_one_line(tmp_path, settings, line):
    copy = project(tmp_path, **settings)
    result = snakemake(copy, "-n", "campaign")
    assert result.returncode == 1
    assert first_error_line(result) == line
    assert not (copy / "results").exists()


def test_pandas_is_imported_only_by_the_jobs_that_tabulate():
    probe = (
        "import sys; sys.path[:0] = ['scripts']\n"
        "import replay, scan, replaylab.cli, replaylab.workers\n"
        "replaylab.cli.parser()\n"
        "assert 'pandas' not in sys.modules and 'openai' not in sys.modules\n"
        "import render, compare\n"
        "assert 'pandas' in sys.modules\n"
    )
    out = python(probe)
    assert out.returncode == 0, out.stderr
