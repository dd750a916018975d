"""Cluster execution on a real SLURM cluster: one lesson through Snakemake's executor plugins.

The module brings up a single-node SLURM cluster on this machine (cluster/slurm-local.sh: Debian's
munge, slurmctld, slurmd; it installs what is missing) and builds the lesson `hunter` in temporary
copies of the project three ways: locally, with `--executor slurm`
(workflow/profiles/slurm-local) and with `--executor cluster-generic`
(workflow/profiles/slurm-generic with its placeholders filled in, as a user does). The JSON and CSV
results must be the same bytes, the jobs must have been SLURM jobs, and a forged recording must
fail the cluster runs with the same one-line message as the local run. The lesson with its two
reference runs is one SLURM job; with 40 generated runs more in batches of about 10 (8 replay
batches) it is several, and its results are again the same bytes as a local build's.

Snakemake runs here from .venv-cluster, the venv with the `cluster` extra: the default .venv has no
executor plugin (it would slow every local start).

Opt-in: `make test-cluster` (which .ci/run calls) makes .venv-cluster, brings the cluster up, runs
this module with REPLAYLAB_CLUSTER=1 and brings the cluster down. Without REPLAYLAB_CLUSTER=1 every
test here is skipped, and nothing is installed (`make test` does not collect this module). Opted in
without root, apt-get or .venv-cluster, the tests skip, or fail under CI=true. The profiles'
own tests, which need no cluster, are in tests/test_profiles.py.
"""

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from helpers import ROOT
from helpers.workflow import configure, forge
from helpers.workflow import copy_project as copy_workflow
from helpers.workflow import snakemake as run_snakemake

SCRIPT = ROOT / "cluster" / "slurm-local.sh"
PROFILES = ROOT / "workflow" / "profiles"
LESSON = "hunter"  # the lesson with a recording to forge (recordings/hunter/symplectic-euler.json)
CLUSTER_PYTHON = ROOT / ".venv-cluster" / "bin" / "python"
RUN_TIMEOUT = 240  # seconds per Snakemake run, then SIGINT (Snakemake waits on SIGTERM)
SUBMITTED_SLURM = re.compile(r"submitted with SLURM jobid (\d+)")
SUBMITTED_GENERIC = re.compile(r"Submitted (?:group )?job \S+ with external jobid '(\d+)")


# ---------------------------------------------------------------------------------------------
# Helpers


def in_ci():
    return os.environ.get("CI", "").lower() in ("true", "1")


def cannot_run(reason):
    """Skip on a developer's machine; fail under CI=true, where the cluster tests must run."""
    if in_ci():
        pytest.fail(f"the SLURM cluster tests must run under CI=true, but: {reason}")
    pytest.skip(reason)


def copy_project(target):
    """A copy of the project with the configuration as committed (replays in batches of 500)."""
    return copy_workflow(target, batch_size=500)


MANY = 40  # generated runs of the lesson, beside its two reference runs
MANY_BATCH = 10  # runs per replay job: 8 batches, bundled 4 to a SLURM job by slurm-local


def copy_with_many_runs(target, runs):
    """A copy whose lesson has MANY generated runs more (`runs`: the folder `generated_runs` made),
    in batches of about MANY_BATCH."""
    copy = copy_workflow(target, batch_size=MANY_BATCH)
    shutil.copytree(runs, copy / "generated")
    configure(copy, run_folders=["generated"])
    return copy


@pytest.fixture(scope="module")
def generated_runs(tmp_path_factory):
    """MANY generated runs of the lesson, written once: every copy gets the same files."""
    from replaylab.generate import generate

    folder = tmp_path_factory.mktemp("generated")
    generate(LESSON, MANY, folder)
    return folder


