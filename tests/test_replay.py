"""Replay: recorded messages through the current code, compared result by result.

The runs are made here with the real authored client through the real lesson variants, saved
and loaded as files, then replayed against unchanged and deliberately changed code.
"""

import dataclasses
import json
import math
from pathlib import Path

import pytest

from helpers import ROOT
from replaylab.agents import loop, recording
from replaylab.agents.clients import authored
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.recording import Recording
from replaylab.agents.replay import ReplayMismatch, replay, rerecord_command
from replaylab.agents.tools import Parameter, Tool
from replaylab.lessons import Variant, registry
from replaylab.lessons import Prompts
from replaylab.lessons.projectile import lab as projectile_lab
from replaylab.physics import projectile



def record(tmp_path, lesson, chosen, messages, run="reference", kind="authored", seed=None):
    """A run made with the authored client through the variant, saved and loaded back."""
    transcript = loop.run(authored.client(messages), chosen.system_for(kind), chosen.task, chosen.allowlist(), chosen.max_steps)
    provenance = recording.provenance(kind, authored.MODEL, authored.HOW, seed=seed)
    path = tmp_path / f"{run}.json"
    recording.save(Recording(lesson, run, chosen.name, "reference", provenance, transcript), path)
    return recording.load(path)


def call(id, name, **arguments):
    return ToolCall(id, name, arguments)


PROJECTILE_MESSAGES = [
    ModelMessage("Vacuum first, then with drag.", (
        call("1", "range_without_drag", speed=25, angle=45),
        call("2", "range_with_drag", speed=25, angle=35, dt=0.01),
    )),
    ModelMessage("Closer to the best angle, and one out of bounds.", (
        call("3", "range_with_drag", speed=25, angle=40, dt=0.005),
        call("4", "range_with_drag", speed=25, angle=90, dt=0.01),
        call("5", "range_with_drag", speed=25, angle=39.5, dt=0.001),
    )),
    ModelMessage("The best angle lies between 39 and 40 degrees."),
]


def projectile_default():
    return registry.lesson("projectile").variant("default")


@pytest.fixture
def projectile_run(tmp_path):
    return record(tmp_path, "projectile", projectile_default(), PROJECTILE_MESSAGES)


def mismatch(rec, chosen, **kwargs):
    with pytest.raises(ReplayMismatch) as caught:
        replay(rec, chosen, **kwargs)
    return str(caught.value)


def command(rec):
    """The authored run's re-record command: a file outside a folder of runs is recorded anew into results/live/."""
    return f"replaylab record {rec.lesson} --provider authored --from {rec.source} --run {rec.run}"


