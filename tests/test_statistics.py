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


def power_of(p_a, p_b, runs_a, runs_b, alpha=0.05):
    """Power of the two-sided test at alpha on Cohen's h, from scipy's normal distribution."""
    h = abs(2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b)))
    shift = h * math.sqrt(runs_a * runs_b / (runs_a + runs_b))
    z = norm.ppf(1 - alpha / 2)
    return norm.cdf(shift - z) + norm.cdf(-shift - z)


def around(rate, difference):
    """The two rates `difference` apart centred on `rate`, moved inside [0, 1]: what the power figures compare."""
    low = min(max(rate - difference / 2, 0.0), 1.0 - difference)
    return low, low + difference


@pytest.mark.parametrize("h, runs", [(0.5, 63), (0.8, 25)])
def test_runs_needed_matches_cohens_table(h, runs):
    # Cohen 1988, Table 6.4.1: n per sample for power 0.80 at two-sided 0.05; the pooled rate is the pair's centre.
    low = 0.3
    high = math.sin(math.asin(math.sqrt(low)) + h / 2) ** 2
    assert s.runs_needed((low + high) / 2, high - low) == runs


@pytest.mark.parametrize("rate, difference", [(0.5, 0.2), (0.1, 0.1), (0.9, 0.3), (0.0, 0.2), (1.0, 0.05), (0.6, 1.0)])
def test_runs_needed_gives_the_power(rate, difference):
    runs = s.runs_needed(rate, difference)
    low, high = around(rate, difference)
    assert power_of(low, high, runs, runs) >= 0.8
    assert runs == 1 or power_of(low, high, runs - 1, runs - 1) < 0.8  # the fewest


def test_runs_needed_at_a_known_value():
    # 0.5 against 0.7 (pooled 0.6): h = 2 asin(sqrt 0.7) - 2 asin(sqrt 0.5) = 0.4115; n = 2 ((z_.975 + z_.8) / h)^2 = 92.7.
    h = 2 * math.asin(math.sqrt(0.7)) - 2 * math.asin(math.sqrt(0.5))
    assert 2 * ((Z + norm.ppf(0.8)) / h) ** 2 == pytest.approx(92.7, abs=0.05)
    assert s.runs_needed(0.6, 0.2) == 93
    assert s.runs_needed(0.5, 1.0) == 2  # 0 against 1: h = pi; one run each has power 0.60, two 0.88


@pytest.mark.parametrize("tests, runs", [(1, 93), (5, 138), (18, 174)])
def test_runs_needed_at_the_threshold_holm_starts_from(tests, runs):
    # The closed form at 0.05 / tests (Holm's first step), 0.5 against 0.7: 93, 138 and 174 runs per model.
    h = 2 * math.asin(math.sqrt(0.7)) - 2 * math.asin(math.sqrt(0.5))
    closed = math.ceil(2 * ((norm.ppf(1 - 0.05 / tests / 2) + norm.ppf(0.8)) / h) ** 2)
    assert closed == runs
    assert s.runs_needed(0.6, 0.2, s.power_alpha(tests)) == runs


@pytest.mark.parametrize("rate, runs_a, runs_b", [(0.5, 12, 12), (0.2, 30, 10), (0.0, 20, 20), (1.0, 8, 8), (0.9, 100, 100), (0.7, 100, 100)])
@pytest.mark.parametrize("tests", [1, 7])
def test_detectable_difference_has_the_power(rate, runs_a, runs_b, tests):
    alpha = 0.05 / tests
    found = s.detectable_difference(rate, runs_a, runs_b, alpha)
    assert power_of(*around(rate, found), runs_a, runs_b, alpha) == pytest.approx(0.8, abs=1e-6)


def test_nothing_detectable_with_too_few_runs():
    assert s.detectable_difference(0.5, 1, 1) is None  # even 0 against 1 (h = pi) has power 0.60 only
    two = s.detectable_difference(0.5, 2, 2)  # 0 against 1 has 0.88: something near it is detected
    assert 0.9 < two < 1 and power_of(*around(0.5, two), 2, 2) == pytest.approx(0.8, abs=1e-6)
    three = s.detectable_difference(0.0, 3, 3)  # around 0 of 3, only upwards: about 0.83
    assert power_of(0.0, three, 3, 3) == pytest.approx(0.8, abs=1e-6)
    assert s.detectable_difference(None, 3, 3) is None and s.detectable_difference(0.5, 0, 3) is None
    assert s.runs_needed(None, 0.2) is None


