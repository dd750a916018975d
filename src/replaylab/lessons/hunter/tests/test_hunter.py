"""The hunter lesson's own tests (collected by pytest from the lesson's package)."""

import copy
import dataclasses
import json
import math
from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

from helpers import RECORDINGS
from replaylab.agents import loop, recording
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.build import build, build_lesson
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.hunter import agent, answers, drift_table, family, judge, lab, scans
from replaylab.physics.drift import max_energy_drift
from replaylab.physics.integrators import STEPPERS
from replaylab.results import load, strict

LESSON = registry.lesson("hunter")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    build([LESSON.name], recordings=RECORDINGS, results=folder, progress=lambda text: None)
    return load(folder / LESSON.name / "results.json")


def test_an_experiment_of_one_period_is_one_period(results):
    data = copy.deepcopy(results)
    (verdict,) = [v["experiments"] for v in data["verdicts"].values() if v["experiments"]["outcome"] == "inconclusive"]
    verdict["closest"]["periods"] = 1
    page = LESSON.page(strict(data, "x"))
    assert f"{verdict['closest']['steps_per_period']} steps per period, 1 period:" in page
    assert "1 periods" not in page


def test_the_evidence_of_a_one_period_counterexample_says_one_period():
    """A hunt whose counterexample runs one period: the judge's evidence label and the answer as
    the verdict line shows it say "1 period"."""
    claim = next(c for c in lab.CLAIMS.values() if c.fixed["method"] == "symplectic Euler")
    arguments = {**claim.fixed, "steps_per_period": 16, "periods": 1}
    variant = LESSON.variant(claim.name)
    answer = ToolCall("2", ANSWER, {"outcome": "counterexample", **arguments})
    client = authored_client([ModelMessage("one period", (ToolCall("1", lab.TOOL_NAME, arguments),)), ModelMessage("done", (answer,))])
    transcript = loop.run(client, variant.system, variant.task, variant.allowlist(), variant.max_steps)
    verdict = judge.hunt_verdict(transcript, claim)
    assert verdict["outcome"] == "counterexample"
    assert verdict["evidence"].endswith("symplectic Euler, 16 steps per period, 1 period")
    run = recording.Recording(LESSON.name, "one", claim.name, "g", recording.provenance("authored", "m", "test"), transcript)
    assert LESSON.verdict_line(run).startswith("answer counterexample symplectic Euler, 16 steps per period, 1 period: right")


# ---------------------------------------------------------------------------------------------
# The family: its draw, its answers, its physics, its careful and trivial programs

STEPS = np.arange(4, 201)
PERIODS = np.arange(1, 51)[:, None]
DRAWN = [i for i in LESSON.instances.values() if not i.seed]
TRUTH = LESSON.answers()


def drawn(holds, method=None):
    """The first drawn instance whose claim holds (or not), about a method if given."""
    return next(i for i in DRAWN if TRUTH[i.id]["holds"] == holds and method in (None, i.parameters["method"]))


def hunt(instance, *messages):
    """A run of an instance through the real loop and allowlist: each message a list of calls, the
    last one the answer's fields."""
    (variant,) = LESSON.instance_variants(instance.id).values()
    calls = [ModelMessage("", tuple(ToolCall(str(i), lab.TOOL_NAME, a) for i, a in enumerate(batch, 1))) for batch in messages[:-1]]
    calls.append(ModelMessage("", (ToolCall("a", ANSWER, messages[-1]),)))
    transcript = loop.run(authored_client(calls), variant.system, variant.task, variant.allowlist(), variant.max_steps)
    run = recording.Recording(LESSON.name, "r", variant.name, "g", recording.provenance("authored", "m", "test"), transcript,
                              instance=instance.id)
    verdict = LESSON.judge([run], 1e-6)["r"]
    return verdict, LESSON.score(verdict, TRUTH[instance.id])


def experiment(instance, n, p):
    return {"method": instance.parameters["method"], "steps_per_period": n, "periods": p}


def counterexample(instance, n, p):
    return {"outcome": "counterexample", **experiment(instance, n, p)}


# The physics: every drift of the table against a closed form (the literature's modified energies)


