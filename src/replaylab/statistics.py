"""Statistics for comparing the models of a campaign, from counts of right runs.

Pure functions on counts (how many of a model's runs of a task were right): no files, no tables.
Every record is a frozen dataclass whose fields are JSON-ready (int, str, finite float, bool, None,
or lists of those): `dataclasses.asdict` gives what a JSON file or a CSV row holds, under the same
names. Each field carries its explanation (`explain(Record)`), so a page can print a legend in the
words used here; `METHODS` names each method and its reference.

The methods are library calls (statsmodels, scipy) wherever a library has the method. Runs of two
models on one task are independent samples (nothing pairs run i of one model with run i of the
other). Tasks are never pooled: across tasks, two models are compared task by task and the per-task
differences combined, with the number of tasks stated.

Runs of one instance (one question of a lesson's family, with its own numbers) share that question,
so they are not independent evidence about a model. The instance statistics (`InstanceCounts` on)
take the instance as the unit: a model's rate with an interval clustered by instance, two models
compared paired by instance, and the instances a paired comparison needs; each states how many
instances it rests on. They are exact formulas on the counts (no random resampling), so anyone can
recompute them from the per-instance table. The clustered standard error is written out here
(statsmodels' cluster-robust OLS gives the same, as the tests check), and so is the paired t-test's
power (scipy's and statsmodels' noncentral t give NaN in places).
"""

import dataclasses
import math
import operator
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, SupportsFloat, TypeVar, cast

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import ndtr
from scipy.stats import binomtest, fisher_exact, hypergeom, norm
from scipy.stats import t as student_t
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

ALPHA = 0.05  # two-sided: 95 % intervals, tests significant at 0.05 (after Holm's correction)
POWER = 0.8  # the chance of detecting a difference that the power calculations aim at
EQUIVALENCE_ALPHA = 2 * ALPHA  # two one-sided tests at 0.05 each: the 90 % interval inside the margin
ROUND_OFF = 1e-12  # a difference of rates smaller than this is round-off of a zero one
TIE_TOLERANCE = 1 + 1e-7  # outcomes this close in probability to the observed one count as as likely (as scipy's fisher_exact)

METHODS = {
    "rate_interval": "Wilson score interval, 95 % (Wilson 1927, JASA 22:209-212; method 3 of Newcombe 1998, "
    "Stat Med 17:857-872), statsmodels proportion_confint(method='wilson').",
    "rule_of_three": "Rule of three (Hanley & Lippman-Hand 1983, JAMA 249:1743-1745): at 0 of n right, 3/n bounds "
    "the rate from above with about 95 % confidence (one-sided); always at or above the exact one-sided bound "
    "1 - 0.05^(1/n). At n of n, 1 - 3/n bounds it from below.",
    "pass_at_k": "pass@k, the unbiased estimator of Chen et al. 2021 (arXiv 2107.03374): 1 - C(n-c,k)/C(n,k), "
    "the chance that k runs drawn without replacement from the n include a right one.",
    "pass_hat_k": "pass^k of tau-bench (Yao et al. 2024, arXiv 2406.12045): C(c,k)/C(n,k), the chance that k runs "
    "drawn without replacement from the n are all right.",
    "difference_interval": "Newcombe's hybrid score interval for a difference of two independent proportions, 95 % "
    "(method 10 of Newcombe 1998, Stat Med 17:873-890), statsmodels confint_proportions_2indep(method='newcomb').",
    "exact_test": "Fisher's exact test, two-sided (the p-value sums the probabilities, given the margins, of every "
    "table at most as likely as the one observed), scipy.stats.fisher_exact.",
    "combined_difference": "Mantel-Haenszel weighted mean of the per-task differences, weight n_a*n_b/(n_a+n_b) per "
    "task (Greenland & Robins 1985, Biometrics 41:55-68), with a 95 % interval that combines the per-task Wilson "
    "intervals (MOVER-Wilson for a linear function of proportions: Zou, Huang & Zhang 2009, CSDA 53:1080-1085; "
    "with one task it is Newcombe's method 10).",
    "stratified_test": "Exact conditional test of no difference on any task (the exact Cochran-Mantel-Haenszel test; "
    "Mehta, Patel & Gray 1985, JASA 80:969-973): model a's right runs summed over the tasks, whose null "
    "distribution given every task's margins is the convolution of the tasks' hypergeometric distributions; "
    "two-sided as Fisher's (with one task it is Fisher's test).",
    "multiple_comparisons": "Holm's step-down correction (Holm 1979, Scand J Stat 6:65-70) over every p-value of one "
    "comparison (all pairs of models on all tasks, and the comparisons across tasks), statsmodels "
    "multipletests(method='holm'); a comparison is significant when its adjusted p-value is at most 0.05.",
    "power": "Normal approximation on Cohen's h = 2 asin(sqrt p1) - 2 asin(sqrt p2) (Cohen 1988, ch. 6), statsmodels "
    "NormalIndPower, power 0.8, for two rates centred on the pooled rate of both models (so the figures are the same "
    "whichever model is named first), two-sided at 0.05 divided by the number of tests of the page: the threshold of "
    "the first, strictest step of Holm's correction, which the page's verdicts use (20 points from 0.5 to 0.7 "
    "need 93 runs each at 0.05, 138 with 5 tests, 174 with 18). It is optimistic for the exact test reported here, "
    "the more so at small n: at 12 runs each around a rate of 0.5 at 0.05, Fisher's test detects the difference "
    "called detectable with power about 0.7, not 0.8. Treat the detectable difference and the runs needed as lower "
    "bounds.",
    "equivalence": "Two one-sided tests (TOST; Schuirmann 1987, J Pharmacokinet Biopharm 15:657-680) with the margin "
    "`detect`: two models are called tied (on a task, or across tasks) only when the 90 % interval of their "
    "difference (Newcombe's; across tasks, MOVER-Wilson) lies inside ±detect. A test that does not separate two "
    "models says only that: they are not separated, which is not evidence that they are equal.",
    "heterogeneity": "Breslow-Day test of one odds ratio over the tasks combined, with Tarone's correction (Breslow & "
    "Day 1980, IARC Sci Publ 32; Tarone 1985, Biometrika 72:91-95), statsmodels StratifiedTable.test_equal_odds, "
    "0.5 added to the cells of a task with a zero cell. A small p-value (below 0.05, not corrected) says the "
    "difference varies across tasks, perhaps in direction: the combined difference then hides opposite effects, "
    "and the page names the tasks on which each model is ahead.",
    "distinct_runs": "Runs of one model and task whose replayed transcripts are identical (the same calls, results, "
    "texts and answer: a deterministic model asked the same question again) are one piece of evidence, not several: "
    "the tests by task and across tasks count each distinct transcript of a model and task once (its outcome is the "
    "same for every copy). The scorecard keeps every run, and says how many were distinct.",
    "instance_rate": "A model's rate over the instances of a lesson, the instance as the unit (runs of one instance "
    "share its question, so they are not independent): k/n over all its runs, with the cluster-robust standard error "
    "over instances, SE^2 = C/(C-1) * sum_i (k_i - n_i k/n)^2 / n^2 for C instances with k_i of n_i right (Liang & "
    "Zeger 1986, Biometrika 73:13-22; the small-sample factor C/(C-1) and C-1 degrees of freedom as in Cameron & "
    "Miller 2015, J Hum Resour 50:317-372; for evals, Miller 2024, arXiv 2411.00640, clustered standard errors). It "
    "is the standard error of statsmodels' OLS of the right flag on a constant with cov_type='cluster'. The 95 % "
    "interval is Wilson's score interval on the effective number of runs n/deff, where deff = SE^2 / (p(1-p)/(n-1)) is "
    "the design effect (Kish 1965, Survey Sampling), taken as 1 when it is below 1 or cannot be estimated (every run "
    "right, or every run wrong), with the t quantile on C-1 degrees of freedom in place of z (the effective sample "
    "size and degrees-of-freedom adjustment of Korn & Graubard 1998, Survey Methodology 24:193-201, applied to "
    "Wilson's interval). A normal (CLT) interval from the SE alone would be a single point at 0 % or 100 % and too "
    "narrow with few instances (Bowyer, Aitchison & Ivanova 2025, arXiv 2503.01747); Wilson's form is not. With "
    "every instance run once, deff is exactly 1 and the interval is Wilson's with t on n-1 degrees of freedom in "
    "place of z (at 100 runs, t = 1.98 against z = 1.96). With one instance there is no interval.",
    "instance_pair": "Two models paired by instance (Miller 2024, arXiv 2411.00640, paired differences): on each "
    "instance both ran, model a's share of right runs minus model b's; their mean over the instances, with the "
    "paired t interval (mean +- t on n-1 degrees of freedom times the standard deviation of the differences over "
    "sqrt(n): scipy.stats.ttest_rel on the per-instance rates gives the same). Instances only one model ran are "
    "counted and left out. When every instance gives the same difference the spread is 0 and no interval is given "
    "(a single point would claim a precision the instances do not show).",
    "sign_test": "The exact two-sided sign test over the instances where the two models' rates differ (Dixon & Mood "
    "1946, JASA 41:557-566): how many favour model a, against Binomial(m, 1/2), scipy.stats.binomtest; it assumes "
    "no normality, and with one run per instance it is the exact McNemar test (McNemar 1947, Psychometrika "
    "12:153-157). With no instance that differs, p = 1.",
    "instance_power": "Instances needed: the fewest instances for which a paired t-test at 0.05 (two-sided) detects a "
    "mean difference of `detect` with power 0.8 (the noncentral t distribution, integrated numerically), taking the standard "
    "deviation of the per-instance differences as observed at the current runs per instance (Miller 2024, arXiv "
    "2411.00640, power analysis); it depends on the spread only, so it is the same whichever model is named first. "
    "More runs per instance shrink the part of the spread that is run-to-run noise, not the part between instances. "
    "The page's test is the sign test, which uses only the signs and usually detects less than the t-test: treat the "
    "figure as a lower bound. None, with the reason, when fewer than two instances were compared or their "
    "differences do not vary.",
    "instance_multiple_comparisons": "Holm's step-down correction (Holm 1979) over the sign tests of the comparisons "
    "by instance (every pair of models on every lesson), a family of its own: the tests by task and across tasks "
    "keep their own correction.",
    "not_separated": "Models no test separates: the largest groups of models no two of which a significant "
    "(Holm-adjusted) comparison separates (maximal cliques, Bron & Kerbosch 1973); a model can be in several groups. "
    "Not separated is not tied: that is the equivalence test's to say.",
}


