"""The pendulum lesson's own tests (collected by pytest from the lesson's package).

The golden values are computed here, independently of the lesson's code, from the formulas: the
symplectic Euler loop and the read-off of the period written out again, the exact period from the
power series of the complete elliptic integral (not the arithmetic-geometric mean the lesson uses),
and the exact crossing by a bisection of that series. The family's part (at the end) checks the
draw, every instance's answer against that series, the answer's form, the judge on drawn
instances, the careful and the trivial program on every instance, and the edge rule.
"""

import dataclasses
import hashlib
import json
import math
import time
from collections import Counter
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
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.pendulum import agent, family, judge, lab, physics
from replaylab.results import load

LESSON = registry.lesson("pendulum")
VARIANT = LESSON.variant("default")
G, L = 9.81, 1.0
EXACT_CROSSING = 22.8138492619572  # degrees (issue 14)


# ---------------------------------------------------------------------------------------------
# The formulas, written out here


def small_angle(g=G, length=L):
    return 2 * math.pi * math.sqrt(length / g)


def simulated_period(amplitude_deg, dt, g=G, length=L):
    """Symplectic Euler from rest (ω first, then θ with the new ω); the period from the first to the
    second downward zero crossing of θ, each at (n + θn/(θn − θn+1))·dt."""
    k = g / length
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


def exact_crossing(excess=0.01, low=20.0, high=25.0):
    for _ in range(200):
        middle = (low + high) / 2
        if exact_ratio(middle) - 1 > excess:
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


# ---------------------------------------------------------------------------------------------
# The family: the draw, the answers, the answer's form, the judge and the programs on every instance


FAMILY = LESSON.instances
DRAWN = [i for i in FAMILY.values() if not i.seed]
SEED_ID = "pendulum-seed"
SEED_TEXTS = "9010460c15bef01851a2a693c55ac3435776e4b87b3b1ec86a3e1e4c8273dda5"  # sha256 of the seed's texts before the family
SEED_TASK = (
    "A pendulum of length 1 m under g = 9.81 m/s² is released at rest from an amplitude θ0. From which amplitude on "
    "does the true period exceed the small-angle period 2π√(L/g) by more than 1 % of the small-angle period "
    "(T/T0 − 1 > 0.01)? Answer to within one degree by calling answer with low and high, two whole-degree amplitudes "
    "with high = low + 1 (any other pair is refused) between which that happens. Your answer is right when the exact "
    "crossing (from the exact period by the arithmetic-geometric mean, not from a simulation) lies between low and "
    "high, both included. It is supported when your own pendulum_period calls at the smallest dt you used put the "
    "crossing in it: ordered by amplitude, their excess T/T0 − 1 rises above 0.01 exactly once, between two "
    "neighbouring amplitudes you measured that both lie between low and high. Say in explanation how you checked "
    "convergence in dt."
)


def decimals(value):
    """How many decimals a drawn number has (1.745 has 3)."""
    text = repr(float(value))
    return 0 if text.endswith(".0") else len(text.split(".")[1])


def parameters_of(instance):
    p = instance.parameters
    return p["threshold_percent"] / 100, p["precision_deg"], p["length_m"], p["gravity_m_s2"]


@cache
def answers_of_family():
    return LESSON.answers()


def run_on(instance_id, calls, answer=None):
    """(verdict, wrong) of a run of one instance through the real loop, its allowlist and the judge:
    one message of period calls [(amplitude, dt)] (four at most), then the answer (low, high) or none."""
    v = LESSON.variant("default", instance_id)
    first = ModelMessage("", tuple(ToolCall(str(i), lab.PERIOD_TOOL, {"amplitude_deg": a, "dt": dt})
                                   for i, (a, dt) in enumerate(calls, 1)))
    last = ModelMessage("done", () if answer is None else (ToolCall("a", ANSWER, {"low": answer[0], "high": answer[1]}),))
    transcript = loop.run(authored_client([first, last]), v.system, v.task, v.allowlist(), v.max_steps)
    run = recording_io.Recording(LESSON.name, "run", "default", "g", recording_io.provenance("authored", "m", "a test"),
                                 transcript, instance=instance_id)
    verdict = LESSON.judge([run], 1e-6)["run"]
    return verdict, LESSON.score(verdict, answers_of_family()[instance_id])


