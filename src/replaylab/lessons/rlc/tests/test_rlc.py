"""The rlc lesson's own tests (collected by pytest from the lesson's package).

The golden values are computed here, independently of the lesson's code: the trapezoidal rule
written out one step at a time (not the matrix power the tool applies), the circuit's voltage from an
independent integrator (scipy's DOP853 at a tolerance of 1e-12), and the textbook values of a
second-order system (the overshoot exp(−πζ/√(1 − ζ²)): 16.3 % at ζ = 0.5, 4.6 % at ζ = 0.7).
Then the ringing of the trapezoidal rule, the judge on right, wrong, supported and unsupported
answers and on no answer, the family's draw, and the careful and the trivial program on every
instance.
"""

import json
import math
import re
from functools import cache

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from helpers import RECORDINGS
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.build import build
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.rlc import agent, exercises, family, judge, lab, physics, scans
from replaylab.results import load

LESSON = registry.lesson("rlc")
SEED = family.SEED_ID
FAMILY = LESSON.instances
SEED_CIRCUIT = (lab.RESISTANCE, lab.INDUCTANCE, lab.CAPACITANCE, lab.INITIAL)


# ---------------------------------------------------------------------------------------------
# The formulas, written out here


def stepped_voltage(time, dt, resistance, inductance, capacitance, initial):
    """The trapezoidal rule one step at a time: y + dt/2 (A y + A y') = y', solved for y' by Cramer's
    rule, whole steps up to the last before `time`, then one step of the rest."""

    def step(v, i, h):
        # (I − h/2 A) y' = (I + h/2 A) y with A = [[0, −1/C], [1000/L, −R/L]]
        rv = v - h / 2 * i / capacitance
        ri = i + h / 2 * (1000 * v - resistance * i) / inductance
        a, b = 1.0, h / 2 / capacitance
        c, d = -h / 2 * 1000 / inductance, 1 + h / 2 * resistance / inductance
        det = a * d - b * c
        return (rv * d - b * ri) / det, (a * ri - c * rv) / det

    v, i = initial, 0.0
    steps = math.floor(time / dt)
    for _ in range(steps):
        v, i = step(v, i, dt)
    if time - steps * dt > 0:
        v, i = step(v, i, time - steps * dt)
    return v


def independent_voltage(times, resistance, inductance, capacitance, initial):
    """The capacitor's voltage by scipy's DOP853 (v' = −i/C, i' = (1000 v − R i)/L in V, mA and ms)."""
    solution = solve_ivp(lambda t, y: [-y[1] / capacitance, (1000 * y[0] - resistance * y[1]) / inductance],
                         (0, max(times)), [initial, 0.0], method="DOP853", rtol=1e-12, atol=1e-15, t_eval=times)
    return solution.y[0]


# ---------------------------------------------------------------------------------------------
# The tool and the exact solution


@pytest.mark.parametrize("time, dt", [(0.3, 0.01), (0.31, 0.001), (0.72, 0.0025), (1.0, 0.3), (2.5, 0.07), (0.0, 0.01)])
def test_the_tool_is_the_trapezoidal_rule_stepped_from_the_charged_capacitor(time, dt):
    got = lab.tools()[0].function(time_ms=time, dt_ms=dt)[lab.KEY]
    assert got == pytest.approx(stepped_voltage(time, dt, *SEED_CIRCUIT), rel=1e-11, abs=1e-14)


@pytest.mark.parametrize("circuit", [SEED_CIRCUIT, (2000.0, 10.0, 1.0, 5.0), (203.0, 10.0, 1.0, 3.0), (10.0, 47.0, 2.2, 12.0)])
def test_the_exact_voltage_against_an_independent_integrator(circuit):
    times = np.linspace(0.01, 3.0, 60)
    exact = [physics.exact_voltage(t, *circuit) for t in times]
    assert np.allclose(independent_voltage(times, *circuit), exact, rtol=1e-8, atol=1e-10)