def test_the_normal_approximation_is_optimistic_for_fishers_test_as_documented():
    # Fisher's exact power by enumerating every outcome of 12 runs each, at the detectable difference.
    runs = 12
    baseline, other = around(0.5, s.detectable_difference(0.5, runs, runs))
    chance = [math.comb(runs, x) * baseline**x * (1 - baseline) ** (runs - x) for x in range(runs + 1)]
    chance_other = [math.comb(runs, y) * other**y * (1 - other) ** (runs - y) for y in range(runs + 1)]
    power = sum(chance[x] * chance_other[y] for x, y in product(range(runs + 1), repeat=2)
                if float(enumerated_fisher(x, runs, y, runs)) <= 0.05)
    assert power == pytest.approx(0.7, abs=0.02)  # METHODS["power"] says "about 0.7, not 0.8"
    assert "about 0.7, not 0.8" in s.METHODS["power"]


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
    assert all(p.power_alpha == 0.05 / 9 and p.pooled_rate == (p.right_a + p.right_b) / (p.runs_a + p.runs_b)
               for p in result.pairs)
    assert all(p.detect == 0.2 and p.runs_needed == s.runs_needed(p.pooled_rate, 0.2, 0.05 / 9) for p in result.pairs)
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
    # the family the power figures were computed for is the family Holm's correction ran over
    assert result.comparisons == sum(c.p_value is not None for c in result.pairs + result.across_tasks)
    assert all(p.power_alpha == 0.05 / max(1, result.comparisons) for p in result.pairs)
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
    assert result.comparisons == sum(c.p_value is not None for c in result.pairs + result.across_tasks)
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


# ---------------------------------------------------------------------------------------------
# The instance as the unit: checked against statsmodels' cluster-robust OLS, scipy's paired t-test
# and binomtest, statsmodels' exact McNemar test and its t-test power, and by hand


I = s.InstanceCounts


def instance_counts(model, table, lesson="l"):
    """InstanceCounts of one model from [(right, runs)], instance i named i00, i01, ..."""
    return [I(model, lesson, f"i{i:02d}", k, n) for i, (k, n) in enumerate(table)]


def flags(table):
    """The runs of a table of (right, runs) per instance as 0/1 flags, with each run's instance."""
    y, groups = [], []
    for i, (k, n) in enumerate(table):
        y += [1.0] * k + [0.0] * (n - k)
        groups += [i] * n
    return y, groups


def score_ends(rate, runs, q):
    """Wilson's ends as the roots of (rate - p)^2 = q^2 p (1 - p) / runs, solved as a quadratic in p."""
    a, b, c = 1 + q * q / runs, -(2 * rate + q * q / runs), rate * rate
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@st.composite
def instance_tables(draw, min_instances=2, max_instances=12, max_runs=6):
    size = draw(st.integers(min_instances, max_instances))
    table = []
    for _ in range(size):
        n = draw(st.integers(1, max_runs))
        table.append((draw(st.integers(0, n)), n))
    return table


