"""The cluster profiles (workflow/profiles/slurm, slurm-local, slurm-generic): what they hold, and the
generic profile's status script; none of this needs a cluster or an executor plugin (the cluster
runs are tests/test_slurm.py, `make test-cluster`)."""

import json
import os
import re
import subprocess

import pytest
import yaml

from helpers import ROOT

PROFILES = ROOT / "workflow" / "profiles"


def profile(name):
    return yaml.safe_load((PROFILES / name / "profile.yaml").read_text(encoding="utf-8"))


CLUSTER_PROFILES = ("slurm", "slurm-local", "slurm-generic")


def test_cluster_profiles_group_the_same_rules():
    """The same groups; only how many batches go to one SLURM job differs (4 on the 2-CPU test cluster)."""
    groups = {name: profile(name)["groups"] for name in CLUSTER_PROFILES}
    assert len({json.dumps(g, sort_keys=True) for g in groups.values()}) == 1, groups
    assert "replay" not in groups["slurm"]  # the workflow's batch_group puts each replay job in its group
    for name in CLUSTER_PROFILES:
        assert profile(name)["group-components"]["lesson"] == 1
        assert profile(name)["group-components"]["batches"] >= 1


def test_resources_are_in_the_profiles_never_in_the_rules():
    """Except what a job holds by its nature: a campaign's recording job, its connections to the provider."""
    rules = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    for path in rules:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s+threads:", text, re.M), path
        for block in re.findall(r"(?m)^\s+resources:\n((?:\s{8,}.*\n)+)", text):
            assert block.split() == ["**CAMPAIGN.resources,"], (path, block)  # provider_connections_<n>, one per endpoint
    for name in CLUSTER_PROFILES:
        assert {"runtime", "mem_mb"} <= set(profile(name)["default-resources"]), name


def test_user_profiles_keep_documented_placeholders():
    for name in ("slurm", "slurm-generic"):
        resources = profile(name)["default-resources"]
        assert resources["slurm_partition"] == "<partition>" and resources["slurm_account"] == "<account>", name


STATES = {
    "COMPLETED": "success",
    "RUNNING": "running",
    "PENDING": "running",
    "COMPLETING": "running",
    "": "running",
    "FAILED": "failed",
    "CANCELLED": "failed",
    "TIMEOUT": "failed",
    "OUT_OF_MEMORY": "failed",
}


@pytest.mark.parametrize("state", sorted(STATES))
def test_generic_status_script_maps_slurm_states(state, tmp_path):
    """status-slurm.sh, with stand-ins for squeue, sacct and scontrol that know one job."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f"#!/bin/sh\n[ -n '{state}' ] && echo '{state}'\nexit 0\n")
    (bin_dir / "sacct").write_text("#!/bin/sh\necho 'accounting storage is disabled' >&2\nexit 1\n")
    (bin_dir / "scontrol").write_text("#!/bin/sh\nexit 1\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    status = PROFILES / "slurm-generic" / "status-slurm.sh"
    result = subprocess.run([str(status), "42;cluster"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert result.stdout == STATES[state] + "\n"