def test_the_textbook_values_of_a_second_order_circuit():
    """ω0 = 1/√(LC) = 10,000 rad/s and f0 = 1591.5 Hz for 10 mH and 1 µF; the overshoot
    exp(−πζ/√(1 − ζ²)) is 16.3 % at ζ = 0.5 and 4.6 % at ζ = 0.7; critical damping at R = 2√(L/C)."""
    assert physics.natural_frequency(10.0, 1.0) == pytest.approx(10.0)  # rad/ms
    assert 1000 / physics.natural_period(10.0, 1.0) == pytest.approx(1591.549, rel=1e-6)  # Hz
    assert physics.undershoot(0.5) == pytest.approx(0.163, abs=5e-4) and physics.undershoot(0.7) == pytest.approx(0.046, abs=5e-4)
    assert physics.damping_ratio(2 * math.sqrt(10e-3 / 1e-6), 10.0, 1.0) == pytest.approx(1.0)
    zeta = 0.9
    time = math.pi / (10.0 * math.sqrt(1 - zeta**2))
    assert physics.exact_voltage(time, 180.0, 10.0, 1.0, 1.0) == pytest.approx(-physics.undershoot(zeta), rel=1e-12)


def test_an_overdamped_voltage_never_crosses_zero_and_an_underdamped_one_does():
    """The exact voltage (ζ = 0.9, 0.95, 0.995 against 1.005, 1.05, 10), and DOP853's where the
    undershoot is above its round-off (ζ = 0.9 and 0.95: 7.6e-3 and 3.6e-4 V below zero)."""
    times = np.linspace(0.0, 20.0, 2001)
    for resistance, crosses in ((180.0, True), (190.0, True), (199.0, True), (201.0, False), (210.0, False), (2000.0, False)):
        voltages = [physics.exact_voltage(t, resistance, 10.0, 1.0, 5.0) for t in times]
        assert (min(voltages) < 0) == crosses, resistance
    for resistance, crosses in ((180.0, True), (190.0, True), (210.0, False), (2000.0, False)):
        assert (min(independent_voltage(times[1:], resistance, 10.0, 1.0, 5.0)) < -1e-9) == crosses, resistance


def test_the_trapezoidal_rule_converges_at_second_order():
    found = scans.convergence_scan()
    assert found["order"]["value"] == pytest.approx(2, abs=0.05)
    assert found["exact"] == pytest.approx(-physics.undershoot(0.9) * lab.INITIAL, rel=1e-12)


def test_the_ringing_goes_below_zero_exactly_above_two_over_omega_zero():
    """|μ2| > μ1 exactly when dt > 2/ω0 = 0.2 ms: the ringing then outlasts the slow decay."""
    ring = scans.ringing_scan()
    assert ring["below_zero_dt_ms"]["value"] == pytest.approx(0.2) and ring["ringing_dt_ms"]["value"] < 0.011
    assert {row["dt"]: row["negative"] for row in ring["rows"]} == {dt: dt > 0.2 for dt in scans.RINGING_DTS}
    largest = exercises.largest_positive_dt()
    assert 0.2 < largest["largest"]["value"] < 0.21 and largest["monotone"]
    for dt in (0.21, 0.5):  # the eigenvalues of one step, from the matrix: |μ2| > μ1
        m = physics.step_map(dt, *scans.STIFF[:3])
        mu = np.linalg.eigvals(np.array([[m[0], m[1]], [m[2], m[3]]]))
        assert min(mu) < 0 and abs(min(mu)) > max(mu)


def test_the_tool_s_modes_are_complex_exactly_when_the_circuit_is_underdamped():
    for resistance in (150.0, 199.0, 201.0, 2000.0):
        for dt in (0.001, 0.05, 0.5, 5.0):
            m = physics.step_map(dt, resistance, 10.0, 1.0)
            discriminant = (m[0] - m[3]) ** 2 + 4 * m[1] * m[2]
            assert (discriminant < 0) == (resistance < 200), (resistance, dt)


# ---------------------------------------------------------------------------------------------
# The judge