@pytest.mark.parametrize("seed", range(6))
def test_the_clustered_standard_error_is_statsmodels_cluster_robust_ols_on_a_constant(seed):
    import numpy as np
    import statsmodels.api as sm

    rng = np.random.default_rng(seed)
    table = []
    for _ in range(int(rng.integers(2, 15))):
        n = int(rng.integers(1, 8))
        table.append((int(rng.integers(0, n + 1)), n))
    y, groups = flags(table)
    if len(set(y)) < 2:
        table[0] = (1, 2) if table[0][0] != 1 else (0, 2)
        y, groups = flags(table)
    fit = sm.OLS(np.array(y), np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
    r = s.instance_rate(instance_counts("m", table))
    assert r.rate == pytest.approx(fit.params[0], abs=1e-12)
    assert r.standard_error == pytest.approx(fit.bse[0], rel=1e-10)
    assert r.instances == len(table) and r.runs == len(y) and r.right == sum(y)
    assert r.degrees_of_freedom == len(table) - 1 == fit.df_resid_inference


def test_the_instance_interval_by_hand_on_a_small_table():
    # 2 of 2, 0 of 2, 1 of 2: p = 1/2; residual sums 1, -1, 0; SE^2 = 3/2 * 2 / 36 = 1/12;
    # independent runs: (1/4) / 5 = 1/20; design effect 5/3; effective runs 6 / (5/3) = 3.6; t on 2 df.
    r = s.instance_rate(instance_counts("m", [(2, 2), (0, 2), (1, 2)]))
    assert (r.instances, r.runs, r.right, r.rate) == (3, 6, 3, 0.5)
    assert r.standard_error == pytest.approx(math.sqrt(1 / 12), rel=1e-12)
    assert r.design_effect == pytest.approx(5 / 3, rel=1e-12) and r.effective_runs == pytest.approx(3.6, rel=1e-12)
    t2 = 4.302652729749464  # Student's t, 0.975 quantile, 2 degrees of freedom (tables: 4.303)
    assert (r.rate_low, r.rate_high) == pytest.approx(score_ends(0.5, 3.6, t2), abs=1e-9)
    # centre 1/2; half width 4.3027 sqrt(0.25/3.6 + 18.513/(4 * 3.6^2)) / (1 + 18.513/3.6) = 4.3027 * 0.65312 / 6.1425
    assert r.rate_low == pytest.approx(0.5 - 0.45749, abs=1e-4) and r.rate_high == pytest.approx(0.5 + 0.45749, abs=1e-4)


@pytest.mark.parametrize("runs", [20, 100, 400])
def test_with_every_instance_run_once_it_is_wilsons_interval_with_t(runs):
    """One run per instance: the design effect is exactly 1 and the interval is Wilson's with t on
    n-1 degrees of freedom in place of z, close to Wilson's own (METHODS says so)."""
    from scipy.stats import t

    for right in sorted({1, runs // 10, runs // 2, runs - 3}):
        r = s.instance_rate(instance_counts("m", [(1, 1)] * right + [(0, 1)] * (runs - right)))
        assert r.design_effect == pytest.approx(1.0, rel=1e-12) and r.effective_runs == pytest.approx(runs)
        assert r.standard_error == pytest.approx(math.sqrt(right / runs * (1 - right / runs) / (runs - 1)), rel=1e-12)
        assert (r.rate_low, r.rate_high) == pytest.approx(score_ends(right / runs, runs, t.ppf(0.975, runs - 1)), abs=1e-9)
        low, high = scipy_wilson(right, runs)
        close = {20: 0.02, 100: 0.003, 400: 0.001}[runs]
        assert abs(r.rate_low - low) < close and abs(r.rate_high - high) < close
        assert r.rate_low <= low and r.rate_high >= high


def test_ten_identical_runs_of_one_instance_count_as_one_instance():
    one = s.instance_rate(instance_counts("m", [(10, 10)]))
    assert (one.instances, one.runs, one.right, one.rate) == (1, 10, 10, 1.0)
    assert (one.rate_low, one.rate_high, one.standard_error) == (None, None, None)  # nothing over instances
    # Ten instances run ten times each, every run of an instance alike (7 right, 3 wrong), against
    # ten instances run once and against a hundred instances run once: the same 70 of 100 runs.
    repeated = s.instance_rate(instance_counts("m", [(10, 10)] * 7 + [(0, 10)] * 3))
    once = s.instance_rate(instance_counts("m", [(1, 1)] * 7 + [(0, 1)] * 3))
    hundred = s.instance_rate(instance_counts("m", [(1, 1)] * 70 + [(0, 1)] * 30))
    assert (repeated.instances, repeated.runs, hundred.instances, hundred.runs) == (10, 100, 100, 100)
    assert repeated.design_effect == pytest.approx(11.0) and repeated.effective_runs == pytest.approx(100 / 11)
    width = {name: r.rate_high - r.rate_low for name, r in (("repeated", repeated), ("once", once), ("hundred", hundred))}
    assert width["repeated"] == pytest.approx(width["once"], rel=0.05)  # ten copies of a run add nearly nothing
    assert width["repeated"] > 2.5 * width["hundred"]  # about sqrt(10) times wider than a hundred instances
    wilson_runs = scipy_wilson(70, 100)
    assert repeated.rate_low < wilson_runs[0] - 0.2 and repeated.rate_high > wilson_runs[1] + 0.05


@given(instance_tables())
@settings(max_examples=200, deadline=None)
def test_the_instance_interval_holds_the_runs_wilson_interval(table):
    r = s.instance_rate(instance_counts("m", table))
    k, n = sum(x for x, _ in table), sum(y for _, y in table)
    low, high = s.wilson(k, n)
    assert 0.0 <= r.rate_low <= low + 1e-12 and high - 1e-12 <= r.rate_high <= 1.0
    assert r.rate_low <= r.rate <= r.rate_high
    assert r.effective_runs <= n + 1e-9
    json.dumps(dataclasses.asdict(r), allow_nan=False)


def test_all_right_or_all_wrong_has_a_wilson_interval_with_t_not_a_point():
    right = s.instance_rate(instance_counts("m", [(3, 3)] * 5))
    wrong = s.instance_rate(instance_counts("m", [(0, 3)] * 5))
    assert right.standard_error == 0 and right.design_effect is None and right.effective_runs == 15
    q = 2.7764451051977987  # t, 0.975 quantile, 4 degrees of freedom (tables: 2.776)
    assert right.rate_high == 1.0 and right.rate_low == pytest.approx(15 / (15 + q * q), rel=1e-9)
    assert wrong.rate_low == 0.0 and wrong.rate_high == pytest.approx(q * q / (15 + q * q), rel=1e-9)


def test_instances_without_runs_are_not_instances():
    r = s.instance_rate([I("m", "l", "a", 2, 3), I("m", "l", "b", 0, 0), I("m", "l", "c", 1, 3)])
    assert (r.instances, r.runs) == (2, 6)
    none = s.instance_rate([I("m", "l", "a", 0, 0)])
    assert (none.instances, none.runs, none.rate, none.rate_low) == (0, 0, None, None)


def paired_case(table_a, table_b):
    return s.compare_by_instance(instance_counts("a", table_a), instance_counts("b", table_b), detect=0.2)


@st.composite
def paired_tables(draw):
    size = draw(st.integers(1, 12))
    runs_a, runs_b = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    a = [(draw(st.integers(0, runs_a)), runs_a) for _ in range(size)]
    b = [(draw(st.integers(0, runs_b)), runs_b) for _ in range(size + draw(st.integers(0, 2)))]
    return a, b


@given(paired_tables())
@settings(max_examples=150, deadline=None)
def test_paired_by_instance_is_scipys_paired_t_and_sign_test(tables):
    from scipy.stats import ttest_rel

    table_a, table_b = tables
    p = paired_case(table_a, table_b)
    n = len(table_a)
    rates_a, rates_b = [k / m for k, m in table_a], [k / m for k, m in table_b[:n]]
    differences = [x - y for x, y in zip(rates_a, rates_b)]
    assert (p.instances, p.only_a, p.only_b) == (n, 0, len(table_b) - n)
    assert p.difference == pytest.approx(sum(differences) / n, abs=1e-12)
    assert p.rate_a - p.rate_b == pytest.approx(p.difference, abs=1e-12)
    ahead, behind = sum(d > 1e-12 for d in differences), sum(d < -1e-12 for d in differences)
    assert (p.a_ahead, p.b_ahead) == (ahead, behind)
    assert p.p_value == (1.0 if ahead + behind == 0 else pytest.approx(binomtest(ahead, ahead + behind).pvalue, rel=1e-12))
    assert p.smallest_p_value == pytest.approx(min(1.0, 2 * 0.5**n))
    if n >= 2 and max(differences) - min(differences) > 1e-12:  # differences equal but for round-off have no spread
        ci = ttest_rel(rates_a, rates_b).confidence_interval(0.95)
        assert p.difference_low == pytest.approx(max(-1.0, ci.low), abs=1e-9)
        assert p.difference_high == pytest.approx(min(1.0, ci.high), abs=1e-9)
        assert p.spread == pytest.approx(float(__import__("numpy").std(differences, ddof=1)), rel=1e-9)
    else:
        assert (p.difference_low, p.difference_high) == (None, None)
        assert p.instances_needed is None and p.instances_needed_note in (s.TOO_FEW_INSTANCES, s.NO_SPREAD)


@given(paired_tables())
@settings(max_examples=100, deadline=None)
def test_swapping_the_models_negates_the_difference_and_changes_nothing_else(tables):
    table_a, table_b = tables
    ab = s.compare_by_instance(instance_counts("a", table_a), instance_counts("b", table_b), detect=0.2)
    ba = s.compare_by_instance(instance_counts("b", table_b), instance_counts("a", table_a), detect=0.2)
    assert (ba.model_a, ba.model_b) == ("b", "a")
    assert ba.difference == pytest.approx(-ab.difference, abs=1e-15)
    if ab.difference_low is None:
        assert ba.difference_low is None and ba.difference_high is None
    else:
        assert (ba.difference_low, ba.difference_high) == pytest.approx((-ab.difference_high, -ab.difference_low), abs=1e-12)
    assert (ba.rate_a, ba.rate_b, ba.only_a, ba.only_b) == (ab.rate_b, ab.rate_a, ab.only_b, ab.only_a)
    assert (ba.a_ahead, ba.b_ahead) == (ab.b_ahead, ab.a_ahead)
    assert (ba.runs_per_instance_a, ba.runs_per_instance_b) == (ab.runs_per_instance_b, ab.runs_per_instance_a)
    for name in ("instances", "spread", "p_value", "smallest_p_value", "significant", "detectable_difference",
                 "instances_needed", "instances_needed_note", "detect"):
        assert getattr(ba, name) == getattr(ab, name), name


def test_with_one_run_per_instance_the_sign_test_is_the_exact_mcnemar_test():
    from statsmodels.stats.contingency_tables import mcnemar

    # 30 instances, one run each: both right on 12, a only on 9, b only on 2, neither on 7.
    a = [(1, 1)] * 12 + [(1, 1)] * 9 + [(0, 1)] * 2 + [(0, 1)] * 7
    b = [(1, 1)] * 12 + [(0, 1)] * 9 + [(1, 1)] * 2 + [(0, 1)] * 7
    p = paired_case(a, b)
    exact = mcnemar([[12, 9], [2, 7]], exact=True).pvalue
    assert p.p_value == pytest.approx(exact, rel=1e-12) and p.p_value == pytest.approx(0.06543, abs=5e-5)
    assert (p.a_ahead, p.b_ahead, p.instances) == (9, 2, 30)
    assert p.difference == pytest.approx(7 / 30)


def test_instances_only_one_model_ran_are_counted_and_left_out():
    a = [I("a", "l", name, k, 2) for name, k in (("x", 2), ("y", 1), ("z", 0), ("only-a", 2))]
    b = [I("b", "l", name, k, 3) for name, k in (("z", 3), ("y", 0), ("x", 0), ("only-b1", 1), ("only-b2", 0))]
    p = s.compare_by_instance(a, b + [I("b", "l", "not-run", 0, 0)])
    assert (p.instances, p.only_a, p.only_b) == (3, 1, 2)
    assert p.difference == pytest.approx(((1 - 0) + (0.5 - 0) + (0 - 1)) / 3)
    assert (p.runs_per_instance_a, p.runs_per_instance_b) == (2.0, 3.0)
    none = s.compare_by_instance([I("a", "l", "x", 1, 1)], [I("b", "l", "y", 1, 1)])
    assert (none.instances, none.difference, none.p_value, none.smallest_p_value, none.significant) == (0, None, None, None, False)


def test_the_paired_power_is_the_noncentral_t_as_statsmodels_gives_it():
    import numpy as np
    from statsmodels.stats.power import TTestPower

    checked = 0
    for n in (2, 3, 5, 10, 40, 300):
        for effect in np.linspace(0.05, 3, 25):
            expected = TTestPower().power(effect_size=effect, nobs=n, alpha=0.05, alternative="two-sided")
            if np.isfinite(expected):  # statsmodels gives NaN in places: the reason the module integrates
                assert s._paired_power(float(effect), n) == pytest.approx(expected, abs=1e-8)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("spread, detect", [(0.5, 0.2), (0.3, 0.2), (0.8, 0.1), (0.05, 0.2), (1.0, 1.0)])
def test_instances_needed_is_the_fewest_with_power_0_8(spread, detect):
    from statsmodels.stats.power import TTestPower

    needed, note = s.instances_needed(spread, detect)
    assert note is None and needed >= 2
    power = TTestPower().power(effect_size=detect / spread, nobs=needed, alpha=0.05, alternative="two-sided")
    assert power >= 0.8
    if needed > 2:
        assert TTestPower().power(effect_size=detect / spread, nobs=needed - 1, alpha=0.05, alternative="two-sided") < 0.8
    z = norm.ppf(0.975) + norm.ppf(0.8)
    assert (z * spread / detect) ** 2 <= needed <= (z * spread / detect) ** 2 + 3  # the normal formula, plus t's few


def test_instances_needed_at_a_known_value():
    # spread 0.5, detect 0.2: effect 0.4; the normal formula gives 49.05, the noncentral t 52 instances
    # (G*Power: 52 for d = 0.4, two-sided 0.05, power 0.8, matched pairs).
    assert s.instances_needed(0.5, 0.2) == (52, None)


@pytest.mark.parametrize("spread, detect", [(1.0, 0.003), (1.0, 1e-4), (1.4, 1e-7), (0.01, 1.0), (0.001, 1.0)])
def test_instances_needed_at_the_extremes_is_the_normal_count_give_or_take_an_instance(spread, detect):
    needed, note = s.instances_needed(spread, detect)
    normal = ((norm.ppf(0.975) + norm.ppf(0.8)) * spread / detect) ** 2
    assert note is None and max(2, math.ceil(normal)) <= needed <= max(2, math.ceil(normal)) + 3


def test_the_paired_power_has_no_nan_where_scipys_noncentral_t_has():
    from scipy.special import nctdtr
    from scipy.stats import t

    assert math.isnan(nctdtr(1, 5.5 * math.sqrt(2), -t.ppf(0.975, 1)))  # scipy's NaN (its lower tail) at power about 0.46
    found = [s._paired_power(effect, 2) for effect in (5.0, 5.5, 6.0)]
    assert 0.4 < found[0] < found[1] < found[2] < 0.6  # a hand check: about P(|T| > 12.7) with T nc t(1, e sqrt 2)


def test_instances_needed_cannot_always_be_estimated_and_says_why():
    assert s.instances_needed(None, 0.2) == (None, s.TOO_FEW_INSTANCES)
    assert s.instances_needed(0.0, 0.2) == (None, s.NO_SPREAD)
    assert s.instances_needed(0.4, None) == (None, s.NOT_ASKED)
    assert s.instances_needed(2.0, 5e-324) == (None, s.TOO_SMALL)
    same = paired_case([(2, 2)] * 6, [(1, 2)] * 6)  # every instance gives +0.5: no spread
    assert (same.difference, same.spread, same.difference_low) == (0.5, 0.0, None)
    assert (same.instances_needed, same.instances_needed_note, same.detectable_difference) == (None, s.NO_SPREAD, None)
    assert same.p_value == pytest.approx(2 * 0.5**6)
    thirds = paired_case([(1, 10)] * 3, [(0, 10)] * 3)  # +0.1 on each: no spread (their mean rounds to 0.1 + 1e-17)
    assert (thirds.spread, thirds.difference_low, thirds.instances_needed_note) == (0.0, None, s.NO_SPREAD)
    one = paired_case([(1, 2)], [(0, 2)])
    assert (one.instances_needed_note, one.spread, one.difference_low) == (s.TOO_FEW_INSTANCES, None, None)


def test_the_detectable_difference_by_instances_has_the_power():
    from statsmodels.stats.power import TTestPower

    for spread, n in ((0.4, 10), (0.25, 30), (0.6, 100)):
        found = s.detectable_by_instances(spread, n)
        power = TTestPower().power(effect_size=found / spread, nobs=n, alpha=0.05, alternative="two-sided")
        assert power == pytest.approx(0.8, abs=1e-6)
    assert s.detectable_by_instances(0.5, 3) is None  # would exceed 1: nothing detectable


def test_two_programs_with_known_rates_over_100_instances():
    """Program a is right with chance 0.85 on easy instances and 0.55 on hard ones, program b with
    0.6 and 0.25; half the instances hard, three runs each: a is ahead by about 0.275."""
    import numpy as np

    rng = np.random.default_rng(2025)
    hard = [i % 2 == 1 for i in range(100)]
    a = [(int(rng.binomial(3, 0.55 if h else 0.85)), 3) for h in hard]
    b = [(int(rng.binomial(3, 0.25 if h else 0.6)), 3) for h in hard]
    p = paired_case(a, b)
    assert p.instances == 100 and p.difference > 0 and p.a_ahead > 2 * p.b_ahead
    assert p.difference_low < 0.275 < p.difference_high and p.difference_low > 0.1
    assert p.significant and p.p_value < 1e-6
    assert s.instance_rate(instance_counts("a", a)).rate_low > s.instance_rate(instance_counts("b", b)).rate_high - 0.2
    result = s.compare_instances(instance_counts("b", b) + instance_counts("a", a), detect=0.2, order=["a", "b"])
    (pair,) = result.pairs
    assert (pair.model_a, pair.model_b, pair.difference) == ("a", "b", p.difference) and pair.significant


def test_instance_comparisons_of_a_campaign_with_holm_over_them():
    counts = (instance_counts("good", [(3, 3)] * 8 + [(2, 3)] * 2) + instance_counts("coin", [(1, 3), (2, 3)] * 5)
              + instance_counts("bad", [(0, 3)] * 9) + instance_counts("good", [(1, 1)] * 4, lesson="m"))
    result = s.compare_instances(counts, detect=0.2)
    assert result.models == ["good", "coin", "bad"] and result.lessons == ["l", "m"]
    assert [(r.lesson, r.model, r.instances) for r in result.rates] == [
        ("l", "good", 10), ("l", "coin", 10), ("l", "bad", 9), ("m", "good", 4), ("m", "coin", 0), ("m", "bad", 0)]
    assert len(result.pairs) == 6 and result.comparisons == 3  # no instance shared on m
    raw = [p.p_value for p in result.pairs if p.p_value is not None]
    assert [p.p_holm for p in result.pairs if p.p_value is not None] == pytest.approx(step_down(raw))
    good_bad = next(p for p in result.pairs if (p.lesson, p.model_a, p.model_b) == ("l", "good", "bad"))
    assert (good_bad.instances, good_bad.only_a, good_bad.a_ahead) == (9, 1, 9) and good_bad.significant
    json.dumps(dataclasses.asdict(result), allow_nan=False)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("lm"), st.sampled_from(["x", "y", "z", "w"]),
                          counts(max_runs=5)), min_size=1, max_size=20, unique_by=lambda x: (x[0], x[1], x[2])))
