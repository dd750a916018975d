"""`replaylab verify`: results built again in a temporary folder and compared file by file, on a
copy of the session's built results (tests/conftest.py), changed by hand; and on a copy built with
two campaigns and settings given on the command line, rebuilt with the settings it records."""

import csv
import gzip
import json
import re
import shutil
import sys

import pytest

from helpers import ROOT, cli, environment, in_process, processes
from helpers.workflow import configure, configure_campaign, copy_project, snakemake
from replaylab.verify import batch_size, recorded

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
    name = re.compile(r'"run": ?"velocity-verlet"')
    (transcript,) = [p for p in (results / "hunter" / "transcripts").glob("*.jsonl") if name.search(p.read_text())]
    text = transcript.read_text()
    digit = re.compile(r"(?<=\.)\d").search(text, name.search(text).end())
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


# ---------------------------------------------------------------------------------------------
# Every campaign on disk, and the lessons with the settings they were built with (issue 37)


def replaylab(copy, *args, cwd=None):
    """`replaylab ARGS` as a real process (it, and the Snakemake it starts, end with the test),
    with the copy's own library, in `cwd` (default the copy)."""
    return processes.run([sys.executable, "-m", "replaylab", *map(str, args)], 900, cwd=cwd or copy,
                         env=environment(PYTHONPATH=str(copy / "src")))


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """A copy of the project built as a user might: the configured campaign (`snakemake campaign`),
    a second one through `replaylab campaign` (its settings in its campaign.yaml), then every
    lesson with generated runs and batches of 3 given on the command line (config/config.yaml
    names neither: `run_folders: []`, `batch_size: 2000`). The copy's configuration names the two
    lessons the campaigns take (`lessons: [projectile, hunter]`), and its campaign takes hunter with
    2 runs per model: every build of them, and each rebuild of `replaylab verify`, is of those alone."""
    copy = copy_project(tmp_path_factory.mktemp("campaigns") / "project", batch_size=2000)
    configure(copy, lessons=["projectile", "hunter"])
    configure_campaign(copy, lessons=["hunter"], runs=2)
    done = replaylab(copy, "generate", "hunter", "--count", "4", "--out", "generated")
    assert done.returncode == 0, done.stderr
    snakemake(copy, "campaign", "--cores", "2")
    done = replaylab(copy, "campaign", "--provider", "scripted", "--model", "scripted-careful,scripted-mixed",
                     "--lesson", "projectile", "--runs", "2", "--name", "other", "--cores", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    snakemake(copy, "--cores", "2", "--config", "run_folders=[generated]", "batch_size=3")
    assert list((copy / "results" / "hunter" / "judged").glob("batch*of2.json"))  # 6 runs, in batches of 3
    return copy


@pytest.mark.slow  # a build with two campaigns, and two rebuilds, each a Snakemake of its own
def test_every_campaign_is_rebuilt_and_the_lessons_with_the_run_folders_they_were_built_with(campaigns, tmp_path):
    # untouched, from a folder below the project's: no difference, and it says what it rebuilt with
    clean = replaylab(campaigns, "verify", "--cores", "2", cwd=campaigns / "recordings" / "hunter")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout == ""
    assert clean.stderr.splitlines()[0] == ('the lessons were built with run_folders ["generated"], batch_size 3, '
                                            "not as configured: rebuilt with the same")
    assert re.fullmatch(r"replaylab verify: \d+ files of results rebuilt and compared: every file is the same",
                        clean.stderr.splitlines()[-1]), clean.stderr

    # a digit of each campaign's tables, edited by hand: the configured campaign's, and the other's
    results = tmp_path / "results"
    shutil.copytree(campaigns / "results", results, symlinks=True)
    edited = []
    for table in (results / "campaigns" / "other" / "scorecard.csv", results / "campaigns" / "baseline" / "hunter" / "scorecard.csv"):
        rows = list(csv.DictReader(table.read_text().splitlines()))
        rows[0]["right"] = str(int(rows[0]["right"]) + 1) if rows[0]["right"] != "9" else "8"
        with open(table, "w", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        edited.append(f"{table}: differs from a rebuild")
    done = replaylab(campaigns, "verify", "--cores", "2", "--results", results)
    assert done.returncode == 1, done.stderr
    assert sorted(done.stdout.splitlines()) == sorted(edited)
    assert done.stderr.splitlines()[-1].endswith(f"files of {results} rebuilt and compared: 2 differ")


@pytest.mark.slow  # two campaigns, then their rebuilds
def test_campaigns_made_with_config_and_name_alone_verify_clean(tmp_path):
    """Campaigns made with `--config FILE` and with `--name` in a project whose lessons were never
    built: nothing is reported that a rebuild would not change (the lessons are not rebuilt, and it
    says so). (An edited digit of a campaign's table: the test above.)"""
    copy = copy_project(tmp_path / "project", batch_size=2000)
    configure(copy, lessons=["pendulum"], record_lesson="pendulum")
    config = copy / "config" / "config.yaml"
    config.write_text(re.sub(r"(?m)^(campaign:(?:\n  .*)*?\n  lessons:) .*$", r"\1 [pendulum]", config.read_text()))
    (copy / "extra.yaml").write_text("campaign:\n  name: viaconfig\n  provider: scripted\n"
                                     "  models: [scripted-careful, scripted-careless]\n  lessons: [pendulum]\n  runs: 2\n")
    for args in (["--config", "extra.yaml"], ["--provider", "scripted", "--model", "scripted-careful", "--lesson", "pendulum",
                                              "--runs", "1", "--name", "vianame"]):
        done = replaylab(copy, "campaign", *args, "--cores", "2")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert not (copy / "results" / "index.md").exists()
    clean = replaylab(copy, "verify", "--cores", "2")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout == ""
    assert clean.stderr.splitlines()[0] == "no lesson was built (results/index.md is not there): the campaigns alone are compared"


def test_a_campaign_that_is_not_on_disk_is_one_line(tmp_path):
    project = tmp_path / "project"
    for name in ("Snakefile", "config/config.yaml"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, project / name)
    (project / "results" / "campaigns" / "baseline").mkdir(parents=True)
    done = in_process("verify", "nope", cwd=tmp_path, env=environment(REPLAYLAB_PROJECT=str(project)))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "replaylab: results/campaigns/nope: no such campaign; the campaigns are: baseline\n"


def test_what_a_build_records_of_its_settings(tmp_path):
    """The run folders and the tolerance of the transcripts of each lesson's last build (the
    batches of one number that hold the most runs), and a batch_size that gives as many batches."""
    def transcript(lesson, batch, run, source, tolerance=1e-6):
        path = tmp_path / lesson / "transcripts" / f"{batch}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as stream:
            stream.write(json.dumps({"run": run, "replayed": {"from": source, "tolerance": tolerance}}) + "\n")

    for index, run in enumerate(("a", "b", "c", "d", "e", "f")):
        transcript("hunter", f"batch{index % 3}of4", run, f"{'generated' if index < 4 else 'recordings'}/hunter/{run}.json")
    transcript("hunter", "batch0of1", "a", "recordings/hunter/a.json", tolerance=0.5)  # left by an earlier build
    transcript("review", "batch0of1", "physics", "recordings/review/physics.json")
    tolerance, folders, counts = recorded([tmp_path / "hunter", tmp_path / "review"])
    assert (tolerance, folders) == (1e-6, ["generated", "recordings"])
    assert counts == {tmp_path / "hunter": (6, 4), tmp_path / "review": (1, 1)}
    assert batch_size(2000, counts) == 2 and batch_size(2, counts) == 2 and batch_size(1, {"x": (8, 1), "y": (2, 2)}) is None
    assert batch_size(2000, {}) == 2000
