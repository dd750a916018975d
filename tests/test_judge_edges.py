"""Edges of the judges and of the replay's comparison that the mutation run (issue 16) found no
test for: what the honesty probes really change, which calls a judge skips without stopping,
the limits at equality, the texts a page or a scorecard shows, and where a replay says a result
first differs."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import RECORDINGS
from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript
from replaylab.agents.replay import Difference, compare_result, replay
from replaylab.agents.secrets import Secret
from replaylab.lessons import registry
from replaylab.lessons.hunter import judge as hunter_judge
from replaylab.lessons.hunter import lab as hunter_lab
from replaylab.lessons.pendulum import judge as pendulum_judge
from replaylab.lessons.pendulum import physics as pendulum_physics
from replaylab.lessons.projectile import judge as projectile_judge
from replaylab.lessons.review import judge as review_judge
from replaylab.verification.checks import CHECK_NAMES

TOLERANCE = 1e-6


def replayed(lesson, name, **changes):
    loaded = recording.load(RECORDINGS / lesson / f"{name}.json")
    transcript = replay(loaded, registry.lesson(lesson).variant(loaded.variant))
    return dataclasses.replace(loaded, transcript=transcript, **changes)


def transcript(*steps):
    return Transcript("m", "system", "task", tuple(steps), True)


def step(text, *calls):
    """One message with its calls [(name, arguments, ok, content)], each accepted or not."""
    tool_calls = tuple(ToolCall(str(i), name, arguments) for i, (name, arguments, _, _) in enumerate(calls, 1))
    results = tuple(ToolResult(str(i), name, ok, content) for i, (name, _, ok, content) in enumerate(calls, 1))
    return Step(ModelMessage(text, tool_calls), results)


# ---------------------------------------------------------------------------------------------
# Hunter


def test_the_hunters_probes_change_the_last_text_and_every_stored_result_and_nothing_else():
    original = replayed("hunter", "symplectic-euler").transcript
    assert [call.name for call in original.steps[-1].message.tool_calls] == ["answer"]  # the run ends with its answer
    emptied = hunter_judge._with_last_text(original, "said otherwise")
    assert emptied.steps[-1].message.text == "said otherwise"
    assert emptied.steps[:-1] == original.steps[:-1]
    assert emptied.steps[-1].message.tool_calls == original.steps[-1].message.tool_calls
    assert emptied.steps[-1].results == original.steps[-1].results
    assert original.steps[-1].message.text != "said otherwise"

    forged = hunter_judge._with_stored_results(original, 0.9)
    assert [s.message for s in forged.steps] == [s.message for s in original.steps]
    pairs = [(r, o) for f, s in zip(forged.steps, original.steps) for r, o in zip(f.results, s.results)]
    assert pairs and any(o.ok and o.content for _, o in pairs)
    for result, old in pairs:
        if old.ok:  # the accepted answer's result holds no value: it stays empty
            assert result.content == dict.fromkeys(old.content, 0.9)
        else:
            assert result == old

    with_refusal = transcript(step("", (DRIFT, {"method": SE, "steps_per_period": 64, "periods": 20}, True, {"max_energy_drift": 0.05}),
                                   (DRIFT, {"method": SE, "steps_per_period": 2, "periods": 20}, False, {"error": "refused"})))
    forged = hunter_judge._with_stored_results(with_refusal, 0.9).steps[0].results
    assert forged[0].content == {"max_energy_drift": 0.9} and forged[1] == with_refusal.steps[0].results[1]

    probes = hunter_judge.words_ignored(original, hunter_lab.CLAIMS["symplectic-euler"])
    assert [p["probe"] for p in probes] == [
        "last text emptied", "last text replaced by a boast of a counterexample", "every stored result overwritten by 0.9",
    ]
    assert hunter_judge.words_ignored(transcript(), hunter_lab.CLAIMS["symplectic-euler"]) == []


def test_a_forged_result_or_a_boast_reaches_the_verdict_only_if_the_judge_read_it():
    """The probes are real changes: with the stored values forged the transcript itself says 0.9,
    and with the boast its last words claim a counterexample, while the verdict stays."""
    original = replayed("hunter", "velocity-verlet").transcript
    claim = hunter_lab.CLAIMS["velocity-verlet"]
    boast = hunter_judge._with_last_text(original, hunter_judge.BOAST)
    assert boast.steps[-1].message.text == hunter_judge.BOAST and "counterexample" in hunter_judge.BOAST
    assert hunter_judge.hunt_verdict(boast, claim) == hunter_judge.hunt_verdict(original, claim)


DRIFT = "oscillator_energy_drift"
SE = "symplectic Euler"


def test_a_call_outside_the_domain_or_with_no_finite_value_is_skipped_and_the_hunt_goes_on():
    claim = hunter_lab.CLAIMS["symplectic-euler"]
    inside = {"method": SE, "steps_per_period": 64, "periods": 20}
    hunt = transcript(step("", (DRIFT, {"method": SE, "steps_per_period": 8, "periods": 20}, True, {"max_energy_drift": 0.5}),
                          (DRIFT, inside, True, {"max_energy_drift": 0.5})))
    verdict = hunter_judge.hunt_verdict(hunt, claim)
    assert verdict["tested"] == 1 and verdict["outcome"] == "counterexample"
    assert verdict["evidence"] == ("numerically verified: the simulated oscillator, symplectic Euler, "
                                   "64 steps per period, 20 periods")


def test_the_stricter_claim_is_named_and_stated_as_such():
    verdicts = hunter_judge.judge([replayed("hunter", "velocity-verlet")])
    stricter = verdicts["velocity-verlet"]["stricter_claim"]
    assert stricter["claim"] == f"{hunter_lab.CLAIMS['velocity-verlet'].name}-stricter"
    assert "within 3.5 %" in stricter["statement"] and "within 4 %" not in stricter["statement"]
    assert stricter["statement"] == hunter_lab.CLAIMS["velocity-verlet"].statement.replace("within 4 %", "within 3.5 %")


def hunt_entry(answer, limit=0.04, in_domain=True, breaks=False):
    """A hunter verdict as the score reads it: the answer, the build's run of its counterexample,
    the claim."""
    check = None if answer is None or answer["outcome"] != "counterexample" else {"in_domain": in_domain, "breaks": breaks}
    return {"answer": answer, "answer_check": check, "experiments": {"claim": "c", "limit": limit}}


def worst(value, limit=0.04):
    return {"worst": {"value": value, "steps_per_period": 16, "periods": 50}, "limit": limit, "holds": value <= limit}


NONE_FOUND = {"outcome": "none found"}
COUNTEREXAMPLE = {"outcome": "counterexample", "method": SE, "steps_per_period": 64, "periods": 20}


def test_the_hunter_score_at_a_worst_case_exactly_on_the_limit():
    """A worst case equal to the limit breaks no claim ("within 4 %" holds at 4 %): none found is right."""
    from replaylab.lessons.hunter.answers import truth_of

    claim = hunter_lab.CLAIMS["velocity-verlet"]
    exact = truth_of(claim)["worst"]["value"]
    on_the_limit = truth_of(dataclasses.replace(claim, limit=exact))
    assert on_the_limit["holds"] is True and hunter_judge.score(hunt_entry(NONE_FOUND), on_the_limit) is None
    below = truth_of(dataclasses.replace(claim, limit=exact * (1 - 1e-12)))
    assert below["holds"] is False
    assert hunter_judge.score(hunt_entry(NONE_FOUND), below) == "none found, but the claim's domain has a counterexample"
    assert claim.holds_on(claim.limit) and not claim.holds_on(claim.limit + 1e-12)


def test_the_hunter_score_of_a_counterexample_is_the_builds_run_of_it_whatever_the_worst_case():
    assert hunter_judge.score(hunt_entry(COUNTEREXAMPLE, breaks=True), worst(0.04)) is None
    assert hunter_judge.score(hunt_entry(COUNTEREXAMPLE, breaks=False), worst(0.5)) == "its counterexample does not break the claim"
    assert hunter_judge.score(hunt_entry(COUNTEREXAMPLE, in_domain=False), worst(0.5)) == (
        "its counterexample lies outside the claim's domain")
    assert hunter_judge.score(hunt_entry(None), worst(0.5)) == "no answer"


def test_the_build_runs_a_counterexample_again_and_knows_its_domain():
    claim = hunter_lab.CLAIMS["symplectic-euler"]
    found = hunter_judge.check_answer(COUNTEREXAMPLE, claim)
    value = hunter_lab.drift_tool().function(method=SE, steps_per_period=64, periods=20)[claim.key]
    assert found["value"]["value"] == value and found["in_domain"] and found["breaks"] == (not claim.holds_on(value))
    outside = hunter_judge.check_answer({**COUNTEREXAMPLE, "steps_per_period": 8}, claim)
    assert not outside["in_domain"] and not outside["breaks"]
    assert hunter_judge.check_answer(NONE_FOUND, claim) is None and hunter_judge.check_answer(None, claim) is None


# ---------------------------------------------------------------------------------------------
# Projectile


def test_only_the_reference_runs_carry_the_projectile_demonstration():
    verdicts = projectile_judge.judge([replayed("projectile", "reference", run="mine", group="mine")], TOLERANCE)
    assert "rough_ball" not in verdicts["mine"]
    assert "rough_ball" in projectile_judge.judge([replayed("projectile", "reference")], TOLERANCE)["reference"]


@pytest.mark.parametrize("bracket,wrong", [
    ([40, 41], None),
    ([41, 42], "the best angle of the build's scan lies outside its bracket"),
    ([39, 40], "the best angle of the build's scan lies outside its bracket"),
])
def test_the_projectile_score_of_a_bracket(bracket, wrong):
    truth = {"angle": {"value": 40.5, "shown": "40.50"}}
    entry = {"answer": {"low": bracket[0], "high": bracket[1]}}
    assert projectile_judge.score(entry, truth) == wrong


# ---------------------------------------------------------------------------------------------
# Review


def test_the_review_score_says_what_went_wrong():
    scans = {"failures": {"1": [], "2": ["bounded-energy"]}}

    def score(remit, one, two):
        return review_judge.score({"answer": {"piece_1_failed": one, "piece_2_failed": two}, "remit": remit}, scans)

    physics, numerics, evidence = ["limits", "bounded-energy"], ["clock", "purity", "convergence-order"], list(CHECK_NAMES)
    assert score(physics, [], ["bounded-energy"]) is None
    assert score(physics, [], []) == "piece 2: misses a check that fails"
    assert score(physics, ["limits"], ["bounded-energy"]) == "piece 1: names a check that passes"
    assert score(physics, [], ["bounded-energy", "limits"]) == "piece 2: names a check that passes"
    assert score(numerics, [], []) is None  # bounded-energy is not in its remit
    assert score(numerics, [], ["clock"]) == "piece 2: names a check that passes"
    assert score(evidence, [], ["bounded-energy"]) is None
    assert review_judge.score({"answer": None, "remit": physics}, scans) == "no answer"


def test_a_rejection_names_its_piece_as_evidence():
    rejected = review_judge.with_evidence({"candidate": 2, "rejected": True})
    assert rejected["evidence"] == review_judge.EVIDENCE.format(piece=2) and "piece 2" in rejected["evidence"]
    assert review_judge.with_evidence({"candidate": 1, "rejected": False})["evidence"] is None


def test_a_call_that_is_no_check_is_skipped_and_the_checks_after_it_count():
    run = transcript(step("", ("oscillator_error", {"candidate": 2, "steps_per_period": 40}, True, {"error": 1.0}),
                          ("check_bounded_energy", {"candidate": 2}, True, {})),
                     step("", ("answer", {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]}, True, {})))
    found = review_judge.verdicts("physics", run)
    assert [(v.candidate, v.check) for v in found] == [(2, "bounded-energy")]
    line = review_judge.verdict_line(recording.Recording("review", "r", "physics", "g", {}, run), registry.lesson("review").answers()["review-seed"])
    assert line == (
        "answer piece 1 fails none; piece 2 fails bounded-energy: right (the build's own checks fail on piece 1: none of the "
        "remit; on piece 2: bounded-energy); not supported: it did not run limits on piece 1, bounded-energy on piece 1, "
        "limits on piece 2 [its checks: piece 2 bounded-energy failed]")


def test_review_groups_are_decided_per_model_and_strict_replays_only_for_the_reference_physics_run():
    runs = [replayed("review", "physics", group="mine", run="p", provenance={"kind": "scripted", "model": "b-model"}),
            replayed("review", "numerics", group="mine", run="n", provenance={"kind": "scripted", "model": "a-model"})]
    verdicts = review_judge.judge(runs, TOLERANCE)
    assert (verdicts["p"]["model"], verdicts["n"]["model"]) == ("b-model", "a-model")
    assert "strict_replay" not in verdicts["p"] and "strict_replay" not in verdicts["n"]
    decided = registry.lesson("review").decide(runs, verdicts)
    assert sorted(decided) == ["mine [a-model]", "mine [b-model]"]  # two models are never decided together
    assert decided["mine [b-model]"]["reviewers"] == {"physics": ["p"]} and decided["mine [a-model]"]["model"] == "a-model"
    reference = review_judge.judge([replayed("review", "physics"), replayed("review", "numerics")], TOLERANCE)
    assert reference["physics"]["strict_replay"]["caught"] is True and "strict_replay" not in reference["numerics"]


# ---------------------------------------------------------------------------------------------
# The replay's comparison and the secret


def result(ok, content, name="tool"):
    return ToolResult("1", name, ok, content)


def test_a_difference_names_its_message_call_and_tool():
    accepted, refused = result(True, {"x": 1.0}), result(False, {"error": "no"})
    assert compare_result(accepted, refused, TOLERANCE, 3, 2) == Difference(
        3, 2, "tool", "the call was accepted when recorded and is rejected now")
    assert compare_result(refused, accepted, TOLERANCE, 4, 5) == Difference(
        4, 5, "tool", "the call was rejected when recorded and is accepted now")
    changed = compare_result(refused, result(False, {"error": "other"}), TOLERANCE, 1, 1)
    assert changed.text == "the refusal was 'no' when recorded and is 'other' now"
    assert compare_result(refused, result(False, {"error": "other"}), TOLERANCE, 1, 1, refusals=False) is None
    keys = compare_result(accepted, result(True, {"y": 1.0}), TOLERANCE, 6, 7)
    assert (keys.message, keys.call, keys.tool) == (6, 7, "tool")
    assert keys.text == "the result keys were ['x'] when recorded and are ['y'] now"
    value = compare_result(accepted, result(True, {"x": 2.0}), TOLERANCE, 8, 9)
    assert (value.message, value.call, value.tool, value.key, value.recorded, value.recomputed) == (8, 9, "tool", "x", 1.0, 2.0)


@pytest.mark.parametrize("was,now", [(1.0, "1.0"), ("1.0", 1.0), (None, 0.0), (0.0, None), (True, 1.0), (1, False)])
def test_values_of_different_kinds_differ_and_never_break_the_comparison(was, now):
    difference = compare_result(result(True, {"x": was}), result(True, {"x": now}), TOLERANCE, 1, 1)
    assert difference is not None and difference.key == "x"


def test_values_of_the_same_kind_within_the_tolerance_agree():
    for was, now in ((1.0, 1.0 + 1e-9), (None, None), (True, True), ("a", "a"), (3, 3.0)):
        assert compare_result(result(True, {"x": was}), result(True, {"x": now}), TOLERANCE, 1, 1) is None


@pytest.mark.parametrize("value", ["", None, 3])
def test_a_secret_must_be_a_non_empty_string(value):
    with pytest.raises(ValueError, match="^a secret must be a non-empty string$"):
        Secret(value)


# ---------------------------------------------------------------------------------------------
# Pendulum

def test_the_pendulum_demonstration_is_made_with_the_reference_runs_only_and_within_the_tolerance():
    mine = pendulum_judge.judge([replayed("pendulum", "reference", run="mine", group="mine")], TOLERANCE)["mine"]
    assert "changed_gravity" not in mine
    reference = replayed("pendulum", "reference")
    assert pendulum_judge.judge([reference], TOLERANCE)["reference"]["changed_gravity"]["caught"] is True
    # g from 9.81 to 9.80 changes each period by about 0.05 %: a replay at 1 % lets it through
    assert pendulum_judge.changed_gravity(reference, 0.01) == {"g": pendulum_judge.CHANGED_G, "caught": False}


def test_each_period_error_is_against_the_exact_period_at_its_amplitude():
    errors = pendulum_judge.period_errors(replayed("pendulum", "reference").transcript)
    assert errors
    for found in errors:
        assert found["exact_period_s"] == pendulum_physics.exact_period(found["amplitude"])
        assert found["error"] == abs(found["period_s"] / found["exact_period_s"] - 1)
        assert 0 <= found["error"] < 0.01


def test_the_pendulum_excess_is_shown_in_percent():
    conclusion = pendulum_judge.agent_conclusion(replayed("pendulum", "reference").transcript)
    for row in conclusion["at_smallest"]:
        excess = row["excess_percent"]
        assert excess["shown"] == f"{excess['value']:.4f}"
        assert excess["value"] == pytest.approx(100 * (row["period_s"]["value"] / conclusion["small_angle_period_s"]["value"] - 1))


def test_the_pendulum_verdict_line_for_promote():
    reference = recording.load(RECORDINGS / "pendulum" / "reference.json")
    scans = registry.lesson("pendulum").answers()["pendulum-seed"]
    c = pendulum_judge.agent_conclusion(reference.transcript)
    low, high = c["bracket"]
    assert pendulum_judge.verdict_line(reference, scans) == (
        f"answer 22 to 23 degrees: right (the exact crossing is at {scans['crossing']['shown']} degrees); supported: "
        f"its own periods at dt {c['smallest_dt']:g} s put the crossing between {low:g} and {high:g} degrees, which lies in its answer")
    assert (low, high) == (22, 23) and registry.lesson("pendulum").verdict_line(reference) == pendulum_judge.verdict_line(reference, scans)
    empty = dataclasses.replace(reference, transcript=transcript(step("I give up.")))
    assert pendulum_judge.verdict_line(empty, scans) == "no answer: the run ended without an accepted call of answer: not right"


# ---------------------------------------------------------------------------------------------
# Recording's checks of printed fields


def test_a_printed_field_may_be_exactly_as_long_as_its_limit():
    assert recording.check_text("m" * 200, "--model", 200) == "m" * 200
    with pytest.raises(recording.RecordingError, match=r"^--model: at most 200 characters, this one has 201$"):
        recording.check_text("m" * 201, "--model", 200)


def test_an_unknown_provenance_kind_is_named():
    with pytest.raises(ValueError, match=r"^unknown provenance kind 'guess'$"):
        recording.provenance("guess", "m", "how")


def pendulum_run(*calls):
    """An authored pendulum run: one message of period calls [(amplitude, dt)], then "done"."""
    variant = registry.lesson("pendulum").variant("default")
    message = ModelMessage("", tuple(ToolCall(str(i), "pendulum_period", {"amplitude_deg": a, "dt": dt})
                                     for i, (a, dt) in enumerate(calls, 1)))
    return loop.run(authored_client([message, ModelMessage("done")]), variant.system, variant.task,
                    variant.allowlist(), variant.max_steps)


def test_a_pendulum_bracket_whose_edge_is_the_exact_crossing_holds_it():
    """At dt 0.001 the simulated excess at the exact crossing is 4e-7 below 1 %: the agent's lower
    amplitude can be the crossing itself, and the edges belong to the bracket."""
    exact = pendulum_physics.exact_crossing()
    conclusion = pendulum_judge.agent_conclusion(pendulum_run((exact, 0.001), (23, 0.001)))
    assert conclusion["bracket"] == [exact, 23] and conclusion["exact_crossing"]["value"] == exact
    assert conclusion["inside"] is True and conclusion["verdict"] == pendulum_judge.VERIFIED and conclusion["within_a_degree"]
    wide = pendulum_judge.agent_conclusion(pendulum_run((20, 0.001), (30, 0.001)))
    assert wide["bracket"] == [20, 30] and wide["verdict"] == pendulum_judge.TOO_COARSE and not wide["within_a_degree"]


def test_a_pendulum_run_that_brackets_nothing_says_at_which_dt():
    conclusion = pendulum_judge.agent_conclusion(pendulum_run((10, 0.01), (20, 0.01), (15, 0.02)))
    assert conclusion["checkable"] is False and conclusion["smallest_dt"] == 0.01
    assert conclusion["reason"].endswith("every excess is at most 1 %")


def projectile_run(*calls):
    """A run of these (angle, dt) calls, four to a message, then a message without a call."""
    variant = registry.lesson("projectile").variant("default")
    made = [ToolCall(str(i), "range_with_drag", {"speed": 25, "angle": a, "dt": dt}) for i, (a, dt) in enumerate(calls, 1)]
    messages = [ModelMessage("", tuple(made[i:i + loop.MAX_CALLS_PER_MESSAGE])) for i in range(0, len(made), loop.MAX_CALLS_PER_MESSAGE)]
    return loop.run(authored_client([*messages, ModelMessage("done")]), variant.system, variant.task,
                    variant.allowlist(), variant.max_steps)


def test_the_projectile_scan_spans_two_degrees_beyond_each_edge_of_the_bracket():
    conclusion = projectile_judge.agent_conclusion(projectile_run((40, 0.01), (41, 0.01), (30, 0.01)))
    angles = [point["angle"] for point in conclusion["grid"]]
    assert conclusion["bracket"] == [40, 41]
    assert angles[0] == 38 and angles[-1] == 43 and len(angles) == 21  # 38, 38.25, ..., 43
    from replaylab.physics import projectile

    assert [(row["angle"], row["range_m"]["value"]) for row in conclusion["at_smallest"]] == [
        (a, projectile.range_with_drag(25, a, 0.01)) for a in (30, 40, 41)]


def supported(answer, *calls):
    where = projectile_judge.located(projectile_run(*calls))
    return projectile_judge.support({"low": answer[0], "high": answer[1]}, where)[0]


def test_projectile_data_that_fall_across_the_bracket_never_support_it():
    """41 beats 42 at dt 0.001, but nothing below 41 was measured: the top may lie below 41."""
    assert supported((41, 42), (41, 0.001), (42, 0.001)) is False
    assert supported((40, 41), (41, 0.001), (42, 0.001)) is False
    # measured on both sides: the parabola through 40, 41, 42 tops at 40.54, so 41 to 42 is not supported, 40 to 41 is
    assert supported((41, 42), (39, 0.001), (40, 0.001), (41, 0.001), (42, 0.001)) is False
    assert supported((40, 41), (39, 0.001), (40, 0.001), (41, 0.001), (42, 0.001)) is True
    # the smallest dt decides: finer calls elsewhere take the coarse ones' support away
    assert supported((40, 41), (40, 0.01), (41, 0.01), (42, 0.01), (45, 0.001)) is False


def test_projectile_the_parabola_top_is_the_vertex_through_the_three_points():
    assert projectile_judge.parabola_top(((1.0, 0.0), (2.0, 1.0), (3.0, 0.0))) == 2.0
    # y = -(x - 2.3)^2 through uneven points
    points = [(x, -(x - 2.3) ** 2) for x in (1.0, 2.0, 5.0)]
    assert projectile_judge.parabola_top(points) == pytest.approx(2.3, abs=1e-12)


ANGLES = [30 + 0.5 * i for i in range(41)]  # 30 to 50 degrees


@settings(max_examples=300, deadline=None)
@given(st.sets(st.sampled_from(ANGLES), min_size=3, max_size=8), st.sets(st.sampled_from(ANGLES), min_size=1, max_size=6))
def test_projectile_more_experiments_never_remove_support_from_an_answer_the_data_locate(first, more):
    """Whatever a run measured at dt 0.001 that locates the top in 40 to 41 (the truth, 40.54), more
    measurements at that dt still locate it there."""
    calls = [(a, 0.001) for a in sorted(first)]
    if supported((40, 41), *calls):
        assert supported((40, 41), *calls, *[(a, 0.001) for a in sorted(more - first)])


def test_no_projectile_scan_goes_beyond_the_tools_bounds():
    conclusion = projectile_judge.agent_conclusion(projectile_run((88, 0.01), (89, 0.01)))
    angles = [point["angle"] for point in conclusion["grid"]]
    assert angles[0] == 86 and angles[-1] == 89


def test_a_projectile_run_with_one_angle_says_at_which_dt():
    conclusion = projectile_judge.agent_conclusion(projectile_run((40, 0.01), (41, 0.02)))
    assert conclusion["checkable"] is False and conclusion["smallest_dt"] == 0.01


def test_a_tool_name_that_cannot_be_printed_is_named_by_its_type():
    from replaylab.agents.tools import Refused

    allowlist = registry.lesson("hunter").variant("symplectic-euler").allowlist()
    with pytest.raises(Refused, match="^a list holding an integer too long to print is not an allowed tool; the allowed tools are: oscillator_energy_drift, answer$"):
        allowlist.check([10**5000], {})
