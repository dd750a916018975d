"""The projectile lesson's own tests: its family (the draw, the balls, the answers, the edge case),
its physics against closed forms and an independent integrator, runs of drawn instances through
the real harness (right, wrong, supported), and the careful and trivial programs on every instance."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.projectile import agent, answers, balls, exact, family, figures, judge, lab, page, scans
from replaylab.physics import projectile

LESSON = registry.lesson("projectile")
SEED = LESSON.instance(lab.SEED_ID)
DRAWN = [i for i in LESSON.instances.values() if not i.seed]
TRUTH = LESSON.answers()
SETUPS = {i.id: lab.setup_of(i) for i in LESSON.instances.values()}
TOPS = dict(zip(SETUPS, exact.best_angles(list(SETUPS.values()))))  # the independent top of each instance


def truth_bracket(instance):
    low = math.floor(TRUTH[instance.id]["angle"]["value"])
    return low, low + 1


def run(instance, *messages, group="g"):
    """A run of an instance through the real loop and allowlist: each message a list of (angle, dt)
    range calls at the instance's speed, the last one the answer's (low, high)."""
    variant = LESSON.variant("default", instance.id)
    speed = lab.setup_of(instance).speed
    steps = [ModelMessage("", tuple(ToolCall(str(n), lab.RANGE_TOOL, {"speed": speed, "angle": a, "dt": dt})
                                    for n, (a, dt) in enumerate(batch, 1))) for batch in messages[:-1]]
    low, high = messages[-1]
    steps.append(ModelMessage("", (ToolCall("a", ANSWER, {"low": low, "high": high}),)))
    transcript = loop.run(authored_client(steps), variant.system, variant.task, variant.allowlist(), variant.max_steps)
    return recording.Recording(LESSON.name, "test", "default", group, recording.provenance("authored", "m", "test"), transcript,
                               instance=instance.id)


def judged(rec):
    verdict = LESSON.judge([rec], 1e-6)[rec.run]
    return verdict, LESSON.score(verdict, TRUTH[verdict["instance"]])


# ---------------------------------------------------------------------------------------------
# The physics: the seed bit for bit, the family's balls and heights, closed forms, an independent integrator


def test_the_seed_ball_from_the_ground_is_the_default_bit_for_bit():
    assert balls.TENNIS.drag == projectile.DRAG  # computed in the same order, never rounded
    for angle, dt in ((35, 0.01), (40.5, 0.001), (12, 0.05)):
        assert projectile.range_with_drag(25, angle, dt, projectile.DRAG, projectile.MASS, 0) == projectile.range_with_drag(25, angle, dt)
    assert projectile.range_without_drag(25, 40, 0.0) == projectile.range_without_drag(25, 40) == 625 * math.sin(80 * projectile.DEGREE) / projectile.G


def test_many_launches_at_once_equal_the_one_point_tool_bit_for_bit():
    """Several balls, heights, speeds and steps in one numpy scan, element by element the tool's numbers."""
    picks = [SETUPS[i.id] for i in DRAWN[:6]]
    angles, dts = [17, 33.25, 44, 61, 8.5, 40], [0.001, 0.013, 0.05, 0.002, 0.007, 0.004]
    scan = projectile.ranges_of_launches([s.speed for s in picks], angles, dts, [s.drag for s in picks],
                                         [s.mass for s in picks], [s.height for s in picks])
    assert [float(r) for r in scan] == [projectile.range_with_drag(s.speed, a, dt, s.drag, s.mass, s.height)
                                        for s, a, dt in zip(picks, angles, dts)]
    assert any(s.height > 0 for s in picks) and len({s.ball for s in picks}) > 2


def test_the_independent_integrator_meets_the_vacuum_closed_forms():
    """Without drag, Runge-Kutta lands where v cos(a) (v sin(a) + sqrt(v^2 sin^2(a) + 2 g h)) / g says,
    which the vacuum tool computes; its best angle is atan(v / sqrt(v^2 + 2 g h))."""
    for height in (0.0, 2.5, 10.0):
        angles = np.array([10.0, 30.0, 45.0, 70.0])
        found = exact.ranges(30, angles, 0.0, 1.0, height)
        assert found == pytest.approx([projectile.range_without_drag(30, a, height) for a in angles], rel=1e-12)
    vacuum = balls.Ball("ball without drag", 0.1, 0.05, 0.0)
    setups = [balls.Setup(vacuum, v, h) for v, h in ((20, 0.0), (15, 10.0), (40, 5.0))]
    expected = [math.degrees(math.atan(s.speed / math.sqrt(s.speed ** 2 + 2 * projectile.G * s.height))) for s in setups]
    assert exact.best_angles(setups) == pytest.approx(expected, abs=1e-3)
    assert expected[0] == pytest.approx(45)


