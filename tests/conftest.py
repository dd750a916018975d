"""Fixtures shared by the test modules.

`reference_results`: the committed recordings built in a test process (`replaylab.build.build`) once
per test run, by the first pytest-xdist worker that asks, for the tests that read what the library
writes (they only read it).

`built`: a copy of the project built by Snakemake once per test run, for the tests that only read
it, or change a file of it and put it back (each rerun test asks Snakemake what it would run, and
puts the file back: the copy is up to date again afterwards). The first pytest-xdist worker to
ask builds it; each worker then gets a copy of its own (with Snakemake's metadata and the files'
times, so that it is up to date too). A test that changes results for good makes a copy of its
own (`helpers.workflow.copy_project`).

`prepared`: the project in which Snakemake ran, once per test run, only the jobs of every lesson
that read no recording (its answers, baselines and scans: the code's alone); `built` is made from
it. A test whose case is not a build from clean (a campaign, runs of its own) starts from a copy of
it (`helpers.workflow.prepared_copy`), in which Snakemake finds those jobs up to date.
"""

import fcntl
import os
import shutil

import hypothesis
import pytest
import yaml

from helpers import RECORDINGS, ROOT, fuzz_scale, processes
from helpers.workflow import code_only_targets, copy_project, prepared_copy, snakemake


def pytest_configure(config):
    fuzz_scale()  # a bad REPLAYLAB_FUZZ_SCALE is one line before any test runs
    # no example may fail for the time it took: a test's outcome never depends on how busy the
    # machine is (Hypothesis's default deadline, 200 ms an example, failed under load); speed is `make bench`'s
    hypothesis.settings.register_profile("replaylab", deadline=None)
    hypothesis.settings.load_profile("replaylab")
    config.addinivalue_line(
        "markers",
        "slow: left out of `make test` (`-m 'not slow'`), run by `make test-all` (docs/testing.md): a Snakemake "
        "build of its own, a process driven over a pipe or stopped by a signal, a server over stdio, the browser, "
        "the fuzzing",
    )


# The tests that share a costly fixture of their module (a Snakemake build of their own), by the
# start of their node ids: pytest-xdist sends each of these groups whole to one worker, which makes
# the fixture once (each other test goes to whichever worker is free). xdist's own `--dist
# loadgroup` cannot do it with pytest 9 (it renames the tests' node ids, which pytest 9 ignores).
SHARED = {
    "answer-interfaces": ("tests/test_answer_interfaces.py::",),  # sessions, MCP and openai runs, and their build
    "browser": ("tests/test_browser.py::",),  # Chromium, and the site built with a campaign and a new run
    "many-runs": ("tests/test_workflow_runs.py::",),  # 120 generated runs, built
    "generated": ("tests/test_lesson_contract.py::test_every_lesson_goes_through_",),  # a run of every lesson, built
    "forged": ("tests/test_workflow.py::test_replay_mismatch_", "tests/test_workflow.py::test_every_job_is_a_process_"),
}


def pytest_xdist_make_scheduler(config, log):
    """With `-n` (the default `--dist load`): each group of SHARED is one unit of work; every other
    test is a unit of its own, given to whichever worker is free; the groups are handed out first."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtures(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return next((name for name, starts in SHARED.items() if nodeid.startswith(starts)), nodeid)

    return SharedFixtures(config, log)


def made_once(tmp_path_factory, name, make):
    """The folder `name`, made by `make(folder)` once per test run: by the first pytest-xdist worker
    that asks (the others wait for it), in the folder that every worker of this run shares."""
    # the same folder for every pytest-xdist worker of this run (their base folders share a parent
    # of this run's own); without xdist, this run's base folder: never one of another run
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        once = shared / f"{name}-once" / name
        if not (once.parent / "done").exists():
            shutil.rmtree(once.parent, ignore_errors=True)
            make(once)
            (once.parent / "done").write_text("")
    return once


@pytest.fixture(scope="session")
def reference_results(tmp_path_factory):
    """A folder with every result of every lesson, built in a test process from the committed
    recordings at the default tolerance (`replaylab.build.build`: the workflow's stages, without
    Snakemake), once per test run (`made_once`). The tests only read it."""
    from replaylab.build import build

    return made_once(tmp_path_factory, "reference-results",
                     lambda folder: build(recordings=RECORDINGS, results=folder, progress=lambda text: None))


@pytest.fixture(scope="session")
def prepared(tmp_path_factory):
    """The project (batch_size 1) with the outputs of every lesson's jobs that read no recording,
    `helpers.workflow.code_only_targets` (`snakemake --cores 2` of those), once per test run
    (`made_once`). The tests never change it: they copy it (`helpers.workflow.prepared_copy`)."""
    lessons = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))["lessons"]
    return made_once(tmp_path_factory, "prepared",
                     lambda project: snakemake(copy_project(project), "--cores", "2", *code_only_targets(lessons)))


@pytest.fixture(scope="session")
def built(prepared, tmp_path_factory):
    """A copy of the project with every result built (`snakemake --cores 2`, from a copy of
    `prepared`: the same jobs as from clean, those of `prepared` run before), its reference runs
    replayed in batches of one run (one replay job per run, or per group of a lesson judged per
    group)."""
    once = made_once(tmp_path_factory, "built", lambda project: snakemake(prepared_copy(prepared, project), "--cores", "2"))
    copy = tmp_path_factory.mktemp("built") / "project"
    shutil.copytree(once, copy, symlinks=True)
    return copy


@pytest.fixture(scope="session", autouse=True)
def ends_every_process():
    """What fixtures of a module started (helpers.processes) ends with the test session at the latest."""
    yield
    processes.end_since(0)


@pytest.fixture(autouse=True)
def ends_its_processes():
    """Whatever happens to a test, the processes it started (helpers.processes) end with it."""
    mark = len(processes.STARTED)
    yield
    processes.end_since(mark)
