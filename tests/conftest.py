"""Fixtures shared by the test modules.

`built`: one copy of the project built by Snakemake, per test session (per pytest-xdist worker),
for the tests that only read it, or change a file of it and put it back (each rerun test asks
Snakemake what it would run, and puts the file back: the copy is up to date again afterwards).
A test that changes results for good makes a copy of its own (`helpers.workflow.copy_project`).
"""

import pytest

from helpers.workflow import copy_project, snakemake


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """A copy of the project with every result built (`snakemake --cores 2`), its reference runs
    replayed in batches of one run (one replay job per run, or per group of a lesson judged per
    group)."""
    copy = copy_project(tmp_path_factory.mktemp("built") / "project")
    snakemake(copy, "--cores", "2")
    return copy
