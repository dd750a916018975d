"""The toy lesson's own tests: its tool, and its judge on a right, a careless and a silent run."""

from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.lessons import registry

TOY = registry.lesson("toy")


def test_the_tool_squares():
    assert TOY.all_tools().tools["square"].function(x=3) == {"value": 9}


def judged(*messages):
    v = TOY.variant("default")
    transcript = loop.run(client(list(messages)), v.system, v.task, v.allowlist(), v.max_steps)
    run = recording.Recording("toy", "run", "default", "g", recording.provenance("authored", "a test", "its messages"), transcript)
    verdict = TOY.judge([run], 1e-6)["run"]
    return verdict, TOY.score(verdict, TOY.answers()["toy-seed"])


def test_the_judge_scores_the_answer_and_checks_it_against_the_runs_own_square():
    square = ModelMessage("", (ToolCall("1", "square", {"x": 3}),))
    verdict, wrong = judged(square, ModelMessage("", (ToolCall("2", "answer", {"square": 9}),)))
    assert (verdict["answer"], wrong, verdict["supported"], verdict["largest"]) == ({"square": 9}, None, True, 9)
    verdict, wrong = judged(square, ModelMessage("", (ToolCall("2", "answer", {"square": 6}),)))
    assert wrong == "its square is not the build's square of the number" and verdict["supported"] is False
    verdict, wrong = judged(square, ModelMessage("9."))
    assert (verdict["answer"], wrong, verdict["supported"]) == (None, "no answer", None)