def test_explicit_euler_and_runge_kutta_4_scale_the_energy_by_a_fixed_factor_each_step():
    """On the linear oscillator, explicit Euler multiplies the energy by 1 + (w dt)^2 each step and
    RK4 by |R(i w dt)|^2 = 1 - y^6/72 + y^8/576 (the stability polynomial): the drift after N
    steps is the factor to the N, minus one (RK4 loses energy, so its largest error is at the end)."""
    y = 2 * np.pi / STEPS
    euler = (1 + y**2) ** (STEPS * PERIODS) - 1
    assert np.max(np.abs(drift_table.table("explicit Euler") / euler - 1)) < 1e-11
    rk4 = -np.expm1(STEPS * PERIODS * np.log1p(-(y**6) / 72 + y**8 / 576))
    table = drift_table.table("Runge-Kutta 4")
    assert np.max(np.abs(table - rk4)) < 1e-11
    assert np.max(np.abs(table[rk4 > 1e-3] / rk4[rk4 > 1e-3] - 1)) < 1e-9


def test_the_symplectic_methods_stay_below_the_bound_of_their_modified_energy():
    """Symplectic Euler conserves H~ = (v^2 + w^2 x^2 - w^2 h x v) / 2 and velocity Verlet
    (v^2 / (1 - (w h / 2)^2) + w^2 x^2) / 2, so from rest their |E/E0 - 1| never exceeds
    pi / (n - pi) and (pi / n)^2, and comes within a few per mille of it over 50 periods."""
    for method, bound in (("symplectic Euler", np.pi / (STEPS - np.pi)), ("velocity Verlet", (np.pi / STEPS) ** 2)):
        table = drift_table.table(method)
        assert np.all(table <= bound * (1 + 1e-9)), method
        assert np.all(table[-1] >= 0.99 * bound), method
    assert scans.worst_case(lab.CLAIMS["velocity-verlet"])["value"] == pytest.approx((math.pi / 16) ** 2, rel=1e-6)


def test_the_table_is_the_one_run_result_bit_for_bit_and_its_bounds_are_the_tools():
    assert (drift_table.STEPS, drift_table.PERIODS) == (range(lab.PARAMETERS[1].low, lab.PARAMETERS[1].high + 1),
                                                      range(lab.PARAMETERS[2].low, lab.PARAMETERS[2].high + 1))
    for method in STEPPERS:
        for n, p in ((4, 1), (4, 50), (16, 50), (37, 13), (200, 1), (200, 7)):
            assert drift_table.drift(method, n, p) == max_energy_drift(method, n, p), (method, n, p)
            tool = lab.drift_tool().function(method=method, steps_per_period=n, periods=p)
            assert tool[lab.RESULT_KEY] == drift_table.drift(method, n, p)


def test_the_drift_grows_with_the_step_and_the_run_for_every_method_over_the_tools_bounds():
    """What the careful program relies on: a domain's worst case is its corner (fewest steps, most periods)."""
    for method in STEPPERS:
        table = drift_table.table(method)
        assert np.all(np.diff(table, axis=0) >= 0), method  # longer runs: never smaller
        assert np.all(np.diff(table, axis=1) <= 0), method  # more steps per period: never larger


def test_every_run_the_tool_allows_has_a_finite_energy_and_one_that_does_not_is_infinite_in_the_table():
    """Explicit Euler's worst run in the tool's bounds is about 1e108 (finite); past about 143 periods
    at 4 steps per period its energy overflows, which the table records as infinity and the tool
    refuses as an error."""
    assert all(np.isfinite(drift_table.table(method)).all() for method in STEPPERS)
    assert 1e107 < drift_table.drift("explicit Euler", 4, 50) < 1e109
    beyond = drift_table.simulate("explicit Euler", [4, 8], range(140, 151))
    assert np.isinf(beyond[:, 0]).any() and np.isfinite(beyond[0, 0]) and np.isfinite(beyond[:, 1]).all()
    assert beyond[0, 0] == max_energy_drift("explicit Euler", 4, 140)


