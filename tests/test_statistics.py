"""The statistics of a campaign's comparison, against values computed here another way: published
worked examples, exact enumeration with math.comb and fractions, and scipy calls the module does
not make (scipy's binomtest for Wilson intervals, scipy.stats.norm for power)."""

import dataclasses
import gc
import json
import math
from fractions import Fraction
from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binomtest, fisher_exact, norm

from replaylab import statistics as s
from replaylab.statistics import Counts

pytestmark = pytest.mark.filterwarnings("error")  # a RuntimeWarning (0/0, NaN) is a failure here

Z = norm.ppf(0.975)


@pytest.fixture(scope="module", autouse=True)
def few_objects_to_collect():
    """statsmodels' Holm correction calls gc.collect() on every call: in a test process that has
    loaded many modules that is about 0.1 s a call, and the property tests below make hundreds.
    The objects there before this module's tests are frozen (left out of every collection)."""
    gc.freeze()
    yield
    gc.unfreeze()


def scipy_wilson(right, runs):
    """The Wilson interval by scipy (the module uses statsmodels)."""
    ci = binomtest(right, runs).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.low, ci.high


@st.composite
def counts(draw, max_runs=40, min_runs=0):
    runs = draw(st.integers(min_runs, max_runs))
    return runs, draw(st.integers(0, runs))


# ---------------------------------------------------------------------------------------------
# Rates and Wilson intervals


