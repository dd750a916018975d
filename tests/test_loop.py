"""The agent loop, driven by a real ScriptedClient whose program records every request it gets."""

import pytest

from replaylab.agents import loop
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript
from replaylab.agents.tools import Allowlist, Parameter, Tool

SYSTEM = "the system prompt"
TASK = "the task"


class Recorder:
    """A program for ScriptedClient: it returns `messages` in order and keeps each conversation it sees."""

    def __init__(self, messages, repeat_last=False):
        self.messages = list(messages)
        self.repeat_last = repeat_last
        self.conversations = []

    def __call__(self, conversation):
        self.conversations.append(list(conversation))
        index = len(self.conversations) - 1
        if index >= len(self.messages):
            assert self.repeat_last, "the loop asked for more messages than the program has"
            index = len(self.messages) - 1
        return self.messages[index]


def counting_allowlist(budget=None):
    ran = []

    def double(x):
        ran.append(x)
        return {"twice": 2 * x}

    return Allowlist([Tool("double", "twice x", (Parameter("x", "a number", 0, 100),), double)], budget), ran


def double(x, id):
    return ToolCall(id, "double", {"x": x})


def test_stops_at_the_step_limit_not_finished():
    allowlist, ran = counting_allowlist()
    program = Recorder([ModelMessage("again", (double(1, "a"),))], repeat_last=True)
    transcript = loop.run(ScriptedClient(program, "looper"), SYSTEM, TASK, allowlist, max_steps=3)
    assert transcript.finished is False
    assert len(transcript.steps) == 3
    assert len(program.conversations) == 3
    assert ran == [1, 1, 1]
    assert transcript.model == "looper" and transcript.system == SYSTEM and transcript.task == TASK


def test_stops_when_no_tool_is_asked_finished():
    allowlist, ran = counting_allowlist()
    program = Recorder(
        [ModelMessage("one", (double(3, "a"),)), ModelMessage("done, the answer is 6"), ModelMessage("never")]
    )
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=10)
    assert transcript.finished is True
    assert len(transcript.steps) == 2
    assert len(program.conversations) == 2  # the third message is never asked for
    assert transcript.steps[1] == Step(ModelMessage("done, the answer is 6"), ())
    assert ran == [3]


def test_a_first_message_without_tools_finishes_at_once():
    allowlist, ran = counting_allowlist()
    program = Recorder([ModelMessage("nothing to do")])
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=5)
    assert transcript == Transcript("m", SYSTEM, TASK, (Step(ModelMessage("nothing to do"), ()),), True)
    assert ran == []


def test_a_message_at_the_step_limit_without_tools_is_finished():
    allowlist, _ = counting_allowlist()
    program = Recorder([ModelMessage("a", (double(1, "a"),)), ModelMessage("b")])
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=2)
    assert transcript.finished is True and len(transcript.steps) == 2


def test_the_next_request_carries_the_task_the_message_and_its_results_in_order():
    allowlist, _ = counting_allowlist()
    first = ModelMessage("trying two", (double(2, "c1"), ToolCall("c2", "os.system", {"x": 1}), double(5, "c3")))
    second = ModelMessage("and one more", (double(7, "c4"),))
    program = Recorder([first, second, ModelMessage("done")])
    client = ScriptedClient(program, "m")
    seen_tools = []
    original = client.complete

    def complete(system, conversation, tools):
        seen_tools.append((system, tools))
        return original(system, conversation, tools)

    client.complete = complete
    loop.run(client, SYSTEM, TASK, allowlist, max_steps=5)

    assert program.conversations[0] == [{"role": "user", "content": TASK}]
    assert program.conversations[1] == [
        {"role": "user", "content": TASK},
        {"role": "assistant", "message": first},
        {"role": "tool", "result": ToolResult("c1", "double", True, {"twice": 4})},
        {"role": "tool", "result": ToolResult("c2", "os.system", False, {"error": "'os.system' is not an allowed tool; the allowed tools are: double"})},
        {"role": "tool", "result": ToolResult("c3", "double", True, {"twice": 10})},
    ]
    assert program.conversations[2] == program.conversations[1] + [
        {"role": "assistant", "message": second},
        {"role": "tool", "result": ToolResult("c4", "double", True, {"twice": 14})},
    ]
    # every request carries the system prompt and the tools' schemas
    assert [s for s, _ in seen_tools] == [SYSTEM] * 3
    assert all(tools == allowlist.specs() for _, tools in seen_tools)
    assert seen_tools[0][1][0]["name"] == "double"