def doc(text: str) -> Any:
    """A dataclass field that carries its explanation (see `explain`)."""
    return field(metadata={"doc": text})


def explain(record: "DataclassInstance | type[DataclassInstance]") -> dict[str, str]:
    """{field name: explanation} of a record class or record, for a page's legend."""
    return {f.name: f.metadata["doc"] for f in dataclasses.fields(record)}


_Record = TypeVar("_Record", bound="DataclassInstance")


def _documented(cls: type[_Record]) -> type[_Record]:
    """Append each field's explanation to the class's docstring (one source for both)."""
    lines = [f"    {name}: {text}" for name, text in explain(cls).items()]
    cls.__doc__ = (cls.__doc__ or "").rstrip() + "\n\n    Fields:\n" + "\n".join(lines) + "\n"
    return cls


def _number(value: SupportsFloat | None) -> float | None:
    """A finite Python float, or None (never NaN or infinity, which JSON does not allow)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------------------------------
# Input


@_documented
@dataclass(frozen=True)
class Counts:
    """How many of a model's runs of a task were right: what every statistic here starts from."""

    model: str = doc("The model (or scripted program) that made the runs.")
    task: str = doc("The task the runs were of (a lesson variant).")
    right: int = doc("How many of the runs were judged right.")
    runs: int = doc("How many runs were judged (right or wrong).")

    def __post_init__(self) -> None:
        _check_counts(self, "counts", ("model", "task"), f"counts of {self.model} on {self.task}")


def _check_counts(record: "Counts | InstanceCounts", kind: str, names: Iterable[str], where: str) -> None:
    """One ValueError line for a record whose names are not non-empty strings, or whose right and
    runs are not whole numbers with 0 <= right <= runs; the numbers are stored as plain ints."""
    for name in names:
        if not isinstance(getattr(record, name), str) or not getattr(record, name):
            raise ValueError(f"{kind}: '{name}' must be a non-empty string, not {getattr(record, name)!r}")
    for name in ("right", "runs"):
        value = getattr(record, name)
        if isinstance(value, bool):
            raise ValueError(f"{where}: '{name}' must be a whole number, not {value!r}")
        try:
            value = operator.index(value)
        except TypeError:
            raise ValueError(f"{where}: '{name}' must be a whole number, not {value!r}") from None
        if value < 0:
            raise ValueError(f"{where}: '{name}' must be 0 or more, not {value}")
        object.__setattr__(record, name, value)
    if record.right > record.runs:
        raise ValueError(f"{where}: 'right' ({record.right}) exceeds 'runs' ({record.runs})")


# ---------------------------------------------------------------------------------------------
# One model on one task


@_documented
@dataclass(frozen=True)
class Rate:
    """A model's share of right runs on one task, with its 95 % Wilson interval."""

    model: str = doc("The model.")
    task: str = doc("The task.")
    right: int = doc("Runs judged right (k).")
    runs: int = doc("Runs judged (n).")
    rate: float | None = doc("k/n, the share of runs that were right; None without runs.")
    rate_low: float | None = doc("Lower end of the 95 % Wilson score interval of the rate; None without runs.")
    rate_high: float | None = doc("Upper end of the 95 % Wilson score interval of the rate; None without runs.")
    rule_of_three_high: float | None = doc(
        "Only at 0 of n right: 3/n (at most 1), the rule of three's one-sided 95 % upper bound on the rate; None otherwise."
    )
    rule_of_three_low: float | None = doc(
        "Only at n of n right: 1 - 3/n (at least 0), the rule of three's one-sided 95 % lower bound on the rate; None otherwise."
    )


def wilson(right: int, runs: int, alpha: float = ALPHA) -> tuple[float, float] | tuple[None, None]:
    """The 1 - alpha (95 %) Wilson score interval (low, high) of right/runs; (None, None) without
    runs. The ends are exactly 0 at 0 of n and exactly 1 at n of n, where the score interval
    touches them."""
    if runs == 0:
        return None, None
    low, high = proportion_confint(right, runs, alpha=alpha, method="wilson")
    low = 0.0 if right == 0 else min(max(float(low), 0.0), right / runs)
    high = 1.0 if right == runs else max(min(float(high), 1.0), right / runs)
    return low, high


def rate(counts: Counts) -> Rate:
    """k of n, the rate and its 95 % Wilson interval; the rule of three at 0 of n and n of n."""
    right, runs = counts.right, counts.runs
    low, high = wilson(right, runs)
    return Rate(
        model=counts.model,
        task=counts.task,
        right=right,
        runs=runs,
        rate=right / runs if runs else None,
        rate_low=low,
        rate_high=high,
        rule_of_three_high=min(1.0, 3 / runs) if runs and right == 0 else None,
        rule_of_three_low=max(0.0, 1 - 3 / runs) if runs and right == runs else None,
    )


@_documented
@dataclass(frozen=True)
class PassK:
    """pass@k and pass^k of a model on one task, for one k."""

    model: str = doc("The model.")
    task: str = doc("The task.")
    k: int = doc("How many runs are drawn (1 to the number of runs).")
    pass_at_k: float = doc(
        "pass@k: the chance that k runs drawn at random (without replacement) from this model's runs include at "
        "least one right run, 1 - C(n-c,k)/C(n,k) (Chen et al. 2021)."
    )
    pass_hat_k: float = doc(
        "pass^k: the chance that k runs drawn at random (without replacement) from this model's runs are all "
        "right, C(c,k)/C(n,k) (tau-bench); it measures consistency."
    )


def shown_ks(runs: int, every: int = 20) -> list[int]:
    """The k for which pass@k and pass^k are given: every k up to `every`, then 1-2-5 steps and n
    itself (thousands of runs would otherwise give thousands of rows of huge binomials)."""
    ks = set(range(1, min(runs, every) + 1))
    step = 10
    while step <= runs:
        ks.update(k for k in (step, 2 * step, 5 * step) if k <= runs)
        step *= 10
    return sorted(ks | ({runs} if runs else set()))


