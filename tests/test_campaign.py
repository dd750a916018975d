"""`snakemake campaign`, run for real in a temporary copy of the project: with the scripted
provider as configured (no key), and with the openai provider against the stand-in model server
on 127.0.0.1 (tests/helpers/model_server.py), which counts requests in flight and conversations.
The campaigns that run are `slow` (`make test-all`); what a dry run refuses is not.
"""

import gzip
import json
import os
import re
import signal
import sys
import time
from collections import Counter

import psutil
import pytest
import yaml

from helpers import ROOT, environment, processes, python
from helpers.model_server import ModelServer
from helpers.workflow import copy_project, first_error_line, job_times, prepared_copy
from helpers.workflow import snakemake as run_snakemake
from replaylab import configuration
from replaylab.agents import recording
from replaylab.agents.names import model_of
from replaylab.campaign import MOST_BATCHES, Campaign
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportion_confint

pytestmark = pytest.mark.workflow

KEY = "sk-test-CAMPAIGNKEY0123456789abcdef"
LESSON_RUNS = {"projectile": 1, "hunter": 2, "review": 3}  # variants per lesson; each variant is a task of its own
CONFIGURED = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["lessons"]


def project(tmp_path, prepared=None, **settings):
    """A copy of the project whose campaign section is the configured one, changed by `settings`:
    from clean, or given `prepared` (tests/conftest.py), a copy of it, whose lessons' jobs that read
    no recording (the campaign's pages need their outputs) are up to date."""
    if prepared is None:
        copy = copy_project(tmp_path / "project", batch_size=50)
    else:
        copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    configure(copy, **settings)
    return copy


def configure(copy, **settings):
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(settings)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def settings_of(copy):
    return yaml.safe_load((copy / "config" / "config.yaml").read_text())["campaign"]


def with_server(server):
    return environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url) if server else environment()


def snakemake(copy, *arguments, server=None, cores=8):
    return run_snakemake(copy, "--cores", cores, *arguments, env=with_server(server), check=False, timeout=900)


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


def blocks(copy):
    """{lesson: [block]} of the campaign of a copy, as the workflow plans it."""
    plan = Campaign(settings_of(copy), batch_size=50)
    return {lesson: list(plan.batches[lesson]) for lesson in plan.lessons}


# ---------------------------------------------------------------------------------------------
# The configured campaign: the scripted provider, no key


