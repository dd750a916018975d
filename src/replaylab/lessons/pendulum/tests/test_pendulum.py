"""The pendulum lesson's own tests (collected by pytest from the lesson's package).

The golden values are computed here, independently of the lesson's code, from the formulas: the
symplectic Euler loop and the read-off of the period written out again, the exact period from the
power series of the complete elliptic integral (not the arithmetic-geometric mean the lesson uses),
and the exact crossing by a bisection of that series.
"""

import dataclasses
import math
from functools import cache

import numpy as np
import pytest

from helpers import RECORDINGS
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.tools import ANSWER
from replaylab.build import build
from replaylab.lessons import registry
from replaylab.lessons.pendulum import agent, judge, lab, physics
from replaylab.results import load

LESSON = registry.lesson("pendulum")
VARIANT = LESSON.variant("default")
G, L = 9.81, 1.0
EXACT_CROSSING = 22.8138492619572  # degrees (issue 14)


# ---------------------------------------------------------------------------------------------
# The formulas, written out here


def small_angle(g=G):
    return 2 * math.pi * math.sqrt(L / g)


def simulated_period(amplitude_deg, dt, g=G):
    """Symplectic Euler from rest (ω first, then θ with the new ω); the period from the first to the
    second downward zero crossing of θ, each at (n + θn/(θn − θn+1))·dt."""
    k = g / L
    theta, omega, crossings, n = amplitude_deg * (math.pi / 180), 0.0, [], 0
    while len(crossings) < 2:
        omega = omega - k * math.sin(theta) * dt
        after = theta + omega * dt
        if theta > 0 and after <= 0:
            crossings.append((n + theta / (theta - after)) * dt)
        theta, n = after, n + 1
    return crossings[1] - crossings[0]


def exact_ratio(amplitude_deg):
    """T/T0 = (2/π)·K(k), k = sin(θ0/2), from K's power series Σ ((2n)!/(2^2n n!²))² k^2n."""
    k2 = math.sin(amplitude_deg * math.pi / 360) ** 2
    total, term, n = 1.0, 1.0, 0
    while term > 1e-18:
        n += 1
        term *= ((2 * n - 1) / (2 * n)) ** 2 * k2
        total += term
    return total


def exact_crossing():
    low, high = 20.0, 25.0
    for _ in range(200):
        middle = (low + high) / 2
        if exact_ratio(middle) - 1 > 0.01:
            high = middle
        else:
            low = middle
    return high


def run_of(*messages, answer=None):
    """A run of authored messages through the real loop and allowlist: [(text, [(amplitude, dt)])],
    then "done", with the answer (low, high) when one is given."""
    steps = [
        ModelMessage(text, tuple(ToolCall(str(i), lab.PERIOD_TOOL, {"amplitude_deg": a, "dt": dt}) for i, (a, dt) in enumerate(calls, 1)))
        for text, calls in messages
    ]
    last = ModelMessage("done", () if answer is None else (ToolCall("a", ANSWER, {"low": answer[0], "high": answer[1]}),))
    return loop.run(authored_client([*steps, last]), VARIANT.system, VARIANT.task, VARIANT.allowlist(), VARIANT.max_steps)


@cache
def scans():
    return LESSON.answers()


def judged(transcript):
    """(verdict, score) of a run of this transcript, judged and scored against the lesson's scans as a build does."""
    run = recording_io.Recording(LESSON.name, "run", VARIANT.name, "g", recording_io.provenance("authored", "m", "a test"), transcript)
    verdict = LESSON.judge([run], 1e-6)["run"]
    return verdict, LESSON.score(verdict, scans()[verdict["instance"]])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=RECORDINGS, results=folder, progress=lambda text: None)
    return load(folder / LESSON.name / "results.json")


@pytest.fixture(scope="module")
def reference():
    return recording_io.load(RECORDINGS / LESSON.name / "reference.json")


# ---------------------------------------------------------------------------------------------
# Golden values of both tools


def test_the_small_angle_period_tool_is_two_pi_root_l_over_g():
    tools = {t.name: t for t in lab.tools()}
    assert tools[lab.SMALL_ANGLE_TOOL].function() == {lab.PERIOD_KEY: small_angle()}
    changed = {t.name: t for t in lab.tools(g=9.80)}
    assert changed[lab.SMALL_ANGLE_TOOL].function() == {lab.PERIOD_KEY: small_angle(9.80)}
    assert small_angle() == pytest.approx(2.0060666807106475, rel=1e-15)