def test_the_vacuum_tool_from_a_height_lands_on_the_ground():
    v, a, h = 20, 30, 7.5
    vx, vy = v * math.cos(math.radians(a)), v * math.sin(math.radians(a))
    t = (vy + math.sqrt(vy * vy + 2 * projectile.G * h)) / projectile.G  # h + vy t - g t^2 / 2 = 0
    assert projectile.range_without_drag(v, a, h) == pytest.approx(vx * t, rel=1e-13)


def test_the_converged_euler_scan_agrees_with_the_independent_integrator_on_every_instance():
    """The build's best angle is a quarter-degree grid point: within an eighth of a degree of the
    Runge-Kutta top (and a little round-off of Euler's dt), on every instance, the seed's included."""
    for instance_id, answer in TRUTH.items():
        assert abs(answer["angle"]["value"] - TOPS[instance_id]) <= 0.125 + 0.01, instance_id
    assert TOPS[lab.SEED_ID] == pytest.approx(40.5457, abs=5e-4)


# ---------------------------------------------------------------------------------------------
# The family: its draw, its levels, its texts


def test_the_family_is_the_seed_then_72_drawn_instances_24_per_level_the_same_twice():
    first, second = family.instances(), family.instances()
    assert [(i.id, i.difficulty, i.parameters) for i in first] == [(i.id, i.difficulty, i.parameters) for i in second]
    assert first[0].seed and first[0].id == lab.SEED_ID and not any(i.seed for i in first[1:])
    assert [i.id for i in first[1:]] == [f"projectile-{n:03d}" for n in range(1, 73)]
    assert Counter(i.difficulty for i in first[1:]) == {level: 24 for level in DIFFICULTIES}
    assert SEED.difficulty == "medium" and SEED.parameters == {
        "ball": "tennis ball", "ball_mass_kg": 0.058, "ball_diameter_m": 0.067, "drag_coefficient": 0.5,
        "launch_speed_m_s": 25, "launch_height_m": 0.0}
    # a fresh draw (not the cached one) gives the same setups
    family.drawn.cache_clear()
    assert [(i.id, i.parameters) for i in family.instances()] == [(i.id, i.parameters) for i in first]


def test_drawn_parameters_lie_in_their_stated_ranges_and_none_repeats_the_seed_or_another():
    setups = [SETUPS[i.id] for i in DRAWN]
    assert len(set(setups)) == len(setups) and lab.SEED_SETUP not in setups
    for instance, setup in zip(DRAWN, setups):
        p = instance.parameters
        assert set(p) == set(family.PARAMETERS)
        assert isinstance(p["launch_speed_m_s"], int) and 15 <= p["launch_speed_m_s"] <= 45
        assert p["launch_height_m"] == 0 or (0.5 <= p["launch_height_m"] <= 10 and (2 * p["launch_height_m"]).is_integer())
        assert balls.BY_NAME[p["ball"]].mass_kg == p["ball_mass_kg"] and setup.ball.drag_coefficient == p["drag_coefficient"]
        assert family.difficulty(setup) == instance.difficulty
    assert {s.ball.name for s in setups} == {b.name for b in balls.BALLS}
    assert any(s.height == 0 for s in setups) and any(s.height > 0 for s in setups)


def test_difficulty_means_how_far_drag_pulls_the_best_angle_below_the_vacuum_one():
    pulled = {level: [] for level in DIFFICULTIES}
    for instance in LESSON.instances.values():
        s = SETUPS[instance.id]
        vacuum = math.degrees(math.atan(s.speed / math.sqrt(s.speed ** 2 + 2 * projectile.G * s.height)))
        pulled[instance.difficulty].append(vacuum - TOPS[instance.id])
    means = [np.mean(pulled[level]) for level in DIFFICULTIES]
    assert means == sorted(means) and means[0] < 2 < 4 < means[1] < 6 < 12 < means[2]
    assert max(pulled["easy"]) < 3.5 and min(pulled["hard"]) > 6


