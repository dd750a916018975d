"""Nothing lost, nothing injected (issue 16, cases 1, 4, 5, 14 and 15): real Snakemake runs in
temporary copies of the project. A recorded run is a source no rule remakes; no configuration
value reaches a shell; two builds at once, Ctrl-C and a killed run leave a rerun that works; a
bug's traceback is in a file of its own, never on the terminal. (A results/ folder changed by
hand: tests/test_verify.py.)"""

import json
import os
import re
import signal
import subprocess
import sys

import psutil
import pytest

from helpers import RECORDINGS, ROOT, cli, environment, processes
from helpers.workflow import copy_project, first_error_line, prepared_copy, snakemake

pytestmark = pytest.mark.workflow


def replaylab(copy, *args):
    """`replaylab ARGS` in a copy, with the copy's own library."""
    return cli(*args, cwd=copy, env=environment(PYTHONPATH=str(copy / "src")))


def snapshot(folder):
    """{name: bytes} of the recorded runs in a folder of runs (<lesson>/<run>.json)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.glob("*/*.json"))}


# ---------------------------------------------------------------------------------------------
# Cases 1 and 5: recorded runs are sources; a configuration value is never a command


@pytest.mark.slow  # Snakemake runs of its own
def test_recorded_runs_are_never_recorded_again_and_no_value_reaches_a_shell(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project")
    injected = "x; touch PWNED; echo"
    record = snakemake(copy, "--cores", "1", "record", "--config", "provider=scripted", "record_lesson=hunter",
                       "record_run=mine", f"model={injected}")
    assert "Recording results/live/hunter/mine-symplectic-euler.json" in record.stdout + record.stderr
    assert not (copy / "PWNED").exists()
    assert replaylab(copy, "record", "hunter", "--variant", "velocity-verlet", "--run", "solo").returncode == 0
    live = copy / "results" / "live"
    before = snapshot(live)
    assert sorted(before) == ["hunter/mine-symplectic-euler.json", "hunter/mine-velocity-verlet.json", "hunter/solo.json"]

    # every run of results/live is a source of the default target: changed recording settings
    # (another provider, which would need a key, and another seed) schedule no recording job
    rerun = snakemake(copy, "--cores", "1", "hunter", "--config", "run_folders=[results/live]", "provider=openai", "seed=5",
                      "record_lesson=hunter", "record_run=mine")
    assert "Recording " not in rerun.stdout + rerun.stderr and "Rule: record_run" not in rerun.stdout + rerun.stderr
    assert snapshot(live) == before  # byte for byte
    results = json.loads((copy / "results" / "hunter" / "results.json").read_text())
    assert sorted(s["run"] for s in results["scores"]) == ["mine-symplectic-euler", "mine-velocity-verlet", "solo", "symplectic-euler", "velocity-verlet"]

    again = snakemake(copy, "-n", "record", "--config", "record_lesson=hunter", "record_run=mine", check=False)
    assert again.returncode != 0
    assert first_error_line(again).startswith(
        "results/live/hunter/mine-symplectic-euler.json: already exists, and a recorded run is never overwritten"
    )
    assert snapshot(live) == before

    # promote moves the run: the live folder no longer holds a second run of the same name
    promoted = replaylab(copy, "promote", "results/live/hunter/solo.json")
    assert promoted.returncode == 0, promoted.stderr
    assert not (live / "hunter" / "solo.json").exists() and (copy / "recordings" / "hunter" / "solo.json").is_file()
    dry = snakemake(copy, "-n", "--config", "run_folders=[results/live]")
    assert "Job stats" in dry.stdout


def test_no_rule_builds_a_shell_command_or_runs_inside_snakemake():
    """Every job is a script Snakemake starts as a process (`script:`), with its values as Python
    objects: none is a `shell:` command built from a value, or a `run:` block in Snakemake's process."""
    for path in (ROOT / "workflow" / "rules").glob("*.smk"):
        text = path.read_text()
        assert not re.search(r"(?m)^    (shell|run):", text), path
    rules = "".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    assert rules.count("    script:\n") == len(re.findall(r"(?m)^rule \w+:", rules)) - 2  # but the two targets


# ---------------------------------------------------------------------------------------------
# Case 14: a bug in a job shows one line; its traceback is in a file of its own


@pytest.fixture(scope="module")
def hunter(prepared, tmp_path_factory):
    copy = prepared_copy(prepared, tmp_path_factory.mktemp("hunter") / "project")
    snakemake(copy, "--cores", "2", "hunter")
    return copy


@pytest.mark.slow  # a Snakemake build of its own (`hunter`)
def test_a_bug_is_one_line_even_with_show_failed_logs(hunter):
    tables = hunter / "src" / "replaylab" / "lessons" / "hunter" / "tables.py"
    original = tables.read_text()
    head = next(line for line in original.splitlines(keepends=True) if line.startswith("def tables("))
    broken = original.replace(head, head + "    1 / 0  # a bug\n", 1)
    assert broken != original
    tables.write_text(broken)
    try:
        result = snakemake(hunter, "--cores", "1", "--show-failed-logs", "hunter", check=False)
    finally:
        tables.write_text(original)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output, output[-4000:]
    message = "JobFailed: ZeroDivisionError: division by zero (a bug: the traceback is in logs/hunter/render.traceback)"
    assert message in output
    assert (hunter / "logs" / "hunter" / "render.log").read_text() == message + "\n"
    details = (hunter / "logs" / "hunter" / "render.traceback").read_text()
    assert details.startswith("Traceback") and "lessons/hunter/tables.py" in details and "1 / 0  # a bug" in details
    snakemake(hunter, "--cores", "1", "hunter")


