"""The campaign comparison (replaylab.comparison) from real per-run tables written by the render
code: its numbers are checked against values computed here, independently (exact enumeration with
math.comb and fractions, the Wilson interval solved from its score equation, Newcombe's method 10
from those intervals, Holm by its step-down rule), and its CSV and JSON against each other."""

import csv
import json
import math
from fractions import Fraction
from itertools import product

import pytest

from replaylab import comparison
from replaylab import statistics as s
from replaylab.lessons.scorecard import runs_table, runs_table_bytes

Z = 1.959963984540054

# (lesson, task, model): (runs, right)
COUNTS = {
    ("projectile", "default", "good"): (12, 11),
    ("projectile", "default", "coin"): (12, 6),
    ("hunter", "euler", "good"): (12, 12),
    ("hunter", "euler", "coin"): (12, 0),
    ("hunter", "verlet", "good"): (12, 7),
    ("hunter", "verlet", "coin"): (12, 5),
}
MODELS = ["good", "coin"]
SETTINGS = {"name": "trial", "provider": "scripted", "models": MODELS, "runs": 12, "max_tokens_per_run": None,
            "max_seconds_per_run": None, "prices": {}, "detect": 0.2}


def instance_of(task, i):
    """Run i of a task is of instance i // 3 of that task's own: 4 instances of 3 runs each."""
    return f"{task}-{i // 3:03d}"


def scores(lesson):
    found = []
    for (name, task, model), (runs, right) in COUNTS.items():
        if name != lesson:
            continue
        for i in range(runs):
            ok = i < right
            found.append({"run": f"{model}__{task}__{i + 1:03d}", "model": model, "task": task,
                          "instance": instance_of(task, i), "difficulty": "medium", "answered": True,
                          "right": ok, "supported": ok, "wrong": None if ok else "far off", "answer": {"x": i},
                          "calls": 3, "budget_used": 2})
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("campaign") / "trial"
    tables = []
    for lesson in ("projectile", "hunter"):
        path = folder / lesson / "runs.csv.gz"
        path.parent.mkdir(parents=True)
        path.write_bytes(runs_table_bytes(runs_table(scores(lesson))))
        tables.append(path)
    recorded = folder / "recordings" / "hunter"
    recorded.mkdir(parents=True)
    for stem in ("good__euler__013", "coin__euler__013", "good__euler__001"):  # two beyond runs: 12, one counted
        (recorded / f"{stem}.json").write_text("{}")
    comparison.write(SETTINGS, ["projectile", "hunter"], tables, [], folder)
    return folder


def wilson(right, runs):
    """The Wilson interval from its definition: the p where (k/n - p)^2 = z^2 p (1-p) / n."""
    n, phat = runs, right / runs
    a, b, c = 1 + Z * Z / n, -(2 * phat + Z * Z / n), phat * phat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def newcombe(k1, n1, k2, n2):
    """Newcombe 1998, method 10, from the two Wilson intervals."""
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def fisher(k1, n1, k2, n2):
    """Fisher's exact test, two-sided, by enumeration of every table with the same margins."""
    total = k1 + k2

    def weight(x):
        return Fraction(math.comb(n1, x) * math.comb(n2, total - x))

    observed = weight(k1)
    support = range(max(0, total - n2), min(n1, total) + 1)
    extreme = sum(w for w in map(weight, support) if w <= observed * Fraction(1 + 10**-7))
    return float(extreme / sum(map(weight, support)))


def stratified(strata):
    """The exact stratified test by enumerating every combination of tables of the strata."""
    def tables(k1, n1, k2, n2):
        total = k1 + k2
        norm = sum(math.comb(n1, x) * math.comb(n2, total - x) for x in range(max(0, total - n2), min(n1, total) + 1))
        return [(x, Fraction(math.comb(n1, x) * math.comb(n2, total - x), norm)) for x in range(max(0, total - n2), min(n1, total) + 1)]

    distribution = {}
    for combo in product(*(tables(*stratum) for stratum in strata)):
        key = sum(x for x, _ in combo)
        distribution[key] = distribution.get(key, 0) + math.prod(p for _, p in combo)
    here = distribution[sum(stratum[0] for stratum in strata)]
    return float(sum(p for p in distribution.values() if p <= here * Fraction(1 + 10**-7)))