@pytest.mark.slow  # a campaign recorded and compared by Snakemake
def test_the_configured_campaign_from_clean_with_no_key(tmp_path):
    copy = project(tmp_path)
    result = snakemake(copy, "campaign", cores=2)
    assert result.returncode == 0, result.stderr[-5000:]
    folder = copy / "results" / "campaigns" / "baseline"

    # 2 programs x 5 runs of every variant of the three lessons, recorded by a job per block
    for lesson, variants in LESSON_RUNS.items():
        found = recordings(copy, lesson)
        assert len(found) == 2 * 5 * variants
        for path in found:
            run = recording.load(path)
            model, variant, index = path.stem.split("__")
            assert (run.provenance["provider"], run.provenance["model"], run.variant) == ("scripted", model_of(model), variant)
            assert run.group == f"{model}__{index}" and 1 <= int(index) <= 5
    planned = blocks(copy)
    assert result.stderr.count("Recording the campaign baseline's runs of ") == sum(map(len, planned.values())) < 60
    for lesson, names in planned.items():  # each block's list names its recordings, with their digests
        for block in names:
            listed = json.loads((folder / lesson / "recorded" / f"{block}.json").read_text())["recordings"]
            assert listed and all(path.startswith(f"results/campaigns/baseline/recordings/{lesson}/") for path, _ in listed)
    assert not list(copy.glob("results/live"))  # campaigns never write into results/live

    # the comparison is the same group-by as each lesson's scorecard of the same runs
    compared = json.loads((folder / "scorecard.json").read_text())
    rows = {(r["lesson"], r["task"], r["model"]): r for r in compared["scorecard"]}
    assert len(rows) == 2 * sum(LESSON_RUNS.values())  # each reviewer is scored on its own answer, a task of its own
    counted = ("runs", "answered", "right", "supported", "right_unsupported", "supported_wrong")
    for lesson in LESSON_RUNS:
        for r in json.loads((folder / lesson / "scorecard.json").read_text())["scorecard"]:
            mine = rows[(lesson, r["task"], r["model"])]
            assert [mine[k] for k in counted] == [r[k] for k in counted]
            # the tests count distinct runs: the careful program's five runs of one instance are one run five times
            assert 1 <= mine["distinct_runs"] <= mine["runs"] and mine["distinct_right"] <= mine["right"]
            if mine["distinct_runs"] == mine["runs"]:
                assert (mine["rate_low"], mine["rate_high"]) == (pytest.approx(r["low"], abs=1e-9), pytest.approx(r["high"], abs=1e-9))
            else:
                wilson = proportion_confint(mine["distinct_right"], mine["distinct_runs"], alpha=0.05, method="wilson")
                assert (mine["rate_low"], mine["rate_high"]) == pytest.approx(wilson, abs=1e-9)
            assert mine["mistakes"] == "; ".join(f"{m['what']} ({m['runs']})" for m in r["mistakes"])
    for (lesson, task, model), r in rows.items():
        assert r["runs"] == 5
        assert r["right"] + sum(int(m.rsplit("(", 1)[1][:-1]) for m in r["mistakes"].split("; ") if m) == 5
        if model == "scripted-careful":  # the careful strategy answers, right and supported, by construction
            assert (r["answered"], r["right"], r["supported"]) == (5, 5, 5), (lesson, task)
    mixed = [r for r in rows.values() if r["model"] == "scripted-mixed"]
    assert any(r["right"] < 5 for r in mixed)  # the mixed program is wrong on purpose, sometimes
    # among its strategies, the careless one experiments well and answers carelessly: wrong, and its own
    # experiments locate the top elsewhere (not supported)
    careless = rows[("projectile", "default", "scripted-mixed")]
    assert careless["answered"] == 5 and careless["right"] < 5 and careless["supported"] < 5
    assert len(compared["pairs"]) == len(rows) // 2 and len(compared["across_tasks"]) == 1  # never pooled: combined
    assert compared["across_tasks"][0]["tasks"] == len(rows) // 2
    for pair in compared["pairs"]:
        a, b = (rows[(pair["lesson"], pair["task"], m)] for m in (pair["model_a"], pair["model_b"]))
        table = [[a["distinct_right"], a["distinct_runs"] - a["distinct_right"]],
                 [b["distinct_right"], b["distinct_runs"] - b["distinct_right"]]]  # the tests count distinct runs
        assert pair["p_value"] == pytest.approx(min(1.0, fisher_exact(table).pvalue), rel=1e-9)
    csv_lines = (folder / "scorecard.csv").read_text().splitlines()
    assert csv_lines[0].startswith("lesson,task,model,runs,answered,right,distinct_runs,distinct_right,rate,rate_low,"
                                   "rate_high,rule_of_three_high,rule_of_three_low,supported,right_unsupported,supported_wrong")
    assert len(csv_lines) == 1 + len(rows)

    # the page: at a glance who is right more often and how sure that is; every run links to its transcript
    page = (folder / "index.md").read_text()
    assert "## At a glance" in page and "(figures/comparison.png)" in page
    glance = page.split("\n## At a glance\n")[1].split("\n## ")[0]
    models = ("scripted-careful", "scripted-mixed")
    assert f"| lesson and task | {' | '.join(models)} |" in glance
    cells = {(m[1], m[2]): (m[3], m[4]) for m in re.finditer(r"^\| \[(\w+)\]\([^)]*\) `([^`]+)` \| (.+?) \| (.+?) \|$", glance, re.M)}
    assert len(cells) == len(rows) // 2
    for (lesson, task), shown in cells.items():  # each task's highest share (of distinct runs) in bold, both on a tie
        best = max(rows[(lesson, task, model)]["rate"] for model in models)
        for cell, model in zip(shown, models):
            row = rows[(lesson, task, model)]
            counted_as = f"{row['distinct_right']}/{row['distinct_runs']}"
            start = f"{counted_as} · " if row["distinct_runs"] == 5 else f"{counted_as} distinct (of 5 runs) · "
            assert cell.strip("*").startswith(start) and cell.startswith("**") == (row["rate"] == best), (lesson, task, cell)
    assert "Fisher's exact test, two-sided" in page
    assert "| answered | right | rate | rate_low to rate_high | rule_of_three_high | supported | right_unsupported | supported_wrong |" in page
    transcripts = [link for link in links(page) if link.endswith(".jsonl") or "/runs/" in link]
    assert len(transcripts) == 10 + 20 + 30
    assert all((folder / link).is_file() for link in transcripts)
    assert all((folder / link).is_file() for link in links(page) if not link.startswith("http"))
    assert (folder / "figures" / "comparison.png").read_bytes()[:4] == b"\x89PNG"

    again = snakemake(copy, "campaign", cores=2)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr

    # a recorded run is a source: the recording job's code and the recording settings change, and
    # no run is recorded again, none changes; one is recorded again only when its file is deleted
    before = {path: path.read_bytes() for lesson in LESSON_RUNS for path in recordings(copy, lesson)}
    logs = copy / "logs" / "campaigns" / "baseline"
    first = {log: log.read_text() for log in logs.glob("*/record/*.log")}
    script = copy / "scripts" / "campaign_record.py"
    script.write_text(script.read_text() + "\n# a changed recording job\n")
    configure(copy, request_timeout=7, max_retries=1)
    result = snakemake(copy, "campaign", cores=2)
    assert result.returncode == 0, result.stderr[-3000:]
    assert {path: path.read_bytes() for path in before} == before
    for log, text in first.items():  # a recording job that ran again found every run on disk
        assert log.read_text() == text or re.match(r"\w+/runs\d+to\d+: 0 of \d+ runs to record", log.read_text())
    gone = recordings(copy, "hunter")[0]
    gone.unlink()
    result = snakemake(copy, "campaign", cores=2)
    assert result.returncode == 0, result.stderr[-3000:]
    (block,) = blocks(copy)["hunter"]
    log = (logs / "hunter" / "record" / f"{block}.log").read_text()
    assert re.match(rf"hunter/{block}: 1 of 20 runs to record", log) and f"recorded {gone.relative_to(copy)}" in log
    assert {path: path.read_bytes() for path in before if path != gone} == {p: d for p, d in before.items() if p != gone}
    assert gone.is_file()