def run_of(*messages, answer=None, instance=SEED):
    """A transcript of authored messages, each (text, [(time, dt), ...]), then "done", with the
    answer when one is given."""
    authored, number = [], 0
    for text, calls in messages:
        tool_calls = []
        for time, dt in calls:
            number += 1
            tool_calls.append(ToolCall(str(number), lab.TOOL, {"time_ms": time, "dt_ms": dt}))
        authored.append(ModelMessage(text, tuple(tool_calls)))
    authored.append(ModelMessage("done", () if answer is None else (ToolCall("a", "answer", {"regime": answer}),)))
    v = LESSON.variant("default", instance)
    return loop.run(authored_client(authored), v.system, v.task, v.allowlist(), v.max_steps)


def judged(transcript, instance=SEED):
    run = recording_io.Recording(LESSON.name, "run", "default", "g", recording_io.provenance("authored", "m", "a test"), transcript,
                                 instance=instance)
    verdict = LESSON.judge([run], 1e-6)["run"]
    return verdict, LESSON.score(verdict, LESSON.answers([instance])[instance])


def overdamped_instance():
    """The first drawn overdamped instance whose natural period is below 1.5 ms (2/ω0 below 0.5 ms)."""
    return next(i for i in list(FAMILY.values())[1:] if family.zeta_of(i) > 1 and LESSON.answers([i.id])[i.id]["natural_period_ms"]["value"] < 1.5)


def test_the_reference_run_is_right_and_supported_and_a_changed_circuit_is_caught():
    reference = recording_io.load(RECORDINGS / LESSON.name / "reference.json")
    assert reference.label == "Authored example, not a recorded model run" and reference.instance == SEED
    verdict = LESSON.judge([reference], 1e-6)["reference"]
    assert LESSON.score(verdict, LESSON.answers([SEED])[SEED]) is None and verdict["supported"] is True
    conclusion = verdict["experiments"]
    assert conclusion["smallest_dt"] == 0.0025 and conclusion["shows"] == "underdamped" and conclusion["when"] == 0.7
    assert verdict["changed_resistance"]["caught"]
    assert LESSON.verdict_line(reference) == (
        "answer underdamped: right (the exact damping ratio ζ = (R/2)√(C/L) is 0.90000: underdamped); supported: at dt "
        "0.0025 ms its own voltage is -0.00743976 V at 0.7 ms, below zero: underdamped")


def test_the_answer_is_right_when_it_is_the_regime_of_the_exact_damping_ratio():
    reads = ("reads", [(0.7, 0.001), (3.0, 0.001)])
    verdict, wrong = judged(run_of(reads, answer="underdamped"))
    assert wrong is None and verdict["supported"] is True
    verdict, wrong = judged(run_of(reads, answer="overdamped"))
    assert wrong == judge.OTHER_REGIME and verdict["supported"] is False
    assert verdict["support"].endswith("below zero, which shows underdamped")


def test_an_overdamped_answer_is_supported_by_a_decay_without_a_crossing():
    instance = overdamped_instance()
    period = LESSON.answers([instance.id])[instance.id]["natural_period_ms"]["value"]
    reads = ("reads", [(k * period, period / 1000) for k in (1, 4, 16, 64)])
    verdict, wrong = judged(run_of(reads, answer="overdamped", instance=instance.id), instance.id)
    assert wrong is None and verdict["supported"] is True and verdict["experiments"]["shows"] == "overdamped"
    short = ("short", [(period / 10, period / 1000)])
    verdict, wrong = judged(run_of(short, answer="overdamped", instance=instance.id), instance.id)
    assert wrong is None and verdict["supported"] is False and verdict["support"].endswith("none is at most 0.1 % of V0")


def test_a_coarse_step_supports_a_wrong_answer_though_it_replays():
    """At dt 1 ms the trapezoidal rule rings an overdamped circuit below zero: its own readings show
    underdamped, which the exact damping ratio refutes."""
    instance = overdamped_instance()
    reads = ("coarse", [(t, 1.0) for t in (8.0, 9.0, 10.0, 11.0)])
    verdict, wrong = judged(run_of(reads, reads, answer="underdamped", instance=instance.id), instance.id)
    assert wrong == judge.OTHER_REGIME and verdict["supported"] is True and not verdict["experiments"]["agrees"]
    assert all(r["exact"] > 0 for r in verdict["readings"]) and any(r["voltage"] < 0 for r in verdict["readings"])


