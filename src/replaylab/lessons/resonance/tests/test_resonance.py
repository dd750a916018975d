"""The resonance lesson's own tests (collected by pytest from the lesson's package).

The golden values are computed here, independently of the lesson's code: Runge-Kutta written out
step by step (not the period map the tool applies), the steady amplitude and its peak from an
independent integrator (scipy's DOP853 at a tolerance of 1e-11, run from rest until the start has died
out) and the textbook values of a resonance curve. Then the judge on right, wrong, supported and
unsupported answers and on no answer, the family's draw and rule of difficulty, and the careful and
the trivial program on every instance.
"""

import json
import math
import re
from functools import cache

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

from helpers import RECORDINGS
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.build import build
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.resonance import agent, exercises, family, judge, lab, peak, physics, scans
from replaylab.results import load

LESSON = registry.lesson("resonance")
SEED = family.SEED_ID
FAMILY = LESSON.instances


# ---------------------------------------------------------------------------------------------
# The formulas, written out here


def stepped_amplitude(frequency, periods, natural, damping, force, steps=physics.STEPS):
    """Classical Runge-Kutta from rest, one step at a time for every period, then the first
    harmonic of the displacement over the next period."""
    h = 2 * math.pi / frequency / steps

    def acceleration(x, v, t):
        return force * math.cos(frequency * t) - 2 * damping * v - natural**2 * x

    x = v = 0.0
    samples = []
    for n in range((periods + 1) * steps):
        if n >= periods * steps:
            samples.append(x)
        t = (n % steps) * h  # the force repeats every period
        k1x, k1v = v, acceleration(x, v, t)
        k2x, k2v = v + h / 2 * k1v, acceleration(x + h / 2 * k1x, v + h / 2 * k1v, t + h / 2)
        k3x, k3v = v + h / 2 * k2v, acceleration(x + h / 2 * k2x, v + h / 2 * k2v, t + h / 2)
        k4x, k4v = v + h * k3v, acceleration(x + h * k3x, v + h * k3v, t + h)
        x, v = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x), v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    a = 2 / steps * sum(s * math.cos(2 * math.pi * n / steps) for n, s in enumerate(samples))
    b = 2 / steps * sum(s * math.sin(2 * math.pi * n / steps) for n, s in enumerate(samples))
    return math.hypot(a, b)


def independent_amplitude(frequency, natural, damping, force):
    """The steady amplitude by scipy's DOP853 from rest, once the start has died out to e^-25,
    read off one more period as the root-mean-square displacement times √2."""
    period = 2 * math.pi / frequency
    settle = math.ceil(25 / damping / period) * period

    def rhs(t, y):
        return [y[1], force * math.cos(frequency * t) - 2 * damping * y[1] - natural**2 * y[0]]

    times = settle + np.linspace(0, period, 257)[:-1]
    solution = solve_ivp(rhs, (0, settle + period), [0.0, 0.0], method="DOP853", rtol=1e-11, atol=1e-13, t_eval=times)
    return math.sqrt(2 * np.mean(solution.y[0] ** 2))


# ---------------------------------------------------------------------------------------------
# The tool and the closed form


@pytest.mark.parametrize("frequency, periods, natural, damping, force", [
    (2.47, 3, 2.5, 0.25, 1.0), (2.5, 12, 2.5, 0.25, 1.0), (0.9, 5, 1.0, 0.01, 2.0), (6.1, 20, 5.2, 1.3, 0.4),
])
def test_the_tool_is_runge_kutta_stepped_from_rest(frequency, periods, natural, damping, force):
    tool = lab.tools(natural, damping, force)[0]
    got = tool.function(frequency_rad_s=frequency, periods=periods)[lab.KEY]
    assert got == pytest.approx(stepped_amplitude(frequency, periods, natural, damping, force), rel=1e-12)


def test_the_tool_settles_to_the_steady_state_of_runge_kutta():
    for frequency in (2.0, 2.47, 2.5, 3.0):
        settled = physics.steady_amplitude(frequency, physics.MAX_PERIODS, 2.5, 0.25, 1.0)
        assert settled == pytest.approx(physics.discrete_amplitude(frequency, 2.5, 0.25, 1.0), rel=1e-10)


def test_the_textbook_resonance_curve():
    """ω_r = ω0 √(1 − 2ζ²) and a peak F/ω0² · 1/(2ζ√(1 − ζ²)) (Q = 1/(2ζ)): for ζ = 0.1, 0.98995 ω0 and
    5.0252 times the static deflection; no peak above ζ = 1/√2."""
    assert physics.resonance(1.0, 0.1) == pytest.approx(0.98994949, rel=1e-8)
    assert physics.exact_amplitude(physics.resonance(1.0, 0.1), 1.0, 0.1, 1.0) == pytest.approx(5.02518908, rel=1e-8)
    assert physics.exact_amplitude(0.0, 1.0, 0.1, 1.0) == 1.0  # the static deflection F/ω0²
    with pytest.raises(ValueError, match="no resonance peak"):
        physics.resonance(1.0, 0.71)


