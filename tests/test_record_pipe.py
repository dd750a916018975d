"""`replaylab record` cut short. `... | head -1`: the reader of stdout goes away during the run; the run goes
on, is recorded, and one line on stderr says so (exit 0: the run is on disk). Ctrl-C during a
request: what the provider answered is recorded (exit 130). Real processes behind pipes, and a signal:
`slow` (`make test-all`)."""

import json
import os
import signal
import subprocess
import sys

import pytest

from helpers import environment, in_process, processes
from helpers.model_server import FakeProvider, completion
from replaylab.agents import recording as recording_io

pytestmark = pytest.mark.slow  # a pipe closed under a process, and a signal


def test_a_closed_stdout_does_not_lose_the_run(tmp_path):
    # head reads one line and exits; unbuffered, the next line printed meets the closed pipe
    command = f"{sys.executable} -m replaylab record projectile --provider scripted --run piped | head -1"
    env = environment(PYTHONUNBUFFERED="1")
    shell = processes.start(["bash", "-c", f"{command}; echo \"rc=${{PIPESTATUS[0]}}\" >&2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env, start_new_session=True)
    out = subprocess.CompletedProcess(shell.args, None, *shell.communicate(timeout=120))  # its group ends with the test
    path = tmp_path / "results" / "live" / "projectile" / "piped.json"
    assert out.stdout == "message 1: Coarse survey with dt = 0.01 s.\n"
    lines = out.stderr.strip().splitlines()
    assert lines == ["replaylab: stdout was closed by its reader; the run was recorded: wrote "
                     "results/live/projectile/piped.json (7 messages, finished)", "rc=0"]
    assert recording_io.load(path).transcript.finished
    assert in_process("replay", path).returncode == 0
    assert os.listdir(path.parent) == ["piped.json"]  # nothing half-written beside it


def test_ctrl_c_during_a_request_keeps_what_the_provider_answered(tmp_path):
    """SIGINT while the provider is asked for message 2: message 1 was answered (and paid for), so
    it is recorded, as not finished, and replays; one line, exit 130."""
    first = completion("", [("c1", "range_with_drag", json.dumps({"speed": 25, "angle": 40, "dt": 0.01}))])
    with FakeProvider([(200, first, {}, 0), (200, completion("late"), {}, 60)]) as provider:
        process = processes.start(  # ended with the test, whatever happens
            [sys.executable, "-m", "replaylab", "record", "projectile", "--provider", "openai", "--model", "m", "--run", "cut"],
            cwd=tmp_path, env=environment(OPENAI_API_KEY="sk-test-FAKE-ctrlc", OPENAI_BASE_URL=provider.base_url),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert provider.wait_for_requests(2, timeout=60), "message 2 was never asked for"  # the event: its request came
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    path = tmp_path / "results" / "live" / "projectile" / "cut.json"
    assert process.returncode == 130, err
    assert err.strip().splitlines() == [f"replaylab: interrupted (SIGINT); wrote {path.relative_to(tmp_path)} (1 messages, not finished)"]
    run = recording_io.load(path)
    assert len(run.transcript.steps) == 1 and not run.transcript.finished
    assert run.ended.startswith("the recording was interrupted (SIGINT, Ctrl-C) while the provider was asked for message 2")
    assert in_process("replay", path).returncode == 0