def pass_k(counts: Counts, ks: Iterable[int] | None = None) -> list[PassK]:
    """pass@k and pass^k for each k of `ks` (by default every k the runs allow, 1..n); none without
    runs. Ratios of whole numbers (binomial coefficients), each rounded once: pass@1 and pass^1 are
    exactly c/n."""
    n, c = counts.runs, counts.right
    ks = range(1, n + 1) if ks is None else [k for k in ks if 1 <= k <= n]
    return [
        PassK(
            model=counts.model,
            task=counts.task,
            k=k,
            pass_at_k=(math.comb(n, k) - math.comb(n - c, k)) / math.comb(n, k),  # C(n-c, k) is 0 for k > n-c
            pass_hat_k=math.comb(c, k) / math.comb(n, k),
        )
        for k in ks
    ]


# ---------------------------------------------------------------------------------------------
# Two models on one task


def fisher_p(a: Counts, b: Counts) -> float | None:
    """Two-sided p-value of Fisher's exact test of a.right/a.runs against b.right/b.runs; None when
    either has no runs."""
    if a.runs == 0 or b.runs == 0:
        return None
    table = [[a.right, a.runs - a.right], [b.right, b.runs - b.right]]
    return min(1.0, float(fisher_exact(table, alternative="two-sided").pvalue))


def newcombe(a: Counts, b: Counts, alpha: float = ALPHA) -> tuple[float, float] | tuple[None, None]:
    """The 1 - alpha (95 %) interval (low, high) of a's rate minus b's by Newcombe's hybrid score
    method (method 10); (None, None) when either has no runs."""
    if a.runs == 0 or b.runs == 0:
        return None, None
    low, high = confint_proportions_2indep(a.right, a.runs, b.right, b.runs, method="newcomb", compare="diff", alpha=alpha)
    difference = a.right / a.runs - b.right / b.runs
    return max(-1.0, min(float(low), difference)), min(1.0, max(float(high), difference))


def smallest_fisher_p(runs_a: int, runs_b: int) -> float | None:
    """The smallest p-value Fisher's test can give with these numbers of runs (every run of one
    model right, every run of the other wrong); None when either has no runs."""
    if runs_a == 0 or runs_b == 0:
        return None
    ahead, behind = Counts("a", "t", runs_a, runs_a), Counts("b", "t", 0, runs_b)  # and the other way round:
    return min(cast(float, fisher_p(ahead, behind)),  # both with runs: a p-value each
               cast(float, fisher_p(Counts("a", "t", 0, runs_a), Counts("b", "t", runs_b, runs_b))))  # equal but for rounding


def power_alpha(tests: int) -> float:
    """The two-sided threshold a power figure uses when Holm's correction is over `tests` p-values:
    0.05 / tests, the threshold of Holm's first and strictest step (a difference detected there is
    significant after the correction, whichever the other p-values are)."""
    return ALPHA / max(1, tests)


def pooled(a: Counts, b: Counts) -> float | None:
    """The two models' runs taken together: their share of right runs, the same whichever is named
    first; None when neither has runs."""
    runs = a.runs + b.runs
    return (a.right + b.right) / runs if runs else None


def centred(rate: float, difference: float) -> tuple[float, float]:
    """Two rates `difference` apart, centred on `rate` (moved inside [0, 1] where the centre is
    too near an end): (lower, higher). Power figures start from them, so that they do not depend
    on which model is named first."""
    low = min(max(rate - difference / 2, 0.0), 1.0 - difference)
    return low, low + difference


def _cohens_h(rate: float, difference: float) -> float:
    """Cohen's h between the two rates `difference` apart centred on `rate`."""
    low, high = centred(rate, difference)
    return 2 * math.asin(math.sqrt(high)) - 2 * math.asin(math.sqrt(low))


def detectable_difference(rate: float | None, runs_a: int, runs_b: int, alpha: float = ALPHA) -> float | None:
    """The smallest difference of two rates centred on `rate` (the pooled rate of both models) that
    a two-sided test at `alpha` with these runs detects with power 0.8 (Cohen's h, normal
    approximation); None without runs, or when even 0 against 1 is not detected."""
    if rate is None or runs_a == 0 or runs_b == 0:
        return None
    h = _effect_detected(runs_a, runs_b, alpha)
    if _cohens_h(rate, 1.0) < h:  # 0 against 1: h = pi, the largest there is
        return None
    return _number(brentq(lambda d: _cohens_h(rate, d) - h, 0.0, 1.0, xtol=1e-12))