def holm(ps):
    order = sorted(range(len(ps)), key=ps.__getitem__)
    adjusted, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def test_each_rate_is_k_of_n_with_its_wilson_interval_and_the_rule_of_three_at_zero(built):
    data = json.loads((built / "scorecard.json").read_text())
    rows = {(r["lesson"], r["task"], r["model"]): r for r in data["scorecard"]}
    assert set(rows) == set(COUNTS)
    for key, (runs, right) in COUNTS.items():
        r = rows[key]
        assert (r["runs"], r["right"], r["rate"]) == (runs, right, right / runs)
        low, high = wilson(right, runs)
        assert r["rate_low"] == pytest.approx(low, abs=1e-9) and r["rate_high"] == pytest.approx(high, abs=1e-9)
        assert r["rule_of_three_high"] == (3 / runs if right == 0 else None)
    page = (built / "index.md").read_text()
    assert "| 0/12 · 0 % (0–24), ≤ 25 % by the rule of three |" in page
    assert "| **11/12 · 92 % (65–99)** |" in page


def test_pass_at_k_and_pass_hat_k_by_counting_draws(built):
    data = json.loads((built / "scorecard.json").read_text())
    for p in data["pass_k"]:
        runs, right = COUNTS[(p["lesson"], p["task"], p["model"])]
        draws = math.comb(runs, p["k"])
        assert p["pass_at_k"] == pytest.approx(1 - math.comb(runs - right, p["k"]) / draws, abs=1e-12)
        assert p["pass_hat_k"] == pytest.approx(math.comb(right, p["k"]) / draws, abs=1e-12)
    assert sorted({p["k"] for p in data["pass_k"]}) == list(range(1, 13))


def test_each_pair_per_task_has_newcombes_interval_fishers_test_and_holm_over_all(built):
    data = json.loads((built / "scorecard.json").read_text())
    pairs, across = data["pairs"], data["across_tasks"]
    assert len(pairs) == 3 and len(across) == 1 and data["tests"] == 4
    for p in pairs:
        (n1, k1), (n2, k2) = COUNTS[(p["lesson"], p["task"], "good")], COUNTS[(p["lesson"], p["task"], "coin")]
        assert (p["model_a"], p["model_b"]) == ("good", "coin")
        assert p["difference"] == pytest.approx(k1 / n1 - k2 / n2)
        low, high = newcombe(k1, n1, k2, n2)
        assert (p["difference_low"], p["difference_high"]) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
        assert p["p_value"] == pytest.approx(fisher(k1, n1, k2, n2), rel=1e-9)
    (a,) = across
    strata = [(COUNTS[(lesson, task, "good")][1], 12, COUNTS[(lesson, task, "coin")][1], 12)
              for lesson, task in (("projectile", "default"), ("hunter", "euler"), ("hunter", "verlet"))]
    assert a["tasks"] == 3 and a["tasks_left_out"] == []
    assert a["p_value"] == pytest.approx(stratified(strata), rel=1e-9)
    weights = [12 * 12 / 24] * 3  # Mantel-Haenszel weights, equal here
    assert a["difference"] == pytest.approx(sum(w * (s[0] - s[2]) / 12 for w, s in zip(weights, strata)) / sum(weights))
    raw = [p["p_value"] for p in pairs] + [a["p_value"]]
    assert [p["p_holm"] for p in pairs] + [a["p_holm"]] == pytest.approx(holm(raw))
    assert [p["significant"] for p in pairs] == [x <= 0.05 for x in holm(raw)[:3]]
    euler = next(p for p in pairs if p["task"] == "euler")
    verlet = next(p for p in pairs if p["task"] == "verlet")
    assert euler["significant"] and not verlet["significant"] and a["significant"]