# ---------------------------------------------------------------------------------------------
# Case 15: Ctrl-C and a killed run; two runs at once


HOLD = "hold-the-render-jobs"  # while this file is in a copy's folder, its render jobs hold
HELD = "a-render-job-holds"  # written by a render job as it starts to hold: the event the tests wait for


def held_copy(prepared, folder):
    """A copy (of `prepared`, tests/conftest.py) whose render jobs, while the file HOLD is in its
    folder, write HELD and then wait (for an hour: until the test stops the run); without HOLD they
    run as they always do."""
    copy = prepared_copy(prepared, folder)
    script = copy / "scripts" / "render.py"
    start = "def main(job, log):\n"
    assert start in script.read_text()
    hold = (f"    if __import__('os').path.exists({HOLD!r}):  # held, for the test that stops the run here\n"
            f"        open({HELD!r}, 'w').close()\n"
            f"        __import__('time').sleep(3600)\n")
    script.write_text(script.read_text().replace(start, start + hold, 1))
    (copy / HOLD).touch()
    return copy


@pytest.fixture
def held(prepared, tmp_path):
    return held_copy(prepared, tmp_path / "project")


def start(copy, *args):
    """`snakemake ARGS` in a copy, in a process group of its own (as a terminal starts it); it and
    its jobs end with the test, whatever happens (helpers.processes)."""
    return processes.start([sys.executable, "-m", "snakemake", *args], cwd=copy, env=environment(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.mark.slow  # Snakemake runs of its own, stopped by a signal
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_a_rerun_works_after_an_interrupted_run(held, how):
    """Ctrl-C (SIGINT to the terminal's process group) or SIGKILL of Snakemake alone, while a job
    runs: the job ends with it, and a plain rerun (after SIGKILL: `snakemake --unlock` first, as
    Snakemake's own message says) builds what is left."""
    process = start(held, "--cores", "1", "hunter")
    assert processes.appears(held / HELD, process, timeout=300), "no render job started"  # one runs, and holds
    jobs = psutil.Process(process.pid).children(recursive=True)
    assert jobs, "no job was running"
    if how == signal.SIGINT:
        os.killpg(process.pid, how)
    else:
        os.kill(process.pid, how)
    out, _ = process.communicate(timeout=120)
    (held / HOLD).unlink()  # the jobs of the runs below run as they always do
    assert process.returncode != 0 and "Traceback" not in out, out[-3000:]
    assert not [job for job in jobs if job.is_running() and job.status() != psutil.STATUS_ZOMBIE]
    assert list((held / ".snakemake" / "incomplete").iterdir())  # outputs left incomplete
    if how == signal.SIGKILL:
        locked = snakemake(held, "--cores", "1", "hunter", check=False)
        assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
        snakemake(held, "--unlock")
    rerun = snakemake(held, "--cores", "1", "hunter")
    output = rerun.stdout + rerun.stderr
    assert "Nothing to be done" not in output and (held / "results" / "hunter" / "index.md").is_file()
    assert not list((held / ".snakemake" / "locks").glob("*.lock"))


@pytest.mark.slow  # a Snakemake process stopped by a signal
def test_ctrl_c_while_the_recordings_are_checked_is_one_line(tmp_path):
    copy = copy_project(tmp_path / "project")
    inputs = copy / "src" / "replaylab" / "inputs.py"
    checked = next(line for line in inputs.read_text().splitlines(keepends=True) if line.startswith("def checked_recording("))
    inputs.write_text(inputs.read_text().replace(
        checked, checked + "    open('checking-a-recording', 'w').close()\n    __import__('time').sleep(3600)\n", 1))
    process = start(copy, "-n")
    # the event: Snakemake has started, and checks the first recording (until it is stopped)
    assert processes.appears(copy / "checking-a-recording", process, timeout=300), "no recording was checked"
    assert process.poll() is None
    os.killpg(process.pid, signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out.strip().splitlines()[-1] == "snakemake: interrupted while the recordings were checked; nothing was run"
    assert "Traceback" not in out and "KeyboardInterrupt" not in out


# ---------------------------------------------------------------------------------------------
# Case 4: two builds into one folder at once


@pytest.mark.slow  # two builds, each a process of its own, twice
def test_two_builds_into_one_results_folder_at_once(tmp_path):
    env = environment()
    command = [sys.executable, "-m", "replaylab", "build", "hunter", "projectile", "--recordings", str(RECORDINGS), "--results", "out"]
    for round_ in range(2):
        builds = [  # they end with the test, whatever happens (helpers.processes)
            processes.start(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for process in builds:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, (round_, err[-3000:])
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [".build.lock", "hunter", "index.html", "index.md", "projectile"]
    for lesson in ("hunter", "projectile"):
        results = json.loads((out / lesson / "results.json").read_text())
        assert sorted(results["runs"]) == sorted(p.stem for p in (RECORDINGS / lesson).glob("*.json"))
        assert not [p.name for p in (out / lesson).iterdir() if p.name.startswith(".")]  # no temporary folder left
        assert re.search(r"\.png$", " ".join(p.name for p in (out / lesson / "figures").iterdir()))