def test_the_edge_case_no_drawn_best_angle_lies_near_a_whole_degree():
    """Every drawn instance's top keeps 0.15 degree from whole degrees, so its build's best angle is
    a quarter or a half past one (exactly one bracket right), and its task says so."""
    for instance in DRAWN:
        top = TOPS[instance.id]
        assert abs(top - round(top)) >= family.MARGIN
        assert TRUTH[instance.id]["angle"]["value"] % 1 in (0.25, 0.5, 0.75)
        assert "lies at least 0.15 degree from every whole degree: exactly one bracket is right" in LESSON.variant("default", instance.id).task
    assert family.near_a_whole_degree(40.14) and family.near_a_whole_degree(39.86) and not family.near_a_whole_degree(40.151)


def test_the_seeds_texts_and_tools_are_the_seeds_own():
    variant = LESSON.variant("default", lab.SEED_ID)
    assert LESSON.instance_variants(lab.SEED_ID) == lab.VARIANTS
    assert variant.task == lab.TASK and "drawn" not in variant.task and variant.format1 == lab.FORMAT1
    assert [t.name for t in variant.tools()] == [lab.RANGE_TOOL, lab.VACUUM_TOOL]


def test_a_drawn_instance_states_its_ball_height_and_speed_in_its_texts_and_tools():
    instance = next(i for i in DRAWN if i.parameters["launch_height_m"] > 0 and i.parameters["ball"] == "baseball")
    p, variant = instance.parameters, LESSON.variant("default", instance.id)
    ball = "baseball (145 g, 7.4 cm, drag coefficient 0.35)"
    assert ball in variant.system and f"launched from {p['launch_height_m']:g} m above level ground" in variant.system
    assert variant.task.startswith(f"At a launch speed of {p['launch_speed_m_s']} m/s, which launch angle")
    assert f"your own range_with_drag calls at {p['launch_speed_m_s']} m/s" in variant.task
    range_tool, vacuum_tool = variant.tools()
    assert ball in range_tool.description and f"{p['launch_height_m']:g} m above level ground" in vacuum_tool.description
    setup = SETUPS[instance.id]
    assert range_tool.function(30, 35, 0.01) == {"range_m": projectile.range_with_drag(30, 35, 0.01, setup.drag, setup.mass, setup.height)}
    assert vacuum_tool.function(30, 35) == {"range_m": projectile.range_without_drag(30, 35, setup.height)}
    ground = next(i for i in DRAWN if i.parameters["launch_height_m"] == 0)
    assert "launched from the ground." in LESSON.variant("default", ground.id).system


def test_what_an_agent_reads_never_holds_the_answer():
    listed = {item["instance"]: item for item in listed_instances(LESSON)}
    for instance in LESSON.instances.values():
        best = TRUTH[instance.id]["angle"]
        variant = LESSON.variant("default", instance.id)
        readable = json.dumps(listed[instance.id]) + variant.system + variant.task + json.dumps(variant.allowlist().specs())
        assert best["shown"] not in readable and f"{best['value']:g} deg" not in readable
        assert set(listed[instance.id]) == {"lesson", "instance", "difficulty", "seed", "variants", "parameters"}


# ---------------------------------------------------------------------------------------------
# The build's answers


def test_the_seeds_answer_is_the_seeds_scan():
    assert TRUTH[lab.SEED_ID] == scans.best_angle_scan()
    assert TRUTH[lab.SEED_ID]["angle"] == {"value": 40.5, "shown": "40.50"}


def test_a_drawn_answer_is_its_converged_scan_and_its_window_holds_the_whole_range_best():
    """The windowed scan's best angle is the best of every quarter degree from 10 to 50 (the range is
    one hump in the angle), at the same dt, on the instances with the lowest and the highest top."""
    low, high = min(DRAWN, key=lambda i: TOPS[i.id]), max(DRAWN, key=lambda i: TOPS[i.id])
    grid = np.arange(10, 50 + 1e-9, 0.25)
    for instance in (low, high):
        answer, s = TRUTH[instance.id], SETUPS[instance.id]
        assert answer["low"] < answer["angle"]["value"] < answer["high"] and answer["grid_step"] == 0.25
        rows = answer["rows"]
        assert [r["dt"] for r in rows] == list(answers.DTS[: len(rows)]) and rows[-1]["angle"] == rows[-2]["angle"]
        last = rows[-1]
        whole = projectile.ranges_of_launches(s.speed, grid, last["dt"], s.drag, s.mass, s.height)
        assert float(grid[np.argmax(whole)]) == answer["angle"]["value"] and float(whole.max()) == last["range_m"]
    assert TOPS[low.id] < 20 < 43 < TOPS[high.id]