def test_six_calls_in_one_message_four_run_two_refused_without_budget():
    allowlist, ran = counting_allowlist(budget=5)
    calls = tuple(double(i + 1, f"c{i + 1}") for i in range(6))
    program = Recorder([ModelMessage("six at once", calls), ModelMessage("one more", (double(50, "c7"),)),
                        ModelMessage("one too many", (double(60, "c8"),)), ModelMessage("done")])
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=10)

    results = transcript.steps[0].results
    assert [r.call_id for r in results] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert [r.ok for r in results] == [True, True, True, True, False, False]
    assert results[4] == ToolResult("c5", "double", False, {"error": "at most 4 tool calls per message"})
    assert results[5] == ToolResult("c6", "double", False, {"error": "at most 4 tool calls per message"})
    assert ran[:4] == [1, 2, 3, 4]
    # the two refused calls used no budget: the budget of 5 still had room for one more
    assert transcript.steps[1].results[0].ok and ran == [1, 2, 3, 4, 50]
    assert transcript.steps[2].results[0].content == {"error": "the budget of 5 experiments is spent"}
    assert ran == [1, 2, 3, 4, 50]
    assert transcript.finished


def test_the_fifth_call_is_refused_even_if_it_is_hostile_and_never_dispatched():
    allowlist, ran = counting_allowlist()
    calls = tuple(double(1, str(i)) for i in range(4)) + (ToolCall("5", ["os.system"], "rm -rf"),)
    program = Recorder([ModelMessage("", calls), ModelMessage("done")])
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=3)
    assert transcript.steps[0].results[4] == ToolResult(
        "5", ["os.system"], False, {"error": "at most 4 tool calls per message"}
    )
    assert ran == [1, 1, 1, 1]


def test_on_step_sees_each_step_as_it_happens():
    allowlist, _ = counting_allowlist()
    program = Recorder([ModelMessage("a", (double(1, "a"),)), ModelMessage("b")])
    seen = []
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=3, on_step=seen.append)
    assert tuple(seen) == transcript.steps


@pytest.mark.parametrize("max_steps", [1, 2, 5])
def test_at_most_max_steps_messages(max_steps):
    allowlist, _ = counting_allowlist()
    program = Recorder([ModelMessage("more", (double(1, "a"),))], repeat_last=True)
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, max_steps=max_steps)
    assert len(program.conversations) == max_steps == len(transcript.steps)
    assert not transcript.finished


def test_a_continued_run_asks_only_for_the_messages_after_the_earlier_ones():
    """Given the steps of a run begun before (their calls already through the allowlist), the loop
    sends their conversation, asks for the next message only, and counts them toward the message
    limit."""
    earlier_message = ModelMessage("first", (ToolCall("1", "double", {"x": 3}),))
    allowlist, ran = counting_allowlist()
    results, _ = loop.dispatch_message(allowlist, earlier_message.tool_calls)
    earlier = Step(earlier_message, results)
    program = Recorder([ModelMessage("second", (ToolCall("2", "double", {"x": 4}),))], repeat_last=True)
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, 3, earlier=(earlier,))
    assert [s.message.text for s in transcript.steps] == ["first", "second", "second"]
    assert len(program.conversations) == 2  # messages 2 and 3; message 1 was never asked for
    assert program.conversations[0][1:] == [{"role": "assistant", "message": earlier_message},
                                            {"role": "tool", "result": results[0]}]
    assert not transcript.finished and ran == [3, 4, 4]


def test_a_continued_run_that_had_ended_asks_for_nothing():
    answered = ModelMessage("no tools: the run ends", ())
    program = Recorder([])
    allowlist, _ = counting_allowlist()
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, 5, earlier=(Step(answered, ()),))
    assert transcript.finished and len(transcript.steps) == 1 and program.conversations == []


def test_a_continued_run_past_its_time_stops_before_asking():
    allowlist, _ = counting_allowlist()
    earlier = Step(ModelMessage("first", (ToolCall("1", "double", {"x": 3}),)), loop.dispatch_message(
        allowlist, (ToolCall("1", "double", {"x": 3}),))[0])
    program = Recorder([])
    transcript = loop.run(ScriptedClient(program, "m"), SYSTEM, TASK, allowlist, 5, earlier=(earlier,),
                          limits=loop.Limits(max_seconds=10.0), seconds_used=12.5)
    assert program.conversations == [] and len(transcript.steps) == 1 and not transcript.finished
    assert transcript.stopped_by["limit"] == "max_seconds_per_run" and transcript.stopped_by["used"] >= 12.5
