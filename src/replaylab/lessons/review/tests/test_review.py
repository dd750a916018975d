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