# ---------------------------------------------------------------------------------------------
# Against the stand-in server


STAND_IN = {"provider": "openai", "models": ["org/model-a:v1", "model-b"], "lessons": ["projectile"], "runs": 10,
            "max_connections": 3, "request_timeout": 5, "max_retries": 4}


@pytest.mark.slow  # a campaign recorded and compared by Snakemake
def test_at_most_max_connections_in_flight_every_429_retried_and_the_key_nowhere(tmp_path, prepared):
    copy = project(tmp_path, prepared, **{**STAND_IN, "max_connections": 2}, prices={"org/model-a:v1": {"input": 2.5, "output": 10}})
    with ModelServer(KEY, latency=0.1, careful=["org/model-a:v1"], rate_limit_every=6, retry_after=0.05,
                     drop_every=17) as server:
        result = snakemake(copy, "campaign", server=server)
        port = server.server.server_address[1]
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert server.max_in_flight == 2  # never more than max_connections, and it reached it
    assert server.statuses[429] >= 3 and server.statuses["dropped"] >= 1
    found = recordings(copy)
    assert len(found) == 20  # no run lost
    assert sum(server.started.values()) == 20  # and none sent twice
    runs = [recording.load(path) for path in found]
    assert all(run.transcript.finished for run in runs)
    # each answer 200 is a step of exactly one recording: the 429s and dropped connections were retried
    assert sum(len(run.provenance["request_ids"]) for run in runs) == server.statuses[200]
    assert sum(run.provenance["usage"]["input_tokens"] for run in runs) == server.usage["input_tokens"]
    assert {run.provenance["server"] for run in runs} == {f"127.0.0.1:{port}"}
    assert {p.name.split("__")[0] for p in found} == {"org_2fmodel-a_3av1", "model-b"}
    page = (copy / "results" / "campaigns" / "baseline" / "index.md").read_text()
    assert "| lesson and task | org/model-a:v1 | model-b |" in page
    assert "| mean_tokens |" in page and "not reported" not in page
    assert "| mean_cost_usd |" in page and "| no price |" in page  # model-b has no price

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

    # recorded and replayed in blocks of indices (each job holds one of the 2 connections, and
    # records up to 16 runs: 8 indices of 2 models), each block replayed as soon as its runs are
    # in: the first replay began before the last block's recording ended
    logs = copy / "logs" / "campaigns" / "baseline" / "projectile"
    planned = ["runs1to8", "runs9to10"]
    assert blocks(copy) == {"projectile": planned}
    judged = copy / "results" / "campaigns" / "baseline" / "projectile" / "judged"
    assert sorted(path.stem for path in judged.glob("*.json")) == sorted(planned)
    replayed = [json.loads(line)["run"] for line in (judged.parent / "transcripts" / "runs9to10.jsonl").read_text().splitlines()]
    assert sorted(replayed) == sorted(f"{model}__default__{i:03d}" for model in ("org_2fmodel-a_3av1", "model-b") for i in (9, 10))
    recorded = [job_times(logs / "record" / f"{block}.log") for block in planned]
    assert min(job_times(logs / "replay" / f"{block}.log")[0] for block in planned) < max(end for _, end in recorded)
    for block, runs in zip(planned, (16, 4)):  # each job has its log and its benchmark
        assert f"{runs} of {runs} runs to record, 1 at a time" in (logs / "record" / f"{block}.log").read_text()
        assert (copy / "benchmarks" / "campaigns" / "baseline" / "projectile" / "record" / f"{block}.tsv").is_file()


