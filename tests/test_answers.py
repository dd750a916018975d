"""The typed answer (issue 23): the `answer` tool of every variant, how it ends a run, and how each
lesson judges what a run answered, twice: right (against the build's own computation) and
supported (by the run's own replayed experiments).

The runs here are the ones a real model made in the issue, played through the real loop and the
real allowlist (authored messages), then judged and scored as a build does."""

import csv
import dataclasses
import json

import pandas as pd
import pytest

from helpers import RECORDINGS, in_process
from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.replay import replay
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry, submitted
from replaylab.lessons.scorecard import runs_table, scores

PROJECTILE, PENDULUM, HUNTER, REVIEW = (registry.lesson(name) for name in ("projectile", "pendulum", "hunter", "review"))


def message(*calls, text=""):
    return ModelMessage(text, tuple(ToolCall(str(i), name, arguments) for i, (name, arguments) in enumerate(calls, 1)))


def answer(**fields):
    return (ANSWER, fields)


def rng(angle, dt=0.001):
    return ("range_with_drag", {"speed": 25, "angle": angle, "dt": dt})


def period(amplitude, dt=0.01):
    return ("pendulum_period", {"amplitude_deg": amplitude, "dt": dt})


def drift(steps, periods, method="velocity Verlet"):
    return ("oscillator_energy_drift", {"method": method, "steps_per_period": steps, "periods": periods})


def run_of(lesson, messages, variant=None, limits=loop.NO_LIMITS):
    """A run of these messages through the loop, as a recording the judge reads."""
    variant = variant or next(iter(lesson.variants))
    v = lesson.variant(variant)
    transcript = loop.run(authored_client(messages), v.system, v.task, v.allowlist(), v.max_steps, limits=limits)
    provenance = recording.provenance("authored", "written by a test", "the test's messages")
    return recording.Recording(lesson.name, "run", variant, "g", provenance, transcript)


def judged(lesson, messages, variant=None):
    """(score, verdict) of a run, scored against the lesson's own scans as a build does."""
    run = run_of(lesson, messages, variant)
    verdict = lesson.judge([run], 1e-6)["run"]
    [score] = scores({"run": verdict}, lesson.answers(), lesson.part("judge").score)
    return score, verdict


# ---------------------------------------------------------------------------------------------
# The answer tool


def test_every_variant_has_the_answer_tool_and_its_task_states_the_rule():
    for lesson in registry.lessons():
        for name, v in lesson.variants.items():
            specs = {spec["name"]: spec for spec in v.allowlist().specs()}
            assert ANSWER in specs, (lesson.name, name)
            fields = specs[ANSWER]["parameters"]
            assert fields["additionalProperties"] is False and "explanation" not in fields["required"]
            assert "answer" in v.task and "right when" in v.task, (lesson.name, name)
            assert "End the run by calling the tool answer" in v.system
            assert "without a tool call also ends the run, with no answer" in v.system
            assert "When you are done, answer without calling a tool" not in v.system + v.task


@pytest.mark.parametrize("lesson, arguments, reason", [
    (PROJECTILE, {"low": 40}, "missing arguments: high"),
    (PROJECTILE, {"low": 41, "high": 40}, "high must be low + 1 (two adjacent whole degrees), got low 41 and high 40"),
    (PROJECTILE, {"low": 40, "high": 42}, "high must be low + 1 (two adjacent whole degrees), got low 40 and high 42"),
    (PROJECTILE, {"low": 40, "high": 40}, "high must be low + 1 (two adjacent whole degrees), got low 40 and high 40"),
    (PENDULUM, {"low": 22, "high": 24}, "high must be low + 1 (two adjacent whole degrees), got low 22 and high 24"),
    (PROJECTILE, {"low": 40.5, "high": 41}, "low must be an integer, got 40.5"),
    (PROJECTILE, {"low": 40, "high": 90}, "high must be between 2 and 89, got 90"),
    (PROJECTILE, {"low": 40, "high": 41, "explanation": 7}, "explanation must be text, got int"),
    (PROJECTILE, {"low": 40, "high": 41, "explanation": "x" * 4001}, "explanation has at most 4000 characters, got 4001"),
    (PROJECTILE, {"low": 40, "high": 41, "best": 40.5}, "unknown arguments: best"),
    (HUNTER, {"outcome": "counterexample", "method": "velocity Verlet"},
     "a counterexample names its experiment: missing steps_per_period, periods"),
    (HUNTER, {"outcome": "none found", "periods": 50}, "none found names no experiment: remove periods"),
    (HUNTER, {"outcome": "maybe"}, "outcome must be one of counterexample, none found, got 'maybe'"),
    (REVIEW, {"piece_1_failed": [], "piece_2_failed": ["clock"]}, "piece_2_failed may only hold limits, bounded-energy, got 'clock'"),
    (REVIEW, {"piece_1_failed": "limits", "piece_2_failed": []}, "piece_1_failed must be a list of names (limits, bounded-energy), got text"),
    (REVIEW, {"piece_1_failed": ["limits", "limits"], "piece_2_failed": []}, "piece_1_failed names 'limits' twice"),
])
def test_a_bad_answer_is_refused_with_the_allowlists_reason_and_the_run_goes_on(lesson, arguments, reason):
    variant = "physics" if lesson is REVIEW else next(iter(lesson.variants))
    fixed = {"low": 40, "high": 41} if lesson is PROJECTILE else {"low": 22, "high": 23} if lesson is PENDULUM else {
        "outcome": "none found"} if lesson is HUNTER else {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]}
    run = run_of(lesson, [message(answer(**arguments)), message(answer(**fixed))], variant)
    first, second = run.transcript.steps
    assert not first.results[0].ok and first.results[0].content == {"error": reason}
    assert second.results[0].ok and run.transcript.finished
    assert submitted(run, lesson.variant(variant))[0] == fixed