def test_the_tool_refuses_a_run_whose_energy_is_not_finite(monkeypatch):
    monkeypatch.setattr(drift_table, "drift", lambda method, n, p: math.inf)
    allowlist = lab.all_tools()
    result = allowlist.dispatch(ToolCall("1", lab.TOOL_NAME, {"method": "explicit Euler", "steps_per_period": 4, "periods": 50}))
    assert not result.ok and "not finite" in result.content["error"]


# The draw


def test_the_draw_is_the_same_twice_with_the_seeds_first():
    first, second = family.instances(), family.instances()
    assert first == second
    assert [i.id for i in first[:2]] == ["hunter-seed-symplectic-euler", "hunter-seed-velocity-verlet"]
    assert all(i.seed for i in first[:2]) and not any(i.seed for i in first[2:])
    assert [i.id for i in first[2:]] == [f"hunter-{n:03d}" for n in range(1, len(first) - 1)]
    assert len(first) - 2 == family.DRAWN >= 60
    assert all(list(i.parameters) == list(family.PARAMETERS) for i in first)


def test_the_seeds_keep_their_variants_and_claims_and_get_their_levels_by_the_rule():
    for name, claim in lab.CLAIMS.items():
        seed = LESSON.instance(f"hunter-seed-{name}")
        assert LESSON.instance_variants(seed.id) == {name: lab.VARIANTS[name]}
        assert lab.claim_of(seed) is claim
        p = seed.parameters  # the claim the generator writes from the seed's parameters is the seed's own, word for word
        ranges = {key: (p[low], p[high]) for key, (low, high) in lab.RANGES.items()}
        assert lab.claim(name, p["method"], p["limit_percent"], ranges) == claim
    assert LESSON.instance("hunter-seed-symplectic-euler").difficulty == "easy"  # 27 % of its domain breaks it
    assert TRUTH["hunter-seed-symplectic-euler"]["breaking"] == 2500 and TRUTH["hunter-seed-symplectic-euler"]["experiments"] == 9250
    assert LESSON.instance("hunter-seed-velocity-verlet").difficulty == "hard"  # its worst case 3.6 % below the limit


def test_the_seeds_reference_runs_keep_their_verdict_lines():
    lines = {path.stem: LESSON.verdict_line(recording.load(path)) for path in sorted((RECORDINGS / "hunter").glob("*.json"))}
    assert lines == {
        "symplectic-euler": "answer counterexample symplectic Euler, 64 steps per period, 20 periods: right (the build ran it "
                            "again: 0.0515672 against the limit 0.05, inside the claim's domain); supported: the hunt ran its "
                            "counterexample and saw it break the claim (0.0515672)",
        "velocity-verlet": "answer none found: right (the build's scan of the whole domain finds at most 0.0385531 (16 steps "
                           "per period, 50 periods) against the limit 0.04); supported: none of the hunt's 8 counted "
                           "experiments broke the claim",
    }


def test_each_instance_is_one_claim_within_the_stated_ranges_and_its_task_states_its_numbers():
    for instance in DRAWN:
        p = instance.parameters
        claim = lab.claim_of(instance)
        (variant,) = LESSON.instance_variants(instance.id).values()
        assert variant.name == lab.variant_name(p["method"]) and p["method"] in STEPPERS
        assert 4 <= p["steps_per_period_low"] <= 150 and p["steps_per_period_low"] + 9 <= p["steps_per_period_high"] <= 200
        assert 1 <= p["periods_low"] <= 30 and p["periods_low"] < p["periods_high"] <= 50
        assert claim.limit == lab.limit_of(p["limit_percent"]) >= family.SMALLEST_LIMIT
        assert len(Decimal(lab.percent_text(p["limit_percent"])).as_tuple().digits) <= family.DIGITS
        assert (f"within {lab.percent_text(p['limit_percent'])} % of its initial value for every run of "
                f"{p['steps_per_period_low']} to {p['steps_per_period_high']} steps per period and "
                f"{p['periods_low']} to {p['periods_high']} periods.") in variant.task
        assert variant.budget == lab.BUDGET and variant.answer is lab.ANSWER and variant.max_steps == lab.MAX_STEPS
        assert family.WORST[0] <= TRUTH[instance.id]["worst"]["value"] <= family.WORST[1]