def test_a_campaign_is_replayed_in_few_blocks_of_whole_groups():
    settings = {"name": "big", "models": ["a", "b"], "lessons": ["hunter"], "instances": "seeds", "runs": 1000,
                "max_connections": 8}
    plan = Campaign(settings, batch_size=500)
    found = plan.batches["hunter"]
    assert len(found) == 32 == MOST_BATCHES  # 2 models x 2 variants x 32 indices a block
    assert list(found)[:2] == ["runs1to32", "runs33to64"] and list(found)[-1] == "runs993to1000"
    batch_of = {name: batch for batch, runs in found.items() for name in runs}
    assert len(batch_of) == 4000  # each run in one block
    groups = {}
    for name, run in plan.runs("hunter").items():
        groups.setdefault(run.group, set()).add(batch_of[name])
    assert all(len(found) == 1 for found in groups.values())  # a group (judged together) in one block
    # more runs: new blocks or a longer last block; every other block as it was
    more = Campaign({**settings, "runs": 1010}, batch_size=500).batches["hunter"]
    assert {batch: runs for batch, runs in more.items() if batch != "runs993to1010"} == {
        batch: runs for batch, runs in found.items() if batch != "runs993to1000"}
    # a block never passes batch_size: then more blocks
    small = Campaign(settings, batch_size=50).batches["hunter"]
    assert len(small) == 84 and max(len(runs) for runs in small.values()) == 48
    # a small campaign: blocks of about 16 runs a connection of a job (8 // 2 = 4 connections each)
    assert list(Campaign({**settings, "runs": 10}, batch_size=500).batches["hunter"]) == ["runs1to10"]
    assert list(Campaign({**settings, "runs": 40}, batch_size=500).batches["hunter"]) == ["runs1to16", "runs17to32", "runs33to40"]