def _power(h: float, runs_a: int, runs_b: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided test at `alpha` for Cohen's h with these runs (statsmodels)."""
    return cast(float, NormalIndPower().power(h, nobs1=runs_a, alpha=alpha, ratio=runs_b / runs_a, alternative="two-sided"))


def _effect_detected(runs_a: int, runs_b: int, alpha: float = ALPHA) -> float:
    """The Cohen's h detected with power 0.8: the root of statsmodels' power function, found to
    1e-12 (its own solve_power stops about 1e-6 short in power)."""
    return cast(float, brentq(lambda h: _power(h, runs_a, runs_b, alpha) - POWER, 1e-9, 100.0, xtol=1e-12))


def runs_needed(rate: float | None, difference: float, alpha: float = ALPHA) -> int | None:
    """Runs per model (on one task) that a two-sided test at `alpha` needs to detect two rates
    `difference` apart, centred on `rate` (the pooled rate), with power 0.8 (Cohen's h, normal
    approximation); None without a rate."""
    if rate is None:
        return None
    if not 0 <= rate <= 1:
        raise ValueError(f"runs needed: the pooled rate must be between 0 and 1, not {rate!r}")
    if not (isinstance(difference, (int, float)) and not isinstance(difference, bool) and 0 < difference <= 1):
        raise ValueError(f"runs needed: the difference to detect must be a number above 0 and at most 1, not {difference!r}")
    h = _cohens_h(rate, difference)
    if h <= 0:  # a difference below float resolution moves no rate
        return None
    # A start, 2 ((z_(1-alpha/2) + z_0.8) / h)^2 (one tail), then the fewest runs whose power by statsmodels is 0.8,
    # by bisection (the power grows with the runs; its solve_power warns of a negative square root at large h).
    start: int = max(1, math.ceil(2 * ((norm.ppf(1 - alpha / 2) + norm.ppf(POWER)) / h) ** 2))
    enough, step = start, 1
    while _power(h, enough, enough, alpha) < POWER:
        enough, step = enough + step, 2 * step
    too_few, step = enough - 1, 1
    while too_few >= 1 and _power(h, too_few, too_few, alpha) >= POWER:
        enough, too_few, step = too_few, max(0, too_few - step), 2 * step
    while enough - too_few > 1:  # power(too_few) < 0.8 <= power(enough); too_few 0: no runs
        middle = (too_few + enough) // 2
        too_few, enough = (too_few, middle) if _power(h, middle, middle, alpha) >= POWER else (middle, enough)
    return enough


@_documented
@dataclass(frozen=True)
class Pair:
    """Two models on one task: the difference of their rates, its interval and an exact test."""

    task: str = doc("The task.")
    model_a: str = doc("The first model of the pair.")
    model_b: str = doc("The second model of the pair.")
    right_a: int = doc("Model a's runs judged right.")
    runs_a: int = doc("Model a's runs judged.")
    right_b: int = doc("Model b's runs judged right.")
    runs_b: int = doc("Model b's runs judged.")
    difference: float | None = doc("Model a's rate minus model b's (from -1 to 1); None when either has no runs.")
    difference_low: float | None = doc(
        "Lower end of the 95 % interval of the difference (Newcombe's hybrid score method); None when either has no runs."
    )
    difference_high: float | None = doc(
        "Upper end of the 95 % interval of the difference (Newcombe's hybrid score method); None when either has no runs."
    )
    p_value: float | None = doc(
        "Two-sided p-value of Fisher's exact test of equal rates, before any correction; None when either has no runs."
    )
    smallest_p_value: float | None = doc(
        "The smallest p-value Fisher's test could give with these numbers of runs; at 0.05 or above no outcome "
        "could be significant: too few runs. None when either has no runs."
    )
    p_holm: float | None = doc(
        "The p-value adjusted by Holm's correction over every comparison of the campaign; None when no test ran."
    )
    significant: bool = doc("Whether the Holm-adjusted p-value is at most 0.05: the rates differ beyond chance.")
    pooled_rate: float | None = doc(
        "Both models' runs taken together: their share of right runs, where the power figures start from (the same "
        "whichever model is named first); None when neither has runs."
    )
    power_alpha: float = doc(
        "The two-sided threshold of the power figures: 0.05 over the number of tests Holm's correction is over (its "
        "first, strictest step), so that they hold for the verdicts the page gives."
    )
    detectable_difference: float | None = doc(
        "The smallest difference of two rates centred on the pooled rate that these numbers of runs detect with 80 % "
        "power (two-sided, at power_alpha; Cohen's h); None when no difference can be detected or either has no runs."
    )
    detect: float | None = doc(
        "The difference asked about (runs_needed is for it, and it is the margin of the equivalence test); None when "
        "none was asked."
    )
    runs_needed: int | None = doc(
        "Runs per model on this task needed to detect two rates `detect` apart, centred on the pooled rate, with 80 % "
        "power (two-sided, at power_alpha; Cohen's h); None when none was asked or neither has runs."
    )
    equivalent: bool = doc(
        "Whether the two rates are the same within ±detect by two one-sided tests at 0.05 (TOST: Newcombe's 90 % "
        "interval of the difference inside ±detect): only then does the page call the two tied. False when no "
        "difference was asked or either has no runs."
    )


def compare_pair(a: Counts, b: Counts, detect: float | None = None, tests: int = 1) -> Pair:
    """Two models' counts on one task compared: Newcombe's interval of the difference, Fisher's
    exact test, the detectable difference and (for `detect`) the runs needed, both from the pooled
    rate at the threshold of `tests` tests (`power_alpha`), and the equivalence test within
    ±`detect`. `p_holm` and `significant` are for one comparison alone here; `compare_models`
    corrects them over all."""
    if a.task != b.task:
        raise ValueError(f"compare_pair: counts of two tasks ({a.task!r}, {b.task!r}); compare tasks with compare_across_tasks")
    low, high = newcombe(a, b)
    p = fisher_p(a, b)
    rate = pooled(a, b)
    alpha = power_alpha(tests)
    return Pair(
        task=a.task,
        model_a=a.model,
        model_b=b.model,
        right_a=a.right,
        runs_a=a.runs,
        right_b=b.right,
        runs_b=b.runs,
        difference=_difference(a.right / a.runs - b.right / b.runs) if a.runs and b.runs else None,
        difference_low=low,
        difference_high=high,
        p_value=p,
        smallest_p_value=smallest_fisher_p(a.runs, b.runs),
        p_holm=p,
        significant=p is not None and p <= ALPHA,
        pooled_rate=rate,
        power_alpha=alpha,
        detectable_difference=detectable_difference(rate, a.runs, b.runs, alpha),
        detect=_number(detect),
        runs_needed=runs_needed(rate, detect, alpha) if detect is not None else None,
        equivalent=detect is not None and _within(newcombe(a, b, EQUIVALENCE_ALPHA), detect),
    )


def _within(interval: tuple[float, float] | tuple[None, None], margin: float) -> bool:
    """Whether an interval (low, high) lies strictly inside ±margin (the TOST decision)."""
    low, high = interval
    return bool(low is not None and -margin < low and cast(float, high) < margin)  # high is None only with low


def _difference(value: float) -> float | None:
    """A difference of rates, with one of round-off (a weighted mean of equal rates gives 5e-17)
    made the 0 it is."""
    return 0.0 if abs(value) < ROUND_OFF else _number(value)


# ---------------------------------------------------------------------------------------------
# Two models across tasks


@_documented
@dataclass(frozen=True)
class AcrossTasks:
    """Two models compared across tasks: per-task differences combined, never pooled counts."""

    model_a: str = doc("The first model of the pair.")
    model_b: str = doc("The second model of the pair.")
    tasks: int = doc("How many tasks (strata) the comparison combines: those where both models have runs.")
    tasks_left_out: list[str] = doc("Tasks left out because one of the two models has no runs of them.")
    difference: float | None = doc(
        "Mantel-Haenszel weighted mean over the tasks of model a's rate minus model b's, weight "
        "n_a*n_b/(n_a+n_b) per task; None when no task has runs of both."
    )
    difference_low: float | None = doc(
        "Lower end of the 95 % interval of the combined difference (per-task Wilson intervals combined, "
        "MOVER-Wilson); None when no task has runs of both."
    )
    difference_high: float | None = doc(
        "Upper end of the 95 % interval of the combined difference (per-task Wilson intervals combined, "
        "MOVER-Wilson); None when no task has runs of both."
    )
    p_value: float | None = doc(
        "Two-sided p-value of the exact stratified (Cochran-Mantel-Haenszel) test of no difference on any task, "
        "before any correction; None when no task has runs of both."
    )
    smallest_p_value: float | None = doc(
        "The smallest p-value the stratified test could give with these numbers of runs; at 0.05 or above no "
        "outcome could be significant. None when no task has runs of both."
    )
    p_holm: float | None = doc(
        "The p-value adjusted by Holm's correction over every comparison of the campaign; None when no test ran."
    )
    significant: bool = doc("Whether the Holm-adjusted p-value is at most 0.05: the models differ beyond chance across tasks.")
    heterogeneity_p: float | None = doc(
        "Two-sided p-value of the Breslow-Day test (with Tarone's correction; 0.5 added to the cells of a task with a "
        "zero) that the odds ratio of the two models is the same on every task combined, not corrected for multiple "
        "tests; small: the difference varies across tasks (it may even change direction), and the combined "
        "difference hides it. None with fewer than two tasks."
    )
    ahead_a: list[str] = doc("The tasks combined on which model a's rate is the higher.")
    ahead_b: list[str] = doc("The tasks combined on which model b's rate is the higher.")
    equivalent: bool = doc(
        "Whether the combined difference is 0 within ±detect by two one-sided tests at 0.05 (its 90 % MOVER-Wilson "
        "interval inside ±detect): only then does the page call the two tied across tasks. False when no "
        "difference was asked or no task has runs of both."
    )


def _both_ran(a_counts: Sequence[Counts], b_counts: Sequence[Counts]) -> tuple[list[tuple[Counts, Counts]], list[str]]:
    """[(a, b)] of the tasks both models have runs of, and the tasks left out (in a's order, then b's)."""
    a_by_task = {c.task: c for c in a_counts}
    b_by_task = {c.task: c for c in b_counts}
    if len(a_by_task) < len(a_counts) or len(b_by_task) < len(b_counts):
        raise ValueError("compare_across_tasks: a task appears twice in one model's counts")
    tasks = list(a_by_task) + [t for t in b_by_task if t not in a_by_task]
    pairs: list[tuple[Counts, Counts]]
    left_out: list[str]
    pairs, left_out = [], []
    for task in tasks:
        a, b = a_by_task.get(task), b_by_task.get(task)
        if a and b and a.runs and b.runs:
            pairs.append((a, b))
        else:
            left_out.append(task)
    return pairs, left_out


def stratified_p(strata: Iterable[tuple[int, int, int, int]]) -> float:
    """Two-sided p-value of the exact conditional test of no difference in any stratum, for
    strata [(right_a, runs_a, right_b, runs_b)] each with runs of both: the sum over strata of
    right_a, whose null distribution given each stratum's margins is the convolution of the
    strata's hypergeometric distributions; p sums the probabilities of every sum at most as
    likely as the observed one (Fisher's rule, scipy's tolerance). 1.0 when no stratum varies."""
    distribution = np.ones(1)
    lowest = observed = 0
    for right_a, runs_a, right_b, runs_b in strata:
        right = right_a + right_b
        low, high = max(0, right - runs_b), min(runs_a, right)
        support = np.arange(low, high + 1)
        distribution = np.convolve(distribution, hypergeom.pmf(support, runs_a + runs_b, right, runs_a))
        lowest += low
        observed += right_a
    here = distribution[observed - lowest]
    return min(1.0, float(distribution[distribution <= here * TIE_TOLERANCE].sum()))


def breslow_day_p(strata: Sequence[tuple[int, int, int, int]]) -> float | None:
    """Two-sided p-value of the Breslow-Day test, with Tarone's correction, of one odds ratio over
    strata [(right_a, runs_a, right_b, runs_b)] (statsmodels' StratifiedTable; 0.5 added to every
    cell of a stratum with a zero cell, else its odds ratio is 0 or infinite); None with fewer than
    two strata."""
    if len(strata) < 2:
        return None
    tables = [np.array([[ra, na - ra], [rb, nb - rb]], dtype=float) for ra, na, rb, nb in strata]
    tables = [table + 0.5 if (table == 0).any() else table for table in tables]
    with np.errstate(all="ignore"):
        found = StratifiedTable(tables).test_equal_odds(adjust=True).pvalue
    return _number(min(1.0, float(found)))


def _mover(pairs: Sequence[tuple[Counts, Counts]], weights: Iterable[float], alpha: float) -> tuple[float, float, float]:
    """The MOVER-Wilson interval (low, high) of the weighted difference over the task pairs."""
    difference = low_squares = high_squares = 0.0
    for w, (a, b) in zip(weights, pairs):
        rate_a, rate_b = a.right / a.runs, b.right / b.runs
        (low_a, high_a), (low_b, high_b) = wilson(a.right, a.runs, alpha), wilson(b.right, b.runs, alpha)
        assert low_a is not None and high_a is not None and low_b is not None and high_b is not None  # both have runs
        difference += w * (rate_a - rate_b)
        low_squares += w * w * ((rate_a - low_a) ** 2 + (high_b - rate_b) ** 2)
        high_squares += w * w * ((high_a - rate_a) ** 2 + (rate_b - low_b) ** 2)
    return difference, max(-1.0, difference - math.sqrt(low_squares)), min(1.0, difference + math.sqrt(high_squares))


def compare_across_tasks(a_counts: Sequence[Counts], b_counts: Sequence[Counts], detect: float | None = None) -> AcrossTasks:
    """Two models compared over the tasks both ran: the Mantel-Haenszel weighted difference with
    its MOVER-Wilson interval, the exact stratified test, the Breslow-Day test of whether the
    difference varies across tasks, and the equivalence test within ±`detect` (see METHODS). A task
    one model did not run is left out and named; a task where a rate is 0 or 1 counts like any other
    (its Wilson interval is not empty, its hypergeometric distribution may be a single point, adding
    nothing)."""
    if not a_counts or not b_counts:
        raise ValueError("compare_across_tasks: each side needs the counts of its model (0 of 0 for a task it did not run)")
    pairs, left_out = _both_ran(a_counts, b_counts)
    model_a, model_b = a_counts[0].model, b_counts[0].model
    if {c.model for c in a_counts} - {model_a} or {c.model for c in b_counts} - {model_b}:
        raise ValueError("compare_across_tasks: each side must hold the counts of one model")
    if not pairs:
        return AcrossTasks(model_a, model_b, 0, left_out, None, None, None, None, None, None, False, None, [], [], False)
    weights = np.array([a.runs * b.runs / (a.runs + b.runs) for a, b in pairs])
    weights = weights / weights.sum()
    difference, low, high = _mover(pairs, weights, ALPHA)
    _, low_90, high_90 = _mover(pairs, weights, EQUIVALENCE_ALPHA)
    strata = [(a.right, a.runs, b.right, b.runs) for a, b in pairs]
    p = stratified_p(strata)
    ahead = [_difference(a.right / a.runs - b.right / b.runs) for a, b in pairs]
    difference = _difference(difference)
    assert difference is not None  # a weighted mean of differences of rates: finite
    return AcrossTasks(
        model_a=model_a,
        model_b=model_b,
        tasks=len(pairs),
        tasks_left_out=left_out,
        difference=difference,
        difference_low=_number(min(low, difference)),
        difference_high=_number(max(high, difference)),
        p_value=p,
        smallest_p_value=min(
            stratified_p([(a.runs, a.runs, 0, b.runs) for a, b in pairs]),
            stratified_p([(0, a.runs, b.runs, b.runs) for a, b in pairs]),
        ),
        p_holm=p,
        significant=p <= ALPHA,
        heterogeneity_p=breslow_day_p(strata),
        ahead_a=[a.task for (a, _), d in zip(pairs, ahead) if cast(float, d) > 0],  # differences of rates: finite
        ahead_b=[a.task for (a, _), d in zip(pairs, ahead) if cast(float, d) < 0],
        equivalent=detect is not None and _within((low_90, high_90), detect),
    )


# ---------------------------------------------------------------------------------------------
# Many comparisons


def holm(p_values: Sequence[float | None]) -> list[tuple[float | None, bool]]:
    """Holm-adjusted p-values and whether each stays significant at 0.05, for a list of p-values
    in which None (no test) is passed through as (None, False) and is not counted in the family."""
    tested = [i for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    significant = [False] * len(p_values)
    if tested:
        reject, corrected, _, _ = multipletests([p_values[i] for i in tested], alpha=ALPHA, method="holm")
        for i, r, c in zip(tested, reject, corrected):
            adjusted[i], significant[i] = min(1.0, float(c)), bool(r)
    return list(zip(adjusted, significant))


_Compared = TypeVar("_Compared", bound="Pair | AcrossTasks | InstancePair")


def with_holm(comparisons: Sequence[_Compared]) -> list[_Compared]:
    """The comparisons (Pair or AcrossTasks records) with `p_holm` and `significant` set by Holm's
    correction over all of them together."""
    return [
        dataclasses.replace(c, p_holm=adjusted, significant=significant)
        for c, (adjusted, significant) in zip(comparisons, holm([c.p_value for c in comparisons]))
    ]


def tied(models: Iterable[str], comparisons: Iterable["Pair | AcrossTasks"]) -> list[list[str]]:
    """The groups of `models` that no significant comparison separates: the maximal sets of models
    no two of which some comparison in `comparisons` (records with model_a, model_b, significant)
    finds different. Every model is in at least one group; groups and their members keep the order
    of `models`. Which comparisons count is the caller's choice (one task's pairs, or the
    comparisons across tasks)."""
    models = list(dict.fromkeys(models))
    if not models:
        return []
    separated = {frozenset((c.model_a, c.model_b)) for c in comparisons if c.significant}
    close = {m: {o for o in models if o != m and frozenset((m, o)) not in separated} for m in models}
    groups: list[list[str]] = []

    def grow(group: list[str], candidates: set[str], excluded: set[str]) -> None:  # Bron-Kerbosch: every maximal clique of `close`
        if not candidates and not excluded:
            groups.append(group)
        for m in list(candidates):
            grow(group + [m], candidates & close[m], excluded & close[m])
            candidates = candidates - {m}
            excluded = excluded | {m}

    grow([], set(models), set())
    order = {m: i for i, m in enumerate(models)}
    return sorted((sorted(g, key=order.__getitem__) for g in groups), key=lambda g: [order[m] for m in g])


@_documented
@dataclass(frozen=True)
class Ties:
    """Which models no (Holm-adjusted) test separates, on one task or across tasks: not separated,
    which is not the same as tied (`equivalent` of a comparison says that)."""

    task: str | None = doc("The task whose comparisons were used; None for the comparisons across tasks.")
    groups: list[list[str]] = doc(
        "Groups of models that no significant comparison separates (each as large as it can be); a model can be "
        "in more than one group. One group holding every model: no test tells any two apart. Only models with "
        "runs (of this task; across tasks, of any task) are grouped."
    )


@_documented
@dataclass(frozen=True)
class Comparison:
    """Everything a campaign's comparison page shows, from its counts."""

    models: list[str] = doc("The models, in the order first met in the counts.")
    tasks: list[str] = doc("The tasks, in the order first met in the counts.")
    rates: list[Rate] = doc("One rate per model and task (a model with no runs of a task: 0 of 0, no rate).")
    pass_k: list[PassK] = doc("pass@k and pass^k per model, task and k (every k up to 20, then 1-2-5 steps and n).")
    pairs: list[Pair] = doc("Every pair of models on every task, Holm-corrected over all comparisons.")
    across_tasks: list[AcrossTasks] = doc(
        "Every pair of models across tasks (only when there are two tasks or more), Holm-corrected over all comparisons."
    )
    ties: list[Ties] = doc("Per task, then across tasks: the models no significant comparison separates.")
    comparisons: int = doc("How many p-values Holm's correction was over (the family size).")


def compare_models(counts: Iterable[Counts], detect: float | None = None) -> Comparison:
    """The whole comparison of a campaign from its counts (one Counts per model and task; a
    model without counts for a task is taken as 0 of 0). `detect`: a difference of rates the user
    wants to be able to detect (e.g. 0.2), for the runs needed; None for none."""
    counts = list(counts)
    if detect is not None:
        runs_needed(0.5, detect)  # a bad difference is one clear error before any work
    models = list(dict.fromkeys(c.model for c in counts))
    tasks = list(dict.fromkeys(c.task for c in counts))
    grid: dict[tuple[str, str], Counts] = {}
    for c in counts:
        if (c.model, c.task) in grid:
            raise ValueError(f"counts: {c.model} on {c.task} appears twice")
        grid[(c.model, c.task)] = c
    cell = {(m, t): grid.get((m, t), Counts(m, t, 0, 0)) for m in models for t in tasks}
    both = {(a, b, t): bool(cell[(a, t)].runs and cell[(b, t)].runs) for t in tasks for a, b in combinations(models, 2)}
    tests = sum(both.values())  # Holm's family: every test that will run, by task and across tasks
    if len(tasks) >= 2:
        tests += sum(any(both[(a, b, t)] for t in tasks) for a, b in combinations(models, 2))
    pairs = [compare_pair(cell[(a, t)], cell[(b, t)], detect, tests) for t in tasks for a, b in combinations(models, 2)]
    across: list[AcrossTasks] = []
    if len(tasks) >= 2:
        across = [
            compare_across_tasks([cell[(a, t)] for t in tasks], [cell[(b, t)] for t in tasks], detect)
            for a, b in combinations(models, 2)
        ]
    corrected = with_holm(pairs + across)  # type: ignore[operator]  # list[Pair | AcrossTasks], which mypy misses
    pairs, across = cast("list[Pair]", corrected[: len(pairs)]), cast("list[AcrossTasks]", corrected[len(pairs):])
    ties = [Ties(t, tied([m for m in models if cell[(m, t)].runs], [p for p in pairs if p.task == t])) for t in tasks]
    if across:
        ties.append(Ties(None, tied([m for m in models if any(cell[(m, t)].runs for t in tasks)], across)))
    return Comparison(
        models=models,
        tasks=tasks,
        rates=[rate(cell[(m, t)]) for t in tasks for m in models],
        pass_k=[row for t in tasks for m in models for row in pass_k(cell[(m, t)], shown_ks(cell[(m, t)].runs))],
        pairs=pairs,
        across_tasks=across,
        ties=ties,
        comparisons=tests,
    )


# ---------------------------------------------------------------------------------------------
# The instance as the unit


@_documented
@dataclass(frozen=True)
class InstanceCounts:
    """How many of a model's runs of one instance were right. Runs of one instance share its
    question and numbers, so they are not independent: the instance statistics count instances."""

    model: str = doc("The model (or scripted program) that made the runs.")
    lesson: str = doc("The lesson: the family of questions the instance is one of.")
    instance: str = doc("The instance: one question of the lesson's family, with its own numbers (its id, as `replaylab tasks` lists it).")
    right: int = doc("How many of the model's runs of this instance were judged right.")
    runs: int = doc("How many of the model's runs of this instance were judged (every variant of it the model ran).")

    def __post_init__(self) -> None:
        _check_counts(self, "instance counts", ("model", "lesson", "instance"),
                      f"instance counts of {self.model} on {self.instance}")


def _t_quantile(degrees: float, alpha: float = ALPHA) -> float:
    """The two-sided 1 - alpha (95 %) quantile of Student's t on `degrees` degrees of freedom."""
    return float(student_t.ppf(1 - alpha / 2, float(degrees)))  # float: a count beyond int64 too


def score_interval(rate: float, runs: float, quantile: float) -> tuple[float, float]:
    """Wilson's score interval of `rate` observed on `runs` (not necessarily whole) with `quantile`
    in place of z: the rates p with |rate - p| <= quantile sqrt(p (1 - p) / runs). Exactly 0 and 1
    at the ends, and never excluding the rate itself (rounding)."""
    spread = quantile * quantile / runs
    centre = (rate + spread / 2) / (1 + spread)
    half = quantile * math.sqrt(rate * (1 - rate) / runs + spread / (4 * runs)) / (1 + spread)
    low = 0.0 if rate == 0 else max(0.0, min(centre - half, rate))
    high = 1.0 if rate == 1 else min(1.0, max(centre + half, rate))
    return low, high


def clustered(rights: Sequence[int], runs: Sequence[int]) -> dict[str, Any]:
    """The rate over clusters and its clustered figures, for parallel lists of right and runs per
    cluster (each with runs): {rate, standard_error, design_effect, effective_runs,
    degrees_of_freedom, low, high} (see METHODS['instance_rate']); the figures beyond the rate are
    None with fewer than two clusters, whose spread cannot be estimated."""
    clusters, total, right = len(runs), sum(runs), sum(rights)
    found: dict[str, Any] = dict.fromkeys(("rate", "standard_error", "design_effect", "effective_runs", "degrees_of_freedom", "low", "high"))
    if not total:
        return found
    rate = right / total
    found["rate"] = rate
    if clusters < 2:
        return found
    residuals = math.fsum((k - n * rate) ** 2 for k, n in zip(rights, runs))
    variance = clusters / (clusters - 1) * residuals / (total * total)
    binomial = rate * (1 - rate) / (total - 1)  # the variance of k/n from independent runs (unbiased form)
    design_effect = variance / binomial if binomial > 0 else None
    effective = total / max(1.0, design_effect) if design_effect is not None else float(total)
    low, high = score_interval(rate, effective, _t_quantile(clusters - 1))
    found.update(standard_error=math.sqrt(variance), design_effect=_number(design_effect), effective_runs=effective,
                 degrees_of_freedom=clusters - 1, low=low, high=high)
    return found


@_documented
@dataclass(frozen=True)
class InstanceRate:
    """A model's share of right runs on a lesson, with a 95 % interval that counts instances, not runs."""

    lesson: str = doc("The lesson.")
    model: str = doc("The model.")
    instances: int = doc("How many instances the model has runs of (C): what the interval rests on.")
    runs: int = doc("Runs judged (n), over those instances.")
    right: int = doc("Runs judged right (k).")
    rate: float | None = doc("k/n, the share of the runs that were right; None without runs.")
    standard_error: float | None = doc(
        "Cluster-robust standard error of the rate over instances, with the small-sample factor C/(C-1) (statsmodels' "
        "OLS of the right flag on a constant, cov_type='cluster'); None with fewer than two instances."
    )
    design_effect: float | None = doc(
        "The clustered variance over the variance of independent runs, p(1-p)/(n-1): about 1 when runs of one instance "
        "vary like runs of different instances, up to about the runs per instance when they always agree (below 1, "
        "taken as 1 in the interval); None with fewer than two instances or when every run was right, or every run "
        "wrong (no variance to compare)."
    )
    effective_runs: float | None = doc(
        "n divided by the design effect (taken as at least 1; n where it cannot be estimated): the independent runs "
        "the evidence is worth; None with fewer than two instances."
    )
    degrees_of_freedom: int | None = doc("C-1, the degrees of freedom of the t quantile; None with fewer than two instances.")
    rate_low: float | None = doc(
        "Lower end of the 95 % interval clustered by instance (Wilson's score interval on the effective runs with the "
        "t quantile on C-1 degrees of freedom); None with fewer than two instances."
    )
    rate_high: float | None = doc(
        "Upper end of the 95 % interval clustered by instance; None with fewer than two instances."
    )


def _one_model_one_lesson(counts: Iterable[InstanceCounts], what: str) -> tuple[str, str, dict[str, tuple[int, int]]]:
    """The counts of one model on one lesson, checked: (model, lesson, {instance: (right, runs)})
    of the instances with runs (an instance of 0 runs is not one the model ran)."""
    counts = list(counts)
    if not counts:
        raise ValueError(f"{what}: no counts (give 0 of 0 for an instance a model did not run)")
    if len({(c.model, c.lesson) for c in counts}) > 1:
        raise ValueError(f"{what}: the counts must be of one model on one lesson")
    if len({c.instance for c in counts}) < len(counts):
        raise ValueError(f"{what}: an instance appears twice in the counts of {counts[0].model} on {counts[0].lesson}")
    return counts[0].model, counts[0].lesson, {c.instance: (c.right, c.runs) for c in counts if c.runs}


def instance_rate(counts: Iterable[InstanceCounts]) -> InstanceRate:
    """A model's rate on a lesson from its counts per instance, with the interval clustered by
    instance (METHODS['instance_rate'])."""
    model, lesson, ran = _one_model_one_lesson(counts, "instance_rate")
    rights, runs = [k for k, _ in ran.values()], [n for _, n in ran.values()]
    found = clustered(rights, runs)
    return InstanceRate(
        model=model, lesson=lesson, instances=len(ran), runs=sum(runs), right=sum(rights), rate=found["rate"],
        standard_error=found["standard_error"], design_effect=found["design_effect"],
        effective_runs=found["effective_runs"], degrees_of_freedom=found["degrees_of_freedom"],
        rate_low=found["low"], rate_high=found["high"],
    )


NOT_ASKED = "no difference to detect was asked"
TOO_FEW_INSTANCES = "fewer than two instances compared: the spread of their differences cannot be estimated"
NO_SPREAD = "every instance compared gave the same difference: their spread cannot be estimated"
TOO_SMALL = "the difference to detect is too small against the spread for a number of instances to be computed"


def _paired_power(effect: float, instances: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired t-test at `alpha` for a standardised effect (mean difference over
    its standard deviation) on `instances` pairs: P(|T| > t crit) for T noncentral t on n-1 degrees
    of freedom with noncentrality effect sqrt(n). T = (Z + nc) / S with S = sqrt(chi2(n-1)/(n-1)),
    so the power is the mean over S of Phi(nc - t S) + Phi(-nc - t S), integrated with quad over S,
    whose density is smooth (scipy's and statsmodels' noncentral t give NaN in places, at one degree
    of freedom even near power 0.5)."""
    degrees = instances - 1
    critical = _t_quantile(degrees, alpha)
    shift = effect * math.sqrt(instances)
    half = degrees / 2
    # S's density is 2 h^h / Gamma(h) s^(k-1) exp(-h s^2), h = k/2; its logarithm written without
    # terms of size h that cancel (at a million instances they would leave 1e-10 of noise, which quad
    # reports as roundoff): log 2 + log(h)/2 - log(2 pi)/2 - stirling(h) + (k-1) log s + h (1 - s^2).
    if half >= 10:  # Stirling's series of lgamma(h) - ((h - 1/2) log h - h + log(2 pi)/2), to 1e-10
        stirling = 1 / (12 * half) - 1 / (360 * half**3) + 1 / (1260 * half**5)
    else:
        stirling = math.lgamma(half) - ((half - 0.5) * math.log(half) - half + 0.5 * math.log(2 * math.pi))
    log_scale = math.log(2) + 0.5 * math.log(half) - 0.5 * math.log(2 * math.pi) - stirling
    width = 1 / math.sqrt(2 * degrees)  # about S's standard deviation: S = 1 + u width, u of order 1

    def weighted(u: float) -> float:  # S's density at 1 + u width, times ds/du
        step = u * width
        if step <= -1:
            return 0.0
        log_density = log_scale + (degrees - 1) * math.log1p(step) - half * (2 * step + step * step)
        return cast(float, (ndtr(shift - critical * (1 + step)) + ndtr(-shift - critical * (1 + step)))
                    * math.exp(log_density) * width)

    low, high = max(-1 / width, -40.0), 40.0  # S's mass beyond 40 of its standard deviations is below 1e-13
    turn = (shift / critical - 1) / width  # where Phi turns from 0 to 1
    points = sorted(x for x in (0.0, turn) if low < x < high)
    value: float
    value, _ = quad(weighted, low, high, points=points or None, epsabs=1e-11, epsrel=1e-9, limit=200)
    return min(1.0, value)


def _check_detect(detect: object, what: str) -> None:
    if not (isinstance(detect, (int, float)) and not isinstance(detect, bool) and 0 < detect <= 1):
        raise ValueError(f"{what}: the difference to detect must be a number above 0 and at most 1, not {detect!r}")


def instances_needed(spread: float | None, detect: float | None, alpha: float = ALPHA) -> tuple[int, None] | tuple[None, str]:
    """(instances, None): the fewest instances (2 at least) for which a paired t-test at `alpha`
    detects a mean difference `detect` with power 0.8, when the per-instance differences have the
    standard deviation `spread` (beyond a million, the normal approximation's count, which t then
    matches to an instance); (None, the reason) when `spread` is None or 0, or detect is None.
    It depends on the spread and `detect` alone: the same whichever model is named first."""
    if detect is None:
        return None, NOT_ASKED
    _check_detect(detect, "instances needed")
    if spread is None:
        return None, TOO_FEW_INSTANCES
    if not (isinstance(spread, (int, float)) and math.isfinite(spread) and spread >= 0):
        raise ValueError(f"instances needed: the spread must be a number 0 or more, not {spread!r}")
    if spread == 0:
        return None, NO_SPREAD
    effect = detect / spread
    z = float(norm.ppf(1 - alpha / 2) + norm.ppf(POWER))
    normal = (z / effect) ** 2 if effect > 1e-150 else math.inf  # the z-test's count (one tail)
    if not math.isfinite(normal):
        return None, TOO_SMALL
    if normal > 1e6:  # there t is z to 1e-6, and the count the normal one, give or take an instance
        return math.ceil(normal), None
    # A bracket (too few, enough) from the normal count, then bisection: the power grows with the instances.
    too_few, enough = 1, max(2, math.ceil(normal))
    while _paired_power(effect, enough, alpha) < POWER:
        too_few, enough = enough, 2 * enough
    while enough - too_few > 1:
        middle = (too_few + enough) // 2
        too_few, enough = (too_few, middle) if _paired_power(effect, middle, alpha) >= POWER else (middle, enough)
    return enough, None


def detectable_by_instances(spread: float | None, instances: int, alpha: float = ALPHA) -> float | None:
    """The smallest mean difference a paired t-test at `alpha` on `instances` instances detects with
    power 0.8 when the per-instance differences have the standard deviation `spread`; None with
    fewer than two instances, no spread, or when that difference would exceed 1 (none detectable)."""
    if spread is None or spread == 0 or instances < 2:
        return None
    effect = brentq(lambda e: _paired_power(e, instances, alpha) - POWER, 1e-9, 1e3, xtol=1e-12)
    found = effect * spread
    return _number(found) if found <= 1 else None


@_documented
@dataclass(frozen=True)
class InstancePair:
    """Two models on one lesson, paired by instance: the mean of the per-instance differences of
    their rates, its interval, an exact sign test, and the instances a difference of `detect` needs."""

    lesson: str = doc("The lesson.")
    model_a: str = doc("The first model of the pair.")
    model_b: str = doc("The second model of the pair.")
    instances: int = doc("Instances compared: those both models have runs of. Every figure of the row rests on them.")
    only_a: int = doc("Instances only model a has runs of: counted here, left out of the comparison.")
    only_b: int = doc("Instances only model b has runs of: counted here, left out of the comparison.")
    runs_per_instance_a: float | None = doc("Model a's runs per instance compared (their mean); None without instances.")
    runs_per_instance_b: float | None = doc("Model b's runs per instance compared (their mean); None without instances.")
    rate_a: float | None = doc(
        "Model a's share of right runs per instance, averaged over the instances compared (each instance counts "
        "once); None without instances."
    )
    rate_b: float | None = doc("The same for model b; None without instances.")
    difference: float | None = doc(
        "The mean over the instances compared of model a's share of right runs minus model b's (from -1 to 1); "
        "None without instances."
    )
    spread: float | None = doc(
        "The standard deviation of the per-instance differences (divisor n-1); None with fewer than two instances."
    )
    difference_low: float | None = doc(
        "Lower end of the 95 % paired t interval of the mean difference (t on n-1 degrees of freedom); None with "
        "fewer than two instances or when every instance gave the same difference (no spread to build it from)."
    )
    difference_high: float | None = doc("Upper end of the 95 % paired t interval of the mean difference; None as for the lower end.")
    a_ahead: int = doc("Instances where model a's share of right runs is the higher.")
    b_ahead: int = doc("Instances where model b's share of right runs is the higher.")
    p_value: float | None = doc(
        "Two-sided p-value of the exact sign test over the instances where the two differ (a_ahead of a_ahead + "
        "b_ahead against a fair coin), before any correction; 1 when none differs; None without instances."
    )
    smallest_p_value: float | None = doc(
        "The smallest p-value the sign test could give on these instances (every one favouring the same model), "
        "2 * 0.5^n; at 0.05 or above no outcome could be significant: too few instances. None without instances."
    )
    p_holm: float | None = doc(
        "The p-value adjusted by Holm's correction over every comparison by instance of the campaign; None when no test ran."
    )
    significant: bool = doc("Whether the Holm-adjusted p-value is at most 0.05: the sign test separates the two models.")
    power_alpha: float = doc(
        "The two-sided threshold of the power figures: 0.05 over the number of comparisons by instance Holm's "
        "correction is over (its first, strictest step)."
    )
    detectable_difference: float | None = doc(
        "The smallest mean difference a paired t-test on this many instances detects with 80 % power (two-sided, at "
        "power_alpha), at the observed spread; None with fewer than two instances, no spread, or when it would exceed 1."
    )
    detect: float | None = doc(
        "The difference asked about (instances_needed is for it, and it is the margin of the equivalence test); None "
        "when none was asked."
    )
    instances_needed: int | None = doc(
        "Instances (at the current runs per instance) a paired t-test needs to detect a mean difference of `detect` "
        "with 80 % power (two-sided, at power_alpha), from the observed spread; the same whichever model is named "
        "first; None when it cannot be estimated (instances_needed_note says why)."
    )
    instances_needed_note: str | None = doc("Why instances_needed is None; None when it is given.")
    equivalent: bool = doc(
        "Whether the mean difference is 0 within ±detect by two one-sided tests at 0.05 (the 90 % paired t interval "
        "inside ±detect): only then does the page call the two tied on the lesson. False when no difference was "
        "asked, or without an interval (fewer than two instances, or every instance giving the same difference)."
    )


def compare_by_instance(a_counts: Iterable[InstanceCounts], b_counts: Iterable[InstanceCounts], detect: float | None = None,
                        tests: int = 1) -> InstancePair:
    """Two models' counts per instance of one lesson compared, paired by instance (see METHODS:
    instance_pair, sign_test, instance_power), the power figures at the threshold of `tests` tests
    (`power_alpha`). `p_holm` and `significant` are for this comparison alone; `compare_instances`
    corrects them over all."""
    if detect is not None:
        _check_detect(detect, "compare_by_instance")
    model_a, lesson_a, ran_a = _one_model_one_lesson(a_counts, "compare_by_instance")
    model_b, lesson_b, ran_b = _one_model_one_lesson(b_counts, "compare_by_instance")
    if lesson_a != lesson_b:
        raise ValueError(f"compare_by_instance: counts of two lessons ({lesson_a!r}, {lesson_b!r})")
    both = [i for i in ran_a if i in ran_b]
    n = len(both)
    rates_a = [ran_a[i][0] / ran_a[i][1] for i in both]
    rates_b = [ran_b[i][0] / ran_b[i][1] for i in both]
    differences = [x - y for x, y in zip(rates_a, rates_b)]
    a_ahead, b_ahead = sum(d > 0 for d in differences), sum(d < 0 for d in differences)
    mean = math.fsum(differences) / n if n else None
    spread = None
    if n >= 2:  # equal differences have no spread, not one of rounding (1e-17, which would give a point interval)
        assert mean is not None  # n >= 2
        equal = max(differences) - min(differences) <= 1e-12
        spread = 0.0 if equal else math.sqrt(math.fsum((d - mean) ** 2 for d in differences) / (n - 1))
    low = high = None
    equivalent = False
    if spread:
        assert mean is not None  # a spread: n >= 2
        half = _t_quantile(n - 1) * spread / math.sqrt(n)
        low, high = max(-1.0, min(mean - half, mean)), min(1.0, max(mean + half, mean))
        half_90 = _t_quantile(n - 1, EQUIVALENCE_ALPHA) * spread / math.sqrt(n)
        equivalent = detect is not None and _within((mean - half_90, mean + half_90), detect)
    alpha = power_alpha(tests)
    if n == 0:
        p = None
    elif a_ahead + b_ahead == 0:
        p = 1.0
    else:
        p = min(1.0, float(binomtest(a_ahead, a_ahead + b_ahead, 0.5, alternative="two-sided").pvalue))
    needed, note = instances_needed(spread, detect, alpha)
    return InstancePair(
        lesson=lesson_a,
        model_a=model_a,
        model_b=model_b,
        instances=n,
        only_a=len(ran_a) - n,
        only_b=len(ran_b) - n,
        runs_per_instance_a=sum(ran_a[i][1] for i in both) / n if n else None,
        runs_per_instance_b=sum(ran_b[i][1] for i in both) / n if n else None,
        rate_a=math.fsum(rates_a) / n if n else None,
        rate_b=math.fsum(rates_b) / n if n else None,
        difference=None if mean is None else _difference(mean),
        spread=_number(spread),
        difference_low=low,
        difference_high=high,
        a_ahead=a_ahead,
        b_ahead=b_ahead,
        p_value=p,
        smallest_p_value=min(1.0, 2 * 0.5**n) if n else None,
        p_holm=p,
        significant=p is not None and p <= ALPHA,
        power_alpha=alpha,
        detectable_difference=detectable_by_instances(spread, n, alpha),
        detect=_number(detect),
        instances_needed=needed,
        instances_needed_note=note,
        equivalent=equivalent,
    )


@_documented
@dataclass(frozen=True)
class ByInstance:
    """Everything a campaign's page shows with the instance as the unit, from its counts per instance."""

    models: list[str] = doc("The models, in the order first met in the counts.")
    lessons: list[str] = doc("The lessons, in the order first met in the counts.")
    rates: list[InstanceRate] = doc("One rate per lesson and model, its interval clustered by instance.")
    pairs: list[InstancePair] = doc("Every pair of models on every lesson, paired by instance, Holm-corrected over all of them.")
    comparisons: int = doc("How many sign tests Holm's correction was over (the family size).")


def compare_instances(counts: Iterable[InstanceCounts], detect: float | None = None, order: Collection[str] = ()) -> ByInstance:
    """The instance statistics of a campaign from its counts (one InstanceCounts per model,
    lesson and instance; a model without counts on a lesson has no instances there). The models
    come in the order of `order` (those it names), then as first met in the counts."""
    counts = list(counts)
    if detect is not None:
        _check_detect(detect, "compare_instances")
    present = list(dict.fromkeys(c.model for c in counts))
    models = [m for m in dict.fromkeys(order) if m in present] + [m for m in present if m not in order]
    lessons = list(dict.fromkeys(c.lesson for c in counts))
    cells: dict[tuple[str, str], list[InstanceCounts]] = {}
    for c in counts:
        cells.setdefault((c.model, c.lesson), []).append(c)

    def of(model: str, lesson: str) -> list[InstanceCounts]:
        return cells.get((model, lesson)) or [InstanceCounts(model, lesson, "none", 0, 0)]

    rates = [instance_rate(of(m, lesson)) for lesson in lessons for m in models]
    tests = sum(bool({c.instance for c in of(a, lesson) if c.runs} & {c.instance for c in of(b, lesson) if c.runs})
                for lesson in lessons for a, b in combinations(models, 2))  # Holm's family: every sign test that will run
    pairs = with_holm([compare_by_instance(of(a, lesson), of(b, lesson), detect, tests)
                       for lesson in lessons for a, b in combinations(models, 2)])
    return ByInstance(models=models, lessons=lessons, rates=rates, pairs=pairs,
                      comparisons=tests)