def test_the_task_texts_differ_only_by_the_claim():
    """Every task is the seeds' words around its own claim: nothing in it but the numbers and the
    method can tell one instance from another."""
    shapes = {LESSON.instance_variants(i.id)[lab.claim_of(i).fixed["method"].lower().replace(" ", "-")].task
              .replace(lab.claim_of(i).statement, "CLAIM") for i in LESSON.instances.values()}
    assert len(shapes) == 1
    systems = {v.system for i in LESSON.instances.values() for v in LESSON.instance_variants(i.id).values()}
    assert len(systems) == 1


def test_about_half_the_claims_hold_at_every_level_and_for_every_method():
    holds = Counter((i.difficulty, TRUTH[i.id]["holds"]) for i in DRAWN)
    for level in DIFFICULTIES:
        assert holds[(level, True)] == holds[(level, False)] == family.DRAWN // 6
    by_method = Counter((i.parameters["method"], TRUTH[i.id]["holds"]) for i in DRAWN)
    assert all(by_method[(m, True)] == by_method[(m, False)] == family.DRAWN // 8 for m in STEPPERS)
    every = list(LESSON.instances.values())
    assert abs(sum(TRUTH[i.id]["holds"] for i in every) / len(every) - 0.5) < 0.05


def test_the_difficulty_is_the_share_that_breaks_a_false_claim_or_the_margin_of_a_true_one():
    for instance in LESSON.instances.values():
        truth = TRUTH[instance.id]
        if truth["holds"]:
            assert truth["breaking"] == 0
            value, bands = 1 - truth["worst"]["value"] / truth["limit"], family.MARGIN
        else:
            assert truth["breaking"] > 0
            value, bands = truth["breaking"] / truth["experiments"], family.SHARE
        low, high = bands[instance.difficulty]
        assert low <= value < high or (instance.difficulty == "easy" and value >= low), instance.id
        claim = lab.claim_of(instance)
        assert family.level(claim.fixed["method"], claim.ranges, claim.limit) == instance.difficulty


def test_no_experiment_of_a_domain_lies_within_round_off_of_its_limit():
    for instance in LESSON.instances.values():
        claim = lab.claim_of(instance)
        drifts = drift_table.block(claim.fixed["method"], claim.ranges)
        assert np.min(np.abs(drifts - claim.limit)) > family.ROUND_OFF * claim.limit, instance.id


def test_no_claim_of_100_percent_or_more_about_a_method_that_never_reaches_it():
    for instance in DRAWN:
        if instance.parameters["limit_percent"] >= 100:
            assert instance.parameters["method"] in ("explicit Euler", "symplectic Euler")


def test_the_listing_never_holds_the_answer():
    listed = listed_instances(LESSON)
    text = json.dumps(listed)
    for word in ("holds", "worst", "breaking", "true", "false", "counterexample"):
        assert word not in text.lower().replace('"seed": true', "").replace('"seed": false', "")
    for item in listed:
        truth = TRUTH[item["instance"]]
        assert set(item["parameters"]) == set(family.PARAMETERS)
        assert truth["worst"]["value"] not in item["parameters"].values()
        assert item["variants"] == [lab.variant_name(item["parameters"]["method"])]


# The build's answers, and how a run is judged against them


def test_the_answer_scans_the_whole_domain():
    """The worst case is the largest of every experiment of the domain (here it is the corner, and a
    run of its own gives the same bits), and a claim whose limit is its worst case exactly holds."""
    for number, instance in enumerate(LESSON.instances.values()):
        claim, truth = lab.claim_of(instance), TRUTH[instance.id]
        method, (low_n, high_n), (low_p, high_p) = claim.fixed["method"], claim.ranges["steps_per_period"], claim.ranges["periods"]
        every = [drift_table.drift(method, n, p) for n in range(low_n, high_n + 1) for p in range(low_p, high_p + 1)]
        assert truth["worst"]["value"] == max(every) and truth["experiments"] == len(every)
        assert (truth["worst"]["steps_per_period"], truth["worst"]["periods"]) == (low_n, high_p)
        assert truth["breaking"] == sum(v > claim.limit for v in every) and truth["holds"] == (truth["breaking"] == 0)
        if number % 8 == 0:  # one run of its own (Python floats, slower), for some
            assert max_energy_drift(method, low_n, high_p) == truth["worst"]["value"]
        assert answers.truth_of(dataclasses.replace(claim, limit=truth["worst"]["value"]))["holds"]


def test_a_drawn_false_claim_its_counterexample_is_right_and_none_found_is_wrong():
    instance = drawn(False)
    worst = TRUTH[instance.id]["worst"]
    n, p = worst["steps_per_period"], worst["periods"]
    verdict, wrong = hunt(instance, [experiment(instance, n, p)], counterexample(instance, n, p))
    assert wrong is None and verdict["supported"] is True and verdict["instance"] == instance.id
    assert verdict["difficulty"] == instance.difficulty and verdict["answer_check"]["breaks"]
    verdict, wrong = hunt(instance, [experiment(instance, n + 1, p)], {"outcome": "none found"})
    if drift_table.drift(instance.parameters["method"], n + 1, p) > lab.claim_of(instance).limit:
        assert wrong == "none found, but the claim's domain has a counterexample" and verdict["supported"] is False
    else:
        assert wrong == "none found, but the claim's domain has a counterexample" and verdict["supported"] is True
    unrun, wrong = hunt(instance, counterexample(instance, n, p))  # right, but its own experiments do not show it
    assert wrong is None and unrun["supported"] is False


def test_a_drawn_true_claim_none_found_is_right_and_its_worst_case_is_no_counterexample():
    instance = drawn(True)
    worst = TRUTH[instance.id]["worst"]
    n, p = worst["steps_per_period"], worst["periods"]
    verdict, wrong = hunt(instance, [experiment(instance, n, p)], {"outcome": "none found"})
    assert wrong is None and verdict["supported"] is True
    verdict, wrong = hunt(instance, [experiment(instance, n, p)], counterexample(instance, n, p))
    assert wrong == "its counterexample does not break the claim" and verdict["supported"] is False
    verdict, wrong = hunt(instance, {"outcome": "none found"})  # right, but no experiment supports it
    assert wrong is None and verdict["supported"] is False


def test_a_counterexample_outside_a_drawn_domain_is_wrong_even_when_its_drift_is_above_the_limit():
    def outside(instance):
        claim = lab.claim_of(instance)
        p = claim.ranges["periods"][1]
        n = claim.ranges["steps_per_period"][0] - 1
        return (n, p) if n >= 4 and drift_table.drift(claim.fixed["method"], n, p) > claim.limit else None

    instance = next(i for i in DRAWN if TRUTH[i.id]["holds"] and outside(i))
    verdict, wrong = hunt(instance, [experiment(instance, *outside(instance))], counterexample(instance, *outside(instance)))
    assert wrong == "its counterexample lies outside the claim's domain" and not verdict["answer_check"]["in_domain"]
    assert verdict["answer_check"]["value"]["value"] > lab.claim_of(instance).limit
    assert verdict["experiments"]["tested"] == 0 and verdict["supported"] is False


def test_any_breaking_experiment_of_a_drawn_claim_is_right_not_only_the_worst():
    instance = next(i for i in DRAWN if TRUTH[i.id]["breaking"] >= 2)
    claim = lab.claim_of(instance)
    (low_n, high_n), (low_p, high_p) = claim.ranges["steps_per_period"], claim.ranges["periods"]
    other = next((n, p) for p in range(high_p, low_p - 1, -1) for n in range(low_n, high_n + 1)
                 if (n, p) != (low_n, high_p) and drift_table.drift(claim.fixed["method"], n, p) > claim.limit)
    verdict, wrong = hunt(instance, [experiment(instance, *other)], counterexample(instance, *other))
    assert wrong is None and verdict["supported"] is True


def test_a_drawn_hunt_is_judged_against_its_own_claim_not_the_seeds():
    instance = drawn(True, "velocity Verlet")
    claim = lab.claim_of(instance)
    assert claim.name == instance.id and claim != lab.CLAIMS["velocity-verlet"]
    verdict, _ = hunt(instance, [experiment(instance, *claim.ranges["steps_per_period"][:1], claim.ranges["periods"][1])],
                      {"outcome": "none found"})
    assert verdict["experiments"]["claim"] == instance.id and verdict["experiments"]["limit"] == claim.limit
    assert verdict["experiments"]["statement"] == claim.statement and "stricter_claim" not in verdict


# The careful and the trivial program, as the build runs them


def scripted(instance_id, plan):
    (variant,) = LESSON.instance_variants(instance_id)
    name, program = LESSON.scripted(variant, 0, instance_id, plan=plan)
    v = LESSON.variant(variant, instance_id)
    transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
    run = recording.Recording(LESSON.name, "b", variant, "baseline", recording.provenance("scripted", name, "test"), transcript,
                              instance=instance_id)
    verdict = LESSON.judge([run], 1e-6)["b"]
    return verdict, LESSON.score(verdict, TRUTH[instance_id])


def test_the_careful_program_is_right_on_every_instance_and_its_first_experiment_decides():
    for instance in LESSON.instances.values():
        verdict, wrong = scripted(instance.id, agent.CAREFUL)
        assert wrong is None, (instance.id, wrong)
        assert verdict["supported"] is True and 1 <= verdict["calls"] <= lab.BUDGET
        first = verdict["experiments"]["counted"][0]
        worst = TRUTH[instance.id]["worst"]
        assert (first["steps_per_period"], first["periods"]) == (worst["steps_per_period"], worst["periods"])


def test_the_trivial_program_is_right_exactly_on_the_claims_that_hold():
    right = {i: scripted(i, agent.TRIVIAL)[1] is None for i in LESSON.instances}
    assert right == {i: TRUTH[i]["holds"] for i in LESSON.instances}
    assert sum(right.values()) == 37 and len(right) == 74


def test_the_other_strategies_run_on_every_instance_within_the_budget():
    for instance in DRAWN[::7]:
        for plan in agent.STRATEGIES:
            verdict, _ = scripted(instance.id, plan)
            assert verdict["answer"] is not None and verdict["calls"] <= lab.BUDGET, (instance.id, plan)


# The pages, tables and figures with runs of drawn instances


def test_the_page_tables_and_figure_take_runs_of_drawn_instances(tmp_path):
    """The seeds' reference runs and careful runs of two drawn claims (of the seeds' methods, whose
    variant names the seeds' allowlists hold), built as the build does."""
    sources = sorted((RECORDINGS / "hunter").glob("*.json"))
    for instance in (drawn(False, "symplectic Euler"), drawn(True, "velocity Verlet")):
        (variant,) = LESSON.instance_variants(instance.id)
        name, program = LESSON.scripted(variant, 0, instance.id, plan=agent.CAREFUL)
        v = LESSON.variant(variant, instance.id)
        transcript = loop.run(ScriptedClient(program, name), v.system, v.task, v.allowlist(), v.max_steps)
        path = tmp_path / "runs" / f"careful-{instance.id}.json"
        recording.save(recording.Recording(LESSON.name, path.stem, variant, "baseline",
                                           recording.provenance("scripted", name, "test"), transcript, instance=instance.id), path)
        sources.append(path)
    folder = tmp_path / "hunter"
    build_lesson(LESSON.name, sources, folder, 1e-6, progress=lambda text: None)
    data = load(folder / "results.json")
    page = (folder / "index.md").read_text()
    for instance in (drawn(False, "symplectic Euler"), drawn(True, "velocity Verlet")):
        assert lab.claim_of(instance).statement in page
        verdict = data["verdicts"][f"careful-{instance.id}"]
        assert verdict["instance"] == instance.id and data["answers"][instance.id]["holds"] == TRUTH[instance.id]["holds"]
    assert "stricter" not in json.dumps({k: v for k, v in data["verdicts"].items() if k.startswith("careful-")})
    assert (folder / "figures" / "drift.png").stat().st_size > 0
    rows = (folder / "tables" / "answers.csv").read_text()
    assert "careful-hunter-" in rows


def test_the_seeds_levels_are_the_familys_rule():
    """The seeds' levels are stated (so that a workflow's start finds the seeds without the drift
    tables); the family's own rule gives the same."""
    from replaylab.lessons.hunter import family

    for name, claim in lab.CLAIMS.items():
        assert family.SEED_LEVELS[name] == family.level(claim.fixed["method"], claim.ranges, claim.limit)
