"""Bad input stops even a dry run with one line naming the file (or the configuration) and the
field (issue 16, cases 7 to 12 and 16), each with one bad recording, one file that is not a regular
file, or one bad configuration value. Some cases through real `snakemake -n` runs in a temporary
copy (`dry_run`); the others through the same checks the workflow calls while it starts, in this
process (`checks`): the line is theirs, and the dry runs show that the workflow prints it alone."""

import pytest
import yaml

from helpers import ROOT
from helpers.bad import BAD, NOT_A_FILE, make_not_a_file
from helpers.workflow import copy_project, first_error_line, snakemake
from replaylab import configuration, inputs
from replaylab.agents.recording import RecordingError, printable

pytestmark = pytest.mark.workflow
THROUGH_SNAKEMAKE = {"nested-500", "fifo", "bad-name", "tolerance=nan", "model=gpt\x1b[2J"}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("inputs") / "project")


def dry_run_stops(copy, *args):
    """The one line the dry run stopped with (after Snakemake's profile notice)."""
    result = snakemake(copy, "-n", *args, check=False)
    assert result.returncode != 0, result.stdout[-2000:]
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 2, result.stderr[-3000:]  # the profile notice, and the line
    return first_error_line(result)


def checks_stop(copy, monkeypatch, setting=None):
    """The line the workflow's checks stop a dry run with (workflow/rules/common.smk): the
    configuration's, then the recordings' (found in the working directory, validated)."""
    monkeypatch.chdir(copy)
    config = yaml.safe_load((copy / "config" / "config.yaml").read_text())
    if setting is not None:  # as --config reads a value: a whole number, else a number, else text
        key, value = setting.split("=", 1)
        config[key] = next(parsed for parse in (int, float, str) if (parsed := attempt(parse, value)) is not None)
    try:
        configuration.check(config, "config/config.yaml + --config", ROOT / "workflow" / "schemas" / "config.schema.yaml")
        runs = {lesson: {run: str(path) for run, path in inputs.find_runs(lesson, ["recordings"]).items()} for lesson in config["lessons"]}
        inputs.check_recordings(runs, copy / ".snakemake" / "checked-in-process.json")
    except (configuration.InputError, RecordingError) as error:
        return printable(str(error))
    raise AssertionError("the checks accepted it")


def attempt(parse, value):
    try:
        return parse(value)
    except ValueError:
        return None


def stops(copy, monkeypatch, case, *args, setting=None):
    if case in THROUGH_SNAKEMAKE:
        return dry_run_stops(copy, *args)
    return checks_stop(copy, monkeypatch, setting)


@pytest.mark.parametrize(
    "name", ["nested-500", "nested-1000", "lone-surrogate", "integer-5000-digits", "duplicate-key", "ansi-in-model"]
)
def test_a_bad_recording_stops_the_dry_run_on_one_line(copy, monkeypatch, name):
    data, expected = BAD[name]
    path = copy / "recordings" / "hunter" / "symplectic-euler.json"
    original = path.read_bytes()
    path.write_bytes(data)
    try:
        line = stops(copy, monkeypatch, name)
    finally:
        path.write_bytes(original)
    assert line.startswith("recordings/hunter/symplectic-euler.json: ") and expected in line, line[:300]


@pytest.mark.parametrize(
    "kind, expected",
    [
        *[(kind, f"recordings/hunter/x.json: {said}") for kind, said in NOT_A_FILE.items()],
        ("bad-name", "recordings/hunter/my run.json: the file name: 'my run' is not a run name"),
        ("long-name", "recordings/hunter/" + "a" * 101 + ".json: the file name: a run name has at most 100 characters"),
    ],
)
def test_what_is_not_a_recording_file_stops_the_dry_run_on_one_line(copy, monkeypatch, kind, expected):
    """A FIFO would block an ordinary open forever: the dry run must end (snakemake() has a timeout)."""
    folder = copy / "recordings" / "hunter"
    path = folder / "x.json"
    if kind in NOT_A_FILE:
        make_not_a_file(path, kind)
    else:
        path = folder / ("my run.json" if kind == "bad-name" else "a" * 101 + ".json")
        path.write_text((folder / "velocity-verlet.json").read_text())
    try:
        line = stops(copy, monkeypatch, kind)
    finally:
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
    assert line.startswith(expected), line


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("tolerance=nan", "$.tolerance: nan is not a finite number"),
        ("tolerance=inf", "$.tolerance: inf is greater than the maximum of 1"),
        ("tolerance=1e309", "$.tolerance: inf is greater than the maximum of 1"),
        ("batch_size=" + "9" * 12, "$.batch_size: 999999999999 is greater than the maximum of 1000000"),
        ("record_run=" + "a" * 250, "$.record_run: 'aaaaa"),  # ... (250 characters) is 250 characters long, more than 100
        ("record_run=" + "a" * 95, "$.record_run: 95 characters is too long"),
        ("record_run=my run", "$.record_run: 'my run' does not match"),
        ("model=gpt\x1b[2J", "$.model: 'gpt\\x1b[2J' holds the control character \\x1b"),
        ("seed=" + "9" * 30, "$.seed: 999999999999999999999999999999 is greater than the maximum"),
    ],
)
def test_a_bad_configuration_value_stops_the_dry_run_on_one_line(copy, monkeypatch, setting, expected):
    line = stops(copy, monkeypatch, setting, "record", "--config", setting, setting=setting)
    assert line.startswith("config/config.yaml + --config: " + expected), line


def test_a_record_run_name_with_a_dot_is_planned(copy):
    """config/README.md allows '.' (and '-') in record_run: the record target plans its jobs."""
    result = snakemake(copy, "-n", "record", "--config", "record_lesson=hunter", "record_run=mine.v2-b")
    out = result.stdout
    assert "results/live/hunter/mine.v2-b-symplectic-euler.json" in out and "results/live/hunter/mine.v2-b-velocity-verlet.json" in out
    assert "results/live/hunter/mine.v2-b" in out