def chosen():
    """A drawn instance of each precision and of each difficulty (the first found)."""
    picked = {}
    for instance in DRAWN:
        picked.setdefault(("precision", instance.parameters["precision_deg"]), instance)
        picked.setdefault(("difficulty", instance.difficulty), instance)
    return sorted({i.id for i in picked.values()})


def test_the_draw_is_deterministic_with_the_seed_first():
    again = family._drawn.__wrapped__()  # the draw once more, without its cache
    assert [(i.id, i.difficulty, i.parameters, i.hidden) for i in again] == [(i.id, i.difficulty, i.parameters, i.hidden) for i in DRAWN]
    ids = list(FAMILY)
    assert ids[0] == SEED_ID and FAMILY[SEED_ID].seed and not any(i.seed for i in DRAWN)
    assert ids[1:] == [f"pendulum-{n:03d}" for n in range(1, 61)]
    assert LESSON.seeds == {"default": FAMILY[SEED_ID]}


def test_the_drawn_numbers_lie_in_the_stated_ranges():
    assert len(DRAWN) >= 60 and Counter(i.difficulty for i in DRAWN) == {level: 20 for level in DIFFICULTIES}
    pairs = set()
    for instance in DRAWN:
        p = instance.parameters
        assert list(p) == list(family.PARAMETERS) and instance.hidden == {}
        assert 0.5 <= p["threshold_percent"] <= 10 and decimals(p["threshold_percent"]) <= 3
        assert 0.25 <= p["length_m"] <= 4 and decimals(p["length_m"]) <= 2
        assert 1.6 <= p["gravity_m_s2"] <= 25 and decimals(p["gravity_m_s2"]) <= 2
        assert p["precision_deg"] in (0.5, 1, 2)
        pairs.add((p["threshold_percent"], p["precision_deg"]))
        assert family.assess_instance(instance)["difficulty"] == instance.difficulty
    assert len(pairs) == len(DRAWN)  # no question drawn twice
    assert {i.parameters["precision_deg"] for i in DRAWN} == {0.5, 1, 2}


def test_the_seed_instance_keeps_its_numbers_and_its_texts_byte_for_byte():
    seed = FAMILY[SEED_ID]
    assert seed.parameters == {"threshold_percent": 1.0, "precision_deg": 1, "length_m": 1.0, "gravity_m_s2": 9.81}
    assert family.excess(seed) == physics.EXCESS == 0.01 and seed.difficulty == "medium"
    variant = LESSON.variant("default")
    assert variant is lab.VARIANTS["default"] and variant.task == SEED_TASK
    texts = json.dumps({"system": variant.system, "mcp": variant.system_for("mcp"), "task": variant.task,
                        "specs": variant.allowlist().specs()}, sort_keys=True, ensure_ascii=False)
    assert hashlib.sha256(texts.encode()).hexdigest() == SEED_TEXTS
    truth = answers_of_family()[SEED_ID]
    assert truth["crossing"]["value"] == physics.exact_crossing() and abs(truth["crossing"]["value"] - EXACT_CROSSING) <= 1e-12
    assert truth["crossing"]["shown"] == "22.8138" and truth["bracket"] == [22, 23]


def test_the_exact_ratio_against_tabulated_elliptic_integrals():
    """T/T0 = (2/π) K(m), m = sin²(θ0/2): K(1/2) = 1.8540746773013719 at 90 degrees and K(1/4) =
    1.6857503548125961 at 60 degrees (Abramowitz and Stegun, table 17.1)."""
    assert physics.exact_ratio(90) == pytest.approx(2 / math.pi * 1.8540746773013719, rel=1e-14)
    assert physics.exact_ratio(60) == pytest.approx(2 / math.pi * 1.6857503548125961, rel=1e-14)
    assert exact_ratio(90) == pytest.approx(physics.exact_ratio(90), rel=1e-14)


