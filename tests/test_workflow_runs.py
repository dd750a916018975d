"""Many runs per lesson, and recording through the workflow: real Snakemake runs in a temporary copy."""

import json

import pytest

from helpers.workflow import batch_of, configure, copy_project, first_error_line, pending, snakemake

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A copy with 120 generated hunter runs beside the reference ones, in batches of about 50."""
    copy = copy_project(tmp_path_factory.mktemp("many") / "project", batch_size=50)
    from replaylab.generate import generate

    generate("hunter", 120, copy / "generated")
    configure(copy, run_folders=["generated"])
    snakemake(copy, "--cores", "2", "hunter")
    return copy


def test_every_run_of_every_folder_is_replayed_judged_and_scored(many):
    transcripts = list((many / "results" / "hunter" / "transcripts").glob("*/*.json"))
    assert len(transcripts) == 122
    batches = {p.parent.name for p in transcripts}
    assert batches == {f"batch{i}of4" for i in range(4)}
    scorecard = json.loads((many / "results" / "hunter" / "scorecard.json").read_text())
    assert sum(row["runs"] for row in scorecard["scorecard"]) == 122
    assert {s["model"].split(",")[0] for s in scorecard["scores"]} >= {"hunter baseline"}
    page = (many / "results" / "hunter" / "index.md").read_text()
    assert "120 more runs" in page and "## Scorecard" in page


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


def test_a_run_name_used_twice_stops_the_dry_run(many):
    twin = many / "generated" / "hunter" / "velocity-verlet.json"
    twin.write_text((many / "recordings" / "hunter" / "velocity-verlet.json").read_text())
    try:
        result = snakemake(many, "-n", check=False)
    finally:
        twin.unlink()
    assert result.returncode != 0
    assert first_error_line(result) == "generated/hunter/velocity-verlet.json: $.run: 'velocity-verlet' is also the run recordings/hunter/velocity-verlet.json; run names must be unique within a lesson"


def test_record_target_with_the_scripted_provider_needs_no_key(tmp_path):
    copy = copy_project(tmp_path / "project")
    result = snakemake(copy, "--cores", "1", "record", "--config", "provider=scripted", "record_lesson=hunter")
    assert "record_run" in result.stdout + result.stderr
    live = copy / "results" / "live" / "hunter"
    assert sorted(p.name for p in live.glob("*.json")) == ["new-symplectic-euler.json", "new-velocity-verlet.json"]
    page = (live / "new" / "index.md").read_text()
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
