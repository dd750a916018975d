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


def test_the_index_and_the_scorecard_count_review_groups(results):
    """Each reviewer is a run; one score is about a group of them: the index counts the runs and
    says how many groups were judged, the scorecard counts groups."""
    assert LESSON.judged == "group" and LESSON.unit == ("review group", "review groups")
    assert "Runs: 3 (Authored example, not a recorded model run); judged as 1 review group." in index([results])
    page = LESSON.page(results)
    assert "| model or program | task | review groups | right |" in page
    assert "with 1 review group, the share of right answers" in page
    assert "Share of review groups that reached the right answer" in page