def test_every_answer_is_the_crossing_of_the_power_series_and_its_bracket():
    answers = answers_of_family()
    assert set(answers) == set(FAMILY)
    for instance in FAMILY.values():
        excess, precision, _, _ = parameters_of(instance)
        truth = answers[instance.id]
        assert truth["threshold"] == excess and truth["precision_deg"] == precision
        series = exact_crossing(excess, 1.0, 90.0)
        assert abs(truth["crossing"]["value"] - series) <= 1e-9, instance.id
        assert exact_ratio(truth["crossing"]["value"]) - 1 == pytest.approx(excess, rel=1e-12)
        low, high = truth["bracket"]
        assert low < truth["crossing"]["value"] < high and high == low + precision and (low / precision).is_integer()
        assert truth["crossing"]["shown"] == f"{truth['crossing']['value']:.4f}"


def test_the_family_s_answers_take_well_under_a_second():
    started = time.process_time()
    family.crossing.cache_clear()
    LESSON.part("answers").answers(list(FAMILY.values()))
    assert time.process_time() - started < 1.0


def test_each_instance_states_its_own_numbers_and_tools():
    for instance in DRAWN:
        excess, precision, length, g = parameters_of(instance)
        variant = LESSON.variant("default", instance.id)
        assert f"A pendulum of length {length:g} m under g = {g:g} m/s²" in variant.task
        assert f"by more than {100 * excess:g} % of the small-angle period (T/T0 − 1 > {excess:g})" in variant.task
        assert f"rises above {excess:g} exactly once" in variant.task
        tools = variant.allowlist().tools
        assert f"L = {length:g} m, g = {g:g} m/s²" in tools[lab.PERIOD_TOOL].description
        assert tools[lab.SMALL_ANGLE_TOOL].function() == {lab.PERIOD_KEY: small_angle(g, length)}
        assert variant.format1 is None and variant.budget == lab.BUDGET and variant.max_steps == lab.MAX_STEPS
    one = DRAWN[0]
    _, _, length, g = parameters_of(one)
    tool = LESSON.variant("default", one.id).allowlist().tools[lab.PERIOD_TOOL]
    assert tool.function(amplitude_deg=33, dt=0.01) == {lab.PERIOD_KEY: simulated_period(33, 0.01, g, length)}
    precisions = {i.parameters["precision_deg"]: LESSON.variant("default", i.id).task for i in DRAWN}
    assert "Answer to within half a degree" in precisions[0.5] and "low a multiple of 0.5 and high = low + 0.5" in precisions[0.5]
    assert "Answer to within two degrees" in precisions[2] and "low a multiple of 2 and high = low + 2" in precisions[2]
    assert "Answer to within one degree" in precisions[1] and "with high = low + 1 (any other pair" in precisions[1]


@pytest.mark.parametrize("precision, fields, refusal", [
    (0.5, {"low": 22.3, "high": 22.8}, "low must be a multiple of 0.5 and high must be low + 0.5 (a bracket of half a degree), got low 22.3 and high 22.8"),
    (0.5, {"low": 22.5, "high": 23.5}, "low must be a multiple of 0.5 and high must be low + 0.5 (a bracket of half a degree), got low 22.5 and high 23.5"),
    (0.5, {"low": 22.5, "high": 23}, None),
    (0.5, {"low": 22, "high": 22.5}, None),
    (2, {"low": 21, "high": 23}, "low must be a multiple of 2 and high must be low + 2 (a bracket of two degrees), got low 21 and high 23"),
    (2, {"low": 22, "high": 23}, "low must be a multiple of 2 and high must be low + 2 (a bracket of two degrees), got low 22 and high 23"),
    (2, {"low": 22.5, "high": 24.5}, "low must be an integer, got 22.5"),
    (2, {"low": 22, "high": 24}, None),
    (1, {"low": 22, "high": 24}, "high must be low + 1 (two adjacent whole degrees), got low 22 and high 24"),
])
def test_the_answer_tool_takes_only_the_form_of_the_precision(precision, fields, refusal):
    instance = next(i for i in DRAWN if i.parameters["precision_deg"] == precision)
    result = LESSON.variant("default", instance.id).allowlist().dispatch(ToolCall("a", ANSWER, fields))
    if refusal is None:
        assert result.ok and result.content == {"accepted": f"{fields['low']:g} to {fields['high']:g} degrees; the run has ended"}
    else:
        assert not result.ok and result.content == {"error": refusal}


