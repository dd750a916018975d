"""`replaylab campaign` as a user runs it, in a copy of the project, against the stand-in model
server on 127.0.0.1 (tests/helpers/model_server.py: bars-good answers the projectile lesson right,
bars-coin tosses a coin): end to end, a dry run that sends nothing, Ctrl-C midway and the same
command again, and a changed campaign refused. The tests that run a campaign are `slow` (`make
test-all`); the dry run is in this process."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys

import psutil
import pytest
import yaml

from helpers import ROOT, environment, in_process, processes
from helpers.model_server import ModelServer
from helpers.workflow import copy_project, prepared_copy
from helpers.workflow import snakemake as snakemake_in
from replaylab.agents import recording

KEY = "sk-test-COMMANDKEY-0123456789abcdef"
COMMAND = ["campaign", "--model", "bars-good,bars-coin", "--lesson", "projectile", "--runs", "12",
           "--max-connections", "4", "--name", "bars", "--cores", "4"]


def env_of(copy, server):
    return environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url, PYTHONPATH=str(copy / "src"))


def replaylab(copy, server, *args, timeout=600):
    """`replaylab ARGS` as a real process in the copy, with its own library; it, and the Snakemake it
    starts, end with the test (helpers.processes)."""
    return processes.run([sys.executable, "-m", "replaylab", *args], timeout, cwd=copy, env=env_of(copy, server))


def recordings(copy):
    return sorted((copy / "results" / "campaigns" / "bars" / "recordings" / "projectile").glob("*.json"))


def answered_in_unfinished_runs(copy):
    """The requests answered in the runs a stopped job kept unfinished (`.RUN.json.partial`, which
    the resume continues)."""
    folder = copy / "results" / "campaigns" / "bars" / "recordings" / "projectile"
    return sum(len(json.loads(p.read_text())["provenance"].get("request_ids") or ()) for p in folder.glob(".*.json.partial"))


@pytest.mark.slow  # campaigns recorded and compared by Snakemake
def test_dry_run_sends_nothing_then_the_campaign_runs_end_to_end(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    with ModelServer(KEY, rate_limit_every=9, retry_after=0.05) as server:
        dry = replaylab(copy, server, *COMMAND, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert server.requests == 0
        port = server.server.server_address[1]
        said = dry.stdout
        assert "campaign bars: 24 runs (projectile; 12 per model and variant of each of 1 instance), 0 on disk, 24 to record" in said
        assert f"endpoint $OPENAI_BASE_URL = 127.0.0.1:{port}, key in $OPENAI_API_KEY (set): at most 4 requests at once" in said
        assert "bars-good: 12 runs, at most " in said and "dry run: nothing sent, nothing written" in said
        assert not (copy / "results" / "campaigns" / "bars").exists()

        priced = tmp_path / "prices.yaml"
        priced.write_text(yaml.safe_dump({"prices": {"bars-good": {"input": 2.5, "output": 10}}}))
        result = replaylab(copy, server, *COMMAND, "--config", priced)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert server.max_in_flight <= 4
        retried = server.statuses[429]
    assert retried >= 3
    out = result.stdout
    usage = [recording.load(p).provenance for p in recordings(copy)]
    tokens = sum(u["usage"]["input_tokens"] + u["usage"]["output_tokens"] for u in usage)
    cost = sum(u["usage"]["input_tokens"] * 2.5 + u["usage"]["output_tokens"] * 10 for u in usage if u["model"] == "bars-good") / 1e6
    assert f"24 of 24 runs on disk, 0 left; 0 requests in flight, {retried} retried; {tokens} tokens, {cost:.4f} USD" in out
    assert "new campaign: its settings are in results/campaigns/bars/campaign.yaml" in out
    assert " runs on disk, " in out.split("new campaign")[1].splitlines()[1]  # progress while it ran
    assert out.rstrip().endswith("the comparison: results/campaigns/bars/index.html")
    assert KEY not in out + result.stderr
    written = yaml.safe_load((copy / "results" / "campaigns" / "bars" / "campaign.yaml").read_text())["campaign"]
    assert [m["name"] for m in written["models"]] == ["bars-good", "bars-coin"] and written["runs"] == 12
    assert len(recordings(copy)) == 24 and sum(server.started.values()) == 24
    rows = {r["model"]: r for r in json.loads((copy / "results" / "campaigns" / "bars" / "scorecard.json").read_text())["scorecard"]}
    assert rows["bars-good"]["right"] == 12 and rows["bars-coin"]["runs"] == 12

    # the same command again: nothing to send; a different setting of a recorded model: refused
    with ModelServer(KEY) as server:
        again = replaylab(copy, server, *COMMAND)
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.requests == 0 and "resuming the campaign in results/campaigns/bars" in again.stdout
        other = tmp_path / "other.yaml"
        other.write_text(yaml.safe_dump({"campaign": {"models": [{"name": "bars-good", "provider": "openai",
                                                                   "settings": {"temperature": 0.5}}]}}))
        refused = replaylab(copy, server, *COMMAND, "--config", str(other))
        assert refused.returncode == 2 and server.requests == 0
        assert refused.stderr.startswith("replaylab: results/campaigns/bars/campaign.yaml: the model 'bars-good' was recorded as ")
        assert len(refused.stderr.strip().splitlines()) == 1
    with ModelServer(KEY) as elsewhere:  # the same variable, now pointing at another server
        moved = replaylab(copy, elsewhere, *COMMAND, "--runs", "13")
        assert moved.returncode == 2 and elsewhere.requests == 0
        assert moved.stderr.startswith("replaylab: results/campaigns/bars/recordings/projectile/bars-good__default__001.json: "
                                       f"the model 'bars-good' was recorded from 127.0.0.1:{port}; its server is now ")


@pytest.mark.slow  # a campaign stopped by a signal, then run again
def test_ctrl_c_midway_then_the_same_command_resumes_without_resending(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    with ModelServer(KEY, latency=0.1) as server:
        out = tmp_path / "first.txt"
        with open(out, "w") as stream:  # the command and what it started end with the test (helpers.processes)
            started = processes.start([sys.executable, "-m", "replaylab", *COMMAND], cwd=copy, env=env_of(copy, server),
                                      stdout=stream, stderr=stream, start_new_session=True)
        # the event: the sixth recording on disk
        assert processes.until(lambda: len(recordings(copy)) >= 6, started, timeout=300), out.read_text()[-3000:]
        running = psutil.Process(started.pid).children(recursive=True)
        assert running and len(recordings(copy)) < 24, out.read_text()[-3000:]
        os.killpg(started.pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the command's group
        assert started.wait(timeout=150) == 130
        assert processes.all_ended(running, timeout=20) == []
        said = out.read_text()
        assert "Traceback" not in said
        lines = [line for line in said.splitlines() if line.startswith("replaylab: interrupted")]
        assert len(lines) == 1 and lines[0].endswith("the same command resumes"), said[-2000:]
        server.wait_idle(timeout=40)  # requests the server still answers to no one
        kept = {p.name: p.read_bytes() for p in recordings(copy)}
        assert 6 <= len(kept) < 24
        assert server.max_in_flight == 4  # one block: its job holds every connection
        requests = server.requests
        paid = answered_in_unfinished_runs(copy)

        again = replaylab(copy, server, *COMMAND)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"{len(kept)} on disk, {24 - len(kept)} to record" in again.stdout
    assert "resuming the campaign in results/campaigns/bars" in again.stdout
    assert len(recordings(copy)) == 24
    assert all(p.read_bytes() == kept[p.name] for p in recordings(copy) if p.name in kept)
    new = [recording.load(p) for p in recordings(copy) if p.name not in kept]
    # none for a kept run, nor for a message an unfinished run kept (the resume continues it)
    assert server.requests - requests == sum(len(run.provenance["request_ids"]) for run in new) - paid
    assert not list((copy / "results" / "campaigns" / "bars" / "recordings").glob("*/.*"))  # nothing half-written
    found = subprocess.run(["grep", "-r", "-l", "-F", KEY, str(copy)], capture_output=True, text=True)  # .snakemake/ too
    assert found.returncode == 1 and found.stdout == "", found.stdout


def dry_run(copy, server, *args):
    """`replaylab campaign ... --dry-run` in this process, in the copy, with the server's variables."""
    return in_process(*args, cwd=copy, env=env_of(copy, server))