@pytest.mark.slow  # a campaign recorded by Snakemake
def test_a_run_that_still_fails_fails_its_block_and_the_others_are_recorded(tmp_path, prepared):
    copy = project(tmp_path, prepared, **{**STAND_IN, "models": ["good", "broken"], "runs": 2, "max_retries": 1})
    with ModelServer(KEY, careful=["good"], failing=["broken"]) as server:
        result = snakemake(copy, "--keep-going", "campaign", server=server)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert [p.name for p in recordings(copy)] == ["good__default__001.json", "good__default__002.json"]
    line = ("results/campaigns/baseline/recordings/projectile/broken__default__001.json: not recorded: "
            "the provider answered 500: Error code: 500 - The server had an error")
    assert line in output and "Traceback" not in output
    assert "\n2 of 4 runs of projectile/runs1to2 not recorded; the first: " in output
    log = (copy / "logs" / "campaigns" / "baseline" / "projectile" / "record" / "runs1to2.log").read_text()
    assert line in log
    assert not (copy / "results" / "campaigns" / "baseline" / "projectile" / "recorded" / "runs1to2.json").exists()
    assert files_holding(copy, KEY) == [] and KEY not in output


class FailingAt(ModelServer):
    """ModelServer whose model `flaky` answers its first `answers` messages, and then 500 until
    `mend()` is called."""

    def __init__(self, answers=2):
        super().__init__(KEY, careful=["good", "flaky"])
        self.limit = answers
        self.asked = Counter()  # (model, seed or None, message number): requests

    def mend(self):
        self.limit = None

    def play(self, handler, number, body, model):
        message = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
        seed = next((int(found[1]) for m in body["messages"] for call in m.get("tool_calls") or ()
                     if (found := re.fullmatch(r"s(\d+)-.*", call["id"]))), None)
        with self.lock:
            self.asked[(model, seed, message)] += 1
        if model == "flaky" and self.limit is not None and message > self.limit:
            return self.send(handler, number, 500, {"error": {"message": "The server had an error"}}, model)
        return super().play(handler, number, body, model)