def test_the_answer_costs_no_experiment_and_ends_the_run_where_it_is_accepted():
    """Calls before the answer in its message run; calls after it are refused and run nothing; the
    answer uses none of the budget, even when the budget is spent."""
    calls = [drift(16, 50)] * 8
    run = run_of(HUNTER, [message(*calls[:4]), message(*calls[4:]), message(drift(20, 50), answer(outcome="none found"), drift(17, 50))],
                 "velocity-verlet")
    last = run.transcript.steps[-1]
    assert [r.ok for r in last.results] == [False, True, False]
    assert last.results[0].content["error"] == "the budget of 8 experiments is spent"
    assert last.results[2].content["error"] == loop.AFTER_ANSWER
    assert run.transcript.finished and len(run.transcript.steps) == 3


def test_a_message_without_a_tool_call_ends_the_run_with_no_answer():
    run = run_of(PROJECTILE, [message(rng(40)), message(text="The best angle is between 40 and 41 degrees."), message(answer(low=40, high=41))])
    assert run.transcript.finished and len(run.transcript.steps) == 2
    score, verdict = judged(PROJECTILE, [message(rng(40), rng(41)), message(text="Between 40 and 41.")])
    assert verdict["answer"] is None and verdict["supported"] is None
    assert not score["answered"] and not score["right"] and score["wrong"] == "no answer"


def test_a_limit_reached_by_the_last_message_stops_the_run_and_voids_its_answer():
    class Reporting:
        """The authored client, reporting 300 tokens a message as a provider would."""

        def __init__(self, messages):
            self.inner, self.model, self.secrets, self.count = authored_client(messages), "m", (), 0

        def complete(self, *args):
            self.count += 1
            return self.inner.complete(*args)

        def tokens_used(self):
            return 300 * self.count

    v = PROJECTILE.variant("default")
    client = Reporting([message(rng(40), rng(41)), message(answer(low=40, high=41))])
    transcript = loop.run(client, v.system, v.task, v.allowlist(), v.max_steps, limits=loop.Limits(max_tokens=400))
    assert not transcript.finished and transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": 400, "used": 600}
    run = recording.Recording("projectile", "run", "default", "g", recording.provenance("authored", "m", "x"), transcript)
    assert submitted(run, v) == (None, "no answer: the run was stopped by its limit max_tokens_per_run")


# ---------------------------------------------------------------------------------------------
# Judging what was answered: the runs of the issue


def test_pendulum_finer_probing_never_turns_a_right_answer_wrong():
    """Probes at 22, 22.8, 22.9 and 23 degrees and the answer 22 to 23: right (the exact crossing is
    22.8138), and supported (the run's own bracket, 22.8 to 22.9, lies in it)."""
    messages = [message(period(22), period(22.8), period(22.9), period(23)), message(answer(low=22, high=23))]
    score, verdict = judged(PENDULUM, messages)
    assert score["right"] and score["supported"] and verdict["experiments"]["bracket"] == [22.8, 22.9]
    coarse, _ = judged(PENDULUM, [message(period(22), period(23)), message(answer(low=22, high=23))])
    assert coarse["right"] == score["right"]


def test_projectile_right_answers_stay_right_and_a_wrong_answer_is_never_right_for_its_coverage():
    fine = [message(rng(39), rng(40), rng(40.75), rng(41)), message(rng(42), answer(low=40, high=41))]
    score, verdict = judged(PROJECTILE, fine)
    assert score["right"] and score["supported"] and verdict["experiments"]["bracket"] == [40.75, 41]
    assert verdict["located"]["best"]["angle"] == 40.75 and 40 <= verdict["located"]["top"]["value"] <= 41
    assert verdict["answer"] == {"low": 40, "high": 41}
    covered = [message(rng(40), rng(41), rng(45)), message(answer(low=45, high=46, explanation="The best angle is 45 degrees."))]
    score, verdict = judged(PROJECTILE, covered)
    assert not score["right"] and score["wrong"] == "the best angle of the build's scan lies outside its bracket"
    assert score["supported"] is False and verdict["explanation"] == "The best angle is 45 degrees."