def test_the_judge_uses_the_smallest_dt_only():
    coarse_then_fine = run_of(("fine", [(0.3, 0.001)]), ("coarse", [(0.7, 0.01), (1.0, 0.01)]))
    conclusion = judge.agent_conclusion(coarse_then_fine, LESSON.instance(SEED))
    assert not conclusion["checkable"] and conclusion["smallest_dt"] == 0.001


@pytest.mark.parametrize("messages, reason", [
    ([], "the agent made no accepted capacitor_voltage call"),
    ([("early", [(0.1, 0.001), (0.3, 0.001)])], "no voltage is below zero and none is at most 0.1 % of V0"),
    ([("refused", [(-1, 0.001), (0.7, 0)])], "the agent made no accepted capacitor_voltage call"),
])
def test_runs_that_show_neither_regime_support_nothing_and_no_answer_is_not_right(messages, reason):
    verdict, wrong = judged(run_of(*messages, answer="underdamped"))
    assert wrong is None and verdict["supported"] is False and verdict["support"].endswith(reason)
    verdict, wrong = judged(run_of(*messages))
    assert wrong == "no answer" and verdict["supported"] is None and verdict["answer"] is None


def test_an_answer_that_is_not_a_regime_is_refused():
    result = LESSON.variant("default").allowlist().dispatch(ToolCall("1", "answer", {"regime": "critically damped"}))
    assert not result.ok and result.content["error"] == "regime must be one of underdamped, overdamped, got 'critically damped'"


# ---------------------------------------------------------------------------------------------
# The family


@cache
def answers_of_family():
    return LESSON.answers()


def test_the_draw_is_deterministic_with_the_seed_first_and_half_of_every_level_underdamped():
    again = family.instances()
    assert [(i.id, i.parameters, i.hidden) for i in again] == [(i.id, i.parameters, i.hidden) for i in FAMILY.values()]
    assert again[0].id == SEED and again[0].seed and len(again) - 1 == 6 * family.BLOCKS
    drawn = again[1:]
    for level in DIFFICULTIES:
        regimes = [family.regime(family.zeta_of(i)) for i in drawn if i.difficulty == level]
        assert regimes.count("underdamped") == regimes.count("overdamped") == family.BLOCKS, level


def test_the_drawn_circuits_lie_in_the_stated_ranges_and_never_near_critical_damping():
    for instance in FAMILY.values():
        truth = answers_of_family()[instance.id]
        zeta = truth["damping_ratio"]["value"]
        assert abs(zeta - 1) >= family.CRITICAL and 0.05 <= zeta <= 10
        assert lab.PERIOD_RANGE[0] <= truth["natural_period_ms"]["value"] <= lab.PERIOD_RANGE[1]
        assert 1 <= instance.parameters["inductance_mh"] <= 100 and 1 <= instance.parameters["initial_voltage_v"] <= 12
        assert instance.difficulty == ("hard" if abs(zeta - 1) < 0.05 else "medium" if abs(zeta - 1) < 0.25 else "easy")
        assert truth["regime"] == ("underdamped" if zeta < 1 else "overdamped")