@pytest.mark.parametrize(
    "right, runs, low, high",
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_matches_newcombes_worked_examples(right, runs, low, high):
    # Newcombe 1998, Stat Med 17:857-872, Table I, method 3 (the score method), four decimals.
    r = s.rate(Counts("m", "t", right, runs))
    assert r.rate_low == pytest.approx(low, abs=5e-5)
    assert r.rate_high == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize("runs", [1, 2, 5, 12, 30, 101])
def test_wilson_matches_scipy_and_solves_the_score_equation(runs):
    for right in range(runs + 1):
        r = s.rate(Counts("m", "t", right, runs))
        low, high = scipy_wilson(right, runs)
        assert (r.rate_low, r.rate_high) == pytest.approx((low, high), abs=1e-12)
        assert r.rate == right / runs
        for end in (r.rate_low, r.rate_high):  # Wilson's ends: |p_hat - p| = z sqrt(p (1 - p) / n)
            if 0 < end < 1:
                assert (right / runs - end) ** 2 == pytest.approx(Z * Z * end * (1 - end) / runs, rel=1e-9)


def test_the_ends_are_exact_at_zero_and_all_right():
    assert s.rate(Counts("m", "t", 0, 7)).rate_low == 0.0
    assert s.rate(Counts("m", "t", 7, 7)).rate_high == 1.0  # statsmodels gives 0.9999999999999999
    assert s.rate(Counts("m", "t", 7, 7)).rate_low == pytest.approx(scipy_wilson(7, 7)[0], abs=1e-12)


@pytest.mark.parametrize("runs", [1, 2, 3, 4, 10, 20, 100])
def test_rule_of_three_at_zero_and_all_right(runs):
    none = s.rate(Counts("m", "t", 0, runs))
    every = s.rate(Counts("m", "t", runs, runs))
    assert none.rule_of_three_high == min(1.0, 3 / runs)
    assert every.rule_of_three_low == max(0.0, 1 - 3 / runs)
    assert none.rule_of_three_low is None and every.rule_of_three_high is None
    # Never below the exact one-sided 95 % Clopper-Pearson bound at 0 of n, 1 - 0.05^(1/n).
    exact = beta.ppf(0.95, 1, runs)
    assert exact == pytest.approx(1 - 0.05 ** (1 / runs), rel=1e-9)
    assert none.rule_of_three_high >= exact
    assert 1 - every.rule_of_three_low >= exact


def test_rule_of_three_only_at_the_ends():
    r = s.rate(Counts("m", "t", 3, 10))
    assert r.rule_of_three_high is None and r.rule_of_three_low is None
    assert s.rate(Counts("m", "t", 0, 20)).rule_of_three_high == 0.15


def test_no_runs_has_no_rate():
    r = s.rate(Counts("m", "t", 0, 0))
    assert (r.rate, r.rate_low, r.rate_high, r.rule_of_three_high, r.rule_of_three_low) == (None,) * 5
    assert s.pass_k(Counts("m", "t", 0, 0)) == []


@given(counts(max_runs=200, min_runs=1))
def test_wilson_interval_holds_the_rate_inside_zero_one(found):
    runs, right = found
    r = s.rate(Counts("m", "t", right, runs))
    assert 0.0 <= r.rate_low <= r.rate <= r.rate_high <= 1.0
    assert r.rate_low < r.rate_high


# ---------------------------------------------------------------------------------------------
# pass@k and pass^k


def enumerated_pass(right, runs, k):
    """pass@k and pass^k by drawing every k of the runs (the first `right` of them right)."""
    draws = list(combinations(range(runs), k))
    any_right = sum(1 for d in draws if min(d) < right)
    all_right = sum(1 for d in draws if max(d) < right)
    return Fraction(any_right, len(draws)), Fraction(all_right, len(draws))


@pytest.mark.parametrize("runs", range(1, 9))
def test_pass_k_by_enumerating_every_draw(runs):
    for right in range(runs + 1):
        rows = s.pass_k(Counts("m", "t", right, runs))
        assert [r.k for r in rows] == list(range(1, runs + 1))
        for r in rows:
            at, hat = enumerated_pass(right, runs, r.k)
            assert r.pass_at_k == pytest.approx(float(at), abs=1e-15)
            assert r.pass_hat_k == pytest.approx(float(hat), abs=1e-15)


def test_pass_at_k_matches_chens_product_form():
    # Chen et al. 2021's numerically stable form: 1 - prod_{i=n-c+1}^{n} (1 - k/i).
    runs, right = 200, 37
    for r in s.pass_k(Counts("m", "t", right, runs)):
        product_form = 1 - math.prod(1 - r.k / i for i in range(runs - right + 1, runs + 1))
        assert r.pass_at_k == pytest.approx(product_form, abs=1e-12)
        assert r.pass_hat_k == pytest.approx(math.prod((right - i) / (runs - i) for i in range(r.k)), rel=1e-9, abs=1e-300)


@given(counts(max_runs=60, min_runs=1))
def test_pass_k_bounds_and_order(found):
    runs, right = found
    rows = s.pass_k(Counts("m", "t", right, runs))
    assert rows[0].pass_at_k == rows[0].pass_hat_k == pytest.approx(right / runs)
    for a, b in zip(rows, rows[1:]):
        assert a.pass_at_k <= b.pass_at_k and a.pass_hat_k >= b.pass_hat_k
    for r in rows:
        assert 0.0 <= r.pass_hat_k <= r.pass_at_k <= 1.0


# ---------------------------------------------------------------------------------------------
# Two models on one task


def enumerated_fisher(right_a, runs_a, right_b, runs_b):
    """Fisher's two-sided p by enumerating every table with the observed margins (exact fractions)."""
    right = right_a + right_b
    weight = {x: math.comb(runs_a, x) * math.comb(runs_b, right - x) for x in range(max(0, right - runs_b), min(runs_a, right) + 1)}
    return Fraction(sum(w for w in weight.values() if w <= weight[right_a]), sum(weight.values()))


@pytest.mark.parametrize(
    "a, b, low, high",
    [((56, 70), (48, 80), 0.0524, 0.3339), ((9, 10), (3, 10), 0.1705, 0.8090)],
)
def test_difference_matches_newcombes_worked_examples(a, b, low, high):
    # Newcombe 1998, Stat Med 17:873-890, Table II, method 10 (hybrid score), four decimals.
    pair = s.compare_pair(Counts("a", "t", *a), Counts("b", "t", *b))
    assert pair.difference == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert pair.difference_low == pytest.approx(low, abs=5e-5)
    assert pair.difference_high == pytest.approx(high, abs=5e-5)


def test_newcombe_from_scipys_wilson_intervals():
    for (ra, na), (rb, nb) in product([(0, 5), (3, 5), (5, 5), (0, 12), (7, 12), (12, 12), (20, 33)], repeat=2):
        la, ua = scipy_wilson(ra, na)
        lb, ub = scipy_wilson(rb, nb)
        pa, pb = ra / na, rb / nb
        pair = s.compare_pair(Counts("a", "t", ra, na), Counts("b", "t", rb, nb))
        assert pair.difference_low == pytest.approx(pa - pb - math.hypot(pa - la, ub - pb), abs=1e-12)
        assert pair.difference_high == pytest.approx(pa - pb + math.hypot(ua - pa, pb - lb), abs=1e-12)


def test_fisher_against_every_table_enumerated():
    for na, nb in product(range(1, 8), repeat=2):
        for ra, rb in product(range(na + 1), range(nb + 1)):
            p = s.fisher_p(Counts("a", "t", ra, na), Counts("b", "t", rb, nb))
            assert p == pytest.approx(float(enumerated_fisher(ra, na, rb, nb)), rel=1e-9), (ra, na, rb, nb)


def test_fisher_tea_tasting():
    # Fisher's lady tasting tea (The Design of Experiments, 1935): 3 of 4 against 1 of 4, two-sided 34/70.
    pair = s.compare_pair(Counts("a", "t", 3, 4), Counts("b", "t", 1, 4))
    assert pair.p_value == pytest.approx(34 / 70, rel=1e-12)


def test_smallest_p_is_that_of_the_most_extreme_table():
    pair = s.compare_pair(Counts("a", "t", 2, 3), Counts("b", "t", 1, 3))
    assert pair.smallest_p_value == pytest.approx(float(enumerated_fisher(3, 3, 0, 3)))  # 0.1: no outcome of 3 runs each is significant
    assert pair.smallest_p_value == pytest.approx(0.1)
    assert s.compare_pair(Counts("a", "t", 0, 12), Counts("b", "t", 0, 12)).smallest_p_value < 0.05


@given(counts(min_runs=1), counts(min_runs=1))
def test_pair_interval_properties(found_a, found_b):
    (na, ra), (nb, rb) = found_a, found_b
    ab = s.compare_pair(Counts("a", "t", ra, na), Counts("b", "t", rb, nb))
    ba = s.compare_pair(Counts("b", "t", rb, nb), Counts("a", "t", ra, na))
    assert -1.0 <= ab.difference_low <= ab.difference <= ab.difference_high <= 1.0
    assert ab.difference_low < ab.difference_high
    assert (ba.difference_low, ba.difference_high) == pytest.approx((-ab.difference_high, -ab.difference_low), abs=1e-12)
    assert ba.p_value == pytest.approx(ab.p_value, rel=1e-12)
    assert 0.0 < ab.smallest_p_value <= ab.p_value <= 1.0


@pytest.mark.parametrize("a, b", [((0, 12), (0, 12)), ((12, 12), (12, 12)), ((5, 10), (5, 10)), ((0, 10), (0, 20))])
def test_equal_rates(a, b):
    pair = s.compare_pair(Counts("a", "t", *a), Counts("b", "t", *b))
    assert pair.difference == 0.0 and pair.p_value == 1.0 and not pair.significant
    assert pair.difference_low < 0.0 < pair.difference_high  # never "plus or minus 0"


def test_a_pair_where_one_model_has_no_runs():
    pair = s.compare_pair(Counts("a", "t", 4, 6), Counts("b", "t", 0, 0), detect=0.3)
    assert (pair.difference, pair.difference_low, pair.difference_high, pair.p_value, pair.smallest_p_value) == (None,) * 5
    assert pair.p_holm is None and pair.significant is False and pair.detectable_difference is None
    assert pair.runs_needed == s.runs_needed(4 / 6, 0.3)


# ---------------------------------------------------------------------------------------------
# Across tasks


def enumerated_stratified(strata):
    """The exact stratified p by enumerating every combination of the strata's tables (fractions)."""
    supports = []
    for ra, na, rb, nb in strata:
        right = ra + rb
        supports.append({x: math.comb(na, x) * math.comb(nb, right - x) for x in range(max(0, right - nb), min(na, right) + 1)})
    by_sum = {}
    for choice in product(*(list(w.items()) for w in supports)):
        total = sum(x for x, _ in choice)
        by_sum[total] = by_sum.get(total, 0) + math.prod(w for _, w in choice)
    observed = by_sum[sum(ra for ra, _, _, _ in strata)]
    return Fraction(sum(w for w in by_sum.values() if w <= observed), sum(by_sum.values()))


def across(strata):
    return s.compare_across_tasks(
        [Counts("a", f"t{i}", ra, na) for i, (ra, na, _, _) in enumerate(strata)],
        [Counts("b", f"t{i}", rb, nb) for i, (_, _, rb, nb) in enumerate(strata)],
    )


@pytest.mark.parametrize(
    "strata",
    [
        [(3, 5, 1, 5), (2, 4, 0, 3)],
        [(0, 4, 0, 6), (4, 4, 1, 5), (2, 3, 2, 3)],
        [(5, 6, 2, 6), (1, 6, 0, 6), (6, 6, 6, 6)],
        [(1, 2, 0, 2), (0, 2, 1, 2)],  # opposite directions: symmetric, p = 1
        [(7, 8, 3, 8), (6, 7, 2, 9)],
    ],
)
def test_stratified_test_against_every_table_enumerated(strata):
    assert across(strata).p_value == pytest.approx(float(enumerated_stratified(strata)), rel=1e-9)


@given(st.lists(st.tuples(counts(max_runs=6, min_runs=1), counts(max_runs=6, min_runs=1)), min_size=1, max_size=3))
@settings(max_examples=60)
def test_stratified_test_enumerated_property(found):
    strata = [(ra, na, rb, nb) for (na, ra), (nb, rb) in found]
    assert across(strata).p_value == pytest.approx(float(enumerated_stratified(strata)), rel=1e-9)


@pytest.mark.parametrize("a, b", [((56, 70), (48, 80)), ((9, 10), (3, 10)), ((0, 10), (0, 20)), ((3, 4), (1, 4))])
def test_one_task_across_is_fisher_and_newcombe(a, b):
    combined = across([(*a, *b)])
    assert combined.tasks == 1
    assert combined.p_value == pytest.approx(fisher_exact([[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]]).pvalue, rel=1e-9)
    pair = s.compare_pair(Counts("a", "t", *a), Counts("b", "t", *b))
    assert (combined.difference_low, combined.difference_high) == pytest.approx((pair.difference_low, pair.difference_high), abs=1e-12)


def test_combined_difference_is_the_mantel_haenszel_mean_and_interval_mover_wilson():
    strata = [(9, 10, 5, 10), (3, 12, 1, 6), (20, 20, 15, 25)]
    result = across(strata)
    weights = [Fraction(na * nb, na + nb) for _, na, _, nb in strata]
    differences = [Fraction(ra, na) - Fraction(rb, nb) for ra, na, rb, nb in strata]
    expected = sum(w * d for w, d in zip(weights, differences)) / sum(weights)
    assert result.difference == pytest.approx(float(expected), abs=1e-15)
    assert result.tasks == 3 and result.tasks_left_out == []
    # MOVER (Zou, Huang & Zhang 2009) over the six independent proportions, Wilson intervals from scipy.
    omega = [float(w / sum(weights)) for w in weights]
    below = above = 0.0
    for o, (ra, na, rb, nb) in zip(omega, strata):
        (la, ua), (lb, ub) = scipy_wilson(ra, na), scipy_wilson(rb, nb)
        below += o * o * ((ra / na - la) ** 2 + (ub - rb / nb) ** 2)
        above += o * o * ((ua - ra / na) ** 2 + (rb / nb - lb) ** 2)
    assert result.difference_low == pytest.approx(float(expected) - math.sqrt(below), abs=1e-12)
    assert result.difference_high == pytest.approx(float(expected) + math.sqrt(above), abs=1e-12)


def test_tasks_are_never_pooled():
    # Simpson's paradox: pooled, a looks far better (82/100 against 30/100); on each task b is ahead.
    strata = [(81, 90, 10, 10), (1, 10, 20, 90)]
    pooled = fisher_exact([[82, 18], [30, 70]]).pvalue
    assert pooled < 1e-10
    result = across(strata)
    assert result.difference < 0 < result.difference_high
    assert result.p_value > 0.05 and result.tasks == 2


def test_tasks_where_nothing_varies():
    result = across([(0, 10, 0, 12), (10, 10, 12, 12)])
    assert result.difference == 0.0 and result.p_value == 1.0
    assert result.difference_low < 0 < result.difference_high
    assert result.smallest_p_value < 0.05


def test_a_task_one_model_did_not_run_is_left_out_and_named():
    with_gap = s.compare_across_tasks(
        [Counts("a", "t1", 8, 10), Counts("a", "t2", 5, 10), Counts("a", "t3", 3, 4)],
        [Counts("b", "t1", 2, 10), Counts("b", "t2", 4, 10), Counts("b", "t3", 0, 0)],
    )
    without = across([(8, 10, 2, 10), (5, 10, 4, 10)])
    assert with_gap.tasks == 2 and with_gap.tasks_left_out == ["t3"]
    assert (with_gap.difference, with_gap.difference_low, with_gap.difference_high, with_gap.p_value) == (
        without.difference, without.difference_low, without.difference_high, without.p_value)
    nothing = s.compare_across_tasks([Counts("a", "t1", 3, 4)], [Counts("b", "t1", 0, 0)])
    assert nothing.tasks == 0 and nothing.tasks_left_out == ["t1"] and nothing.p_value is None and not nothing.significant


@given(st.lists(st.tuples(counts(max_runs=30), counts(max_runs=30)), min_size=1, max_size=4))
def test_across_tasks_interval_properties(found):
    result = across([(ra, na, rb, nb) for (na, ra), (nb, rb) in found])
    if result.tasks == 0:
        assert result.difference is None and result.p_value is None
        return
    assert -1.0 <= result.difference_low <= result.difference <= result.difference_high <= 1.0
    assert result.difference_low < result.difference_high
    assert 0.0 < result.smallest_p_value <= result.p_value <= 1.0


# ---------------------------------------------------------------------------------------------
# Holm's correction


def test_holm_textbook_example():
    # Four hypotheses at 0.05 (the worked example of the Holm-Bonferroni method): 0.005 < 0.05/4 and
    # 0.01 < 0.05/3 are rejected, 0.03 > 0.05/2 stops the procedure.
    corrected = s.holm([0.01, 0.04, 0.03, 0.005])
    assert [significant for _, significant in corrected] == [True, False, False, True]
    assert [adjusted for adjusted, _ in corrected] == pytest.approx([0.03, 0.06, 0.06, 0.02])


def step_down(p_values):
    """Holm's adjusted p-values by their definition: max over j <= rank of (m - j + 1) p_(j), at most 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=20))
def test_holm_properties(p_values):
    corrected = s.holm(p_values)
    tested = [p for p in p_values if p is not None]
    expected = iter(step_down(tested))
    for p, (adjusted, significant) in zip(p_values, corrected):
        if p is None:
            assert adjusted is None and significant is False
            continue
        assert adjusted == pytest.approx(next(expected), abs=1e-12)
        assert p <= adjusted <= 1.0
        assert significant == (adjusted <= 0.05)
    for (p, (x, _)), (q, (y, _)) in combinations([(p, c) for p, c in zip(p_values, corrected) if p is not None], 2):
        if p <= q:
            assert x <= y + 1e-15


# ---------------------------------------------------------------------------------------------
# Power


def power_of(p_a, p_b, runs_a, runs_b):
    """Power of the two-sided 0.05 test on Cohen's h, from scipy's normal distribution."""
    h = abs(2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b)))
    shift = h * math.sqrt(runs_a * runs_b / (runs_a + runs_b))
    return norm.cdf(shift - Z) + norm.cdf(-shift - Z)


@pytest.mark.parametrize("h, runs", [(0.5, 63), (0.8, 25)])
def test_runs_needed_matches_cohens_table(h, runs):
    # Cohen 1988, Table 6.4.1: n per sample for power 0.80 at two-sided 0.05.
    baseline = 0.3
    other = math.sin(math.asin(math.sqrt(baseline)) + h / 2) ** 2
    assert s.runs_needed(baseline, other - baseline) == runs


@pytest.mark.parametrize("baseline, difference", [(0.5, 0.2), (0.1, 0.1), (0.9, 0.3), (0.0, 0.2), (1.0, 0.05)])
def test_runs_needed_gives_the_power(baseline, difference):
    runs = s.runs_needed(baseline, difference)
    others = [o for o in (baseline + difference, baseline - difference) if 0 <= o <= 1]
    assert min(power_of(baseline, o, runs, runs) for o in others) >= 0.8
    assert min(power_of(baseline, o, runs - 1, runs - 1) for o in others) < 0.8  # the fewest


def test_runs_needed_at_a_known_value():
    # 0.5 against 0.7 (or 0.3): h = 2 asin(sqrt 0.7) - 2 asin(sqrt 0.5) = 0.4115; n = 2 ((z_.975 + z_.8) / h)^2 = 92.7.
    h = 2 * math.asin(math.sqrt(0.7)) - 2 * math.asin(math.sqrt(0.5))
    assert 2 * ((Z + norm.ppf(0.8)) / h) ** 2 == pytest.approx(92.7, abs=0.05)
    assert s.runs_needed(0.5, 0.2) == 93
    assert s.runs_needed(0.0, 1.0) == 2  # 0 against 1: h = pi; one run each has power 0.60, two 0.88


@pytest.mark.parametrize("baseline, runs_a, runs_b", [(0.5, 12, 12), (0.2, 30, 10), (0.0, 20, 20), (1.0, 8, 8), (0.9, 100, 100), (0.7, 100, 100)])
def test_detectable_difference_has_the_power(baseline, runs_a, runs_b):
    found = s.detectable_difference(baseline, runs_a, runs_b)
    powers = [power_of(baseline, o, runs_a, runs_b) for o in (baseline + found, baseline - found) if 0 <= o <= 1]
    assert max(powers) == pytest.approx(0.8, abs=1e-6)


def test_nothing_detectable_with_too_few_runs():
    assert s.detectable_difference(0.5, 1, 1) is None  # h would have to exceed pi
    assert s.detectable_difference(0.5, 2, 2) is None
    three = s.detectable_difference(0.0, 3, 3)  # from 0 of 3, only upwards: about 0.83
    assert power_of(0.0, three, 3, 3) == pytest.approx(0.8, abs=1e-6)
    assert s.detectable_difference(None, 3, 3) is None and s.detectable_difference(0.5, 0, 3) is None
    assert s.runs_needed(None, 0.2) is None


def test_the_normal_approximation_is_optimistic_for_fishers_test_as_documented():
    # Fisher's exact power by enumerating every outcome of 12 runs each, at the detectable difference.
    runs, baseline = 12, 0.5
    other = baseline + s.detectable_difference(baseline, runs, runs)
    chance = [math.comb(runs, x) * baseline**x * (1 - baseline) ** (runs - x) for x in range(runs + 1)]
    chance_other = [math.comb(runs, y) * other**y * (1 - other) ** (runs - y) for y in range(runs + 1)]
    power = sum(chance[x] * chance_other[y] for x, y in product(range(runs + 1), repeat=2)
                if float(enumerated_fisher(x, runs, y, runs)) <= 0.05)
    assert power == pytest.approx(0.6, abs=0.05)  # METHODS["power"] says "about 0.6, not 0.8"
    assert "about 0.6, not 0.8" in s.METHODS["power"]


@given(st.floats(0, 1), st.integers(3, 300))
def test_more_runs_detect_smaller_differences(baseline, runs):
    fewer = s.detectable_difference(baseline, runs, runs)
    more = s.detectable_difference(baseline, runs + 1, runs + 1)
    if fewer is not None:
        assert more is not None and 0 < more <= fewer <= 1
    assert s.detectable_difference(baseline, 40, 40) is not None  # from 40 runs each, something always is


@pytest.mark.parametrize("difference", [0, -0.1, 1.5, float("nan"), "0.2", True])
def test_a_bad_difference_to_detect_is_one_clear_error(difference):
    with pytest.raises(ValueError, match="difference to detect"):
        s.compare_models([Counts("a", "t", 1, 2), Counts("b", "t", 1, 2)], detect=difference)


# ---------------------------------------------------------------------------------------------
# Ties


def brute_force_groups(models, separated):
    close = lambda g: all(frozenset(p) not in separated for p in combinations(g, 2))  # noqa: E731
    groups = [set(g) for n in range(1, len(models) + 1) for g in combinations(models, n) if close(g)]
    return {frozenset(g) for g in groups if not any(g < other for other in groups)}


@dataclasses.dataclass
class C:
    """What `tied` reads of a comparison."""

    model_a: str
    model_b: str
    significant: bool


def test_ties_of_a_known_case():
    assert s.tied(["a", "b", "c"], [C("a", "b", True), C("a", "c", False), C("b", "c", False)]) == [["a", "c"], ["b", "c"]]
    assert s.tied(["a", "b", "c"], [C("a", "b", False), C("a", "c", False)]) == [["a", "b", "c"]]
    assert s.tied(["a", "b"], [C("a", "b", True)]) == [["a"], ["b"]]
    assert s.tied(["a"], []) == [["a"]]


@given(st.integers(1, 6), st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5))))
def test_ties_are_the_maximal_groups(n, separated_pairs):
    models = [f"m{i}" for i in range(n)]
    separated = {frozenset((models[i], models[j])) for i, j in separated_pairs if i != j and max(i, j) < n}
    comparisons = [C(a, b, frozenset((a, b)) in separated) for a, b in combinations(models, 2)]
    groups = s.tied(models, comparisons)
    assert {frozenset(g) for g in groups} == brute_force_groups(models, separated)
    assert len(groups) == len({frozenset(g) for g in groups})


# ---------------------------------------------------------------------------------------------
# A whole campaign, its edge cases, JSON


def test_a_campaign_compared():
    counts = [
        Counts("good", "p1", 11, 12), Counts("coin", "p1", 6, 12), Counts("bad", "p1", 0, 12),
        Counts("good", "p2", 12, 12), Counts("coin", "p2", 5, 12), Counts("bad", "p2", 1, 12),
    ]
    result = s.compare_models(counts, detect=0.2)
    assert result.models == ["good", "coin", "bad"] and result.tasks == ["p1", "p2"]
    assert len(result.rates) == 6 and len(result.pairs) == 6 and len(result.across_tasks) == 3
    assert result.comparisons == 9
    raw = [c.p_value for c in result.pairs + result.across_tasks]
    assert [c.p_holm for c in result.pairs + result.across_tasks] == pytest.approx(step_down(raw))
    good_bad = next(c for c in result.across_tasks if (c.model_a, c.model_b) == ("good", "bad"))
    assert good_bad.significant and good_bad.tasks == 2
    assert good_bad.p_value == pytest.approx(float(enumerated_stratified([(11, 12, 0, 12), (12, 12, 1, 12)])), rel=1e-9)
    assert all(p.detect == 0.2 and p.runs_needed == s.runs_needed(p.right_a / p.runs_a, 0.2) for p in result.pairs)
    assert result.ties[-1].task is None


def edge_campaigns():
    C = Counts
    return {
        "no runs at all": [C("a", "t", 0, 0), C("b", "t", 0, 0)],
        "one model only": [C("a", "t1", 3, 5), C("a", "t2", 0, 4)],
        "0/n against 0/n": [C("a", "t1", 0, 8), C("b", "t1", 0, 8), C("a", "t2", 0, 3), C("b", "t2", 0, 9)],
        "n/n against n/n": [C("a", "t1", 8, 8), C("b", "t1", 8, 8), C("a", "t2", 3, 3), C("b", "t2", 9, 9)],
        "equal rates": [C("a", "t", 4, 8), C("b", "t", 4, 8)],
        "a task only one model ran": [C("a", "t1", 4, 8), C("b", "t1", 6, 8), C("a", "t2", 2, 5)],
    }


@pytest.mark.parametrize("name", list(edge_campaigns()))
def test_edge_cases_give_json_without_nan(name):
    result = s.compare_models(edge_campaigns()[name], detect=0.2)
    text = json.dumps(dataclasses.asdict(result), allow_nan=False)  # raises on NaN or infinity
    assert json.loads(text)["models"] == result.models
    for c in result.pairs + result.across_tasks:
        if c.p_value is None:
            assert c.p_holm is None and c.significant is False
        else:
            assert c.p_value <= c.p_holm <= 1.0
    if name in ("0/n against 0/n", "n/n against n/n", "equal rates"):
        assert all(c.p_value == 1.0 and c.difference == 0.0 and not c.significant for c in result.pairs + result.across_tasks)
        assert result.ties[0].groups == [["a", "b"]]
    if name == "one model only":
        assert result.pairs == [] and result.across_tasks == [] and result.comparisons == 0
        assert [t.groups for t in result.ties] == [[["a"]], [["a"]]]
    if name == "no runs at all":
        assert result.comparisons == 0 and result.ties == [s.Ties("t", [])]
    if name == "a task only one model ran":
        gap = next(p for p in result.pairs if p.task == "t2")
        assert gap.p_value is None and gap.runs_b == 0
        assert result.across_tasks[0].tasks == 1 and result.across_tasks[0].tasks_left_out == ["t2"]
        assert result.ties[1] == s.Ties("t2", [["a"]])


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["t1", "t2", "t3"]), counts(max_runs=15)),
                min_size=1, max_size=9, unique_by=lambda x: (x[0], x[1])))
@settings(max_examples=50, deadline=None)
def test_any_campaign_gives_finite_json_with_ordered_intervals(found):
    result = s.compare_models([Counts(m, t, right, runs) for m, t, (runs, right) in found], detect=0.25)
    json.dumps(dataclasses.asdict(result), allow_nan=False)
    for r in result.rates:
        assert r.rate is None or r.rate_low <= r.rate <= r.rate_high
    for c in result.pairs + result.across_tasks:
        assert c.difference is None or -1 <= c.difference_low <= c.difference <= c.difference_high <= 1
        assert c.p_value is None or c.p_value <= c.p_holm


def test_every_field_is_explained_where_a_page_can_quote_it():
    for record in (s.Counts, s.Rate, s.PassK, s.Pair, s.AcrossTasks, s.Ties, s.Comparison):
        explained = s.explain(record)
        assert set(explained) == {f.name for f in dataclasses.fields(record)}
        for name, text in explained.items():
            assert len(text) > 5 and f"    {name}: {text}" in record.__doc__


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Counts("a", "t", 5, 3), "'right' \\(5\\) exceeds 'runs' \\(3\\)"),
        (lambda: Counts("a", "t", -1, 3), "'right' must be 0 or more"),
        (lambda: Counts("a", "t", 2.5, 3), "'right' must be a whole number"),
        (lambda: Counts("a", "t", True, 3), "'right' must be a whole number"),
        (lambda: Counts("", "t", 1, 3), "'model' must be a non-empty string"),
        (lambda: s.compare_models([Counts("a", "t", 1, 3), Counts("a", "t", 2, 3)]), "a on t appears twice"),
        (lambda: s.compare_pair(Counts("a", "t1", 1, 3), Counts("b", "t2", 1, 3)), "two tasks"),
    ],
)
def test_bad_counts_are_one_clear_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()