def test_a_dry_run_bounds_the_cost_at_the_configured_prices(tmp_path):
    copy = copy_project(tmp_path / "project", batch_size=50)
    settings = tmp_path / "priced.yaml"
    settings.write_text(yaml.safe_dump({"campaign": {
        "max_tokens_per_run": 10000, "prices": {"bars-good": {"input": 1, "output": 4}, "bars-coin": {"input": 0.5, "output": 2}},
        "models": [{"name": "bars-good", "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "key_env": "GOOD_KEY",
                    "settings": {"temperature": 0.7}}]}}))
    with ModelServer(KEY) as server:
        dry = dry_run(copy, server, *COMMAND, "--config", settings, "--dry-run")
        assert server.requests == 0
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert "  endpoint 127.0.0.1:9, key in $GOOD_KEY (NOT SET): at most 4 requests at once" in lines
    assert ('    bars-good: 12 runs, at most 144 requests (720 with every retry), settings {"temperature": 0.7}, '
            "at most about 0.48 USD") in lines  # 12 runs x 10,000 tokens x 4 USD per million
    assert "    bars-coin: 12 runs, at most 144 requests (720 with every retry), at most about 0.24 USD" in lines
    assert "  at most about 0.72 USD at the configured prices (each run ends once it reports max_tokens_per_run = 10000 " \
           "tokens; its last answer may pass that)" in lines
    assert "  GOOD_KEY is not set: it holds the key of bars-good" in lines
    with ModelServer(KEY) as server:
        as_json = dry_run(copy, server, *COMMAND, "--config", settings, "--dry-run", "--json")
        assert server.requests == 0
    found = json.loads(as_json.stdout)
    assert (found["to_record"], found["cost_at_most_usd"], found["sent"]) == (24, 0.72, False)
    assert [m["cost_at_most_usd"] for e in found["endpoints"] for m in e["models"]] == [0.48, 0.24]
    assert not (copy / "results").exists()


