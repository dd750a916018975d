"""The configuration is bounded in size before it is validated, and takes numbers the way
Snakemake's --config passes them (issue 25, cases 7 and 14): real `snakemake -n` runs in a
temporary copy of the project, and the check itself in this process, timed."""

import time

import pytest
import yaml

from helpers import ROOT
from helpers.workflow import copy_project, snakemake
from replaylab import configuration

pytestmark = pytest.mark.workflow
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def bomb(under=None, levels=9):
    """YAML of `levels` levels of ten aliases each (10**levels values once expanded), under a key."""
    indent = "  " if under else ""
    lines = [f"{under}:"] if under else []
    lines.append(f"{indent}a0: &a0 [x, x, x, x, x, x, x, x, x, x]")
    for level in range(1, levels + 1):
        lines.append(f"{indent}a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("bounds") / "project")


def stderr_lines(result):
    return [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("Using workflow specific profile")]


@pytest.mark.parametrize("under, where", [("run_folders", "$.run_folders.a9"), (None, "$.a9[9]")])
def test_a_yaml_alias_bomb_is_one_line_at_once(copy, under, where):
    (copy / "bomb.yaml").write_text(bomb(under))
    start = time.monotonic()
    result = snakemake(copy, "-n", "--configfile", "bomb.yaml", check=False, timeout=120)
    took = time.monotonic() - start
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert stderr_lines(result) == [f"bomb.yaml + config/config.yaml: {where}: the configuration holds more than "
                                    f"{configuration.MAX_VALUES} values (YAML aliases counted each time they are used): "
                                    "a configuration holds a few hundred; write the values out"]
    assert took < 60, took  # before: 30 s and 3.5 GB, then a MemoryError


def test_the_size_check_stops_early():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["run_folders"] = yaml.safe_load(bomb("x", levels=12))["x"]  # 10**12 values expanded
    start = time.perf_counter()
    with pytest.raises(configuration.InputError, match=r"^c: \$\.run_folders\.a12: the configuration holds more than"):
        configuration.check(config, "c", SCHEMA)
    assert time.perf_counter() - start < 2  # it counts up to MAX_VALUES, not the billions


def test_config_numbers_given_as_text_are_numbers(copy):
    result = snakemake(copy, "-n", "campaign", "--config", 'campaign={"runs": 12, "request_timeout": "30.5"}', check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    wrong = snakemake(copy, "-n", "--config", "campaign={runs: twelve}", check=False)
    assert wrong.returncode == 1
    assert stderr_lines(wrong)[-1] == "config/config.yaml + --config: $.campaign.runs: 'twelve' is not of type 'integer'"


@pytest.mark.parametrize("text, kinds, expected", [
    ("12", "integer", 12), (" -3 ", ["integer", "null"], -3), ("2.5", "number", 2.5), ("1e3", "number", 1000.0),
    ("null", ["integer", "null"], None), ("true", "boolean", True), ("12", "string", "12"), ("twelve", "integer", "twelve"),
    ("nan", "number", "nan"), ("9" * 31, "integer", "9" * 31), ("null", "integer", "null"),
])
def test_coerce_reads_only_what_the_schema_wants(text, kinds, expected):
    assert configuration.coerce({"v": text}, {"type": "object", "properties": {"v": {"type": kinds}}}) == {"v": expected}