@pytest.mark.parametrize("natural, damping, force", [(2.5, 0.25, 1.0), (1.0, 0.3, 2.0)])
def test_the_closed_form_peak_against_an_independent_integrator(natural, damping, force):
    """DOP853's steady amplitudes agree with F/√((ω0² − ω²)² + (2γω)²), and the frequency of their
    largest value with √(ω0² − 2γ²), to 1e-5 rad/s."""
    exact = physics.resonance(natural, damping)
    for frequency in (0.8 * exact, exact, 1.2 * exact):
        assert independent_amplitude(frequency, natural, damping, force) == pytest.approx(
            physics.exact_amplitude(frequency, natural, damping, force), rel=1e-7)
    found = minimize_scalar(lambda w: -independent_amplitude(w, natural, damping, force),
                            bounds=(0.97 * exact, 1.03 * exact), method="bounded", options={"xatol": 1e-7})
    assert found.x == pytest.approx(exact, abs=1e-5)


def test_the_simulated_peak_converges_to_the_closed_form_at_fourth_order():
    found = scans.convergence_scan()
    assert found["order"]["value"] == pytest.approx(4, abs=0.1)
    at_64 = next(r for r in found["rows"] if r["steps"] == physics.STEPS)
    assert at_64["error"] < 1e-5


def test_the_start_dies_out_as_the_envelope_and_the_step_s_error_remains():
    rows = scans.settling_scan()["rows"]
    assert rows[0]["error"] > 0.1 and all(r["error"] < 3e-6 for r in rows[30:])
    assert all(r["error"] < 2 * r["envelope"] for r in rows[:15])


def test_the_parabola_top_of_three_points():
    assert peak.parabola_top(1, 0, 2, 1, 3, 0) == 2
    assert peak.parabola_top(0, 1 - 0.3**2, 1, 1 - 0.7**2, 3, 1 - 2.7**2) == pytest.approx(0.3)  # y = 1 − (x − 0.3)²
    assert peak.located({1.0: 1, 2.0: 2})["reason"] == "2 frequencies measured, fewer than three"
    assert peak.located({1.0: 3, 2.0: 2, 3.0: 1})["reason"] == "the largest amplitude is at the lowest frequency measured, 1 rad/s"


# ---------------------------------------------------------------------------------------------
# The judge


def run_of(*messages, answer=None, instance=SEED):
    """A transcript of authored messages, each (text, [(frequency, periods), ...]), then "done", with
    the answer when one is given."""
    authored, number = [], 0
    for text, calls in messages:
        tool_calls = []
        for frequency, periods in calls:
            number += 1
            tool_calls.append(ToolCall(str(number), lab.TOOL, {"frequency_rad_s": frequency, "periods": periods}))
        authored.append(ModelMessage(text, tuple(tool_calls)))
    authored.append(ModelMessage("done", () if answer is None else (ToolCall("a", "answer", {"frequency_rad_s": answer}),)))
    v = LESSON.variant("default", instance)
    return loop.run(authored_client(authored), v.system, v.task, v.allowlist(), v.max_steps)


def judged(transcript, instance=SEED):
    run = recording_io.Recording(LESSON.name, "run", "default", "g", recording_io.provenance("authored", "m", "a test"), transcript,
                                 instance=instance)
    verdict = LESSON.judge([run], 1e-6)["run"]
    return verdict, LESSON.score(verdict, LESSON.answers([instance])[instance])


NEAR_PEAK = [(2.47, 500), (2.475, 500), (2.48, 500)]


def test_the_reference_run_is_right_and_supported_and_a_changed_oscillator_is_caught():
    reference = recording_io.load(RECORDINGS / LESSON.name / "reference.json")
    assert reference.label == "Authored example, not a recorded model run" and reference.instance == SEED
    verdict = LESSON.judge([reference], 1e-6)["reference"]
    assert LESSON.score(verdict, LESSON.answers([SEED])[SEED]) is None and verdict["supported"] is True
    conclusion = verdict["experiments"]
    assert conclusion["periods"] == 160 and conclusion["best"] == 2.475 and conclusion["within"]
    assert conclusion["top"]["value"] == pytest.approx(2.4748634, abs=1e-6)
    assert verdict["changed_oscillator"]["caught"] and verdict["changed_oscillator"]["message"] == 1
    assert LESSON.verdict_line(reference).startswith("answer 2.475 rad/s: right (the exact peak ω_r = √(ω0² − 2γ²) is at 2.47487")