@pytest.mark.parametrize("amplitude", [1, 10, 22, 23, 45, 90, 150, 170])
@pytest.mark.parametrize("dt", [0.0005, 0.01, 0.05, 0.2])
def test_the_period_tool_is_the_written_out_simulation(amplitude, dt):
    tool = lab.all_tools().tools[lab.PERIOD_TOOL]
    assert tool.function(amplitude_deg=amplitude, dt=dt) == {lab.PERIOD_KEY: simulated_period(amplitude, dt)}


@pytest.mark.parametrize("amplitude", [1, 10, 23, 45, 90])
def test_the_simulated_period_converges_to_the_exact_one_at_second_order(amplitude):
    exact = small_angle() * exact_ratio(amplitude)
    assert physics.exact_period(amplitude) == pytest.approx(exact, rel=2e-15)
    fine = lab.all_tools().tools[lab.PERIOD_TOOL].function(amplitude_deg=amplitude, dt=0.0005)[lab.PERIOD_KEY]
    assert fine == pytest.approx(exact, rel=1e-6)
    if amplitude != 90:  # near 90 degrees the dt² term of the error nearly vanishes
        errors = [abs(simulated_period(amplitude, dt) / exact - 1) for dt in (0.02, 0.01, 0.005)]
        assert 3.8 < errors[0] / errors[1] < 4.2 and 3.8 < errors[1] / errors[2] < 4.2


def test_the_scan_steps_every_amplitude_as_the_tool_does():
    amplitudes = list(range(1, 171, 13))
    stepped = physics.periods(amplitudes, 0.01)
    one_by_one = [simulated_period(a, 0.01) for a in amplitudes]
    # numpy's sin may differ from the C library's in the last bit on some processors
    np.testing.assert_allclose(stepped, one_by_one, rtol=1e-12, atol=0)


def test_the_exact_crossing_in_results_json(results):
    crossing = results["scans"]["exact"]["crossing"]["value"]
    assert abs(crossing - EXACT_CROSSING) <= 1e-12
    assert abs(crossing - exact_crossing()) <= 1e-12
    assert results["scans"]["exact"]["bracket"] == [22, 23]


def test_a_bad_step_is_an_error_not_a_period():
    with pytest.raises(ValueError, match="dt must be positive"):
        physics.period(22, 0.0)


# ---------------------------------------------------------------------------------------------
# The judge on right, wrong and not-checkable runs


def test_the_reference_run_brackets_22_to_23_after_halving_dt_twice(reference):
    transcript = replay(reference, VARIANT)
    dts = sorted({c.arguments["dt"] for s in transcript.steps for c in s.message.tool_calls if c.name == lab.PERIOD_TOOL}, reverse=True)
    assert dts == [0.04, 0.02, 0.01] and reference.label == "Authored example, not a recorded model run"
    conclusion = judge.agent_conclusion(transcript)
    assert conclusion["verdict"] == "verified" and conclusion["bracket"] == [22, 23] and conclusion["smallest_dt"] == 0.01
    assert conclusion["evidence"] == "numerically verified against an exact formula"
    for row in conclusion["at_smallest"]:
        excess = simulated_period(row["amplitude"], 0.01) / small_angle() - 1
        assert row["excess_percent"]["value"] == pytest.approx(100 * excess, rel=1e-12)
    at_coarsest = run_of(("coarsest only", [(a, 0.04) for a in (23, 24)]))
    assert judge.agent_conclusion(at_coarsest)["verdict"] == "refuted"  # its first dt alone brackets 23 to 24


def test_a_coarse_step_never_refined_is_refuted_though_it_replays():
    """A supported answer that is wrong: its experiments at dt 0.1 s do point at 26 to 27."""
    transcript = run_of(("coarse", [(20, 0.1), (30, 0.1), (26, 0.1), (27, 0.1)]), answer=(26, 27))
    conclusion = judge.agent_conclusion(transcript)
    assert conclusion["bracket"] == [26, 27] and not conclusion["inside"]
    assert conclusion["verdict"] == "refuted" and conclusion["evidence"] is None
    verdict, wrong = judged(transcript)
    assert wrong == "the exact crossing lies outside its bracket" and verdict["supported"] is True


def test_a_search_that_stops_at_20_and_30_is_right_by_luck_and_not_supported():
    transcript = run_of(("wide", [(20, 0.01), (30, 0.01)]), ("finer", [(20, 0.005), (30, 0.005)]), answer=(22, 23))
    conclusion = judge.agent_conclusion(transcript)
    assert conclusion["bracket"] == [20, 30] and conclusion["inside"] and not conclusion["within_a_degree"]
    assert conclusion["verdict"] == "too coarse"
    verdict, wrong = judged(transcript)
    assert wrong is None and verdict["supported"] is False


