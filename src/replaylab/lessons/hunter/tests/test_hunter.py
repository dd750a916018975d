"""The hunter lesson's own tests (collected by pytest from the lesson's package)."""

import copy

import pytest

from helpers import RECORDINGS
from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.build import build
from replaylab.lessons import registry
from replaylab.lessons.hunter import judge, lab
from replaylab.results import load, strict

LESSON = registry.lesson("hunter")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=RECORDINGS, results=folder, progress=lambda text: None)
    return load(folder / LESSON.name / "results.json")


def test_an_experiment_of_one_period_is_one_period(results):
    data = copy.deepcopy(results)
    (verdict,) = [v["experiments"] for v in data["verdicts"].values() if v["experiments"]["outcome"] == "inconclusive"]
    verdict["closest"]["periods"] = 1
    page = LESSON.page(strict(data, "x"))
    assert f"{verdict['closest']['steps_per_period']} steps per period, 1 period:" in page
    assert "1 periods" not in page


def test_the_evidence_of_a_one_period_counterexample_says_one_period():
    """A hunt whose counterexample runs one period: the judge's evidence label and the answer as
    the verdict line shows it say "1 period"."""
    claim = next(c for c in lab.CLAIMS.values() if c.fixed["method"] == "symplectic Euler")
    arguments = {**claim.fixed, "steps_per_period": 16, "periods": 1}
    variant = LESSON.variant(claim.name)
    answer = ToolCall("2", ANSWER, {"outcome": "counterexample", **arguments})
    client = authored_client([ModelMessage("one period", (ToolCall("1", lab.TOOL_NAME, arguments),)), ModelMessage("done", (answer,))])
    transcript = loop.run(client, variant.system, variant.task, variant.allowlist(), variant.max_steps)
    verdict = judge.hunt_verdict(transcript, claim)
    assert verdict["outcome"] == "counterexample"
    assert verdict["evidence"].endswith("symplectic Euler, 16 steps per period, 1 period")
    run = recording.Recording(LESSON.name, "one", claim.name, "g", recording.provenance("authored", "m", "test"), transcript)
    assert LESSON.verdict_line(run).startswith("answer counterexample symplectic Euler, 16 steps per period, 1 period: right")