def test_an_answer_within_the_tolerance_is_right_and_one_outside_is_wrong():
    exact = physics.resonance(lab.NATURAL, lab.DAMPING)
    for answer, wrong in ((2.475, None), (exact + 0.0099, None), (exact - 0.0099, None), (2.5, judge.OUTSIDE),
                          (2.4875, judge.OUTSIDE), (exact + 0.0101, judge.OUTSIDE)):
        assert judged(run_of(("near", NEAR_PEAK), answer=answer))[1] == wrong, answer


def test_supported_means_the_run_s_own_peak_lies_within_the_tolerance_of_its_answer():
    verdict, wrong = judged(run_of(("near", NEAR_PEAK), answer=2.475))
    assert wrong is None and verdict["supported"] is True and verdict["experiments"]["best"] == 2.475
    verdict, wrong = judged(run_of(("near", NEAR_PEAK), answer=2.49))
    assert wrong == judge.OUTSIDE and verdict["supported"] is False
    assert verdict["support"].endswith("more than 0.01 rad/s from its answer")


def test_a_short_settle_supports_a_wrong_answer_though_it_replays():
    """After 4 periods the start has not died out: the run's own amplitudes put the peak near 2.457
    rad/s, further than the tolerance from ω_r, and support the answer they point at."""
    short = [("short", [(2.44 + 0.005 * k, 4) for k in range(4)]), ("short", [(2.46 + 0.005 * k, 4) for k in range(4)])]
    top = judged(run_of(*short))[0]["experiments"]["top"]["value"]
    verdict, wrong = judged(run_of(*short, answer=round(top, 4)))
    assert wrong == judge.OUTSIDE and verdict["supported"] is True and not verdict["experiments"]["within"]


def test_the_judge_uses_the_largest_number_of_periods_only():
    transcript = run_of(("short", [(2.44, 4), (2.46, 4), (2.48, 4)]), ("long", NEAR_PEAK))
    assert judge.agent_conclusion(transcript, LESSON.instance(SEED))["periods"] == 500
    one_long = run_of(("short", [(2.44, 4), (2.46, 4), (2.48, 4)]), ("one long", [(2.475, 900)]))
    conclusion = judge.agent_conclusion(one_long, LESSON.instance(SEED))
    assert not conclusion["checkable"] and conclusion["reason"] == (
        "at the largest number of periods it used (900): 1 frequency measured, fewer than three")


@pytest.mark.parametrize("messages, reason", [
    ([], "the agent made no accepted steady_amplitude call"),
    ([("rising", [(2.2, 500), (2.3, 500), (2.4, 500)])], "the largest amplitude is at the highest frequency measured, 2.4 rad/s"),
    ([("refused", [(0.0, 500), (2.47, 0)])], "the agent made no accepted steady_amplitude call"),
])
def test_runs_that_locate_no_peak_support_nothing_and_no_answer_is_not_right(messages, reason):
    verdict, wrong = judged(run_of(*messages, answer=2.475))
    assert wrong is None and verdict["supported"] is False and verdict["support"].endswith(reason)
    verdict, wrong = judged(run_of(*messages))
    assert wrong == "no answer" and verdict["supported"] is None and verdict["answer"] is None


def test_an_answer_outside_the_stated_range_is_refused_and_the_run_goes_on():
    v = LESSON.variant("default")
    result = v.allowlist().dispatch(ToolCall("1", "answer", {"frequency_rad_s": 3.5}))
    assert not result.ok and result.content["error"] == "frequency_rad_s must be between 2 and 3, got 3.5"


# ---------------------------------------------------------------------------------------------
# The family


@cache
def answers_of_family():
    return LESSON.answers()


def test_the_draw_is_deterministic_with_the_seed_first_and_sixty_drawn():
    again = family.instances()
    assert [(i.id, i.difficulty, i.parameters, i.hidden) for i in again] == [
        (i.id, i.difficulty, i.parameters, i.hidden) for i in FAMILY.values()]
    assert again[0].id == SEED and again[0].seed and len(again) - 1 == 3 * family.PER_LEVEL
    counts = {level: sum(i.difficulty == level for i in again[1:]) for level in DIFFICULTIES}
    assert counts == {level: family.PER_LEVEL for level in DIFFICULTIES}


def test_the_drawn_numbers_lie_in_the_stated_ranges_and_the_range_holds_the_peak():
    for instance in list(FAMILY.values())[1:]:
        natural, damping, force = family.oscillator(instance)
        low, high, tolerance = family.question(instance)
        assert 0.5 <= natural <= 8 and 0.005 <= damping / natural <= 0.3 + 1e-3 and 0.2 <= force <= 5
        assert tolerance in family.TOLERANCES and low < family.resonance(instance) < high
        assert lab.FREQUENCY.low <= low and high <= lab.FREQUENCY.high