def forge(rec, change):
    """Edit the recording's file as a person could, and load it again."""
    path = Path(rec.source)
    data = json.loads(path.read_text("utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return recording.load(path)


# ---------------------------------------------------------------------------------------------
# Unchanged code passes


def test_unchanged_projectile_run_passes(projectile_run):
    now = replay(projectile_run, projectile_default())
    assert now == projectile_run.transcript
    # replaying again works: a fresh allowlist every time
    assert replay(projectile_run, projectile_default()) == projectile_run.transcript


HUNTER_MESSAGES = [
    ModelMessage("Coarse steps first.", (
        call("1", "oscillator_energy_drift", method="symplectic Euler", steps_per_period=16, periods=50),
        call("2", "oscillator_energy_drift", method="symplectic Euler", steps_per_period=200, periods=1),
        call("3", "oscillator_energy_drift", method="velocity verlet", steps_per_period=16, periods=5),
        call("4", "oscillator_energy_drift", method="symplectic Euler", steps_per_period=16.5, periods=5),
    )),
    ModelMessage("Spend the rest of the budget.", tuple(
        call(str(i), "oscillator_energy_drift", method="velocity Verlet", steps_per_period=16 + i, periods=3)
        for i in range(5, 9)
    )),
    ModelMessage("Three more, the last ones over budget.", tuple(
        call(str(i), "oscillator_energy_drift", method="Runge-Kutta 4", steps_per_period=20, periods=2)
        for i in range(9, 12)
    )),
    ModelMessage("Counterexample found at 16 steps per period."),
]


@pytest.mark.parametrize("claim", ["symplectic-euler", "velocity-verlet"])
def test_unchanged_hunter_runs_pass(tmp_path, claim):
    chosen = registry.lesson("hunter").variant(claim)
    rec = record(tmp_path, "hunter", chosen, HUNTER_MESSAGES, run=f"hunt-{claim}")
    oks = [r.ok for s in rec.transcript.steps for r in s.results]
    assert oks == [True, True, False, False, True, True, True, True, True, True, False]
    spent = rec.transcript.steps[2].results[2].content
    assert spent == {"error": "the budget of 8 experiments is spent"}
    assert replay(rec, chosen) == rec.transcript
    assert replay(rec, chosen) == rec.transcript  # each replay gets a fresh budget


REVIEW_MESSAGES = {
    "physics": [
        ModelMessage("", (call("1", "check_limits", candidate=1), call("2", "check_limits", candidate=2),
                          call("3", "check_bounded_energy", candidate=1), call("4", "check_bounded_energy", candidate=2))),
        ModelMessage("", (call("5", "check_clock", candidate=1), call("6", "check_limits", candidate=3))),
        ModelMessage("Piece 2 fails the bounded-energy check."),
    ],
    "numerics": [
        ModelMessage("", (call("1", "check_clock", candidate=1), call("2", "check_purity", candidate=2),
                          call("3", "check_convergence_order", candidate=1), call("4", "check_convergence_order", candidate=2))),
        ModelMessage("Both pass my checks."),
    ],
    "evidence": [
        ModelMessage("", (call("1", "reproduce_check", check=5, candidate=2), call("2", "reproduce_check", check=6, candidate=1),
                          call("3", "oscillator_error", candidate=1, steps_per_period=100),
                          call("4", "oscillator_error", candidate=2, steps_per_period=100))),
        ModelMessage("Piece 2 is not symplectic."),
    ],
}


@pytest.mark.parametrize("reviewer", sorted(REVIEW_MESSAGES))
def test_unchanged_review_runs_pass(tmp_path, reviewer):
    chosen = registry.lesson("review").variant(reviewer)
    rec = record(tmp_path, "review", chosen, REVIEW_MESSAGES[reviewer], run=f"review-{reviewer}")
    assert any(r.ok for s in rec.transcript.steps for r in s.results)
    assert replay(rec, chosen) == rec.transcript


def committed_recordings():
    return sorted((ROOT / "recordings").glob("**/*.json"))


@pytest.mark.parametrize("path", committed_recordings(), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_recordings_replay(path):
    rec = recording.load(path)
    chosen = registry.lesson(rec.lesson).variant(rec.variant)
    now = replay(rec, chosen)
    assert len(now.steps) == len(rec.transcript.steps)


# ---------------------------------------------------------------------------------------------
# Forged and changed values


def test_a_forged_stored_value_fails_at_its_message_and_call(projectile_run):
    true = projectile_run.transcript.steps[1].results[0].content["range_m"]
    forged = 36.5
    rec = forge(projectile_run, lambda d: d["steps"][1]["results"][0]["content"].__setitem__("range_m", forged))
    assert mismatch(rec, projectile_default()) == (
        f"message 2, call 1, tool range_with_drag: range_m was 36.5 when recorded and is {true!r} now (tolerance 1e-06). "
        f"If the change is intended, record the run again with: {command(rec)}"
    )


def test_a_forged_value_in_a_later_call_of_the_same_message(projectile_run):
    true = projectile_run.transcript.steps[1].results[2].content["range_m"]
    rec = forge(projectile_run, lambda d: d["steps"][1]["results"][2]["content"].__setitem__("range_m", 1))
    assert mismatch(rec, projectile_default()).startswith(
        f"message 2, call 3, tool range_with_drag: range_m was 1 when recorded and is {true!r} now (tolerance 1e-06). "
    )


def test_a_change_within_tolerance_passes_and_beyond_fails(projectile_run):
    true = projectile_run.transcript.steps[0].results[1].content["range_m"]
    near = true * (1 + 1e-9)
    rec = forge(projectile_run, lambda d: d["steps"][0]["results"][1]["content"].__setitem__("range_m", near))
    replay(rec, projectile_default())
    assert mismatch(rec, projectile_default(), tolerance=1e-12) == (
        f"message 1, call 2, tool range_with_drag: range_m was {near!r} when recorded and is {true!r} now (tolerance 1e-12). "
        f"If the change is intended, record the run again with: {command(rec)}"
    )
    far = true * (1 + 3e-6)
    rec = forge(projectile_run, lambda d: d["steps"][0]["results"][1]["content"].__setitem__("range_m", far))
    assert f"range_m was {far!r} when recorded" in mismatch(rec, projectile_default())
    replay(rec, projectile_default(), tolerance=1e-5)


def test_the_rough_ball(projectile_run):
    """The same calls with a ball of 1 % more drag: the first call with drag differs."""
    assert mismatch(projectile_run, projectile_default(), drag=1.01 * projectile.DRAG) == (
        "message 1, call 2, tool range_with_drag: range_m was 35.27758864537781 when recorded and is 35.14527765986668 now "
        f"(tolerance 1e-06). If the change is intended, record the run again with: {command(projectile_run)}"
    )


def test_a_refusal_text_is_compared_like_a_result(projectile_run):
    """What the agent read is part of the run: an edited refusal is a mismatch at its call."""
    rec = forge(projectile_run, lambda d: d["steps"][1]["results"][1]["content"].__setitem__("error", "anything else"))
    assert rec.transcript.steps[1].results[1].content == {"error": "anything else"}
    text = mismatch(rec, projectile_default())
    assert text.startswith("message 2, call 2, tool range_with_drag: the refusal was 'anything else' when recorded and is ")
    assert "If the change is intended, record the run again with: " in text


def test_a_recording_of_format_1_is_replayed_without_comparing_refusals(projectile_run):
    """Format 1 was recorded when refusals were not compared: an older wording still replays."""
    def older(data):
        data["format"] = "replaylab-recording/1"
        data["steps"][1]["results"][1]["content"]["error"] = "an older wording"
    rec = forge(projectile_run, older)
    assert rec.format1 and rec.transcript.steps[1].results[1].content == {"error": "an older wording"}
    prompts = Prompts(rec.transcript.system, rec.transcript.task)  # the prompts it was recorded with
    now = replay(rec, dataclasses.replace(projectile_default(), format1=prompts))
    assert now.steps[1].results[1].content["error"] == "angle must be between 1 and 89, got 90"


def test_changed_result_keys_fail(projectile_run):
    def renamed(drag=projectile.DRAG):
        tools = projectile_lab.tools(drag)
        original = tools[1].function
        tools[1] = dataclasses.replace(tools[1], function=lambda speed, angle: {"range": original(speed, angle)["range_m"]})
        return tools

    chosen = dataclasses.replace(projectile_default(), tools=renamed)
    assert mismatch(projectile_run, chosen).startswith(
        "message 1, call 1, tool range_without_drag: the result keys were ['range_m'] when recorded and are ['range'] now. "
    )


# ---------------------------------------------------------------------------------------------
# Accepted / refused flips


def tools_with_angle_bounds(low, high):
    """The projectile tools with other bounds on the angle of range_with_drag only."""
    angle = Parameter("angle", "launch angle above the horizontal, degrees", low, high)

    def tools(drag=projectile.DRAG):
        return [
            dataclasses.replace(tool, parameters=tuple(angle if p.name == "angle" else p for p in tool.parameters))
            if tool.name == "range_with_drag" else tool
            for tool in projectile_lab.tools(drag)
        ]

    return tools


def test_accepted_when_recorded_and_rejected_now(projectile_run):
    chosen = dataclasses.replace(projectile_default(), tools=tools_with_angle_bounds(1, 39.9))
    assert mismatch(projectile_run, chosen) == (
        "message 2, call 1, tool range_with_drag: the call was accepted when recorded and is rejected now. "
        f"If the change is intended, record the run again with: {command(projectile_run)}"
    )


def test_rejected_when_recorded_and_accepted_now(projectile_run):
    chosen = dataclasses.replace(projectile_default(), tools=tools_with_angle_bounds(1, 90))
    assert mismatch(projectile_run, chosen) == (
        "message 2, call 2, tool range_with_drag: the call was rejected when recorded and is accepted now. "
        f"If the change is intended, record the run again with: {command(projectile_run)}"
    )


def test_forged_flip_rejected_when_recorded(projectile_run):
    rec = forge(projectile_run, lambda d: d["steps"][0]["results"][0].update(ok=False, content={"error": "x"}))
    assert mismatch(rec, projectile_default()).startswith(
        "message 1, call 1, tool range_without_drag: the call was rejected when recorded and is accepted now. "
    )


def test_forged_flip_accepted_when_recorded(projectile_run):
    rec = forge(projectile_run, lambda d: d["steps"][1]["results"][1].update(ok=True, content={"range_m": 0.0}))
    assert mismatch(rec, projectile_default()).startswith(
        "message 2, call 2, tool range_with_drag: the call was accepted when recorded and is rejected now. "
    )


# ---------------------------------------------------------------------------------------------
# Prompts and step limits


class CountingTools:
    def __init__(self):
        self.built = 0
        self.ran = 0

    def __call__(self, drag=projectile.DRAG):
        self.built += 1
        tools = projectile_lab.tools(drag)

        def counted(tool):
            def function(**arguments):
                self.ran += 1
                return tool.function(**arguments)

            return dataclasses.replace(tool, function=function)

        return [counted(t) for t in tools]


def test_the_counting_tools_do_count(projectile_run):
    tools = CountingTools()
    replay(projectile_run, dataclasses.replace(projectile_default(), tools=tools))
    assert tools.built == 1 and tools.ran == 4


@pytest.mark.parametrize(
    "field, text",
    [("task", "the task has changed since the run was recorded"),
     ("intro", "the system prompt has changed since the run was recorded")],
)
def test_a_changed_prompt_fails_before_anything_runs(projectile_run, field, text):
    tools = CountingTools()
    original = getattr(projectile_default(), field)
    chosen = dataclasses.replace(projectile_default(), tools=tools, **{field: original + " Be quick."})
    assert mismatch(projectile_run, chosen) == (
        f"{text}. If the change is intended, record the run again with: {command(projectile_run)}"
    )
    assert tools.built == 0 and tools.ran == 0


def test_a_step_limit_below_the_recording_fails(projectile_run):
    """The system text states the message limit, so a changed limit is a changed prompt; a recording of
    format 1, whose prompts are fixed, meets the limit itself."""
    assert len(projectile_run.transcript.steps) == 3
    chosen = dataclasses.replace(projectile_default(), max_steps=2)
    assert mismatch(projectile_run, chosen).startswith("the system prompt has changed since the run was recorded. ")
    old = recording.load(ROOT / "tests" / "data" / "format1" / "projectile" / "reference.json")
    steps = len(old.transcript.steps)
    assert mismatch(old, dataclasses.replace(projectile_default(), max_steps=steps - 1)).startswith(
        f"the run had {steps} messages when recorded and has {steps - 1} now. ")
    replay(old, dataclasses.replace(projectile_default(), max_steps=steps))


def test_a_step_limit_above_an_unfinished_recording_fails(tmp_path):
    """A run of format 1 that its step limit stopped, replayed with a higher limit, runs out of messages."""
    old = recording.load(ROOT / "tests" / "data" / "format1" / "projectile" / "reference.json")
    messages = [step.message for step in old.transcript.steps[:-1]]  # its last message (no call) left out
    short = dataclasses.replace(projectile_default(), max_steps=len(messages))
    transcript = loop.run(authored.client(messages), old.transcript.system, old.transcript.task, short.allowlist(answer=False),
                          short.max_steps)
    assert not transcript.finished and len(transcript.steps) == len(messages)
    path = tmp_path / "short.json"
    recording.save(dataclasses.replace(old, run="short", transcript=transcript), path)
    rec = recording.load(path)
    replay(rec, short)
    assert mismatch(rec, projectile_default()).startswith(
        f"the recording ends before the run does (the run has {len(messages)} messages and the loop asked for message {len(messages) + 1}). "
    )


@pytest.mark.parametrize("kind", ["interactive", "mcp"])
def test_a_session_whose_input_ended_replays_where_it_ended(tmp_path, kind):
    """A session (stdin or MCP) recorded as not finished before its message limit ended where its
    agent's input ended: the replay stops there too. Any other run that ends early is a mismatch."""
    messages = [ModelMessage("one", (call("1", "range_without_drag", speed=25, angle=45),)),
                ModelMessage("two", (call("2", "range_without_drag", speed=25, angle=30),))]
    rec = record(tmp_path, "projectile", projectile_default(), messages + [ModelMessage("done")], run="ended", kind=kind)
    forge(rec, lambda d: (d["steps"].pop(), d.update(finished=False)))
    ended = recording.load(rec.source)
    now = replay(ended, projectile_default())
    assert len(now.steps) == 2 and not now.finished
    authored_run = dataclasses.replace(ended, provenance={**ended.provenance, "kind": "authored"},
                                       transcript=dataclasses.replace(ended.transcript, system=projectile_default().system))
    assert mismatch(authored_run, projectile_default()).startswith("the recording ends before the run does")


def test_a_changed_end_is_a_mismatch(projectile_run):
    """A run recorded as finished replays as finished, and the other way round."""
    forge(projectile_run, lambda d: d.update(finished=False))
    forged = recording.load(projectile_run.source)
    assert mismatch(forged, projectile_default()).startswith("the run was not finished when recorded and is finished now. ")


def test_a_run_recorded_as_finished_that_stops_at_its_step_limit_is_a_mismatch(tmp_path):
    """The other way round: the same messages, every one with a call, end at the step limit, not finished."""
    short = dataclasses.replace(projectile_default(), max_steps=2)
    messages = [ModelMessage("again", (call("1", "range_without_drag", speed=25, angle=45),))] * 2
    rec = record(tmp_path, "projectile", short, messages, run="short")
    assert not rec.transcript.finished and len(rec.transcript.steps) == 2
    forged = forge(rec, lambda d: d.update(finished=True))
    assert mismatch(forged, short).startswith("the run was finished when recorded and is not finished now. ")


# ---------------------------------------------------------------------------------------------
# Not measured (null), bools


def value_variant(values):
    """A one-tool variant whose tool returns the next of `values` at each call (and the projectile's answer tool)."""

    def tools():
        remaining = iter(values)

        def measure(x):
            return {"value": next(remaining)}

        return [Tool("measure", "", (Parameter("x", "", 0, 1),), measure)]

    return Variant("default", "system", "task", tools, registry.lesson("projectile").variant("default").answer, max_steps=4)


VALUE_MESSAGES = [ModelMessage("", (call("1", "measure", x=0.5), call("2", "measure", x=0.5))), ModelMessage("done")]


def test_null_against_null_passes(tmp_path):
    chosen = value_variant([math.nan, math.inf])
    rec = record(tmp_path, "projectile", chosen, VALUE_MESSAGES, run="nulls")
    assert [r.content["value"] for r in rec.transcript.steps[0].results] == [None, None]
    now = replay(rec, chosen)
    assert math.isnan(now.steps[0].results[0].content["value"])
    replay(rec, value_variant([-math.inf, math.nan]))


def test_null_against_a_number_fails_both_ways(tmp_path):
    rec = record(tmp_path, "projectile", value_variant([math.nan, 2.0]), VALUE_MESSAGES, run="mixed")
    assert mismatch(rec, value_variant([1.0, 2.0])).startswith(
        "message 1, call 1, tool measure: value was None when recorded and is 1.0 now (tolerance 1e-06). "
    )
    assert mismatch(rec, value_variant([math.nan, math.inf])).startswith(
        "message 1, call 2, tool measure: value was 2.0 when recorded and is None now (tolerance 1e-06). "
    )


def test_bools_compare_exactly(tmp_path):
    rec = record(tmp_path, "projectile", value_variant([True, 0.5]), VALUE_MESSAGES, run="bools")
    assert rec.transcript.steps[0].results[0].content["value"] is True
    replay(rec, value_variant([True, 0.5]))
    assert mismatch(rec, value_variant([1.0, 0.5])).startswith(
        "message 1, call 1, tool measure: value was True when recorded and is 1.0 now (tolerance 1e-06). "
    )
    assert mismatch(rec, value_variant([False, 0.5])).startswith("message 1, call 1, tool measure: value was True when recorded")


# ---------------------------------------------------------------------------------------------
# The command that records the run again


def test_rerecord_command_by_kind(projectile_run):
    """Recordings made before provenance named the provider: the provider of their kind."""
    source = projectile_run.source
    assert rerecord_command(projectile_run) == (
        f"replaylab record projectile --provider authored --from {source} --run reference"
    )
    committed = dataclasses.replace(projectile_run, source="recordings/projectile/reference.json")
    assert rerecord_command(committed) == (
        "replaylab record projectile --provider authored --from recordings/projectile/reference.json --run reference"
        " && replaylab promote results/live/projectile/reference.json"
    )
    generated = dataclasses.replace(projectile_run, source="generated/projectile/reference.json")
    assert rerecord_command(generated).endswith(
        " && replaylab promote results/live/projectile/reference.json --recordings generated"
    )
    scripted = dataclasses.replace(projectile_run, provenance={**projectile_run.provenance, "kind": "scripted", "seed": 7})
    assert rerecord_command(scripted) == (
        "replaylab record projectile --variant default --provider scripted --seed 7 --run reference --group reference"
    )
    interactive = dataclasses.replace(projectile_run, provenance={**projectile_run.provenance, "kind": "interactive"})
    assert rerecord_command(interactive) == "replaylab session projectile --variant default --run reference"
    mcp = dataclasses.replace(projectile_run, provenance={**projectile_run.provenance, "kind": "mcp"})
    assert rerecord_command(mcp) == "replaylab mcp projectile --variant default --run reference"
    api = dataclasses.replace(projectile_run, provenance={**projectile_run.provenance, "kind": "provider-api", "model": "gpt-x"})
    assert rerecord_command(api) == (
        "replaylab record projectile --variant default --provider openai --model gpt-x --run reference --group reference"
    )


def test_rerecord_command_uses_the_recorded_provider(projectile_run):
    def made_by(provider, model):
        return dataclasses.replace(
            projectile_run, run="org_2fm__default__003", group="org_2fm__003",
            provenance={**projectile_run.provenance, "kind": "provider-api", "provider": provider, "model": model},
        )

    assert rerecord_command(made_by("openai", "org/m:tag 1")) == (
        "replaylab record projectile --variant default --provider openai --model 'org/m:tag 1' "
        "--run org_2fm__default__003 --group org_2fm__003"
    )
    # a provider this installation lacks: the same command, with its name
    assert rerecord_command(made_by("elsewhere", "m")).startswith(
        "replaylab record projectile --variant default --provider elsewhere --model m "
    )
    program = dataclasses.replace(projectile_run, provenance={
        **projectile_run.provenance, "kind": "scripted", "provider": "scripted", "model": "scripted-careful", "seed": 4})
    assert rerecord_command(program) == (
        "replaylab record projectile --variant default --provider scripted --model scripted-careful --seed 4 "
        "--run reference --group reference"
    )


def test_a_scripted_mismatch_names_the_scripted_command(tmp_path):
    rec = record(tmp_path, "projectile", projectile_default(), PROJECTILE_MESSAGES, run="scripted-run", kind="scripted", seed=3)
    message = mismatch(rec, projectile_default(), drag=2 * projectile.DRAG)
    assert message.endswith(
        "If the change is intended, record the run again with: "
        f"replaylab record projectile --variant default --provider scripted --seed 3 --run scripted-run --group {rec.group}"
    )


def test_a_run_whose_model_sent_nan_replays(tmp_path):
    """NaN cannot be written in standard JSON: the file holds the arguments' JSON text, the reader
    turns it back into what the model sent, and the replay meets the same refusal."""
    sent = json.loads('{"speed": NaN, "angle": 45}')
    messages = [ModelMessage("", (call("1", "range_without_drag", speed=25, angle=45),
                                  ToolCall("2", "range_without_drag", sent))), ModelMessage("done")]
    rec = record(tmp_path, "projectile", projectile_default(), messages, run="nan-run")
    stored = json.loads(Path(rec.source).read_text())["steps"][0]["tool_calls"][1]
    assert stored["arguments"] == '{"speed": NaN, "angle": 45}' and stored["as_json"] == ["arguments"]
    arguments = rec.transcript.steps[0].message.tool_calls[1].arguments
    assert math.isnan(arguments["speed"]) and arguments["angle"] == 45
    assert rec.transcript.steps[0].results[1].content == {"error": "speed must be finite, got nan"}
    now = replay(rec, projectile_default())
    assert [r.ok for r in now.steps[0].results] == [True, False]
