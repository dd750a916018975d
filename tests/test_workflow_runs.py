"""Many runs per lesson, and recording through the workflow: real Snakemake runs in a temporary copy."""

import json
import re
import shutil

import pandas as pd
import pytest

from helpers.pages import with_run_pages
from helpers.workflow import batch_of, configure, copy_project, first_error_line, forge, job_times, pending, prepared_copy, snakemake

pytestmark = pytest.mark.workflow  # its builds: each made by one worker (tests/conftest.py)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """120 generated hunter runs, written once (each copy gets the same files)."""
    from replaylab.generate import generate

    folder = tmp_path_factory.mktemp("generated")
    generate("hunter", 120, folder)
    return folder


@pytest.fixture(scope="module")
def many(tmp_path_factory, runs):
    """A copy with the 120 generated hunter runs beside the reference ones, in batches of about 50."""
    copy = many_runs(tmp_path_factory.mktemp("many") / "project", runs)
    snakemake(copy, "--cores", "2", "hunter")
    return copy


def many_runs(target, runs, prepared=None):
    """A copy (from clean, or of `prepared`: tests/conftest.py) with the generated runs."""
    copy = copy_project(target, batch_size=50) if prepared is None else prepared_copy(prepared, target, batch_size=50)
    shutil.copytree(runs, copy / "generated")
    configure(copy, run_folders=["generated"])
    return copy


def replay_intervals(copy):
    """{batch: (start, end)} of the lesson's replay jobs, from their logs."""
    return {log.stem: job_times(log) for log in (copy / "logs" / "hunter" / "replay").glob("*.log")}