def snakemake(copy, *args, timeout=RUN_TIMEOUT):
    """Snakemake of .venv-cluster in `copy` (helpers.workflow.snakemake, which sends SIGINT at the
    timeout: Snakemake then cancels its SLURM jobs); `stdout` holds both streams, as a user sees them."""
    if not CLUSTER_PYTHON.exists():
        cannot_run(f"{CLUSTER_PYTHON} is missing: make it with `make cluster-env`")
    result = run_snakemake(copy, *args, check=False, python=CLUSTER_PYTHON, timeout=timeout)
    result.stdout += result.stderr
    return result


def fill_generic_profile(copy):
    """Put the test cluster's partition and an account into the copy's generic profile."""
    path = copy / "workflow" / "profiles" / "slurm-generic" / "profile.yaml"
    text = path.read_text(encoding="utf-8")
    assert '"<partition>"' in text and '"<account>"' in text
    path.write_text(text.replace('"<partition>"', '"debug"').replace('"<account>"', '"root"'), encoding="utf-8")


def result_files(copy):
    """{relative path: bytes} of every JSON and CSV file of the lesson's results."""
    folder = copy / "results" / LESSON
    return {
        str(p.relative_to(copy)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".csv")
    }


def slurm_job(jobid):
    """(state, working directory) of a SLURM job, from the controller (it keeps finished jobs 300 s)."""
    out = subprocess.run(
        ["squeue", "-h", "--states=all", "-j", jobid, "-o", "%T|%Z"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    if not out:
        out = subprocess.run(["scontrol", "show", "job", jobid], capture_output=True, text=True, timeout=30).stdout
        state = re.search(r"JobState=(\S+)", out)
        workdir = re.search(r"WorkDir=(\S+)", out)
        return (state.group(1) if state else None, workdir.group(1) if workdir else None)
    state, _, workdir = out.splitlines()[0].partition("|")
    return state, workdir


def lesson_rules(output):
    """The rules of the lesson's jobs, from the "Job stats" table of a Snakemake run."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", table, re.M)} - {LESSON}


def mismatch_line(output):
    """The one-line message of a replay mismatch."""
    lines = [line.strip() for line in output.splitlines() if "when recorded and is" in line]
    assert lines, output[-5000:]
    line = lines[0]
    line = line.split("ReplayMismatch: ", 1)[-1]  # the form in which a job's log shows it
    assert "record the run again with: replaylab record hunter" in line, line
    return line


def assert_fails_like_local(result, local_message, log_text):
    output = result.stdout
    assert result.returncode != 0, output[-5000:]
    assert "Error in rule replay" in output, output[-5000:]
    assert local_message in output, f"the local run's message is not in the cluster run's output:\n{local_message}"
    assert local_message in log_text


# ---------------------------------------------------------------------------------------------
# The cluster and the builds


@pytest.fixture(scope="module", autouse=True)
def opted_in():
    if os.environ.get("REPLAYLAB_CLUSTER") != "1":
        pytest.skip("the cluster tests run with `make test-cluster` (REPLAYLAB_CLUSTER=1)")


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        cannot_run("bringing up a SLURM cluster needs root")
    if not shutil.which("sinfo") and not shutil.which("apt-get"):
        cannot_run("neither SLURM (sinfo) nor apt-get to install it")
    was_up = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True).returncode == 0
    up = subprocess.run(["bash", str(SCRIPT), "up"], capture_output=True, text=True, timeout=900)
    if up.returncode != 0:
        cannot_run(f"bash cluster/slurm-local.sh up failed:\n{up.stdout}{up.stderr}")
    yield
    if not was_up:  # leave a cluster that was already up (.ci/run's) as it was
        subprocess.run(["bash", str(SCRIPT), "down"], capture_output=True, timeout=300)


def build(copy, *args):
    """Run Snakemake in a copy; (copy, result). Its output is also kept beside the copy."""
    result = snakemake(copy, *args)
    (copy.parent / "snakemake-output.txt").write_text(result.stdout, encoding="utf-8")
    return copy, result


@pytest.fixture(scope="module")
def builds(cluster, tmp_path_factory, generated_runs):
    """Every build of the module, run at the same time: most of a cluster run is spent waiting.

    local and local-forged: `--cores 2`; slurm and slurm-forged: workflow/profiles/slurm-local;
    generic and generic-forged: workflow/profiles/slurm-generic. `-forged`: a forged recording;
    `many-`: MANY generated runs more (copy_with_many_runs).
    """
    runs = {}
    names = ("local", "local-forged", "slurm", "slurm-forged", "generic", "generic-forged")
    for name in names + ("many-local", "many-slurm", "many-generic"):
        target = tmp_path_factory.mktemp(name) / "project"
        copy = copy_with_many_runs(target, generated_runs) if name.startswith("many") else copy_project(target)
        if name.endswith("forged"):
            forge(copy / "recordings" / LESSON / "symplectic-euler.json")
        if "generic" in name:
            fill_generic_profile(copy)
        profile = {"local": ("--cores", "2"), "slurm": ("--workflow-profile", "workflow/profiles/slurm-local")}
        profile["generic"] = ("--workflow-profile", "workflow/profiles/slurm-generic")
        runs[name] = (copy, LESSON, *profile[name.removeprefix("many-").split("-")[0]])
    done = {}
    for phase in (names, [name for name in runs if name not in names]):  # at most six at once
        with ThreadPoolExecutor(max_workers=len(phase)) as pool:
            futures = {name: pool.submit(build, *runs[name]) for name in phase}
            done.update({name: future.result() for name, future in futures.items()})
    return done


@pytest.fixture(scope="module")
def local(builds):
    copy, result = builds["local"]
    assert result.returncode == 0, result.stdout[-5000:]
    files = result_files(copy)
    assert any(name.endswith(".csv") for name in files) and any(name.endswith(".json") for name in files)
    return files


@pytest.fixture(scope="module")
def local_forged(builds):
    _, result = builds["local-forged"]
    assert result.returncode != 0
    return mismatch_line(result.stdout)


# ---------------------------------------------------------------------------------------------
# The same checks for --executor slurm (snakemake-executor-plugin-slurm) and --executor
# cluster-generic (sbatch and workflow/profiles/slurm-generic/status-slurm.sh)

EXECUTORS = {  # build: (the job id in Snakemake's submission line, the SLURM log of a job id)
    "slurm": (SUBMITTED_SLURM, lambda copy, jobid: next((copy / ".snakemake" / "slurm_logs").rglob(f"{jobid}.log"))),
    "generic": (SUBMITTED_GENERIC, lambda copy, jobid: copy / "logs" / "slurm" / f"GROUP-{jobid}.log"),
}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_the_lesson_is_one_slurm_job_that_ran_every_job_of_it(builds, executor):
    copy, result = builds[executor]
    assert result.returncode == 0, result.stdout[-5000:]
    submitted, log_of = EXECUTORS[executor]
    jobids = submitted.findall(result.stdout)
    assert len(jobids) == 1, f"the lesson should be one group job, submitted: {jobids}"
    state, workdir = slurm_job(jobids[0])
    assert state == "COMPLETED"
    assert Path(workdir).resolve() == copy.resolve()
    inside = log_of(copy, jobids[0]).read_text(encoding="utf-8")
    expected = lesson_rules(result.stdout)
    assert "replay" in expected and len(expected) > 1, expected
    assert set(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", inside)) == expected
    # and none of them ran on the submitting machine: only the lesson's target is local there
    assert set(re.findall(r"^localrule (\w+):", result.stdout, re.M)) == {LESSON}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_results_equal_local_results_byte_for_byte(local, builds, executor):
    copy, _ = builds[executor]
    assert result_files(copy) == local


@pytest.mark.parametrize("executor", EXECUTORS)
def test_failing_job_fails_the_run_with_the_local_message(local_forged, builds, executor):
    copy, result = builds[f"{executor}-forged"]
    submitted, log_of = EXECUTORS[executor]
    jobids = submitted.findall(result.stdout)
    assert len(jobids) == 1, jobids
    assert slurm_job(jobids[0])[0] == "FAILED"
    assert_fails_like_local(result, local_forged, log_of(copy, jobids[0]).read_text(encoding="utf-8"))
    assert not list((copy / "results" / LESSON / "transcripts").glob("*.jsonl"))


PROFILE_OF = {"slurm": "slurm-local", "generic": "slurm-generic"}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_lesson_of_many_runs_spreads_over_several_slurm_jobs(builds, executor):
    copy, result = builds[f"many-{executor}"]
    assert result.returncode == 0, result.stdout[-5000:]
    submitted, log_of = EXECUTORS[executor]
    jobids = submitted.findall(result.stdout)
    # 8 batches, so many to a SLURM job as the profile says, and the lesson's scan and render
    per_job = profile(PROFILE_OF[executor])["group-components"]["batches"]
    assert len(jobids) == 8 // per_job + 1 > 1, f"submitted: {jobids}"
    replays = []
    for jobid in jobids:
        state, workdir = slurm_job(jobid)
        assert state == "COMPLETED" and Path(workdir).resolve() == copy.resolve()
        inside = log_of(copy, jobid).read_text(encoding="utf-8")
        replays.append(len(set(re.findall(r"Finished jobid: (\d+) \(Rule: replay\)", inside))))
    assert sorted(replays) == [0] + [per_job] * (8 // per_job), replays
    assert set(re.findall(r"^localrule (\w+):", result.stdout, re.M)) == {LESSON}
    assert sum(len(p.read_text().splitlines()) for p in (copy / "results" / LESSON / "transcripts").glob("*.jsonl")) == MANY + 2


@pytest.mark.parametrize("executor", EXECUTORS)
def test_many_runs_give_the_local_builds_bytes(builds, executor):
    local_copy, local_result = builds["many-local"]
    assert local_result.returncode == 0, local_result.stdout[-5000:]
    copy, _ = builds[f"many-{executor}"]
    assert result_files(copy) == result_files(local_copy)
    assert len(list((copy / "results" / LESSON / "judged").glob("*.json"))) == 8


# ---------------------------------------------------------------------------------------------
# Dry runs with the cluster profiles (the plugin, no cluster)


def profile(name):
    return yaml.safe_load((PROFILES / name / "profile.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["slurm", "slurm-local", "slurm-generic"])
def test_cluster_profile_dry_run_submits_one_group_job_per_lesson(name, tmp_path):
    copy = copy_project(tmp_path / "project")
    if name == "slurm-generic":
        fill_generic_profile(copy)
    result = snakemake(copy, "-n", "--forceall", "--workflow-profile", f"workflow/profiles/{name}", timeout=120)
    assert result.returncode == 0, result.stdout[-5000:]
    lessons = yaml.safe_load((copy / "config" / "config.yaml").read_text(encoding="utf-8"))["lessons"]
    assert result.stdout.count("Group job lesson") == len(lessons)


@pytest.mark.parametrize("name", ["slurm", "slurm-local", "slurm-generic"])
def test_cluster_profile_dry_run_bundles_the_batches_of_a_large_lesson(name, tmp_path, generated_runs):
    copy = copy_with_many_runs(tmp_path / "project", generated_runs)
    if name == "slurm-generic":
        fill_generic_profile(copy)
    result = snakemake(copy, "-n", "--forceall", "--workflow-profile", f"workflow/profiles/{name}", timeout=120)
    assert result.returncode == 0, result.stdout[-5000:]
    per_job = profile(name)["group-components"]["batches"]
    assert result.stdout.count("Group job batches") == -(-8 // per_job)  # 8 batches of the lesson
    lessons = yaml.safe_load((copy / "config" / "config.yaml").read_text(encoding="utf-8"))["lessons"]
    assert result.stdout.count("Group job lesson") == len(lessons)
