"""Nothing lost, nothing injected (issue 16, cases 1, 2, 4, 5, 14 and 15): real Snakemake runs in
temporary copies of the project. A recorded run is a source no rule remakes; no configuration
value reaches a shell; a results/ folder damaged by hand is one line, never a shorter answer; two
builds at once, Ctrl-C and a killed run leave a plain rerun that works; a bug's traceback is in a
file of its own, never on the terminal."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import RECORDINGS, ROOT, cli, environment
from helpers.workflow import batch_of, copy_project, first_error_line, snakemake

pytestmark = pytest.mark.workflow


def replaylab(copy, *args):
    """`replaylab ARGS` in a copy, with the copy's own library."""
    return cli(*args, cwd=copy, env=environment(PYTHONPATH=str(copy / "src")))


def snapshot(folder):
    """{name: bytes} of the recorded runs in a folder of runs (<lesson>/<run>.json)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.glob("*/*.json"))}


# ---------------------------------------------------------------------------------------------
# Cases 1 and 5: recorded runs are sources; a configuration value is never a command


def test_recorded_runs_are_never_recorded_again_and_no_value_reaches_a_shell(tmp_path):
    copy = copy_project(tmp_path / "project")
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
    rerun = snakemake(copy, "--cores", "1", "--config", "run_folders=[results/live]", "provider=openai", "seed=5",
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


def test_the_record_rule_builds_no_shell_command():
    text = (ROOT / "workflow" / "rules" / "record.smk").read_text()
    assert "shell:" not in text and "run:" in text


# ---------------------------------------------------------------------------------------------
# Case 2: a results/ folder damaged by hand


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    copy = copy_project(tmp_path_factory.mktemp("damaged") / "project")
    snakemake(copy, "--cores", "2", "hunter")
    return copy


def damage_then_dry_run(copy, damage):
    damage()
    result = snakemake(copy, "-n", "hunter", check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return first_error_line(result)


def test_a_removed_transcript_is_one_line_never_a_shorter_answer(built):
    batch = built / batch_of(built, "hunter", "velocity-verlet")
    line = damage_then_dry_run(built, lambda: (batch / "velocity-verlet.json").unlink())
    assert line == f"results/hunter/transcripts/{batch.name}: velocity-verlet.json was removed after the build: delete it (Snakemake builds it again when a job needs it)"
    subprocess.run(["rm", "-r", str(batch)], check=True)
    snakemake(built, "--cores", "1", "--forcerun", "render", "hunter")
    results = json.loads((built / "results" / "hunter" / "results.json").read_text())
    assert sorted(results["runs"]) == ["symplectic-euler", "velocity-verlet"]


def test_a_removed_table_is_one_line(built):
    line = damage_then_dry_run(built, lambda: (built / "results" / "hunter" / "tables" / "verdicts.csv").unlink())
    assert line == "results/hunter/tables: verdicts.csv was removed after the build: delete it (Snakemake builds it again when a job needs it)"
    subprocess.run(["rm", "-r", str(built / "results" / "hunter" / "tables")], check=True)
    snakemake(built, "--cores", "1", "hunter")
    assert (built / "results" / "hunter" / "tables" / "verdicts.csv").is_file()


def test_an_emptied_intermediate_file_is_one_line_and_nothing_is_removed(built):
    batch = batch_of(built, "hunter", "velocity-verlet")
    verdicts = built / "results" / "hunter" / "judged" / f"{Path(batch).name}.json"
    line = damage_then_dry_run(built, lambda: verdicts.write_text(""))
    assert line == f"results/hunter/judged/{verdicts.name}: not the whole JSON file the build wrote (emptied or cut after the build): delete it (Snakemake builds it again when a job needs it)"
    assert (built / "results" / "hunter" / "results.json").is_file()  # the good outputs are kept
    verdicts.unlink()
    snakemake(built, "--cores", "1", "--forcerun", "replay", "hunter")
    rebuilt = json.loads(verdicts.read_text())["verdicts"]["velocity-verlet"]
    assert rebuilt["experiments"]["outcome"] == "inconclusive" and rebuilt["answer"] == {"outcome": "none found"}


# ---------------------------------------------------------------------------------------------
# Case 14: a bug in a job shows one line; its traceback is in a file of its own


def test_a_bug_is_one_line_even_with_show_failed_logs(built):
    tables = built / "src" / "replaylab" / "lessons" / "hunter" / "tables.py"
    original = tables.read_text()
    tables.write_text(original.replace("def tables(results):\n", "def tables(results):\n    1 / 0  # a bug\n", 1))
    try:
        result = snakemake(built, "--cores", "1", "--show-failed-logs", "hunter", check=False)
    finally:
        tables.write_text(original)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output, output[-4000:]
    message = "JobFailed: ZeroDivisionError: division by zero (a bug: the traceback is in logs/hunter/render.traceback)"
    assert message in output
    assert (built / "logs" / "hunter" / "render.log").read_text() == message + "\n"
    details = (built / "logs" / "hunter" / "render.traceback").read_text()
    assert details.startswith("Traceback") and "lessons/hunter/tables.py" in details and "1 / 0  # a bug" in details
    assert "common.smk" not in details  # the frame Snakemake compiled, whose line would be wrong
    snakemake(built, "--cores", "1", "hunter")


# ---------------------------------------------------------------------------------------------
# Case 15: Ctrl-C and a killed run; two runs at once


def slow_copy(folder, seconds):
    """A copy whose render jobs each take `seconds` more."""
    copy = copy_project(folder)
    script = copy / "scripts" / "render.py"
    start = "def main(wildcards, input, output, params):\n"
    assert start in script.read_text()
    script.write_text(script.read_text().replace(start, start + f"    __import__('time').sleep({seconds})  # a slow job, for the test\n", 1))
    return copy


@pytest.fixture
def slow(tmp_path):
    return slow_copy(tmp_path / "project", 4)


def start(copy, *args):
    return subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=copy, env=environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def when_a_render_runs(copy, process, timeout=120):
    deadline = time.monotonic() + timeout
    while not list((copy / "logs").glob("*/render.log")):
        assert process.poll() is None and time.monotonic() < deadline, "no render job started"
        time.sleep(0.1)
    time.sleep(0.5)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_a_plain_rerun_works_after_an_interrupted_run(slow, how):
    process = start(slow, "--cores", "1")
    when_a_render_runs(slow, process)
    os.killpg(process.pid, how)
    process.communicate(timeout=120)
    assert process.returncode != 0
    assert list((slow / ".snakemake" / "incomplete").iterdir())  # outputs left incomplete
    if how == signal.SIGKILL:
        assert list((slow / ".snakemake" / "locks").glob("*.lock"))  # and the lock of the killed run
    rerun = snakemake(slow, "--cores", "1")
    output = rerun.stdout + rerun.stderr
    assert "Nothing to be done" not in output and (slow / "results" / "index.md").is_file()
    if how == signal.SIGKILL:
        assert "snakemake: removed the lock of a run that was killed (no Snakemake of this workflow runs here)" in output
    assert not list((slow / ".snakemake" / "locks").glob("*.lock"))


def test_the_lock_of_a_running_snakemake_is_never_removed(tmp_path):
    slow = slow_copy(tmp_path / "project", 15)  # the first run lasts well beyond the second's start
    first = start(slow, "--cores", "1")
    when_a_render_runs(slow, first)
    second = snakemake(slow, "--cores", "1", check=False)
    out, _ = first.communicate(timeout=300)
    # Snakemake's own refusal (on a busy machine, its reading of the first run's lock files can
    # fail first, naming one of them): the second run never starts, and never removes that lock
    said = second.stdout + second.stderr
    assert second.returncode != 0 and ("Directory cannot be locked" in said or ".snakemake/locks/" in said), said[-600:]
    assert "removed the lock" not in second.stdout + second.stderr
    assert first.returncode == 0, out[-3000:]
    assert (slow / "results" / "index.md").is_file()


def test_ctrl_c_while_the_dag_is_built_is_one_line(tmp_path):
    copy = copy_project(tmp_path / "project")
    common = copy / "workflow" / "rules" / "common.smk"
    common.write_text(common.read_text().replace("\ncheck_recordings(RUNS)\n", "\ncheck_recordings(RUNS)\n__import__('time').sleep(30)\n", 1))
    process = start(copy, "-n")
    deadline = time.monotonic() + 60
    while not (copy / ".snakemake" / "replaylab" / "checked-recordings.json").exists():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out.strip().splitlines()[-1] == "snakemake: interrupted while the workflow was read; nothing was run"
    assert "Traceback" not in out and "KeyboardInterrupt" not in out


# ---------------------------------------------------------------------------------------------
# Case 4: two builds into one folder at once


def test_two_builds_into_one_results_folder_at_once(tmp_path):
    env = environment()
    command = [sys.executable, "-m", "replaylab", "build", "hunter", "projectile", "--recordings", str(RECORDINGS), "--results", "out"]
    for round_ in range(2):
        processes = [
            subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for process in processes:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, (round_, err[-3000:])
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [".build.lock", "hunter", "index.html", "index.md", "projectile"]
    for lesson in ("hunter", "projectile"):
        results = json.loads((out / lesson / "results.json").read_text())
        assert sorted(results["runs"]) == sorted(p.stem for p in (RECORDINGS / lesson).glob("*.json"))
        assert not [p.name for p in (out / lesson).iterdir() if p.name.startswith(".")]  # no temporary folder left
        assert re.search(r"\.png$", " ".join(p.name for p in (out / lesson / "figures").iterdir()))