def test_an_answer_of_adjacent_whole_degrees_around_the_exact_crossing_is_right():
    for answer, wrong in (((22, 23), None), ((23, 24), "the exact crossing lies outside its bracket"),
                          ((21, 22), "the exact crossing lies outside its bracket")):
        assert judged(run_of(("fine", [(22, 0.005), (23, 0.005)]), answer=answer))[1] == wrong, answer
    assert math.floor(EXACT_CROSSING) == 22


def test_the_judge_uses_the_smallest_dt_only():
    right_then_coarse = run_of(("fine", [(22, 0.005), (23, 0.005)]), ("coarse", [(26, 0.1), (27, 0.1)]))
    assert judge.agent_conclusion(right_then_coarse)["bracket"] == [22, 23]
    one_fine_call = run_of(("coarse", [(26, 0.1), (27, 0.1)]), ("one fine", [(22, 0.001)]))
    conclusion = judge.agent_conclusion(one_fine_call)
    assert not conclusion["checkable"] and conclusion["smallest_dt"] == 0.001
    assert conclusion["reason"] == "fewer than two amplitudes at the smallest dt the agent used (0.001 s)"


@pytest.mark.parametrize(
    "messages, reason",
    [
        ([], "the agent made no accepted pendulum_period call"),
        ([("below", [(10, 0.01), (20, 0.01)])], "every excess is at most 1 %"),
        ([("above", [(25, 0.01), (40, 0.01)])], "every excess is above 1 %"),
        ([("refused", [(180, 0.01), (22, 0.0)])], "the agent made no accepted pendulum_period call"),
    ],
)
def test_runs_that_bracket_no_crossing_are_not_checkable(messages, reason):
    """Their right answer is one their experiments do not support; without an answer they are not right."""
    transcript = run_of(*messages, answer=(22, 23))
    conclusion = judge.agent_conclusion(transcript)
    assert not conclusion["checkable"] and conclusion["reason"].endswith(reason)
    verdict, wrong = judged(transcript)
    assert wrong is None and verdict["supported"] is False and verdict["support"].endswith(reason)
    verdict, wrong = judged(run_of(*messages))
    assert wrong == "no answer" and verdict["supported"] is None


def test_two_amplitudes_whose_excess_falls_through_1_percent_bracket_no_crossing():
    """The last bits of a simulated period are rounding noise: between neighbouring doubles near the
    crossing the excess need not rise with the amplitude. A run whose two amplitudes there have the
    excess above 1 % at the lower one and at most 1 % at the higher brackets no crossing (found by
    walking up from the simulated crossing at dt 0.01 s, one double at a time)."""
    dt, reference = 0.01, physics.small_angle_period()
    amplitude = physics.simulated_crossing(dt, 20, 25, within=1e-12)
    for _ in range(200):
        amplitude = math.nextafter(amplitude, 0)
    pair = None
    for _ in range(400):
        higher = math.nextafter(amplitude, 90)
        if physics.period(amplitude, dt) / reference - 1 > physics.EXCESS >= physics.period(higher, dt) / reference - 1:
            pair = (amplitude, higher)
            break
        amplitude = higher
    assert pair is not None
    conclusion = judge.agent_conclusion(run_of(("noise", [(pair[0], dt), (pair[1], dt)])))
    assert conclusion["checkable"] is False and conclusion["reason"] == (
        "its calls at the smallest dt the agent used (0.01 s) do not bracket a crossing of 1 %: "
        "the excess does not rise through 1 % exactly once from one amplitude to the next"
    )


def test_the_words_and_the_stored_results_change_nothing(reference):
    transcript = replay(reference, VARIANT)
    last = transcript.steps[-1]
    boast = dataclasses.replace(last, message=dataclasses.replace(last.message, text="The crossing is at 45 degrees."))
    forged = tuple(
        dataclasses.replace(step, results=tuple(dataclasses.replace(r, content={lab.PERIOD_KEY: 99.0}) if r.ok else r for r in step.results))
        for step in transcript.steps[:-1]
    ) + (boast,)
    changed = dataclasses.replace(transcript, steps=forged)
    assert judge.agent_conclusion(changed) == judge.agent_conclusion(transcript)
    assert judged(changed) == judged(transcript)  # the answer, its score and its support too


# ---------------------------------------------------------------------------------------------
# The replay catches a changed simulation