@pytest.mark.slow  # campaigns recorded and compared by Snakemake
def test_a_run_that_fails_midway_keeps_what_was_answered_and_the_campaign_continues_it(tmp_path, prepared):
    """The provider answers two messages of each `flaky` run, then fails: the block fails, the
    answered messages are kept in each run's partial file; the same command, once the provider
    is mended, continues each run from its third message (no message asked twice), and every run
    replays in the build. A partial run the campaign no longer asks for (a lowered `runs`) was paid
    for: the page's cost line counts it."""
    copy = project(tmp_path, prepared, **{**STAND_IN, "models": ["good", "flaky"], "runs": 2, "max_retries": 0},
                   prices={"good": {"input": 1.0, "output": 2.0}, "flaky": {"input": 3.0, "output": 5.0}})
    folder = copy / "results" / "campaigns" / "baseline" / "recordings" / "projectile"
    with FailingAt() as server:
        failed = snakemake(copy, "campaign", server=server)
        assert failed.returncode != 0
        assert "the 2 messages answered before are kept in" in failed.stdout + failed.stderr
        partials = sorted(folder.glob(".flaky__*.json.partial"))
        assert [p.name for p in partials] == [".flaky__default__001.json.partial", ".flaky__default__002.json.partial"]
        assert all(len(json.loads(p.read_text())["steps"]) == 2 for p in partials)

        server.mend()
        again = snakemake(copy, "campaign", server=server)
        assert again.returncode == 0, again.stderr[-5000:]
        assert not list(folder.glob(".*"))  # partial files removed once their runs are written
        flaky = [recording.load(p) for p in recordings(copy) if p.name.startswith("flaky")]
        assert len(flaky) == 2 and all(run.transcript.finished for run in flaky)
        # every message of every conversation asked once (the first, which has no seed yet, once per run), but
        # the third of each flaky run, asked twice (its 500, then once more)
        for (model, seed, message), count in server.asked.items():
            assert count == (2 if message == 1 or (model == "flaky" and message == 3) else 1), (model, seed, message, count)
        assert all(len(run.provenance["request_ids"]) == len(run.transcript.steps) for run in flaky)
        page = (copy / "results" / "campaigns" / "baseline" / "index.md").read_text()
        assert "unfinished" not in page

        # a run left unfinished, then no longer asked for (campaign.runs lowered again): its spend is on the page
        configure(copy, runs=3)
        server.limit = 2
        assert snakemake(copy, "campaign", server=server).returncode != 0  # flaky's third run fails at message 3
        left = folder / ".flaky__default__003.json.partial"
        usage = json.loads(left.read_text())["provenance"]["usage"]
        configure(copy, runs=2)
        done = snakemake(copy, "campaign", server=server)
        assert done.returncode == 0, done.stderr[-5000:]
    assert left.exists()
    spend = json.loads((copy / "results" / "campaigns" / "baseline" / "scorecard.json").read_text())["unfinished"]
    cost = (usage["input_tokens"] * 3.0 + usage["output_tokens"] * 5.0) / 1e6
    assert spend == {"runs": 1, **usage, "cost_usd": pytest.approx(cost, rel=1e-12)}
    page = (copy / "results" / "campaigns" / "baseline" / "index.md").read_text()
    assert "Plus 1 unfinished run, kept in partial files" in page and f"{cost:.4g} USD" in page


def descendants(pid):
    return [process for process in psutil.Process(pid).children(recursive=True)]


