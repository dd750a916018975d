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
"""

import fcntl
import os
import shutil

import pytest

from helpers import RECORDINGS, fuzz_scale, processes
from helpers.workflow import copy_project, snakemake


def pytest_configure(config):
    fuzz_scale()  # a bad REPLAYLAB_FUZZ_SCALE is one line before any test runs
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
def built(tmp_path_factory):
    """A copy of the project with every result built (`snakemake --cores 2`), its reference runs
    replayed in batches of one run (one replay job per run, or per group of a lesson judged per
    group)."""
    once = made_once(tmp_path_factory, "built", lambda project: snakemake(copy_project(project), "--cores", "2"))
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
