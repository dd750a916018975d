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


def scores(lesson):
    found = []
    for (name, task, model), (runs, right) in COUNTS.items():
        if name != lesson:
            continue
        for i in range(runs):
            ok = i < right
            found.append({"run": f"{model}__{task}__{i + 1:03d}", "model": model, "task": task, "answered": True,
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
    for combo in product(*(tables(*s) for s in strata)):
        key = sum(x for x, _ in combo)
        distribution[key] = distribution.get(key, 0) + math.prod(p for _, p in combo)
    here = distribution[sum(s[0] for s in strata)]
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


def test_runs_needed_and_the_detectable_difference_by_cohens_h(built):
    data = json.loads((built / "scorecard.json").read_text())
    from scipy.stats import norm

    z = norm.ppf(0.975) + norm.ppf(0.8)
    for p in data["pairs"]:
        base = p["right_a"] / p["runs_a"]
        h = z * math.sqrt(2 / 12)  # the effect 12 runs each detect at power 0.8 (normal approximation)
        phi = math.asin(math.sqrt(base))
        options = [math.sin(phi + h / 2) ** 2 - base] if phi + h / 2 <= math.pi / 2 else []
        options += [base - math.sin(phi - h / 2) ** 2] if phi - h / 2 >= 0 else []
        assert p["detectable_difference"] == pytest.approx(min(options), rel=2e-3)
        assert p["detect"] == 0.2
        effects = [abs(2 * math.asin(math.sqrt(o)) - 2 * phi) for o in (base + 0.2, base - 0.2) if 0 <= o <= 1]
        approx = 2 * (z / min(effects)) ** 2  # the textbook formula, to within a run or two of statsmodels' power
        assert abs(p["runs_needed"] - approx) <= 2


def test_one_name_per_column_in_csv_and_json_and_every_column_explained(built):
    data = json.loads((built / "scorecard.json").read_text())
    page = (built / "index.md").read_text()
    for table in ("scorecard", "pass_k", "pairs", "across_tasks"):
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
    assert "To detect 20 points on every task, about" in summary
    order = [page.index(h) for h in ("## Summary", "## At a glance", "## Across tasks", "## Per task", "## Tied",
                                     "## Scorecard", "## The runs")]
    assert order == sorted(order)
    assert "hunter `verlet`: tied: good, coin" in page
    assert "**2 recorded runs are not counted**" in page  # good__euler__013 and coin__euler__013
    assert json.loads((built / "scorecard.json").read_text())["not_counted"] == {"projectile": 0, "hunter": 2}
    assert "pooled" not in page.replace("never one test over pooled counts", "").replace("are never pooled", "")


def test_one_model_only_says_so(tmp_path):
    folder = tmp_path / "solo"
    path = folder / "projectile" / "runs.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(runs_table_bytes(runs_table([s for s in scores("projectile") if s["model"] == "good"])))
    comparison.write({**SETTINGS, "models": ["good"]}, ["projectile"], [path], [], folder)
    page = (folder / "index.md").read_text()
    assert "One model only (good): nothing to compare it with." in page
    assert (folder / "pairs.csv").read_text().startswith("lesson,task,model_a,")