@settings(max_examples=50, deadline=None)
def test_any_campaign_by_instance_gives_finite_json_with_ordered_intervals(found):
    result = s.compare_instances([I(m, lesson, i, right, runs) for m, lesson, i, (runs, right) in found], detect=0.25)
    json.dumps(dataclasses.asdict(result), allow_nan=False)
    assert result.comparisons == sum(p.p_value is not None for p in result.pairs)  # the power figures' family is Holm's
    assert all(p.power_alpha == 0.05 / max(1, result.comparisons) for p in result.pairs)
    for r in result.rates:
        assert r.rate_low is None or r.rate_low <= r.rate <= r.rate_high
    for p in result.pairs:
        assert p.difference_low is None or -1 <= p.difference_low <= p.difference <= p.difference_high <= 1
        assert p.p_value is None or p.p_value <= p.p_holm


def test_every_instance_field_is_explained():
    for record in (s.InstanceCounts, s.InstanceRate, s.InstancePair, s.ByInstance):
        explained = s.explain(record)
        assert set(explained) == {f.name for f in dataclasses.fields(record)}
        for name, text in explained.items():
            assert len(text) > 5 and f"    {name}: {text}" in record.__doc__
    for key in ("instance_rate", "instance_pair", "sign_test", "instance_power", "instance_multiple_comparisons"):
        assert key in s.METHODS


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: I("a", "l", "x", 5, 3), "'right' \\(5\\) exceeds 'runs' \\(3\\)"),
        (lambda: I("a", "l", "x", -1, 3), "'right' must be 0 or more"),
        (lambda: I("a", "l", "x", 1.5, 3), "'right' must be a whole number"),
        (lambda: I("a", "l", "", 1, 3), "'instance' must be a non-empty string"),
        (lambda: s.instance_rate([]), "no counts"),
        (lambda: s.instance_rate([I("a", "l", "x", 1, 3), I("a", "l", "x", 2, 3)]), "instance appears twice"),
        (lambda: s.instance_rate([I("a", "l", "x", 1, 3), I("b", "l", "y", 2, 3)]), "one model on one lesson"),
        (lambda: s.compare_by_instance([I("a", "l", "x", 1, 3)], [I("b", "m", "x", 1, 3)]), "two lessons"),
        (lambda: s.compare_by_instance([I("a", "l", "x", 1, 3)], [I("b", "l", "x", 1, 3)], detect=0), "difference to detect"),
        (lambda: s.instances_needed(-0.1, 0.2), "spread must be a number 0 or more"),
        (lambda: s.compare_instances([I("a", "l", "x", 1, 3)], detect=1.5), "difference to detect"),
    ],
)
def test_bad_instance_counts_are_one_clear_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()