@pytest.mark.slow  # a campaign recorded and compared by Snakemake
def test_a_campaign_run_in_a_built_folder_is_listed_on_the_summary_page(built, tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(built, copy, symlinks=True)
    summary = copy / "results" / "index.md"
    assert "Campaign scripted" not in summary.read_text()
    result = processes.run([sys.executable, "-m", "replaylab", "campaign", "--provider", "scripted", "--model",
                            "scripted-careful,scripted-mixed", "--lesson", "projectile", "--runs", "2", "--name",
                            "scripted", "--cores", "2"], 600, cwd=copy, env=environment(PYTHONPATH=str(copy / "src")))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "### [Campaign scripted](campaigns/scripted/index.md)" in summary.read_text()
    assert "Models: scripted-careful, scripted-mixed; 2 runs per model and task; 1 task." in summary.read_text()
    assert "(projectile); 1 task." in (copy / "results" / "campaigns" / "scripted" / "index.md").read_text()
    assert 'href="campaigns/scripted/index.html"' in (copy / "results" / "index.html").read_text()



# ---------------------------------------------------------------------------------------------
# Snakemake killed (issue 37): the exit code a shell gives, one line, then the lock it left named

KILLED = ["campaign", "--model", "scripted-careful", "--lesson", "hunter", "--runs", "20", "--name", "killed", "--cores", "2"]


@pytest.mark.slow  # a campaign whose Snakemake is killed, then found locked, unlocked and resumed
def test_snakemake_killed_by_sigkill_exits_137_then_its_lock_is_named_in_one_line(tmp_path, prepared):
    """40 scripted runs of hunter (about 30 s of Snakemake on an idle machine); its Snakemake killed
    with SIGKILL once it runs its first jobs, as `kill -9` of its group does; the same command then
    stops on the lock the killed Snakemake left, says how to free it, and resumes once it is freed."""
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    folder = copy.resolve()  # the project's folder, as the command names it
    env = environment(PYTHONPATH=str(copy / "src"))
    command = [sys.executable, "-m", "replaylab", *KILLED]
    log = copy / "logs" / "campaigns" / "killed" / "snakemake.log"
    runs = copy / "results" / "campaigns" / "killed" / "recordings" / "hunter"
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as stdout, open(err, "w") as stderr:  # they end with the test (helpers.processes)
        started = processes.start(command, cwd=copy, env=env, stdout=stdout, stderr=stderr, start_new_session=True)
    # the event: Snakemake runs its first jobs (it took the folder's lock just before)
    assert processes.until(lambda: log.exists() and "\nExecute " in log.read_text(), started, timeout=300), err.read_text()
    (snakemake,) = psutil.Process(started.pid).children()
    assert os.getpgid(snakemake.pid) == snakemake.pid  # a process group (a session) of its own
    running = [snakemake, *snakemake.children(recursive=True)]
    os.killpg(snakemake.pid, signal.SIGKILL)
    assert started.wait(timeout=60) == 137  # 128 + 9, as a shell says it; not 256 - 9
    assert processes.all_ended(running, timeout=20) == []
    kept = {p.name: p.read_bytes() for p in runs.glob("*.json")}
    assert len(kept) < 40
    said = err.read_text()
    assert "Traceback" not in said + out.read_text()
    assert said.splitlines() == [
        f"replaylab: Snakemake was killed by SIGKILL (signal 9): {len(kept)} of 40 runs on disk, {40 - len(kept)} left; "
        f"the same command resumes, after `snakemake --unlock` in {folder} if it finds the folder locked (a killed "
        f"Snakemake may leave its lock); its log: {folder / 'logs' / 'campaigns' / 'killed' / 'snakemake.log'}"]

    again = processes.run(command, 600, cwd=copy, env=env)
    assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-3000:]
    assert "LockException" in log.read_text()  # Snakemake's own reason, in its log
    assert "Traceback" not in again.stdout + again.stderr
    assert again.stderr.splitlines() == [
        f"replaylab: the project folder {folder} is locked: another Snakemake holds its lock, or one was killed before "
        f"it let go; when none runs there any more, `snakemake --unlock` in {folder} frees it, and the same command "
        f"resumes; its log: {folder / 'logs' / 'campaigns' / 'killed' / 'snakemake.log'}"]
    assert {p.name: p.read_bytes() for p in runs.glob("*.json")} == kept  # nothing ran
    shown = (ROOT / "docs" / "campaigns.md").read_text().splitlines()  # both lines as the page shows them
    for line in (said.strip(), again.stderr.strip()):
        line = re.sub(r"\d+ of 40 runs on disk, \d+ left", "12 of 40 runs on disk, 28 left", line)
        assert f"  {line.replace(str(folder), '/path/to/project').replace('/killed/', '/NAME/')}" in shown, line

    snakemake_in(copy, "--unlock")  # what the line says, in the project's folder
    resumed = processes.run(command, 600, cwd=copy, env=env)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"{len(kept)} on disk, {40 - len(kept)} to record" in resumed.stdout
    assert len(list(runs.glob("*.json"))) == 40
    assert all(p.read_bytes() == kept[p.name] for p in runs.glob("*.json") if p.name in kept)
    assert resumed.stdout.rstrip().endswith("the comparison: results/campaigns/killed/index.html")