def test_a_best_angle_exactly_on_a_whole_degree_makes_both_brackets_around_it_right():
    score = PROJECTILE.part("judge").score
    on_the_degree = {"angle": {"value": 40.0, "shown": "40.00"}}
    assert score({"answer": {"low": 39, "high": 40}}, on_the_degree) is None
    assert score({"answer": {"low": 40, "high": 41}}, on_the_degree) is None
    assert score({"answer": {"low": 41, "high": 42}}, on_the_degree) is not None
    assert PROJECTILE.answers()["projectile-seed"]["angle"]["value"] == 40.5


def test_hunter_a_false_counterexample_is_wrong_and_none_found_on_a_true_claim_is_right():
    false_one, verdict = judged(HUNTER, [message(drift(16, 50)), message(answer(outcome="counterexample", method="velocity Verlet",
                                                                                 steps_per_period=16, periods=50))], "velocity-verlet")
    assert not false_one["right"] and false_one["wrong"] == "its counterexample does not break the claim"
    assert verdict["answer_check"]["value"]["value"] == pytest.approx(0.038553134656324484) and not false_one["supported"]
    none_found, _ = judged(HUNTER, [message(drift(16, 1), drift(16, 3)), message(answer(outcome="none found"))], "velocity-verlet")
    assert none_found["right"] and none_found["supported"]


def test_hunter_any_violating_experiment_counts_and_an_unrun_counterexample_is_right_but_unsupported():
    not_worst, _ = judged(HUNTER, [message(drift(60, 20, "symplectic Euler")),
                                   message(answer(outcome="counterexample", method="symplectic Euler", steps_per_period=60, periods=20))],
                          "symplectic-euler")
    assert not_worst["right"] and not_worst["supported"]
    guessed, _ = judged(HUNTER, [message(drift(200, 1, "symplectic Euler")),
                                 message(answer(outcome="counterexample", method="symplectic Euler", steps_per_period=16, periods=50))],
                        "symplectic-euler")
    assert guessed["right"] and guessed["supported"] is False
    outside, _ = judged(HUNTER, [message(answer(outcome="counterexample", method="symplectic Euler", steps_per_period=8, periods=50))],
                        "symplectic-euler")
    assert not outside["right"] and outside["wrong"] == "its counterexample lies outside the claim's domain"
    missed, _ = judged(HUNTER, [message(drift(200, 20, "symplectic Euler")), message(answer(outcome="none found"))], "symplectic-euler")
    assert not missed["right"] and missed["supported"]  # a supported answer that is wrong


def test_review_each_reviewer_is_scored_on_its_own_answer():
    checks = [("check_limits", {"candidate": 1}), ("check_limits", {"candidate": 2}),
              ("check_bounded_energy", {"candidate": 1}), ("check_bounded_energy", {"candidate": 2})]
    right, _ = judged(REVIEW, [message(*checks), message(answer(piece_1_failed=[], piece_2_failed=["bounded-energy"]))], "physics")
    assert right["right"] and right["supported"]
    careless, _ = judged(REVIEW, [message(*checks), message(answer(piece_1_failed=[], piece_2_failed=[]))], "physics")
    assert not careless["right"] and careless["wrong"] == "piece 2: misses a check that fails" and careless["supported"] is False
    unchecked, _ = judged(REVIEW, [message(answer(piece_1_failed=[], piece_2_failed=["bounded-energy"]))], "physics")
    assert unchecked["right"] and unchecked["supported"] is False


def test_review_groups_are_decided_per_model_and_list_every_run_of_a_role():
    def reviewer(variant, model, name):
        run = run_of(REVIEW, [message(("check_bounded_energy", {"candidate": 2})), message(answer(piece_1_failed=[], piece_2_failed=[]))]
                     if variant == "physics" else [message(answer(piece_1_failed=[], piece_2_failed=[]))], variant)
        return dataclasses.replace(run, run=name, group="live", provenance={**run.provenance, "model": model})

    runs = [reviewer("physics", "a", "a1"), reviewer("physics", "a", "a2"), reviewer("numerics", "b", "b1")]
    decided = REVIEW.decide(runs, REVIEW.judge(runs, 1e-6))
    assert sorted(decided) == ["live [a]", "live [b]"]
    assert decided["live [a]"]["reviewers"] == {"physics": ["a1", "a2"]} and decided["live [b]"]["reviewers"] == {"numerics": ["b1"]}
    assert decided["live [a]"]["resolution"][1]["rejected"] and not decided["live [b]"]["resolution"][1]["rejected"]