def test_answers_of_some_instances_equal_those_of_all():
    some = [DRAWN[5].id, lab.SEED_ID, DRAWN[40].id]
    assert LESSON.answers(some) == {i: TRUTH[i] for i in some}


def test_a_best_angle_on_the_edge_of_its_window_stops_the_answer(monkeypatch):
    """A window of three angles around the survey's whole degree cannot hold a best angle a quarter
    or a half past it inside: the scan refuses rather than answer the window's edge."""
    monkeypatch.setattr(answers, "REACH", 0.25)
    with pytest.raises(ValueError, match="lies on its window's edge"):
        answers.converged_scans([SETUPS[DRAWN[0].id]], [False])


# ---------------------------------------------------------------------------------------------
# Runs of drawn instances through the harness: right, wrong, supported


def around(instance, dt=0.001):
    """The whole degrees below and above its best angle, and the one beyond on the far side."""
    low, high = truth_bracket(instance)
    return [(low - 1, dt), (low, dt), (high, dt), (high + 1, dt)]


@pytest.mark.parametrize("index", [0, 30, 71])
def test_the_builds_bracket_is_right_and_supported_the_next_one_wrong(index):
    instance = DRAWN[index]
    low, high = truth_bracket(instance)
    verdict, wrong = judged(run(instance, around(instance), (low, high)))
    assert wrong is None and verdict["supported"] is True and verdict["instance"] == instance.id
    assert verdict["difficulty"] == instance.difficulty and low <= verdict["located"]["top"]["value"] <= high
    for other in ((low + 1, high + 1), (low - 1, high - 1)):
        verdict, wrong = judged(run(instance, around(instance), other))
        assert wrong == judge.OUTSIDE and verdict["supported"] is False


def test_support_recomputes_the_instances_own_ball_not_the_seeds():
    instance = next(i for i in DRAWN if i.parameters["ball"] == "table-tennis ball" and i.parameters["launch_height_m"] > 0)
    s = SETUPS[instance.id]
    verdict, _ = judged(run(instance, around(instance), truth_bracket(instance)))
    best = verdict["located"]["best"]
    assert best["range_m"]["value"] == projectile.range_with_drag(s.speed, best["angle"], 0.001, s.drag, s.mass, s.height)
    assert best["range_m"]["value"] != projectile.range_with_drag(s.speed, best["angle"], 0.001)
    experiments = verdict["experiments"]
    assert experiments["checkable"] and experiments["inside"] and experiments["smallest_dt"] == 0.001


def test_calls_at_another_speed_or_across_the_bracket_do_not_support_a_drawn_answer():
    instance = DRAWN[10]
    low, high = truth_bracket(instance)
    only_edges = run(instance, [(low, 0.001), (high, 0.001)], (low, high))
    verdict, wrong = judged(only_edges)
    assert wrong is None and verdict["supported"] is False and not verdict["located"]["located"]
    variant = LESSON.variant("default", instance.id)
    speed = lab.setup_of(instance).speed + 1
    calls = tuple(ToolCall(str(a), lab.RANGE_TOOL, {"speed": speed, "angle": a, "dt": 0.001}) for a in (low - 1, low, high, high + 1))
    transcript = loop.run(authored_client([ModelMessage("", calls), ModelMessage("", (ToolCall("a", ANSWER, {"low": low, "high": high}),))]),
                          variant.system, variant.task, variant.allowlist(), variant.max_steps)
    rec = recording.Recording(LESSON.name, "test", "default", "g", recording.provenance("authored", "m", "t"), transcript, instance=instance.id)
    verdict, wrong = judged(rec)
    assert wrong is None and verdict["supported"] is False
    assert verdict["located"]["reason"] == f"it made no accepted range_with_drag call at {speed - 1} m/s"


