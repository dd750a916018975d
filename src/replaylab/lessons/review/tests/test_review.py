"""The review lesson's own tests (collected by pytest from the lesson's package)."""

import pytest

from helpers import RECORDINGS
from replaylab.build import build
from replaylab.index_page import index
from replaylab.lessons import registry
from replaylab.results import load

LESSON = registry.lesson("review")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=RECORDINGS, results=folder, progress=lambda text: None)
    return load(folder / LESSON.name / "results.json")


def test_the_index_and_the_scorecard_count_reviewers_runs(results):
    """Each reviewer's run is scored on its own answer: the index and the scorecard count runs,
    one row per reviewer's task."""
    assert LESSON.judged == "group" and LESSON.unit == ("reviewer's run", "reviewers' runs")
    counts = results["counts"]
    assert {k: counts[k] for k in ("runs", "answered", "right", "supported")} == {"runs": 3, "answered": 3, "right": 3, "supported": 3}
    assert ("Runs: 3 (Authored example, not a recorded model run): 3 answered, 3 right, 3 supported by their own "
            "experiments.") in index([results])
    page = LESSON.page(results)
    assert "| model or program | task | reviewers' runs | answered | right |" in page
    assert sorted(row["task"] for row in results["scorecard"]) == ["evidence reviewer", "numerics reviewer", "physics reviewer"]
    assert all(row["runs"] == 1 and row["right"] == 1 for row in results["scorecard"])
    assert "with 1 reviewer's run, the share of right answers" in page
    assert "Share of reviewers' runs that reached the right answer" in page


def test_the_page_decides_each_piece_per_group_of_one_model(results):
    """The group's decision stays as the seeds show it: every reviewer of the reference group, one
    model, and piece 2 rejected for its failed bounded-energy check."""
    (key,) = results["groups"]
    decision = results["groups"][key]
    assert key == f"{decision['group']} [{decision['model']}]" and decision["group"] == "reference"
    assert decision["reviewers"] == {"evidence": ["evidence"], "numerics": ["numerics"], "physics": ["physics"]}
    one, two = decision["resolution"]
    assert not one["rejected"] and two["rejected"] and two["failed"] == ["bounded-energy"]
    assert "### Group `reference`" in LESSON.page(results)


@pytest.fixture(scope="module")
def drawn_results(tmp_path_factory):
    """A build with the reference runs and scripted groups on two drawn instances and the seed's."""
    import shutil

    from replaylab.generate import generate

    recordings = tmp_path_factory.mktemp("recordings")
    shutil.copytree(RECORDINGS / LESSON.name, recordings / LESSON.name)
    generate(LESSON.name, 3, recordings, first_seed=0, instances=["review-032", "review-059", "review-seed"])
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=recordings, results=folder, progress=lambda text: None)
    return load(folder / LESSON.name / "results.json")


def test_the_page_names_a_drawn_instance_s_pieces_by_number_and_judges_each_run_against_its_instance(drawn_results):
    from replaylab.lessons.review.pieces import ENTRIES

    results = drawn_results
    groups = {g["group"]: g for g in results["groups"].values()}
    assert groups["g00000"]["instances"] == ["review-032"] and groups["g00002"]["instances"] == ["review-seed"]
    assert [r["name"] for r in groups["g00000"]["resolution"]] == ["piece 1 of instance review-032", "piece 2 of instance review-032"]
    assert [r["name"] for r in groups["g00002"]["resolution"]] == ["symplectic Euler", "explicit Euler as symplectic"]
    assert {v["instance"] for v in results["verdicts"].values()} == {"review-032", "review-059", "review-seed"}
    page = LESSON.page(results)
    assert "#### Piece 1 of instance `review-032`" in page and "#### Piece 2: explicit Euler as symplectic" in page
    # the faults of a drawn instance's pieces are listed nowhere, on the page or in the tables
    tables = repr(LESSON.tables(results))
    for entry in ENTRIES[2:]:
        assert entry.what not in page and entry.what not in tables, entry.key
    # the thorough reviewers (seed 0) are right against their own instance's answer
    scores = {s["run"]: s for s in results["scores"]}
    assert all(scores[f"s00000-{r}"]["right"] for r in ("physics", "numerics", "evidence"))