@pytest.mark.slow  # a campaign stopped by a signal, then run again
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_stopped_campaign_leaves_no_process_and_the_same_command_records_only_what_is_missing(tmp_path, prepared, stop):
    """Ctrl-C (SIGINT to the terminal's process group), or SIGKILL of Snakemake's process alone,
    midway: no process of the run outlives it, no run on disk is sent again, every run is recorded
    once. After SIGKILL, Snakemake's own lock stays behind: the same command says so and records
    nothing, `--unlock` removes it, and the same command then finishes the campaign."""
    runs = 20 if stop == signal.SIGINT else 10  # blocks of 16 indices: 32 and 8 runs, or one of 20
    copy = project(tmp_path, prepared, **{**STAND_IN, "max_connections": 4, "runs": runs})
    with ModelServer(KEY, latency=0.1, careful=["org/model-a:v1"]) as server:
        output = tmp_path / "first-run.txt"
        with open(output, "w") as stream:  # Snakemake and its jobs end with the test (helpers.processes)
            started = processes.start([sys.executable, "-m", "snakemake", "--cores", "8", "campaign"], cwd=copy,
                                      env=with_server(server), start_new_session=True, stdout=stream, stderr=stream)
        processes.until(lambda: len(recordings(copy)) >= 6, started, timeout=300)  # the event: the sixth recording
        jobs = descendants(started.pid)
        assert jobs and len(recordings(copy)) < 2 * runs, "no recording job was running"
        if stop == signal.SIGINT:
            os.killpg(started.pid, stop)  # the terminal's Ctrl-C: Snakemake and its jobs
        else:
            os.kill(started.pid, stop)  # Snakemake alone: its jobs get no signal
        started.wait(timeout=120)
        assert processes.all_ended(jobs, timeout=10) == [], "a process of the stopped run survived it"
        server.wait_idle(timeout=300)  # requests the server still answers to no one
        said = output.read_text()
        assert "Traceback" not in said, said[-3000:]
        kept = {path.name: path.read_bytes() for path in recordings(copy)}
        assert 6 <= len(kept) < 2 * runs
        requests = server.requests
        # the runs in flight keep what was answered in their partial files: continued, never asked again
        partials = {p.name[1:].removesuffix(".partial"): json.loads(p.read_text())
                    for p in copy.glob("results/campaigns/baseline/recordings/projectile/.*.json.partial")}
        assert all(name not in kept and data["partial"]["why"].startswith("the recording stopped while the provider")
                   for name, data in partials.items())

        if stop == signal.SIGKILL:  # a killed Snakemake leaves its lock: the same command stops and says so
            locked = snakemake(copy, "campaign", server=server)
            assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
            assert server.requests == requests
            unlock = snakemake(copy, "--unlock", server=server)
            assert unlock.returncode == 0, unlock.stderr[-3000:]
        again = snakemake(copy, "campaign", server=server)
        assert again.returncode == 0, again.stderr[-5000:]
        assert len(recordings(copy)) == 2 * runs
        assert all(path.read_bytes() == kept[path.name] for path in recordings(copy) if path.name in kept)
        new = [recording.load(p) for p in recordings(copy) if p.name not in kept]
        # every request of the rerun is a step of a run that was not on disk, and not of its partial
        # file: none for a kept run, none for a message answered before the stop
        continued = [run for run in new if f"{run.run}.json" in partials]
        assert all(run.provenance["request_ids"][:len(partials[f"{run.run}.json"]["steps"])]
                   == partials[f"{run.run}.json"]["provenance"]["request_ids"] for run in continued)
        assert server.requests - requests == sum(len(run.provenance["request_ids"]) for run in new) - sum(
            len(data["steps"]) for data in partials.values())
        ids = [i for p in recordings(copy) for i in recording.load(p).provenance["request_ids"]]
        assert len(ids) == len(set(ids))  # each run recorded once, from answers of its own
        assert not list(copy.glob("results/campaigns/baseline/recordings/*/.*"))  # nothing half-written

        if stop == signal.SIGINT:  # raising runs records only the new ones
            configure(copy, runs=22)
            conversations, requests = sum(server.started.values()), server.requests
            more = snakemake(copy, "campaign", server=server)
            assert more.returncode == 0, more.stderr[-5000:]
            assert sum(server.started.values()) - conversations == 4
            new = [recording.load(p) for p in recordings(copy) if p.name.endswith(("__021.json", "__022.json"))]
            assert len(new) == 4 and len(recordings(copy)) == 44
            assert server.requests - requests == sum(len(run.provenance["request_ids"]) for run in new)
            # and replays only their block of indices: the others' verdicts stand
            assert re.findall(r"campaign's runs of projectile, (runs[0-9]+to[0-9]+), through", more.stderr) == ["runs17to22"]
    assert files_holding(copy, KEY) == []


# ---------------------------------------------------------------------------------------------
# No value reaches a shell


@pytest.mark.slow  # a campaign recorded by Snakemake
def test_no_campaign_setting_reaches_a_shell(tmp_path, prepared):
    hostile = ["m;touch PWNED", "m$(touch PWNED2)`touch PWNED3`"]
    copy = project(tmp_path, prepared, provider="openai", models=hostile, lessons=["projectile"], runs=1)
    with ModelServer(KEY) as server:
        result = snakemake(copy, "campaign", server=server)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not list(copy.rglob("PWNED*"))
    assert sorted(recording.load(path).provenance["model"] for path in recordings(copy)) == sorted(hostile)


# ---------------------------------------------------------------------------------------------
# A wrong campaign section stops even a dry run, with one line; a huge one costs nothing elsewhere