def numbers_in(text):
    return {float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?", text)}


def test_the_agent_never_reads_the_resistor_the_capacitor_or_the_damping_ratio():
    listing = json.dumps(listed_instances(LESSON), ensure_ascii=False)
    assert "resistance" not in listing and "capacitance" not in listing and "circuit" not in listing
    for index, instance in enumerate(FAMILY.values()):
        resistance, _, capacitance, _ = family.circuit(instance)
        zeta = answers_of_family()[instance.id]["damping_ratio"]["value"]
        variant = LESSON.variant("default", instance.id)
        texts = variant.system + variant.task + json.dumps(variant.allowlist().specs(), ensure_ascii=False)
        assert "Ω" not in texts and "µF" not in texts and "ζ =" not in texts.replace("ζ = (R/2)", "")
        spelled = numbers_in(texts) | numbers_in(json.dumps(listed_instances(LESSON)[index]))
        # a whole number (the seed's 180 Ω and 1 µF, a drawn 10 µF) is spelled elsewhere by chance: 1 %, 10 ms
        assert not {value for value in (resistance, capacitance) if not value.is_integer()} & spelled, instance.id
        assert not {round(zeta, 4), round(zeta, 5)} & spelled, instance.id


def run_program(instance_id, plan, seed=0):
    name, program = LESSON.scripted("default", seed, instance_id, plan)
    v = LESSON.variant("default", instance_id)
    transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
    run = recording_io.Recording(LESSON.name, "r", "default", "baseline", recording_io.provenance("scripted", name, "a test"),
                                 transcript, instance=instance_id)
    verdict = LESSON.judge([run], 1e-6)["r"]
    return transcript, verdict, LESSON.score(verdict, answers_of_family()[instance_id])


def test_the_careful_program_is_right_and_supported_on_every_instance_and_the_trivial_one_is_the_floor():
    for instance_id in FAMILY:
        transcript, verdict, wrong = run_program(instance_id, agent.CAREFUL)
        assert wrong is None and verdict["supported"] is True, (instance_id, verdict["answer"], verdict["support"])
        assert verdict["calls"] <= lab.BUDGET and len(transcript.steps) <= lab.MAX_STEPS and transcript.finished
    trivial = [run_program(i, agent.TRIVIAL) for i in FAMILY]
    assert all(t.finished and v["calls"] == 0 and v["supported"] is False for t, v, _ in trivial)
    overdamped = sum(answers_of_family()[i]["regime"] == "overdamped" for i in FAMILY)
    assert sum(wrong is None for *_, wrong in trivial) == overdamped == 33


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_other_strategies_end_with_an_answer_and_some_are_wrong(seed):
    plan = agent.strategy(seed)
    outcomes = [run_program(i, None, seed) for i in FAMILY]
    assert all(t.finished and v["answer"] is not None and v["calls"] <= lab.BUDGET for t, v, _ in outcomes), plan
    wrong = [(i, v) for i, (_, v, w) in zip(FAMILY.values(), outcomes) if w is not None]
    assert wrong, plan
    if plan == "careless":
        assert len(wrong) == len(outcomes) and not any(v["supported"] for _, v, _ in outcomes)
    if plan == "coarse-dt":  # ringing: overdamped circuits read below zero, which its own readings support
        assert all(family.zeta_of(i) > 1 for i, _ in wrong) and any(v["supported"] for _, v in wrong)
    if plan == "watch-to-one-percent":  # a near-critical undershoot comes after the voltage is below 1 %
        assert all(0.85 < family.zeta_of(i) < 1 for i, _ in wrong)
        assert sum(i.difficulty == "hard" for i, _ in wrong) >= 8


# ---------------------------------------------------------------------------------------------
# The page


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=RECORDINGS, results=folder, progress=lambda text: None)
    return folder / LESSON.name


def test_the_build_writes_the_page_the_figures_and_the_scorecard(results):
    data = load(results / "results.json")
    (row,) = data["scorecard"]
    assert (row["runs"], row["right"], row["supported"], row["supported_wrong"]) == (1, 1, 1, 0)
    assert data["family"]["baselines"]["careful"]["right"] == len(FAMILY)
    assert sorted(p.stem for p in (results / "figures").glob("*.png")) == sorted(LESSON.figures)
    page = (results / "index.md").read_text()
    assert "**Run `reference` answered: the circuit is underdamped.** **The agent's answer is right, and its own experiments support it.**" in page
    assert "ζ = **0.90000**: **underdamped**" in page and "the voltage stays at or above zero up to dt = **0.206247 ms**" in page
