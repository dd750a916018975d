"""`replaylab record ... | head -1`: the reader of stdout goes away during the run; the run goes
on, is recorded, and one line on stderr says so (exit 0: the run is on disk)."""

import os
import subprocess
import sys

from helpers import cli, environment
from replaylab.agents import recording as recording_io


def test_a_closed_stdout_does_not_lose_the_run(tmp_path):
    # head reads one line and exits; unbuffered, the next line printed meets the closed pipe
    command = f"{sys.executable} -m replaylab record projectile --provider scripted --run piped | head -1"
    env = environment(PYTHONUNBUFFERED="1")
    out = subprocess.run(["bash", "-c", f"{command}; echo \"rc=${{PIPESTATUS[0]}}\" >&2"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120)
    path = tmp_path / "results" / "live" / "projectile" / "piped.json"
    assert out.stdout == "message 1: Coarse survey with dt = 0.01 s.\n"
    lines = out.stderr.strip().splitlines()
    assert lines == ["replaylab: stdout was closed by its reader; the run was recorded: wrote "
                     "results/live/projectile/piped.json (7 messages, finished)", "rc=0"]
    assert recording_io.load(path).transcript.finished
    assert cli("replay", path).returncode == 0
    assert os.listdir(path.parent) == ["piped.json"]  # nothing half-written beside it