@pytest.mark.parametrize("settings,line", [
    ({"provider": "authored"},
     "config/config.yaml: $.campaign.provider: 'authored' is not a provider that records without a person or whose runs "
     "are imported; the providers are: inspect_ai, openai, scripted"),
    ({"provider": "no_such"},
     "config/config.yaml: $.campaign.provider: 'no_such' is not a provider that records without a person or whose runs "
     "are imported; the providers are: inspect_ai, openai, scripted"),
    ({"models": ["gpt-x"]},
     "config/config.yaml: $.campaign.models[0]: 'gpt-x' is not a model of the scripted provider; "
     "its models are: scripted-careful, scripted-careless, scripted-mixed"),
    ({"provider": "openai", "models": ["/odd"]},
     "config/config.yaml: $.campaign.models[0]: '/odd': a model name must start with a letter or a digit"),
    ({"lessons": ["projectile", "orbit"]},
     "config/config.yaml: $.campaign.lessons[1]: 'orbit' is not one of the configured lessons "
     f"(nor a lesson of replaylab): {', '.join(CONFIGURED)}"),
    ({"max_connections": 0}, "config/config.yaml: $.campaign.max_connections: 0 is less than the minimum of 1"),
    ({"runs": 10**6}, "config/config.yaml: $.campaign.runs: 1000000 is greater than the maximum of 100000"),
    ({"prices": {"other": {"input": 1, "output": 2}}},
     "config/config.yaml: $.campaign.prices.other: not one of the campaign's models (scripted-careful, scripted-mixed)"),
    ({"request_timeout": float("inf")}, "config/config.yaml: $.campaign.request_timeout: inf is greater than the maximum of 3600"),
    ({"request_timeout": float("nan")}, "config/config.yaml: $.campaign.request_timeout: nan is not a finite number"),
    ({"prices": {"scripted-careful": {"input": 1, "output": float("inf")}}},
     "config/config.yaml: $.campaign.prices.scripted-careful.output: inf is greater than the maximum of 10000"),
    ({"provider": "openai", "models": ["gpt\x1b[31m"]},
     "config/config.yaml: $.campaign.models[0]: 'gpt\\x1b[31m' holds the control character \\x1b at position 3: "
     "this field is printed, so it may hold none"),
])
def test_a_wrong_campaign_section_stops_a_dry_run_with_one_line(tmp_path, settings, line):
    """Three of the cases through `snakemake -n campaign`; the others through the check the workflow
    calls while it starts (replaylab.configuration), which says that line."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["campaign"].update(settings)
    if line.split(": ")[1] not in ("$.campaign.provider", "$.campaign.models[0]", "$.campaign.request_timeout"):
        with pytest.raises(configuration.InputError) as refused:
            configuration.check(config, "config/config.yaml", ROOT / "workflow" / "schemas" / "config.schema.yaml")
        assert str(refused.value) == line
        return
    copy = project(tmp_path, **settings)
    result = snakemake(copy, "-n", "campaign")
    assert result.returncode == 1
    assert first_error_line(result) == line
    assert not (copy / "results").exists()


def test_a_huge_campaign_is_not_planned_unless_it_is_the_target(tmp_path):
    """100,000 runs of each variant of 3 lessons for 100 models (18 million runs): the default
    target's dry run does not plan them."""
    models = [f"m{i}" for i in range(100)]
    copy = project(tmp_path, provider="openai", models=models, runs=100000)
    started = time.monotonic()
    result = snakemake(copy, "-n")
    assert result.returncode == 0 and "Job stats" in result.stdout, result.stderr[-3000:]
    assert time.monotonic() - started < 60
    assert not (copy / "results").exists()


def test_pandas_and_the_sdk_are_imported_only_by_the_jobs_that_need_them():
    probe = (
        "import sys\n"
        "import replaylab.pipeline, replaylab.jobs, replaylab.campaign, replaylab.cli\n"
        "replaylab.cli.parser()\n"
        "assert 'pandas' not in sys.modules and 'openai' not in sys.modules\n"
        "import replaylab.render, replaylab.comparison\n"
        "assert 'pandas' in sys.modules\n"
    )
    out = python(probe)
    assert out.returncode == 0, out.stderr
