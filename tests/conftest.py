"""Fixtures shared by the test modules.

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

from helpers import fuzz_scale
from helpers.workflow import copy_project, snakemake


def pytest_configure(config):
    fuzz_scale()  # a bad REPLAYLAB_FUZZ_SCALE is one line before any test runs


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """A copy of the project with every result built (`snakemake --cores 2`), its reference runs
    replayed in batches of one run (one replay job per run, or per group of a lesson judged per
    group)."""
    # the same folder for every pytest-xdist worker of this run (their base folders share a parent
    # of this run's own); without xdist, this run's base folder: never one of another run
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / "built.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        once = shared / "built-once" / "project"
        if not (once.parent / "done").exists():
            shutil.rmtree(once.parent, ignore_errors=True)
            snakemake(copy_project(once), "--cores", "2")
            (once.parent / "done").write_text("")
    copy = tmp_path_factory.mktemp("built") / "project"
    shutil.copytree(once, copy, symlinks=True)
    return copy