def test_the_difficulty_is_the_periods_the_start_needs_and_the_step_never_decides():
    for instance in FAMILY.values():
        natural, damping, _ = family.oscillator(instance)
        tolerance = family.question(instance)[2]
        needed = physics.periods_needed(natural, damping, tolerance)
        assert instance.difficulty == ("easy" if needed < 20 else "medium" if needed < 80 else "hard")
        assert family.SAFETY * needed <= physics.MAX_PERIODS or instance.seed
        assert abs(physics.discrete_resonance(natural, damping) - family.resonance(instance)) < tolerance / 100


def test_oscillators_the_rule_excludes():
    """One whose start needs more than a quarter of the tool's periods is never drawn (a light damping
    and a tolerance far inside the peak's width); the seeds' is easy."""
    assert family.assess(8.0, 0.04, 0.001)["difficulty"] is None  # 257 periods
    assert family.assess(8.0, 0.04, 0.005)["difficulty"] == "hard"  # 155 periods
    assert family.assess(lab.NATURAL, lab.DAMPING, lab.TOLERANCE) == {
        "periods_needed": pytest.approx(11.26, abs=0.01), "resonance": physics.resonance(lab.NATURAL, lab.DAMPING),
        "simulated_resonance": pytest.approx(2.4748717, abs=1e-7), "difficulty": "easy"}


def test_every_answer_is_the_closed_form_of_the_instance_s_oscillator():
    for instance_id, truth in answers_of_family().items():
        natural, damping, _ = family.oscillator(FAMILY[instance_id])
        assert truth["resonance"]["value"] == math.sqrt(natural**2 - 2 * damping**2)
        assert truth["tolerance_rad_s"] == family.question(FAMILY[instance_id])[2]


def numbers_in(text):
    """Every number a text spells (2.5, 0.25, 1e-06), as floats."""
    return {float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?", text)}


def test_the_agent_never_reads_the_oscillator_or_the_answer():
    """ω0, γ and ω_r (to 3 decimals or more) are no number of a task, a system text, a tool's
    description or bounds, nor of the listing `replaylab tasks` prints."""
    listing = json.dumps(listed_instances(LESSON), ensure_ascii=False)
    assert "natural" not in listing and "damping" not in listing and "oscillator" not in listing
    for instance in FAMILY.values():
        natural, damping, _ = family.oscillator(instance)
        exact = answers_of_family()[instance.id]["resonance"]["value"]
        variant = LESSON.variant("default", instance.id)
        spelled = numbers_in(variant.system + variant.task + json.dumps(variant.allowlist().specs(), ensure_ascii=False))
        spelled |= numbers_in(json.dumps(listed_instances(LESSON)[list(FAMILY).index(instance.id)]))
        assert natural not in spelled and damping not in spelled, instance.id
        assert not {round(exact, 3), round(exact, 4), round(exact, 5)} & spelled, instance.id


def run_program(instance_id, plan, seed=0):
    name, program = LESSON.scripted("default", seed, instance_id, plan)
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
    trivial = [run_program(i, agent.TRIVIAL) for i in FAMILY]
    assert all(t.finished and v["calls"] == 0 and v["supported"] is False for t, v, _ in trivial)
    assert sum(wrong is None for *_, wrong in trivial) <= 3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_other_strategies_end_with_an_answer_and_some_are_wrong(seed):
    plan = agent.strategy(seed)
    outcomes = [run_program(i, None, seed) for i in FAMILY]
    assert all(t.finished and v["answer"] is not None and v["calls"] <= lab.BUDGET for t, v, _ in outcomes), plan
    wrong = [w for *_, w in outcomes if w is not None]
    assert wrong, plan
    if plan == "careless":
        assert len(wrong) == len(outcomes) and not any(v["supported"] for _, v, _ in outcomes)
    if plan == "short-settle":  # wrong where the start needs many periods, and supported there by its own amplitudes
        hard = [(v, w) for (_, v, w), i in zip(outcomes, FAMILY.values()) if i.difficulty == "hard"]
        assert sum(w is not None for _, w in hard) >= 15 and any(v["supported"] and w for v, w in hard)


# ---------------------------------------------------------------------------------------------
# The exercise and the page


def test_the_exercise_finds_fewer_periods_than_the_rule_asks():
    found = exercises.fewest_periods()
    assert found["fewest"] == 6 and found["rule"]["value"] == pytest.approx(11.26, abs=0.01)
    assert all(row["within"] for row in found["rows"][5:]) and not found["rows"][4]["within"]


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
    assert "**Run `reference` answered: the steady amplitude is largest at 2.475 rad/s.** **The agent's answer is right, and its own experiments support it.**" in page
    assert "that is **2.47487 rad/s**" in page and "from **6 periods** on" in page