@pytest.mark.parametrize("instance_id", chosen())
def test_a_drawn_instance_s_bracket_is_right_and_supported_and_the_next_one_is_wrong(instance_id):
    instance = FAMILY[instance_id]
    excess, precision, length, g = parameters_of(instance)
    low, high = answers_of_family()[instance_id]["bracket"]
    fine = small_angle(g, length) / 4000  # far finer than any instance needs
    calls = [(low, fine), (high, fine)]
    verdict, wrong = run_on(instance_id, calls, answer=(low, high))
    assert wrong is None and verdict["supported"] is True and verdict["instance"] == instance_id
    assert verdict["difficulty"] == instance.difficulty
    experiments = verdict["experiments"]
    assert experiments["bracket"] == [low, high] and experiments["verdict"] == judge.VERIFIED
    assert experiments["threshold"] == excess and experiments["precision_deg"] == precision
    assert experiments["small_angle_period_s"]["value"] == small_angle(g, length)  # this pendulum's T0, not the seed's
    for row in experiments["at_smallest"]:
        assert row["period_s"]["value"] == simulated_period(row["amplitude"], fine, g, length)
    above = (high, high + precision)
    verdict, wrong = run_on(instance_id, calls, answer=above)
    assert wrong == "the exact crossing lies outside its bracket" and verdict["supported"] is False
    below = (low - precision, low)
    verdict, wrong = run_on(instance_id, calls, answer=below)
    assert wrong == "the exact crossing lies outside its bracket" and verdict["supported"] is False
    verdict, wrong = run_on(instance_id, calls)
    assert wrong == "no answer" and verdict["supported"] is None


def test_a_coarse_step_on_a_hard_instance_supports_a_wrong_answer():
    """At half the steps per period the upper edge needs, the simulated excess there is still at most
    the threshold: the run's own periods bracket the crossing one bracket too high, and support it."""
    instance = next(i for i in DRAWN if i.difficulty == "hard")
    excess, precision, length, g = parameters_of(instance)
    low, high = answers_of_family()[instance.id]["bracket"]
    needed = family.assess_instance(instance)["needed_steps"]["high"]
    coarse = small_angle(g, length) / (needed / 2)
    verdict, wrong = run_on(instance.id, [(high, coarse), (high + precision, coarse)], answer=(high, high + precision))
    assert verdict["experiments"]["bracket"] == [high, high + precision] and verdict["experiments"]["verdict"] == judge.REFUTED
    assert wrong == "the exact crossing lies outside its bracket" and verdict["supported"] is True


def test_the_judge_divides_by_the_instance_s_small_angle_period():
    """The same calls judged as the seed's question (g 9.81, L 1, 1 %) put the crossing elsewhere or nowhere."""
    instance = next(i for i in DRAWN if abs(parameters_of(i)[2] / parameters_of(i)[3] - L / G) > 0.05)
    low, high = answers_of_family()[instance.id]["bracket"]
    _, _, length, g = parameters_of(instance)
    dt = small_angle(g, length) / 4000
    verdict, _ = run_on(instance.id, [(low, dt), (high, dt)], answer=(low, high))
    as_seed = judge.agent_conclusion(run_of(("the same calls, on the seed's pendulum", [(low, dt), (high, dt)])))
    assert verdict["supported"] and (not as_seed["checkable"] or as_seed["bracket"] != [low, high] or as_seed["verdict"] == judge.REFUTED)
    assert verdict["experiments"]["small_angle_period_s"]["value"] != small_angle()


def run_program(instance_id, plan, seed=0):
    name, program = LESSON.scripted("default", seed, instance_id, plan=plan)
    v = LESSON.variant("default", instance_id)
    transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
    run = recording_io.Recording(LESSON.name, "r", "default", "baseline", recording_io.provenance("scripted", name, "a test"),
                                 transcript, instance=instance_id)
    verdict = LESSON.judge([run], 1e-6)["r"]
    return transcript, verdict, LESSON.score(verdict, answers_of_family()[instance_id])