def centred_h(rate, difference):
    """Cohen's h of two rates `difference` apart centred on `rate`, moved inside [0, 1]."""
    low = min(max(rate - difference / 2, 0.0), 1.0 - difference)
    return 2 * math.asin(math.sqrt(low + difference)) - 2 * math.asin(math.sqrt(low))


def test_runs_needed_and_the_detectable_difference_by_cohens_h(built):
    # From the pooled rate, at 0.05 over the page's tests (Holm's first step), by the textbook normal formula.
    data = json.loads((built / "scorecard.json").read_text())
    from scipy.stats import norm

    tests = data["tests"]
    z = norm.ppf(1 - 0.05 / tests / 2) + norm.ppf(0.8)
    for p in data["pairs"]:
        pooled = (p["right_a"] + p["right_b"]) / (p["runs_a"] + p["runs_b"])
        assert p["pooled_rate"] == pytest.approx(pooled) and p["power_alpha"] == pytest.approx(0.05 / tests)
        h = z * math.sqrt(2 / 12)  # the effect 12 runs each detect at power 0.8 (normal approximation)
        low, high = 0.0, 1.0
        for _ in range(60):  # bisection: the centred h grows with the difference
            low, high = ((low + high) / 2, high) if centred_h(pooled, (low + high) / 2) < h else (low, (low + high) / 2)
        if centred_h(pooled, 1.0) < h:
            assert p["detectable_difference"] is None
        else:
            assert p["detectable_difference"] == pytest.approx(high, rel=2e-3)
        assert p["detect"] == 0.2
        approx = 2 * (z / centred_h(pooled, 0.2)) ** 2  # to within a run or two of statsmodels' power
        assert abs(p["runs_needed"] - approx) <= 2


def test_power_figures_do_not_depend_on_the_order_of_the_models(built):
    # The same counts with the models swapped: every power figure the same.

    data = json.loads((built / "scorecard.json").read_text())
    counts = [s.Counts(r["model"], f"{r['lesson']}/{r['task']}", r["distinct_right"], r["distinct_runs"]) for r in data["scorecard"]]
    forward = s.compare_models(counts, detect=0.2)
    order = list(reversed(forward.models))
    backward = s.compare_models(sorted(counts, key=lambda c: order.index(c.model)), detect=0.2)
    assert backward.models == list(reversed(forward.models))
    seen = {frozenset((p.model_a, p.model_b)) | {p.task}: p for p in backward.pairs}
    for p in forward.pairs:
        q = seen[frozenset((p.model_a, p.model_b)) | {p.task}]
        assert (q.model_a, q.model_b) == (p.model_b, p.model_a)
        assert (q.pooled_rate, q.detectable_difference, q.runs_needed, q.power_alpha) == \
               (p.pooled_rate, p.detectable_difference, p.runs_needed, p.power_alpha)


def test_one_name_per_column_in_csv_and_json_and_every_column_explained(built):
    data = json.loads((built / "scorecard.json").read_text())
    page = (built / "index.md").read_text()
    assert list(data["columns"]) == ["scorecard", "pass_k", "pairs", "across_tasks", "instances", "instance_rates",
                                     "instance_pairs", "cost_accuracy"]
    for table in data["columns"]:
        with open(built / f"{table}.csv", newline="") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
        assert reader.fieldnames == list(data["columns"][table]) == list(data[table][0])
        assert len(rows) == len(data[table])
        for column, explanation in data["columns"][table].items():
            assert f"- `{column}`: " in page and explanation, (table, column)
    assert "conclusive" not in data["columns"]["scorecard"] and "mean_calls_that_ran" not in json.dumps(data)