def test_a_drawn_run_replays_and_a_rougher_ball_is_caught():
    instance = DRAWN[3]
    rec = run(instance, around(instance), truth_bracket(instance), group=judge.DEMONSTRATION_GROUP)
    verdict, wrong = judged(rec)
    assert wrong is None and verdict["rough_ball"]["caught"] is True and verdict["rough_ball"]["drag_factor"] == judge.ROUGH_FACTOR
    assert LESSON.verdict_line(rec).startswith(f"answer {truth_bracket(instance)[0]} to {truth_bracket(instance)[1]} degrees: right")


# ---------------------------------------------------------------------------------------------
# The careful and the trivial program on every instance, as the build runs them


def scripted_verdicts(plan):
    found = {}
    for instance_id in LESSON.instances:
        name, program = LESSON.scripted("default", 0, instance_id, plan=plan)
        v = LESSON.variant("default", instance_id)
        transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
        rec = recording.Recording(LESSON.name, f"{plan}--{instance_id}", "default", "baseline",
                                  recording.provenance("scripted", name, "test"), transcript, instance=instance_id)
        verdict = LESSON.judge([rec], 1e-6)[rec.run]
        found[instance_id] = (verdict, LESSON.score(verdict, TRUTH[instance_id]), len(transcript.steps))
    return found


def test_the_careful_program_is_right_and_supported_on_every_instance_within_the_message_limit():
    found = scripted_verdicts(agent.CAREFUL)
    assert {i: wrong for i, (_, wrong, _) in found.items() if wrong} == {}
    assert all(verdict["supported"] for verdict, _, _ in found.values())
    assert max(steps for _, _, steps in found.values()) <= lab.MAX_STEPS - 3  # room to spare
    # it answers the bracket of the parabola through whole degrees at dt 0.001 s, 0.02 degree from the top at most
    for instance_id, (verdict, _, _) in found.items():
        assert verdict["located"]["smallest_dt"] == 0.001
        assert -0.02 < verdict["located"]["top"]["value"] - TOPS[instance_id] < 0


def test_the_trivial_program_answers_44_to_45_and_is_right_nowhere():
    found = scripted_verdicts(agent.TRIVIAL)
    assert all(verdict["answer"] == {"low": 44, "high": 45} and verdict["calls"] == 0 for verdict, _, _ in found.values())
    assert sum(wrong is None for _, wrong, _ in found.values()) == 0


def test_the_other_strategies_run_on_a_drawn_instance_and_end_with_an_answer():
    instance = min(DRAWN, key=lambda i: TOPS[i.id])  # the lowest best angle: the survey must look further down
    for plan in agent.STRATEGIES:
        name, program = LESSON.scripted("default", 0, instance.id, plan=plan)
        v = LESSON.variant("default", instance.id)
        transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
        assert transcript.finished and transcript.steps[-1].message.tool_calls[-1].name == ANSWER
        speeds = {c.arguments["speed"] for s in transcript.steps for c in s.message.tool_calls if c.name == lab.RANGE_TOOL}
        assert speeds == {instance.parameters["launch_speed_m_s"]}



def test_the_runge_kutta_ranges_converge_in_their_step():
    s = SETUPS[DRAWN[0].id]
    angles = np.array([15.0, 30.0, 45.0, 60.0])
    fine, used = (exact.ranges(s.speed, angles, s.drag, s.mass, s.height, dt=dt) for dt in (0.0025, 0.01))
    assert np.abs(used / fine - 1).max() < 1e-9


# ---------------------------------------------------------------------------------------------
# The pages: a run of a drawn instance is labelled with its own ball, and kept out of the seed's figure


def test_a_drawn_runs_evidence_names_its_ball_and_the_figure_draws_the_seeds_runs_only():
    softball = next(i for i in DRAWN if i.parameters["ball"] == "softball")
    assert page.label({"instance": softball.id}) == "numerically verified: the simulated softball, explicit Euler, no measurement"
    assert page.label({"instance": lab.SEED_ID}) == judge.EVIDENCE == (
        "numerically verified: the simulated tennis ball, explicit Euler, no measurement")
    verdicts = {"seed-run": {"instance": lab.SEED_ID}, "drawn-run": {"instance": softball.id}, "old-run": {}}
    assert figures.of_the_seed({"verdicts": verdicts}) == {"seed-run", "old-run"}
    verdict, _ = judged(run(softball, around(softball), truth_bracket(softball)))
    assert verdict["experiments"]["evidence"] == page.label({"instance": softball.id})