def test_the_careful_program_is_right_and_supported_on_every_instance_and_the_trivial_one_is_not():
    for instance_id in FAMILY:
        transcript, verdict, wrong = run_program(instance_id, agent.CAREFUL)
        assert wrong is None and verdict["supported"] is True, (instance_id, verdict["answer"], verdict["support"])
        assert verdict["calls"] <= lab.BUDGET and len(transcript.steps) <= lab.MAX_STEPS and transcript.finished
    trivial = {i: run_program(i, agent.TRIVIAL) for i in FAMILY}
    assert all(t.finished and v["calls"] == 0 and v["supported"] is False for t, v, _ in trivial.values())
    right = sorted(i for i, (_, _, wrong) in trivial.items() if wrong is None)
    from_20 = sorted(i for i, truth in answers_of_family().items() if truth["bracket"][0] == agent.GUESS)
    assert right == from_20 and len(right) <= 3  # the floor: its bracket from 20 degrees is right only where it holds the crossing


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_other_strategies_end_with_an_accepted_answer_on_every_instance(seed):
    plan = agent.strategy(seed)
    assert plan != agent.CAREFUL
    for instance_id in FAMILY:
        transcript, verdict, wrong = run_program(instance_id, None, seed)
        assert transcript.finished and verdict["answer"] is not None and verdict["calls"] <= lab.BUDGET, (plan, instance_id)
        if plan == "careless":
            assert wrong is not None and verdict["supported"] is False


def test_the_difficulty_is_the_step_the_upper_edge_needs():
    """Each instance's estimate of the steps per small-angle period its bracket's upper edge needs holds
    within 10 %: at 10 % fewer steps the simulated crossing lies above the right bracket, at 10 % more
    it lies in it. Easy needs fewer than 50, medium fewer than 200, hard more."""
    for instance in FAMILY.values():
        excess, _, length, g = parameters_of(instance)
        assessed = family.assess_instance(instance)
        needed, high = assessed["needed_steps"]["high"], assessed["bracket"][1]
        period = small_angle(g, length)
        assert simulated_period(high, period / (0.9 * needed), g, length) / period - 1 <= excess, instance.id
        assert simulated_period(high, period / (1.1 * needed), g, length) / period - 1 > excess, instance.id
        assert instance.difficulty == ("easy" if needed < 50 else "medium" if needed < 200 else "hard")


def test_the_edge_rule_holds_at_the_tool_s_smallest_step():
    """At dt 0.0005 s the simulation's error in the excess is below a quarter of the distance between
    the exact excess and the threshold at both edges of every instance's right bracket."""
    for instance in FAMILY.values():
        excess, _, length, g = parameters_of(instance)
        period = small_angle(g, length)
        for edge in answers_of_family()[instance.id]["bracket"]:
            exact = exact_ratio(edge) - 1
            simulated = simulated_period(edge, lab.DT_PARAMETER.low, g, length) / period - 1
            assert abs(simulated - exact) < abs(exact - excess) / 4, (instance.id, edge)


def test_questions_the_rule_excludes():
    """A crossing on a bracket's edge (within round-off), or one the tool's smallest step cannot place
    with that margin on a short pendulum under strong gravity, is never drawn."""
    on_the_edge = physics.exact_ratio(23) - 1
    assert family.assess(on_the_edge, 1, 1.0, 9.81)["difficulty"] is None
    assert family.assess(on_the_edge, 0.5, 1.0, 9.81)["difficulty"] is None
    close = physics.exact_ratio(23 - 1e-4) - 1  # 0.0001 degree below an edge
    assert family.assess(close, 1, 0.25, 25.0)["difficulty"] is None
    assert family.assess(close, 1, 4.0, 1.6)["difficulty"] == "hard"  # a longer period gives more steps at 0.0005 s
    assert family.assess(physics.EXCESS, 1, 1.0, 9.81)["difficulty"] == "medium"


def test_the_listing_and_the_texts_never_hold_the_answer():
    listing = json.dumps(listed_instances(LESSON), ensure_ascii=False)
    for instance in FAMILY.values():
        truth = answers_of_family()[instance.id]
        value, (low, high) = truth["crossing"]["value"], truth["bracket"]
        variant = LESSON.variant("default", instance.id)
        texts = [listing, variant.system, variant.task, json.dumps(variant.allowlist().specs(), ensure_ascii=False)]
        for text in texts:
            for secret in (f"{value:.2f}", f"{value:.4f}", f"{low:g} to {high:g}", f"{low:g} and {high:g}"):
                assert secret not in text, (instance.id, secret)
    assert "crossing" not in listing and "bracket" not in listing and "hidden" not in listing