def test_the_page_answers_who_by_how_much_how_sure_and_how_many_runs(built):
    page = (built / "index.md").read_text()
    summary = page.split("## Summary\n\n")[1].split("\n")[0]
    assert "**good** was right more often than coin, by" in summary and "across the 3 tasks both ran" in summary
    assert "beyond chance (exact stratified test, Holm-adjusted p < 0.001)" in summary
    tests = json.loads((built / "scorecard.json").read_text())["tests"]
    assert f"(each test at 0.05/{tests}, the first step of Holm's correction over the {tests} tests of this page)" in summary
    assert "To detect 20 points on every task (at the same threshold), about" in summary
    order = [page.index(h) for h in ("## Summary", "## At a glance", "## Across tasks", "## Per task", "## Not separated",
                                     "## Cost and accuracy", "## Scorecard", "## The runs")]
    assert order == sorted(order)
    assert "hunter `verlet`: not separated: good, coin" in page and "tied" not in summary
    assert "**2 recorded runs are not counted**" in page  # good__euler__013 and coin__euler__013
    assert json.loads((built / "scorecard.json").read_text())["not_counted"] == {"projectile": 0, "hunter": 2}
    # tasks are never pooled: "pooled" only says so, names two models' runs of one task taken together (where the
    # power figures start), or the cost view's one summary
    allowed = ("never one test over pooled counts", "are never pooled", "pooled rate", "pooled_rate",
               "pooled (a summary for this view; the tests never pool tasks)", "pooled over tasks for this view only")
    for phrase in allowed:
        page = page.replace(phrase, "")
    assert "pooled" not in page


def test_one_model_only_says_so(tmp_path):
    folder = tmp_path / "solo"
    path = folder / "projectile" / "runs.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(runs_table_bytes(runs_table([s for s in scores("projectile") if s["model"] == "good"])))
    comparison.write({**SETTINGS, "models": ["good"]}, ["projectile"], [path], [], folder)
    page = (folder / "index.md").read_text()
    assert "One model only (good): nothing to compare it with." in page
    assert (folder / "pairs.csv").read_text().startswith("lesson,task,model_a,")


# ---------------------------------------------------------------------------------------------
# The instance as the unit: instances.csv, and every figure by instance recomputed from it


def instance_table(built):
    with open(built / "instances.csv", newline="") as handle:
        return [{**r, "runs": int(r["runs"]), "right": int(r["right"])} for r in csv.DictReader(handle)]


def per_instance(rows, lesson, model):
    return {r["instance"]: (r["right"], r["runs"]) for r in rows if (r["lesson"], r["model"]) == (lesson, model)}


def test_instances_csv_counts_each_model_and_instance(built):
    rows = instance_table(built)
    expected = {}
    for (lesson, task, model), (runs, right) in COUNTS.items():
        for i in range(runs):
            key = (lesson, model, instance_of(task, i))
            k, n = expected.get(key, (0, 0))
            expected[key] = (k + (i < right), n + 1)
    assert {(r["lesson"], r["model"], r["instance"]): (r["right"], r["runs"]) for r in rows} == expected
    assert all(r["difficulty"] == "medium" and float(r["rate"]) == r["right"] / r["runs"] for r in rows)
    assert [(r["lesson"], r["model"]) for r in rows][:5] == [("projectile", "good")] * 4 + [("projectile", "coin")]
    card = {(r["lesson"], r["task"], r["model"]): r for r in json.loads((built / "scorecard.json").read_text())["scorecard"]}
    assert {r["instances"] for r in card.values()} == {4}  # each task's runs took 4 instances


