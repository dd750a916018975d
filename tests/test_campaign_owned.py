"""`replaylab campaign` owns its workflow (issue 38, items 1 and 16): whatever ends the command,
SIGTERM (`timeout`), SIGHUP (a closed terminal), `kill -9` of its process group or its output
closed (`| head -5`), ends Snakemake and its recording jobs; the provider gets no request after;
one line and the documented exit code; Snakemake's lock and the campaign's name are free again,
and (after the hardest, kill -9) the same command records only what is missing. A second
command of the same campaign while the first runs is refused in one line before it does anything, and the first is not harmed.

Real commands, in a copy of the project, against the stand-in model server on 127.0.0.1; all
`slow` (`make test-all`)."""

import json
import os
import re
import signal
import sys
import time

import psutil
import pytest

from helpers import environment, processes
from helpers.model_server import ModelServer
from helpers.workflow import prepared_copy
from replaylab.agents import recording

KEY = "sk-test-OWNEDKEY-0123456789abcdef"
RUNS = 16  # 8 runs of each of two models
COMMAND = [sys.executable, "-m", "replaylab", "campaign", "--model", "bars-good,bars-coin", "--lesson", "projectile",
           "--runs", "8", "--max-connections", "2", "--name", "owned", "--cores", "2"]
PROGRESS = rf"\d+ of {RUNS} runs on disk, \d+ left"


def env_of(copy, server):
    return environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url, PYTHONPATH=str(copy / "src"))


def recordings(copy):
    return sorted((copy / "results" / "campaigns" / "owned" / "recordings" / "projectile").glob("*.json"))


def answered_in_unfinished_runs(copy):
    """The requests answered in the runs a stopped job kept unfinished (`.RUN.json.partial`, which
    the resume continues)."""
    folder = copy / "results" / "campaigns" / "owned" / "recordings" / "projectile"
    return sum(len(json.loads(p.read_text())["provenance"].get("request_ids") or ()) for p in folder.glob(".*.json.partial"))


def workflow_of(command):
    """Snakemake (the command's one child) and every process below it: its jobs."""
    (snakemake,) = psutil.Process(command.pid).children()
    return [snakemake, *snakemake.children(recursive=True)]


def requests_stop(server):
    """The requests the server got, once the count no longer grows: it is the same 2 s later."""
    server.wait_idle(timeout=30)
    before = server.requests
    time.sleep(2)
    return before if server.requests == before else None


def end_by_signal(command, signum):
    os.kill(command.pid, signum)


def end_by_killing_its_group(command, signum):
    os.killpg(command.pid, signal.SIGKILL)


def end_by_closing_its_output(command, signum):
    command.stdout.close()  # as `| head -5` does once it has its lines


@pytest.mark.slow  # a campaign stopped midway, then run again
@pytest.mark.parametrize("end, signum, code, said", [
    (end_by_signal, signal.SIGTERM, 143, "stopped by SIGTERM"),
    (end_by_signal, signal.SIGHUP, 129, "stopped by SIGHUP (its terminal closed)"),
    (end_by_killing_its_group, signal.SIGKILL, -9, None),
    (end_by_closing_its_output, None, 141, "its output was closed (a broken pipe)"),
], ids=["sigterm", "sighup", "kill-9-of-its-group", "output-closed"])
def test_whatever_ends_the_command_ends_its_workflow_and_the_same_command_resumes(tmp_path, prepared, end, signum, code, said):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    err = tmp_path / "err.txt"
    with ModelServer(KEY, latency=0.2) as server:
        with open(err, "w") as stderr:  # the command and what it started end with the test (helpers.processes)
            command = processes.start(COMMAND, cwd=copy, env=env_of(copy, server), stdout=processes.subprocess.PIPE,
                                      stderr=stderr, start_new_session=True)
        lines = [command.stdout.readline() for _ in range(5)]  # what `| head -5` reads
        assert lines[-1].startswith(b"new campaign"), lines
        # the event: the third recording on disk, the workflow running
        assert processes.until(lambda: len(recordings(copy)) >= 3, command, timeout=300), err.read_text()[-3000:]
        running = workflow_of(command)
        assert len(running) >= 2 and len(recordings(copy)) < RUNS
        end(command, signum)
        assert command.wait(timeout=150) == code
        assert processes.all_ended(running, timeout=90) == []  # Snakemake and every job
        sent = requests_stop(server)
        assert sent is not None  # nothing more is asked of the provider, and paid for
        text = err.read_text()
        assert "Traceback" not in text
        if said is None:  # killed: no word from the command
            assert text == ""
        else:
            assert re.fullmatch(rf"replaylab: {re.escape(said)}: Snakemake and its jobs stopped; {PROGRESS}; "
                                "the same command resumes\n", text), text
        kept = {p.name: p.read_bytes() for p in recordings(copy)}
        assert 3 <= len(kept) < RUNS
        assert not list((copy / ".snakemake" / "locks").glob("*"))  # Snakemake let go of its lock
        if end is not end_by_killing_its_group:  # the same stop as Snakemake's own Ctrl-C: resumed below, once
            assert not list((copy / "results" / "campaigns").glob(".*.owner"))  # the campaign's name is free again
            return
        paid = answered_in_unfinished_runs(copy)
        again = processes.run(COMMAND, 600, cwd=copy, env=env_of(copy, server))  # no lock left behind
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"{len(kept)} on disk, {RUNS - len(kept)} to record" in again.stdout
    assert len(recordings(copy)) == RUNS
    assert all(p.read_bytes() == kept[p.name] for p in recordings(copy) if p.name in kept)
    new = [recording.load(p) for p in recordings(copy) if p.name not in kept]
    # none for a kept run, nor for a message an unfinished run kept (the resume continues it)
    assert server.requests - sent == sum(len(run.provenance["request_ids"]) for run in new) - paid
    assert not list((copy / "results" / "campaigns").glob(".*.owner"))


@pytest.mark.slow  # two campaigns of one name at once
def test_a_second_command_of_a_running_campaign_is_refused_before_it_does_anything(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    log = copy / "logs" / "campaigns" / "owned" / "snakemake.log"
    out = tmp_path / "first.txt"
    with ModelServer(KEY, latency=0.05) as server:
        with open(out, "w") as stream:
            first = processes.start(COMMAND, cwd=copy, env=env_of(copy, server), stdout=stream, stderr=stream,
                                    start_new_session=True)
        assert processes.until(lambda: log.exists() and "\nExecute " in log.read_text(), first, timeout=300), out.read_text()
        written = (copy / "results" / "campaigns" / "owned" / "campaign.yaml").read_bytes()
        second = processes.run(COMMAND, 120, cwd=copy, env=env_of(copy, server))
        assert first.poll() is None  # the refusal came while the first ran
        size = log.stat().st_size
        assert first.wait(timeout=600) == 0, out.read_text()[-3000:]
    assert second.returncode == 1 and second.stdout == ""  # not even its plan: it read nothing
    holder = first.pid
    assert second.stderr == (
        f"replaylab: results/campaigns/owned: the campaign is running already, in process {holder} (`replaylab "
        "campaign`, or the Snakemake it started, which ends with it): run the same command again once that has ended\n")
    text = log.read_text()
    assert "\0" not in text and log.stat().st_size >= size  # its log whole, never cut by the second
    assert (copy / "results" / "campaigns" / "owned" / "campaign.yaml").read_bytes() == written
    assert out.read_text().rstrip().endswith("the comparison: results/campaigns/owned/index.html")
    assert len(recordings(copy)) == RUNS and sum(server.started.values()) == RUNS
