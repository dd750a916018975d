"""`replaylab verify`: results built again in a temporary folder and compared file by file, on a
copy of the session's built results (tests/conftest.py), changed by hand."""

import gzip
import json
import re
import shutil

import pytest

from helpers import cli, environment

pytestmark = pytest.mark.workflow


def verify(copy, *args):
    """`replaylab verify ARGS` in the built copy, with its own library."""
    return cli("verify", "--cores", "2", *args, cwd=copy, env=environment(PYTHONPATH=str(copy / "src")))


@pytest.fixture
def results(built, tmp_path):
    """A copy of the built copy's results, to change by hand."""
    target = tmp_path / "results"
    shutil.copytree(built / "results", target, symlinks=True)
    return target


@pytest.mark.slow  # the whole build again, in a process of its own
def test_every_file_changed_by_hand_is_one_line_and_nothing_else(built, results):
    """One rebuild: the files changed by hand are listed, and no other (a clean build passes, as
    .ci/run checks after its full build)."""
    # gzip stamps its own time: a per-run table compressed again, the same table, is no difference
    same = results / "hunter" / "runs.csv.gz"
    same.write_bytes(gzip.compress(gzip.decompress(same.read_bytes()), mtime=12345))
    # a digit of a transcript
    (transcript,) = sorted((results / "hunter" / "transcripts").glob("*/velocity-verlet.json"))
    text = transcript.read_text()
    digit = re.search(r"(?<=\.)\d", text)
    transcript.write_text(text[: digit.start()] + str((int(digit.group()) + 1) % 10) + text[digit.end():])
    # a right run flipped in the per-run table (its compressed bytes changed by their content)
    table = results / "projectile" / "runs.csv.gz"
    rows = gzip.decompress(table.read_bytes()).decode()
    assert ",True," in rows
    table.write_bytes(gzip.compress(rows.replace(",True,", ",False,", 1).encode()))
    # a verdict of a judged batch
    (judged,) = sorted((results / "pendulum" / "judged").glob("*.json"))
    data = json.loads(judged.read_text())
    run = next(iter(data["runs"]))
    data["runs"][run]["messages"] += 1
    judged.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    # a figure removed, a file added
    figure = sorted((results / "review" / "figures").glob("*.png"))[0]
    figure.unlink()
    (results / "hunter" / "tables" / "mine.csv").write_text("a,b\n")

    done = verify(built, results)
    assert done.returncode == 1
    assert sorted(done.stdout.splitlines()) == sorted([
        f"{transcript}: differs from a rebuild",
        f"{table}: differs from a rebuild",
        f"{judged}: differs from a rebuild",
        f"{figure}: missing (a rebuild makes it)",
        f"{results / 'hunter' / 'tables' / 'mine.csv'}: not made by a rebuild",
    ])
    assert re.fullmatch(rf"replaylab verify: \d+ files of {re.escape(str(results))} rebuilt and compared: 5 differ\n",
                        done.stderr), done.stderr


def test_verify_outside_a_workflow_folder_is_one_line(tmp_path):
    done = cli("verify", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (f"replaylab: no replaylab project in {tmp_path.resolve()} or above it (a folder with Snakefile and "
                           "config/config.yaml): run it in one, or set REPLAYLAB_PROJECT\n")