def test_each_rate_by_instance_is_the_cluster_robust_one(built):
    import numpy as np
    import statsmodels.api as sm
    from scipy.stats import t

    data = json.loads((built / "scorecard.json").read_text())
    rows = instance_table(built)
    assert [(r["lesson"], r["model"]) for r in data["instance_rates"]] == [
        ("projectile", "good"), ("projectile", "coin"), ("hunter", "good"), ("hunter", "coin")]
    for r in data["instance_rates"]:
        counts = per_instance(rows, r["lesson"], r["model"])
        y = [1.0] * sum(k for k, _ in counts.values()) + [0.0] * sum(n - k for k, n in counts.values())
        groups = [i for i, (k, _) in enumerate(counts.values()) for _ in range(k)]
        groups += [i for i, (k, n) in enumerate(counts.values()) for _ in range(n - k)]
        fit = sm.OLS(np.array(y), np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
        assert (r["instances"], r["runs"], r["right"]) == (len(counts), len(y), int(sum(y)))
        assert r["standard_error"] == pytest.approx(fit.bse[0], rel=1e-10)
        rate = sum(y) / len(y)
        deff = fit.bse[0] ** 2 / (rate * (1 - rate) / (len(y) - 1))
        assert r["design_effect"] == pytest.approx(deff, rel=1e-9)
        effective = len(y) / max(1.0, deff)
        q = t.ppf(0.975, len(counts) - 1)
        centre = (rate + q * q / (2 * effective)) / (1 + q * q / effective)  # Wilson's interval, written out
        half = q / (1 + q * q / effective) * math.sqrt(rate * (1 - rate) / effective + q * q / (4 * effective**2))
        assert (r["rate_low"], r["rate_high"]) == (pytest.approx(centre - half, abs=1e-9), pytest.approx(centre + half, abs=1e-9))
    page = (built / "index.md").read_text()
    assert "| [hunter](hunter/index.md) | coin | 8 | 5/24 · 21 % | 4 % to 60 % | 2.73 | 8.78 |" in page


def test_each_pair_by_instance_is_the_paired_t_and_the_sign_test_with_holm_over_them(built):
    from scipy.stats import binomtest, ttest_rel

    data = json.loads((built / "scorecard.json").read_text())
    rows = instance_table(built)
    pairs = data["instance_pairs"]
    assert [(p["lesson"], p["model_a"], p["model_b"]) for p in pairs] == [("projectile", "good", "coin"), ("hunter", "good", "coin")]
    for p in pairs:
        a, b = per_instance(rows, p["lesson"], "good"), per_instance(rows, p["lesson"], "coin")
        both = sorted(set(a) & set(b))
        rates_a, rates_b = [a[i][0] / a[i][1] for i in both], [b[i][0] / b[i][1] for i in both]
        assert (p["instances"], p["only_a"], p["only_b"]) == (len(both), 0, 0)
        test = ttest_rel(rates_a, rates_b)
        ci = test.confidence_interval(0.95)
        assert p["difference"] == pytest.approx(sum(rates_a) / len(both) - sum(rates_b) / len(both))
        assert (p["difference_low"], p["difference_high"]) == (pytest.approx(ci.low), pytest.approx(min(1.0, ci.high)))
        ahead = sum(x > y for x, y in zip(rates_a, rates_b))
        behind = sum(x < y for x, y in zip(rates_a, rates_b))
        assert (p["a_ahead"], p["b_ahead"]) == (ahead, behind)
        assert p["p_value"] == pytest.approx(binomtest(ahead, ahead + behind).pvalue, rel=1e-12)
        assert p["detect"] == 0.2 and p["runs_per_instance_a"] == p["runs_per_instance_b"] == 3.0
    assert [p["p_holm"] for p in pairs] == pytest.approx(holm([p["p_value"] for p in pairs]))
    assert data["instance_tests"] == 2 and data["tests"] == 4  # two families, each its own correction
    hunter = pairs[1]
    assert (hunter["a_ahead"], hunter["b_ahead"], hunter["p_value"]) == (6, 0, 2 * 0.5**6)
    assert hunter["p_holm"] == pytest.approx(2 * 2 * 0.5**6) and not hunter["significant"]


def test_the_page_says_the_instance_is_the_unit_and_how_many_each_figure_rests_on(built):
    page = (built / "index.md").read_text()
    summary = page.split("## Summary\n\n")[1].split("\n")[0]
    assert "Counted by instance, the unit of evidence" in summary
    assert "rest on 4 instances of projectile, 8 instances of hunter" in summary
    assert "On hunter, paired by instance, good − coin is +58 points over 8 instances" in summary
    assert "too few instances to tell apart (sign test, Holm-adjusted p = 0.5)" in summary
    assert "not separated (sign test, Holm-adjusted p = 0.062)" in summary
    # at 0.05/2 (the two sign tests' Holm's first step): 62 instances; at 0.05 it would be 52
    assert "To detect 20 points paired by instance (at 0.05/2, the first step of Holm's correction over the 2 tests), about 62 instances of projectile at 3 runs per instance" in summary
    projectile = json.loads((built / "scorecard.json").read_text())["instance_pairs"][0]
    assert s.instances_needed(projectile["spread"], 0.2, 0.025) == (62, None)
    assert s.instances_needed(projectile["spread"], 0.2) == (52, None)
    section = page.split("## By instance\n")[1].split("\n## ")[0]
    assert "**The instance is the unit of evidence here.**" in section and "`instances.csv`" in section
    assert "tied" not in section and "better" not in section
    order = [page.index(h) for h in ("## At a glance", "## By instance", "## Across tasks", "## The runs")]
    assert order == sorted(order)
    assert "- instance rate: " in page and "- sign test: " in page  # the methods, with their references


def test_two_programs_with_known_rates_over_100_instances(tmp_path):
    """careful is right with chance 0.8 on each run, careless with 0.45, two runs of each of 100
    instances (numbers drawn once, seeded): by instance, careful is ahead, beyond chance."""
    import random

    generator = random.Random(11)
    found = []
    for model, chance in (("careful", 0.8), ("careless", 0.45)):
        for i in range(100):
            for j in range(2):
                ok = generator.random() < chance
                found.append({"run": f"{model}__default__{i:03d}-{j}", "model": model, "task": "default",
                              "instance": f"projectile-{i:03d}", "difficulty": ("easy", "medium", "hard")[i % 3],
                              "answered": True, "right": ok, "supported": ok, "wrong": None if ok else "far off",
                              "answer": {"x": i}, "calls": 3, "budget_used": 2})
    folder = tmp_path / "known"
    path = folder / "projectile" / "runs.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(runs_table_bytes(runs_table(found)))
    comparison.write({**SETTINGS, "models": ["careful", "careless"], "runs": 2}, ["projectile"], [path], [], folder)
    data = json.loads((folder / "scorecard.json").read_text())
    (pair,) = data["instance_pairs"]
    assert (pair["model_a"], pair["model_b"], pair["instances"]) == ("careful", "careless", 100)
    assert pair["difference"] > 0 and pair["difference_low"] > 0.15 and pair["difference_low"] < 0.35 < pair["difference_high"]
    assert pair["a_ahead"] > 3 * pair["b_ahead"] and pair["significant"]
    careful, careless = data["instance_rates"]
    assert careful["instances"] == careless["instances"] == 100 and careful["rate_low"] > careless["rate_high"]
    summary = (folder / "index.md").read_text().split("## Summary\n\n")[1].split("\n")[0]
    assert "On projectile, paired by instance, careful − careless is +" in summary
    assert "over 100 instances" in summary and "differ beyond chance (sign test" in summary
    assert {r["difficulty"] for r in instance_table(folder)} == {"easy", "medium", "hard"}


def test_a_table_whose_runs_lack_their_instance_is_one_line(tmp_path):
    from replaylab.inputs import DamagedResult

    path = tmp_path / "projectile" / "runs.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(runs_table_bytes(runs_table([{k: v for k, v in s.items() if k != "instance"} for s in scores("projectile")])))
    with pytest.raises(DamagedResult, match="a run without its instance"):
        comparison.runs_table(path)