def test_the_replay_catches_g_9_80(reference):
    changed = judge.changed_gravity(reference, 1e-6)
    assert changed["caught"] and changed["g"] == 9.80
    assert (changed["message"], changed["call"], changed["tool"], changed["key"]) == (1, 1, lab.SMALL_ANGLE_TOOL, lab.PERIOD_KEY)
    assert (changed["recorded"], changed["recomputed"]) == (small_angle(), small_angle(9.80))
    assert changed["text"].startswith(
        f"message 1, call 1, tool small_angle_period: period_s was {small_angle()!r} when recorded and is "
        f"{small_angle(9.80)!r} now (tolerance 1e-06). If the change is intended, record the run again with: "
        "replaylab record pendulum --provider authored --from "
    )
    with pytest.raises(ReplayMismatch):
        replay(reference, VARIANT, g=9.80)
    periods_only = dataclasses.replace(
        reference.transcript, steps=(dataclasses.replace(reference.transcript.steps[0], message=dataclasses.replace(
            reference.transcript.steps[0].message, tool_calls=reference.transcript.steps[0].message.tool_calls[1:]),
            results=reference.transcript.steps[0].results[1:]),) + reference.transcript.steps[1:],
    )
    found = judge.changed_gravity(dataclasses.replace(reference, transcript=periods_only), 1e-6)
    assert found["caught"] and found["tool"] == lab.PERIOD_TOOL  # the simulated period moves too
    assert found["recomputed"] == simulated_period(10, 0.04, g=9.80)


# ---------------------------------------------------------------------------------------------
# The build: the page shows the coarse step's shift, the exercise, the scripted strategies


def test_the_scans_and_the_exercise(results):
    convergence = results["scans"]["convergence"]
    for item in convergence["errors"]:
        assert 1.9 < item["order"]["value"] < 2.1
    by_dt = {row["dt"]: row for row in convergence["crossings"]}
    assert by_dt[0.1]["bracket"] == [26, 27] and by_dt[0.1]["shift"]["value"] > 3  # several degrees
    assert by_dt[0.1]["crossing"]["value"] == pytest.approx(26.7255390, abs=1e-6)
    largest = results["exercises"]["largest_dt"]
    inside, outside = largest["largest"]["dt"]["value"], largest["outside"]["dt"]["value"]
    assert 0 < outside - inside <= 1e-7 and largest["monotone"]
    assert simulated_period(23, inside) / small_angle() - 1 > 0.01 >= simulated_period(22, inside) / small_angle() - 1
    assert simulated_period(23, outside) / small_angle() - 1 <= 0.01


def test_the_page_shows_the_coarse_shift_and_the_exact_crossing(results):
    page = LESSON.page(results)
    assert "| 0.1 | 26.7255 | +3.91 | 26 to 27 | **no** |" in page  # dt, crossing, minus exact, bracket, right?
    assert "| 0.0125 | 22.8808 | +0.067 | 22 to 23 | yes |" in page
    assert "**22.8138 degrees**, so the right bracket is 22 to 23 degrees" in page
    assert "Evidence: **numerically verified against an exact formula**." in page
    assert "g = 9.80 m/s² instead of 9.81 m/s²" in page
    assert f"dt = **{results['exercises']['largest_dt']['largest']['dt']['shown']} s**" in page


@pytest.mark.parametrize("seed", range(8))
def test_the_scripted_strategies(seed):
    """Each strategy twice (the seeds take them in turn): what its experiments show, and how its answer is judged."""
    name, program = LESSON.scripted("default", seed)
    transcript = loop.run(ScriptedClient(program, name), VARIANT.system, VARIANT.task, VARIANT.allowlist(), VARIANT.max_steps)
    experiments = [c for s in transcript.steps for c in s.message.tool_calls if c.name != ANSWER]
    assert transcript.finished and len(experiments) <= lab.BUDGET
    conclusion = judge.agent_conclusion(transcript)
    plan = agent.strategy(seed)
    expected = {"careful": "verified", "coarse-dt": "refuted", "stops-at-20-and-30": "too coarse", "careless": "verified"}[plan]
    assert conclusion["verdict"] == expected, (seed, conclusion)
    verdict, wrong = judged(transcript)
    low, high = conclusion["bracket"]
    if plan == "stops-at-20-and-30":  # two whole degrees guessed between its ends, never measured
        assert verdict["answer"] == {"low": 22, "high": 23} and verdict["supported"] is False
    else:
        shifted = 1 if plan == "careless" else 0  # careless: its bracket, a degree higher
        assert verdict["answer"] == {"low": low + shifted, "high": high + shifted}
        assert verdict["supported"] is (plan != "careless")  # the others answer what their own periods show
    assert wrong == {"careful": None, "coarse-dt": "the exact crossing lies outside its bracket",
                     "stops-at-20-and-30": None, "careless": "the exact crossing lies outside its bracket"}[plan], (seed, verdict)