# ---------------------------------------------------------------------------------------------
# The per-run table, the reference runs and recordings of format 1


def test_the_per_run_table_carries_answered_right_supported_and_the_answer():
    found = []
    for name, messages in {"right": [message(rng(40), rng(41), rng(42)), message(answer(low=40, high=41))],
                           "silent": [message(rng(40)), message(text="40 to 41.")],
                           "across": [message(rng(41), rng(42)), message(answer(low=41, high=42))]}.items():
        score, _ = judged(PROJECTILE, messages)
        found.append({**score, "run": name})
    table = runs_table(found)
    assert list(table.columns)[:8] == ["run", "model", "task", "instance", "difficulty", "answered", "right", "supported"]
    assert set(table["instance"]) == {"projectile-seed"}
    rows = table.set_index("run")
    assert rows.loc["right", ["answered", "right", "supported", "answer_low", "answer_high"]].tolist() == [True, True, True, "40", "41"]
    assert not rows.loc["silent", "answered"] and rows.loc["silent", "supported"] is pd.NA
    assert not rows.loc["across", "right"] and not rows.loc["across", "supported"]


@pytest.mark.parametrize("path", sorted(RECORDINGS.glob("*/*.json")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_reference_runs_submit_the_seeds_answers_and_are_right_and_supported(path):
    run = recording.load(path)
    lesson = registry.lesson(run.lesson)
    replayed = dataclasses.replace(run, transcript=replay(run, lesson.variant(run.variant)))
    verdict = lesson.judge([replayed], 1e-6)[run.run]
    expected = {
        "projectile": {"low": 40, "high": 41}, "pendulum": {"low": 22, "high": 23},
        "resonance": {"frequency_rad_s": 2.475}, "rlc": {"regime": "underdamped"},
        "symplectic-euler": {"outcome": "counterexample", "method": "symplectic Euler", "steps_per_period": 64, "periods": 20},
        "velocity-verlet": {"outcome": "none found"},
        "physics": {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]},
        "numerics": {"piece_1_failed": [], "piece_2_failed": []},
        "evidence": {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]},
    }
    assert verdict["answer"] == expected.get(run.variant, expected.get(run.lesson))
    assert lesson.score(verdict, lesson.answers()[verdict["instance"]]) is None and verdict["supported"] is True
    assert run.format == recording.FORMAT


FORMAT1 = sorted((RECORDINGS.parent / "tests" / "data" / "format1").glob("*/*.json"))


@pytest.mark.parametrize("path", FORMAT1, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_recording_of_format_1_still_replays_and_is_judged_as_no_answer(path):
    out = in_process("replay", path)
    assert out.returncode == 0, out.stderr
    assert "decided by the build: no answer: recorded in format 1" in out.stdout
    run = recording.load(path)
    lesson = registry.lesson(run.lesson)
    replayed = dataclasses.replace(run, transcript=replay(run, lesson.variant(run.variant)))
    verdict = lesson.judge([replayed], 1e-6)[run.run]
    assert verdict["answer"] is None and verdict["no_answer"].startswith("no answer: recorded in format 1")
    assert lesson.score(verdict, lesson.answers()[verdict["instance"]]) == "no answer"


def test_a_recording_of_format_1_that_called_answer_replays_as_it_was_refused(tmp_path):
    """Format 1 had no answer tool: a call named answer was refused then, and replays refused."""
    source = next(p for p in FORMAT1 if p.parent.name == "projectile")
    data = json.loads(source.read_text())
    call = {"id": "99", "name": "answer", "arguments": {"low": 40, "high": 41}}
    refusal = {"call_id": "99", "ok": False, "content": {"error": "'answer' is not an allowed tool"}}
    data["steps"].insert(-1, {"text": "", "tool_calls": [call], "results": [refusal]})
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    out = in_process("replay", path)
    assert out.returncode == 0, out.stderr
    assert "answer(low=40, high=41) -> refused: 'answer' is not an allowed tool" in out.stdout


def test_every_lesson_writes_its_answers_table_with_a_row_per_run_shown(reference_results):
    # the committed recordings built by `build(recordings=RECORDINGS, ...)`, once per test run
    for lesson in registry.names():
        rows = list(csv.DictReader((reference_results / lesson / "tables" / "answers.csv").open()))
        results = json.loads((reference_results / lesson / "results.json").read_text())
        assert sorted(row["run"] for row in rows) == sorted(results["verdicts"]), lesson
        assert all(row["answered"] == "true" and row["right"] == "true" and row["supported"] == "true" for row in rows), lesson