def result_bytes(copy):
    return {str(p.relative_to(copy)): p.read_bytes() for p in sorted((copy / "results").rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------
# Side by side: the batches of a lesson, each a job of its own


@pytest.mark.slow  # a Snakemake build of its own
def test_the_batches_ran_side_by_side(many):
    """Each batch a job of its own, run beside the lesson's other jobs on the second core: another
    batch, or the jobs that need no recording (its scans, its answers, its baselines)."""
    ran = replay_intervals(many)
    assert sorted(ran) == [f"batch{i}of4" for i in range(4)]
    others = [job_times(log) for log in (many / "logs" / "hunter").glob("*.log")]
    intervals = sorted([*ran.values(), *others])
    assert any(later[0] < earlier[1] for earlier, later in zip(intervals, intervals[1:])), intervals  # --cores 2
    assert any(start < end_ and start_ < end for start, end in ran.values() for start_, end_ in intervals
               if (start, end) != (start_, end_)), intervals  # a replay overlapped another job


@pytest.mark.slow  # a Snakemake build of its own
def test_one_core_gives_the_same_bytes_one_job_at_a_time(many, runs, tmp_path):
    serial = many_runs(tmp_path / "project", runs)
    snakemake(serial, "--cores", "1", "hunter")
    intervals = sorted(replay_intervals(serial).values())
    assert all(later[0] >= earlier[1] for earlier, later in zip(intervals, intervals[1:])), intervals
    assert result_bytes(serial) == result_bytes(many)


@pytest.mark.slow  # a Snakemake build of its own
def test_a_mismatch_in_one_batch_names_its_run_and_leaves_the_other_batches(runs, prepared, tmp_path):
    copy = many_runs(tmp_path / "project", runs, prepared)
    key = forge(copy / "generated" / "hunter" / "s00042.json")
    result = snakemake(copy, "--cores", "2", "--keep-going", "hunter", check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    message = next(line for line in result.stderr.splitlines() if line.startswith("generated/hunter/s00042.json: message "))
    assert re.match(rf"generated/hunter/s00042\.json: message \d+, call \d+, tool oscillator_energy_drift: {key} was ", message)
    assert "If the change is intended, record the run again with: replaylab record hunter --variant " in message
    assert message.endswith(" --provider scripted --seed 42 --run s00042 --group generated"), message
    failed = batch_of_run(copy, "s00042")
    assert re.findall(r"Error in rule (\w+):", result.stderr) == ["replay"]
    folder = copy / "results" / "hunter"
    assert not (folder / "transcripts" / f"{failed}.jsonl").exists() and not (folder / "judged" / f"{failed}.json").exists()
    others = {f"batch{i}of4" for i in range(4)} - {failed}
    assert {p.name for p in (folder / "transcripts").iterdir()} == {f"{b}.jsonl" for b in others}  # no partial file either
    assert {p.stem for p in (folder / "judged").iterdir()} == others
    assert sum(len((folder / "transcripts" / f"{b}.jsonl").read_text().splitlines()) for b in others) > 80


def batch_of_run(copy, run):
    """The batch of a run, from the batches' lists the workflow wrote."""
    for path in (copy / ".snakemake" / "replaylab" / "batches" / "hunter").glob("*.json"):
        if any(p.endswith(f"/{run}.json") for p, _ in json.loads(path.read_text())["recordings"]):
            return path.stem
    raise AssertionError(run)


@pytest.mark.slow  # a Snakemake build of its own
def test_every_run_of_every_folder_is_replayed_judged_and_scored(many):
    archives = sorted((many / "results" / "hunter" / "transcripts").glob("*.jsonl"))
    assert {p.stem for p in archives} == {f"batch{i}of4" for i in range(4)}
    transcripts = [json.loads(line)["run"] for p in archives for line in p.read_text().splitlines()]
    assert len(transcripts) == 122
    judged = {}
    for path in (many / "results" / "hunter" / "judged").glob("*.json"):
        judged.update(json.loads(path.read_text())["verdicts"])
    assert sorted(judged) == sorted(transcripts)
    scorecard = json.loads((many / "results" / "hunter" / "scorecard.json").read_text())
    assert sum(row["runs"] for row in scorecard["scorecard"]) == 122 == scorecard["counts"]["runs"]
    table = pd.read_csv(many / "results" / "hunter" / "runs.csv.gz")
    assert len(table) == 122 and set(table["run"]) == set(judged)
    assert table["answered"].all()  # every scripted and reference hunt ends with an answer
    assert sum(row["answered"] for row in scorecard["scorecard"]) == scorecard["counts"]["answered"] == 122
    assert sum(row["right"] for row in scorecard["scorecard"]) == scorecard["counts"]["right"] == int(table["right"].sum())
    assert {m.split(",")[0] for m in table["model"]} == {"hunter baseline", "written by a person (no language model)"}
    page = (many / "results" / "hunter" / "index.md").read_text()
    assert "This page shows 12 of the 122 runs in full" in page and "## Scorecard" in page
    assert "### 100 more runs, with their transcripts" in page and "10 more runs are in `runs.csv.gz`" in page


@pytest.mark.slow  # a Snakemake build of its own
def test_results_and_pages_show_a_bounded_sample_wrong_runs_first(many):
    results = json.loads((many / "results" / "hunter" / "results.json").read_text())
    table = pd.read_csv(many / "results" / "hunter" / "runs.csv.gz").set_index("run")
    assert results["counts"] == {"runs": 122, "answered": int(table["answered"].sum()), "right": int(table["right"].sum()),
                                 "supported": int(table["supported"].eq(True).sum()),
                                 "labels": {"Authored example, not a recorded model run": 2,
                                            "Scripted baseline (a program, not a language model)": 120}}
    assert 0 < results["counts"]["supported"] < 122  # some hunts answer what their own experiments do not show
    shown = [score["run"] for score in results["scores"]]
    assert len(shown) == 12 and list(results["verdicts"]) == shown and set(results["runs"]) == set(shown)
    assert shown[:2] == ["symplectic-euler", "velocity-verlet"]  # the reference runs first
    wrong = table.index[~table["right"]]
    assert len(wrong) > 10 and set(shown[2:]) <= set(wrong)  # then the wrong ones
    # one of each model, task and mistake before a second of any
    kinds = [(table.loc[n, "model"], table.loc[n, "task"], table.loc[n, "wrong"]) for n in shown[2:]]
    assert len(set(kinds)) == min(len(kinds), len(set(zip(table.loc[wrong, "model"], table.loc[wrong, "task"], table.loc[wrong, "wrong"]))))
    listed = results["listed"]
    assert len(listed) == 100 and not set(e["run"] for e in listed) & set(shown)
    folder = many / "results" / "hunter"
    for entry in listed + [{"run": n, "file": results["runs"][n]["file"]} for n in shown]:
        linked = folder / entry["file"]
        assert linked.is_file() and json.loads(linked.read_text())["run"] == entry["run"]
    for entry in listed:  # each listed run says what it answered and how it is judged
        assert {"answered", "right", "supported", "answer", "variant", "label", "messages"} <= set(entry)
        assert entry["right"] == bool(table.loc[entry["run"], "right"]) and entry["answered"] == bool(table.loc[entry["run"], "answered"])
    # the tables hold the runs the page shows
    calls = pd.read_csv(folder / "tables" / "run.csv")
    assert set(calls["run"]) == set(shown)


@pytest.mark.slow  # a Snakemake build of its own
def test_changing_one_run_reruns_its_batch_only(many):
    path = many / "generated" / "hunter" / "s00007.json"
    original = path.read_text()
    data = json.loads(original)
    data["steps"][0]["text"] += " (edited)"
    path.write_text(json.dumps(data, indent=2) + "\n")
    try:
        jobs, outputs = pending(many, "hunter")
    finally:
        path.write_text(original)
    replays = [o for o in outputs if "/transcripts/" in o]
    assert replays == [batch_of(many, "hunter", "s00007")]
    assert {rule for rule, _ in jobs}.isdisjoint({"scan"})


@pytest.mark.slow  # a Snakemake build of its own
def test_a_run_name_used_twice_stops_the_dry_run(many):
    twin = many / "generated" / "hunter" / "velocity-verlet.json"
    twin.write_text((many / "recordings" / "hunter" / "velocity-verlet.json").read_text())
    try:
        result = snakemake(many, "-n", check=False)
    finally:
        twin.unlink()
    assert result.returncode != 0
    assert first_error_line(result) == "generated/hunter/velocity-verlet.json: $.run: 'velocity-verlet' is also the run recordings/hunter/velocity-verlet.json; run names must be unique within a lesson"


@pytest.mark.slow  # a Snakemake build of its own
def test_record_target_with_the_scripted_provider_needs_no_key(prepared, tmp_path):
    copy = prepared_copy(prepared, tmp_path / "project")
    result = snakemake(copy, "--cores", "1", "record", "--config", "provider=scripted", "record_lesson=hunter")
    assert "record_run" in result.stdout + result.stderr
    live = copy / "results" / "live" / "hunter"
    assert sorted(p.name for p in live.glob("*.json")) == ["new-symplectic-euler.json", "new-velocity-verlet.json"]
    page = with_run_pages(live / "new")
    assert "**Scripted baseline (a program, not a language model)**" in page
    assert "- Messages produced by: hunter baseline, coarse-first (a scripted program, not a language model)" in page
    assert "- How: Scripted baseline: replaylab's built-in program" in page
    assert (live / "new" / "figures" / "drift.png").is_file()
    assert not (copy / "recordings" / "hunter" / "new-symplectic-euler.json").exists()
    # the default target never records
    jobs, _ = pending(copy, "--forceall")
    assert not {rule for rule, _ in jobs} & {"record", "record_run", "live_page"}


def test_find_runs_skips_hidden_files_and_refuses_a_name_used_twice(tmp_path):
    """The one way runs are found, by the workflow and by `replaylab build` alike."""
    from replaylab import inputs
    from replaylab.agents.recording import RecordingError

    for folder, name in [("a", "one"), ("a", ".one.tmp"), ("b", "two")]:
        (tmp_path / folder / "hunter").mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "hunter" / f"{name}.json").write_text("{}")
    found = inputs.find_runs("hunter", [tmp_path / "a", tmp_path / "b"])
    assert found == {"one": tmp_path / "a" / "hunter" / "one.json", "two": tmp_path / "b" / "hunter" / "two.json"}
    (tmp_path / "b" / "hunter" / "one.json").write_text("{}")
    with pytest.raises(RecordingError, match=r"b/hunter/one.json: \$.run: 'one' is also the run .*a/hunter/one.json"):
        inputs.find_runs("hunter", [tmp_path / "a", tmp_path / "b"])
