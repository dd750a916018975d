"""The comparison of a campaign's models: a page, tables (CSV, and the same columns in JSON) and a figure.

Every number comes from the per-run tables that the render jobs of the campaign's lessons wrote
(one row per judged run, right or wrong as decided from recomputed numbers). The scorecard is a
group-by of their concatenation by lesson, task and model (`lessons.scorecard.scorecard`, as a
lesson's scorecard is by model and task); the statistics are `replaylab.statistics` on its counts
(a task is a lesson's variant, or one agent of a lesson that scores several agents per run): per task Wilson intervals, pass@k and
pass^k; per pair of models and task Newcombe's interval of the difference and Fisher's exact test;
across tasks a stratified comparison (tasks are never pooled); Holm's correction over all of them.

Runs of one instance (one question of a lesson's family, with its own numbers) are not independent
evidence, so the page also takes the instance as the unit: per lesson and model the rate with an
interval clustered by instance, per lesson and pair of models the comparison paired by instance
(mean of the per-instance differences, paired t interval, exact sign test, Holm's correction over
these tests, and the instances a difference of `campaign.detect` needs), from the counts per model
and instance that `instances.csv` holds, so that anyone can recompute every figure.
"""

import dataclasses
import math
import zlib
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import pandas as pd
from matplotlib.figure import Figure

from replaylab import cost_accuracy, pipeline, render, statistics, unfinished
from replaylab.agents import clients
from replaylab.agents import recording as recording_io
from replaylab.agents.recording import LABELS, printable
from replaylab.inputs import DamagedResult, made_by
from replaylab.lessons import counted
from replaylab.lessons.markdown import Md, cell, code, name, run_link, table, text
from replaylab.lessons.scorecard import COLUMNS as RUN_TABLE_COLUMNS
from replaylab.lessons.scorecard import read_runs_table, runs_table_bytes, scorecard

MEANS = ("calls", "budget_used", "tokens", "input_tokens", "output_tokens", "cost_usd")
RUNS_LISTED = 200  # per lesson; the per-run tables hold every run
DETECT = 0.2  # the difference of rates the runs needed are given for, unless the campaign says otherwise


# ---------------------------------------------------------------------------------------------
# The table of runs and its group-by


def runs_of(lessons: Sequence[str], tables: Sequence[str | Path], prices: dict[str, Any]) -> pd.DataFrame:
    """The campaign's per-run table: the lessons' tables one after the other, with each run's
    tokens and cost (where the configuration prices its model)."""
    frames = [runs_table(path).assign(lesson=lesson) for lesson, path in zip(lessons, tables)]
    runs = pd.concat(frames, ignore_index=True)
    runs["tokens"] = runs["input_tokens"] + runs["output_tokens"]
    price_in = runs["model"].map(lambda m: prices.get(m, {}).get("input", math.nan)).astype(float)
    price_out = runs["model"].map(lambda m: prices.get(m, {}).get("output", math.nan)).astype(float)
    runs["cost_usd"] = (runs["input_tokens"].astype(float) * price_in + runs["output_tokens"].astype(float) * price_out) / 1e6
    return runs


def runs_table(path: str | Path) -> pd.DataFrame:
    """A lesson's per-run table as the build wrote it, or `DamagedResult` (one line naming it) when
    it was emptied, cut or changed by hand (or lacks the instance of its runs)."""
    try:
        table = read_runs_table(path)
        for column in ("instance", "behaviour"):
            if column not in table.columns:
                raise ValueError(f"no column {column!r}")
        if (table["instance"].fillna("") == "").any():
            raise ValueError("a run without its instance")
        return table
    except (OSError, EOFError, ValueError, zlib.error) as error:  # pandas' parser errors are ValueErrors
        raise DamagedResult(
            f"{printable(str(path))}: not the table the build wrote ({printable(str(error))}): "
            f"delete it, or run with --forcerun {made_by(path)}"
        ) from None


def distinct(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs as evidence: of the runs of one lesson, task and model with one `behaviour` digest
    (identical transcripts: a deterministic model asked the same question again), the first only;
    a run without a digest counts on its own (statistics.METHODS['distinct_runs'])."""
    if runs.empty:
        return runs
    key = runs["behaviour"].fillna("").astype(str)
    key = key.where(key != "", "run:" + runs["recording"].astype(str))
    return runs.loc[~runs.assign(copy_of=key).duplicated(["lesson", "task", "model", "copy_of"])]


def compare(runs: pd.DataFrame, models: Sequence[str]) -> list[dict[str, Any]]:
    """Scorecard rows per lesson, task and model, in the order of the lessons, then tasks, then
    `models`."""
    rows = scorecard(runs, keys=("lesson", "task", "model"), means=MEANS[2:])
    order = {model: i for i, model in enumerate(models)}
    lessons = list(dict.fromkeys(runs["lesson"]))
    rows.sort(key=lambda r: (lessons.index(r["lesson"]), r["task"], order.get(r["model"], len(order)), r["model"]))
    return rows


def task_key(lesson: str, task: str) -> str:
    """One task of the campaign as the statistics name it: the lesson and its variant (or agent)."""
    return f"{lesson}/{task}"


def statistics_of(rows: Sequence[dict[str, Any]], models: Sequence[str], detect: float | None) -> statistics.Comparison:
    """`statistics.compare_models` on the scorecard's counts, the models in the campaign's order."""
    present = {r["model"] for r in rows}
    ordered = [m for m in models if m in present] + sorted(present - set(models))
    rank = {m: i for i, m in enumerate(ordered)}
    tasks = list(dict.fromkeys(task_key(r["lesson"], r["task"]) for r in rows))
    counts = sorted((statistics.Counts(r["model"], task_key(r["lesson"], r["task"]), r["right"], r["runs"]) for r in rows),
                    key=lambda c: (rank[c.model], tasks.index(c.task)))
    return statistics.compare_models(counts, detect=detect)


def counts_of(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Per lesson, task and model, its runs and the right ones: what `statistics_of` reads (no
    scorecard: its intervals, means and mistakes are not needed here)."""
    if runs.empty:
        return []
    counted = (runs.assign(right_count=runs["right"].astype(bool).astype(int))
               .groupby(["lesson", "task", "model"], sort=False)
               .agg(runs=("run", "size"), right=("right_count", "sum")).reset_index())
    return [{"lesson": str(r["lesson"]), "task": str(r["task"]), "model": str(r["model"]), "runs": int(r["runs"]),
             "right": int(r["right"])} for r in counted.to_dict("records")]


def _ordered_models(present: Collection[str], models: Sequence[str]) -> list[str]:
    """The models of `present` in the campaign's order, then any other by name."""
    return [m for m in models if m in present] + sorted(set(present) - set(models))


def instance_rows(runs: pd.DataFrame, models: Sequence[str]) -> list[dict[str, Any]]:
    """Per lesson, model and instance its runs took: the instance's difficulty, the runs and the
    right ones (the rows of instances.csv), in the order of the lessons, the models, the instances."""
    if runs.empty:
        return []
    table = runs.assign(right_count=runs["right"].astype(bool).astype(int), difficulty=runs["difficulty"].fillna(""))
    counted = (table.groupby(["lesson", "model", "instance"], sort=False, dropna=False)
               .agg(difficulty=("difficulty", "first"), runs=("run", "size"), right=("right_count", "sum"))
               .reset_index())
    lessons = list(dict.fromkeys(runs["lesson"]))
    rank = {m: i for i, m in enumerate(_ordered_models(set(counted["model"]), models))}
    found = [{"lesson": str(r["lesson"]), "instance": str(r["instance"]), "difficulty": str(r["difficulty"]),
              "model": str(r["model"]), "runs": int(r["runs"]), "right": int(r["right"]),
              "rate": int(r["right"]) / int(r["runs"])} for r in counted.to_dict("records")]
    return sorted(found, key=lambda r: (lessons.index(r["lesson"]), rank[r["model"]], r["instance"]))


def instance_statistics_of(instances: Sequence[dict[str, Any]], models: Sequence[str],
                           detect: float | None) -> statistics.ByInstance:
    """`statistics.compare_instances` on the counts per instance (rows of `instance_rows`), the
    models in the campaign's order."""
    counts = [statistics.InstanceCounts(r["model"], r["lesson"], r["instance"], r["right"], r["runs"]) for r in instances]
    return statistics.compare_instances(counts, detect=detect, order=models)


# ---------------------------------------------------------------------------------------------
# The tables: one name per column, the same in the CSV files and in scorecard.json

SCORECARD_COLUMNS = {
    "lesson": "The lesson (its page is <lesson>/index.md).",
    "task": "The task: a variant of the lesson (in a lesson of several agents per run, an agent scored on its own answer).",
    "model": "The model (or scripted program) that made the runs.",
    "runs": "Runs judged.",
    "answered": "Runs that submitted an answer with the tool `answer`.",
    "right": "Runs judged right: the lesson's own decision from numbers this build recomputed.",
    "distinct_runs": "Distinct runs (n): runs with identical transcripts (the same calls, results, texts and answer) "
                     "counted once; every test of the page counts these.",
    "distinct_right": "Distinct runs judged right (k).",
    "rate": "k/n, the share of distinct runs that were right (with no copies, right/runs).",
    "rate_low": "Lower end of the 95 % Wilson score interval of the rate.",
    "rate_high": "Upper end of the 95 % Wilson score interval of the rate.",
    "rule_of_three_high": "Only at 0 of n right: 3/n, the rule of three's one-sided 95 % upper bound on the rate; empty otherwise.",
    "rule_of_three_low": "Only at n of n right: 1 - 3/n, the rule of three's one-sided 95 % lower bound; empty otherwise.",
    "supported": "Answered runs whose own replayed experiments point at their answer.",
    "right_unsupported": "Runs right but not supported by their own experiments (lucky or unexplained).",
    "supported_wrong": "Runs supported by their own experiments but wrong (careful work answered carelessly, or misled).",
    "instances": "How many distinct instances (questions of the lesson's family, each with its own numbers) these runs "
                 "took: runs of one instance are not independent evidence.",
    "instance_low": "Lower end of the 95 % interval of the rate clustered by instance (as in instance_rates.csv, for "
                    "this task's runs); empty with fewer than two instances.",
    "instance_high": "Upper end of the 95 % interval of the rate clustered by instance; empty with fewer than two instances.",
    "mean_calls": "Mean tool calls per run, every call the run made (refused ones included).",
    "mean_budget_used": "Mean tool calls per run that ran an experiment and so counted against the lesson's budget.",
    "mean_input_tokens": "Mean input tokens per run, as the provider reported them; empty when none were reported.",
    "mean_output_tokens": "Mean output tokens per run, as the provider reported them; empty when none were reported.",
    "mean_tokens": "Mean input plus output tokens per run; empty when none were reported.",
    "mean_cost_usd": "Mean cost per run in USD at the configured prices; empty without a price for the model.",
    "mistakes": "What the wrong runs got wrong, each with its number of runs.",
}
PASS_K_COLUMNS = {"lesson": SCORECARD_COLUMNS["lesson"], "task": SCORECARD_COLUMNS["task"],
                  **{k: v for k, v in statistics.explain(statistics.PassK).items() if k != "task"}}
PAIR_COLUMNS = {"lesson": SCORECARD_COLUMNS["lesson"], "task": SCORECARD_COLUMNS["task"],
                **{k: v for k, v in statistics.explain(statistics.Pair).items() if k != "task"}}
ACROSS_COLUMNS = statistics.explain(statistics.AcrossTasks)
INSTANCE_COLUMNS = {
    "lesson": SCORECARD_COLUMNS["lesson"],
    "instance": "The instance: one question of the lesson's family, with its own numbers (`replaylab tasks` lists them).",
    "difficulty": "The instance's difficulty (easy, medium or hard), as its family states it.",
    "model": SCORECARD_COLUMNS["model"],
    "runs": "The model's runs of this instance judged (of every variant of it).",
    "right": "Of those, the runs judged right.",
    "rate": "right/runs, the model's share of right runs on this instance: what the comparisons by instance pair.",
}
INSTANCE_RATE_COLUMNS = statistics.explain(statistics.InstanceRate)
INSTANCE_PAIR_COLUMNS = statistics.explain(statistics.InstancePair)
TABLES = {"scorecard": SCORECARD_COLUMNS, "pass_k": PASS_K_COLUMNS, "pairs": PAIR_COLUMNS, "across_tasks": ACROSS_COLUMNS,
          "instances": INSTANCE_COLUMNS, "instance_rates": INSTANCE_RATE_COLUMNS, "instance_pairs": INSTANCE_PAIR_COLUMNS,
          "cost_accuracy": cost_accuracy.COLUMNS}
RUNS_FILE = "runs.csv.gz"  # the campaign's per-run table, every lesson's runs in one
RUN_COLUMNS = ("lesson", *RUN_TABLE_COLUMNS, "tokens", "cost_usd")  # a lesson's per-run table's, then the cost's
FILES = {name_: f"{name_}.csv" for name_ in TABLES}


def _empty(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


def scorecard_rows(rows: Sequence[dict[str, Any]], result: statistics.Comparison) -> list[dict[str, Any]]:
    """The scorecard as flat rows, the columns of SCORECARD_COLUMNS: `rows` of every run, the rates
    of `result` (the statistics, over the distinct runs)."""
    rates = {(r.model, r.task): r for r in result.rates}
    found = []
    for r in rows:
        rate = rates[(r["model"], task_key(r["lesson"], r["task"]))]
        tokens = None if r["mean_input_tokens"] is None or r["mean_output_tokens"] is None else r["mean_tokens"]
        found.append({
            "lesson": r["lesson"], "task": r["task"], "model": r["model"], "runs": r["runs"], "answered": r["answered"],
            "right": r["right"], "distinct_runs": rate.runs, "distinct_right": rate.right, "rate": rate.rate,
            "rate_low": rate.rate_low, "rate_high": rate.rate_high,
            "rule_of_three_high": rate.rule_of_three_high, "rule_of_three_low": rate.rule_of_three_low,
            "supported": r["supported"], "right_unsupported": r["right_unsupported"], "supported_wrong": r["supported_wrong"],
            "instances": r["instances"], "instance_low": r["instance_low"], "instance_high": r["instance_high"],
            "mean_calls": r["mean_calls"], "mean_budget_used": r["mean_budget_used"],
            "mean_input_tokens": _empty(r["mean_input_tokens"]), "mean_output_tokens": _empty(r["mean_output_tokens"]),
            "mean_tokens": _empty(tokens), "mean_cost_usd": _empty(r["mean_cost_usd"]),
            "mistakes": "; ".join(f"{m['what']} ({m['runs']})" for m in r["mistakes"]),
        })
    return found


def _split(record: statistics.PassK | statistics.Pair) -> dict[str, Any]:
    """A statistics record as a flat row, its task split into lesson and task."""
    row = dataclasses.asdict(record)
    lesson, _, task = row.pop("task").partition("/")
    return {"lesson": lesson, "task": task, **row}


def tables_of(rows: Sequence[dict[str, Any]], result: statistics.Comparison, instances: list[dict[str, Any]],
              by_instance: statistics.ByInstance) -> dict[str, list[dict[str, Any]]]:
    """{table: flat rows} of everything the page shows, with the columns of TABLES."""
    return {
        "scorecard": scorecard_rows(rows, result),
        "pass_k": [_split(r) for r in result.pass_k],
        "pairs": [_split(p) for p in result.pairs],
        "across_tasks": [dataclasses.asdict(a) for a in result.across_tasks],
        "instances": instances,
        "instance_rates": [dataclasses.asdict(r) for r in by_instance.rates],
        "instance_pairs": [dataclasses.asdict(p) for p in by_instance.pairs],
    }


def csv_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flat rows for a CSV file: None empty, a list as 'a; b'."""
    return [{k: "" if v is None else "; ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()} for row in rows]


# ---------------------------------------------------------------------------------------------
# The page


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f} %"


def points(value: float | None) -> str:
    """A difference of rates in percentage points, signed ('0 points' for none, never '-0' or '+0')."""
    if value is None:
        return "n/a"
    return "0 points" if value == 0 else f"{magnitude(value, signed=True)} points"


def magnitude(value: float, signed: bool = False) -> str:
    """A difference of rates in percentage points as a number: whole points, or (below one point)
    two significant digits, so that a difference that is not 0 never reads 0."""
    shown = f"{100 * value:{'+' if signed else ''}.0f}" if abs(value) >= 0.005 else f"{100 * value:{'+' if signed else ''}.2g}"
    return shown


def p_text(p: float | None) -> str:
    return "no test" if p is None else f"{p:.2g}" if p >= 0.001 else "< 0.001"


def rate_text(rate: statistics.Rate, short: bool = False, of_runs: int | None = None) -> str:
    """k of n, the rate and its Wilson interval; at 0 of n the rule of three's bound too. `short`:
    for a cell of a table a phone shows ("2/2 · 100 % (34–100)"); `of_runs`: every run, where the
    rate counts fewer (the distinct ones), said in the cell."""
    if not rate.runs:
        return "no runs"
    assert rate.rate_low is not None and rate.rate_high is not None  # runs: a rate and its interval
    if short:
        distinct = f" distinct (of {of_runs} runs)" if of_runs is not None and of_runs > rate.runs else ""
        found = f"{rate.right}/{rate.runs}{distinct} · {percent(rate.rate)} ({100 * rate.rate_low:.0f}–{100 * rate.rate_high:.0f})"
        return found + (f", ≤ {percent(rate.rule_of_three_high)} by the rule of three" if rate.rule_of_three_high is not None else "")
    found = f"{rate.right} of {rate.runs} ({percent(rate.rate)}, {percent(rate.rate_low)} to {percent(rate.rate_high)}"
    if rate.rule_of_three_high is not None:
        found += f"; at most {percent(rate.rule_of_three_high)} by the rule of three"
    return found + ")"


def verdict(comparison: statistics.Pair | statistics.AcrossTasks) -> str:
    """What one comparison (a Pair or AcrossTasks record) lets one say."""
    if comparison.p_value is None:
        return "no test (a model without runs)"
    if comparison.significant:
        return "differ beyond chance"
    if comparison.smallest_p_value is not None and comparison.smallest_p_value > statistics.ALPHA:
        return "too few runs to tell apart"
    return "not beyond chance"


def holm_threshold(tests: int) -> str:
    """The threshold of Holm's first step over `tests` tests, in words: '0.05/6, the first step of
    Holm's correction over the 6 tests', or '0.05' for one test."""
    return f"0.05/{tests}, the first step of Holm's correction over the {tests} tests" if tests > 1 else "0.05"


def tied_mark(comparison: Any) -> str:
    """'; tied (equivalence test)' after a verdict where the equivalence test says so, else ''."""
    return "; tied (equivalence test)" if comparison.equivalent else ""


def p_phrase(p: float | None) -> str:
    """A p-value in a sentence: 'p = 0.14', 'p < 0.001'."""
    text_ = p_text(p)
    return f"p {text_}" if text_.startswith("<") else f"p = {text_}"


def whole_points(value: float) -> str:
    """A rate difference in whole points, signed, and 0 without a sign (never '-0')."""
    shown = f"{100 * value:+.0f}"
    return "0" if shown in ("+0", "-0") else shown


def interval_text(low: float | None, high: float | None) -> str:
    return "n/a" if low is None else f"{whole_points(low)} to {whole_points(cast(float, high))}"  # both or neither


def lead(model_a: str, model_b: str, difference: float, low: float | None,
         high: float | None) -> tuple[str, float | None, float | None]:
    """Who was right more often and by how much, with the interval as seen from the one ahead; 'no
    difference' where the rates are equal (a difference of round-off is 0: statistics)."""
    if difference == 0:
        return f"{text(model_a)} and {text(model_b)} were right equally often (no difference", low, high
    if difference > 0:
        return f"**{text(model_a)}** was right more often than {text(model_b)}, by {magnitude(difference)} points (", low, high
    assert low is not None and high is not None  # a difference has its interval
    return f"**{text(model_b)}** was right more often than {text(model_a)}, by {magnitude(-difference)} points (", -high, -low


def _sentence(model_a: str, model_b: str, difference: float, low: float | None, high: float | None, where: str,
              test: str) -> str:
    said, low, high = lead(model_a, model_b, difference, low, high)
    joined = "; " if difference == 0 else ""
    return f"{said}{joined}95 % interval {interval_text(low, high)} points) {where}: {test}."


def heterogeneity_text(c: statistics.AcrossTasks) -> str:
    """The sentence for a comparison across tasks whose difference varies across them, or ''."""
    if c.heterogeneity_p is None or c.heterogeneity_p >= statistics.ALPHA:
        return ""
    def tasks(names: Iterable[str]) -> str:
        return ", ".join(code(n) for n in names) or "no task"

    where = f"Breslow-Day {p_phrase(c.heterogeneity_p)}"
    if c.ahead_a and c.ahead_b:
        return (f"The difference between {text(c.model_a)} and {text(c.model_b)} **varies across tasks**, in direction "
                f"({where}): {text(c.model_a)} ahead on {tasks(c.ahead_a)}, {text(c.model_b)} ahead on "
                f"{tasks(c.ahead_b)}; the combined figure hides opposite effects.")
    ahead, on = (c.model_a, c.ahead_a) if c.ahead_a else (c.model_b, c.ahead_b)
    return (f"The size of the difference between {text(c.model_a)} and {text(c.model_b)} **varies across tasks** "
            f"({where}): {text(ahead)} is ahead on {tasks(on)}, by different margins.")


def tied_text(comparisons: Iterable[statistics.Pair | statistics.AcrossTasks], detect: float, where: str) -> str:
    """The pairs an equivalence test calls tied (within ±detect), as one sentence, or ''."""
    tied = [c for c in comparisons if c.equivalent]
    if not tied:
        return ""
    pairs = "; ".join(f"{text(c.model_a)} and {text(c.model_b)}" for c in tied)
    return (f"Tied within ±{magnitude(detect)} points {where} (equivalence test, two one-sided tests at 0.05, margin "
            f"`campaign.detect`): {pairs}.")


def distinct_text(rows: Sequence[dict[str, Any]], result: statistics.Comparison) -> str:
    """'Of the 40 runs, 4 are distinct ...' when some runs are copies of others, else ''."""
    every, kept = sum(r["runs"] for r in rows), sum(r.runs for r in result.rates)
    if every == kept:
        return ""
    return (f"Of the {every} runs, **{kept} are distinct**: runs of one model and task with identical transcripts are "
            "one piece of evidence, counted once by every test here.")


def summary(result: statistics.Comparison, rows: Sequence[dict[str, Any]], detect: float) -> str:
    """The page's one-paragraph answer: who is right more often, by how much, how sure that is,
    whether it varies across tasks, and how many runs would settle it."""
    models = result.models
    if len(models) < 2:
        return f"One model only ({text(models[0]) if models else 'none'}): nothing to compare it with."
    said = [distinct_text(rows, result)]
    if result.across_tasks:
        for c in result.across_tasks:
            if c.difference is None:
                said.append(f"{text(c.model_a)} and {text(c.model_b)} share no task with runs of both.")
                continue
            how = "beyond chance" if c.significant else "not beyond chance"
            said.append(_sentence(c.model_a, c.model_b, c.difference, c.difference_low, c.difference_high,
                                  f"across the {c.tasks} tasks both ran",
                                  f"{how} (exact stratified test, Holm-adjusted {p_phrase(c.p_holm)})"))
            said.append(heterogeneity_text(c))
        said.append(tied_text(result.across_tasks, detect, "across tasks"))
    else:
        for p in result.pairs:
            if p.difference is None:
                continue
            said.append(_sentence(p.model_a, p.model_b, p.difference, p.difference_low, p.difference_high,
                                  "on the one task", f"{verdict(p)} (Fisher's exact test, Holm-adjusted {p_phrase(p.p_holm)})"))
        said.append(tied_text(result.pairs, detect, "on the one task"))
    overall = result.ties[-1]
    if len(overall.groups) == 1 and len(overall.groups[0]) > 1:
        said.append("No test separates any two of the models: they are **not separated**, which is not evidence that "
                    "they are equal.")
    detectable = [p.detectable_difference for p in result.pairs if p.detectable_difference is not None]
    needed = [p.runs_needed for p in result.pairs if p.runs_needed is not None]
    runs = sorted({r.runs for r in result.rates if r.runs})
    threshold = (f"each test at 0.05/{result.comparisons}, the first step of Holm's correction over the "
                 f"{result.comparisons} tests of this page" if result.comparisons > 1 else "at 0.05")
    if detectable:
        low, high = magnitude(min(detectable)), magnitude(max(detectable))
        said.append(f"With {', '.join(map(str, runs))} distinct runs per model and task ({threshold}), the smallest "
                    f"difference on a task these runs detect (power 0.8, around the two models' pooled rate) is about "
                    f"{low if low == high else f'{low} to {high}'} points.")
    if needed:
        at = "at the same threshold" if detectable else threshold
        said.append(f"To detect {magnitude(detect)} points on every task ({at}), about {max(needed)} runs per "
                    "model and task would be needed.")
    return " ".join(s for s in said if s)


def full_summary(result: statistics.Comparison, rows: Sequence[dict[str, Any]], by_instance: statistics.ByInstance | None,
                 detect: float) -> str:
    """The summary paragraph: by task and across tasks, then by instance."""
    parts = (summary(result, rows, detect), instance_summary(by_instance, detect) if by_instance else "")
    return " ".join(part for part in parts if part)


def instance_verdict(pair: statistics.InstancePair) -> str:
    """What one comparison by instance lets one say: never 'tied' nor 'better' beyond its test."""
    if pair.p_value is None:
        return "no test (no instance both ran)"
    if pair.significant:
        return "differ beyond chance"
    if pair.smallest_p_value is not None and pair.smallest_p_value > statistics.ALPHA:
        return "too few instances to tell apart"
    return "not separated"


def rests_on(by_instance: statistics.ByInstance) -> str:
    """'12 instances of LESSON, 8 instances of OTHER': the instances each lesson's figures rest on (a
    range where the models took different numbers of instances; each row states its own)."""
    said = []
    for lesson in by_instance.lessons:
        taken = sorted({r.instances for r in by_instance.rates if r.lesson == lesson and r.instances})
        if not taken:
            continue
        many = counted(taken[0], "instance", "instances") if len(taken) == 1 else f"{taken[0]} to {taken[-1]} instances (per model)"
        said.append(f"{many} of {text(lesson)}")
    return ", ".join(said) if said else "no instance"


def _runs_per_instance(value: float) -> str:
    """'1 run per instance', '2.5 runs per instance'."""
    return f"{value:.3g} {'run' if value == 1 else 'runs'} per instance"


def instance_summary(by_instance: statistics.ByInstance, detect: float) -> str:
    """The summary's sentences by instance: the unit, each pair per lesson, the instances needed."""
    if not by_instance.rates:
        return ""
    said = [f"Counted by instance, the unit of evidence (runs of one instance share its question, so they are not "
            f"independent, and tests that count runs can overstate the evidence), the figures rest on "
            f"{rests_on(by_instance)}."]
    for p in by_instance.pairs:
        where = f"On {text(p.lesson)}"
        if not p.instances:
            said.append(f"{where}, {text(p.model_a)} and {text(p.model_b)} share no instance.")
            continue
        spread = (f"95 % interval {interval_text(p.difference_low, p.difference_high)} points" if p.difference_low is not None
                  else "no interval: " + ("one instance" if p.instances < 2 else "every instance gave the same difference"))
        said.append(f"{where}, paired by instance, {text(p.model_a)} − {text(p.model_b)} is {points(p.difference)} over "
                    f"{counted(p.instances, 'instance', 'instances')} ({spread}; {text(p.model_a)} ahead on {p.a_ahead}, "
                    f"{text(p.model_b)} on {p.b_ahead}): {instance_verdict(p)} (sign test, Holm-adjusted {p_phrase(p.p_holm)})"
                    + (f"; tied within ±{magnitude(detect)} points (equivalence test)." if p.equivalent else "."))
    needed: dict[str, tuple[int, float]] = {}
    for p in by_instance.pairs:
        if p.instances_needed is not None:
            assert p.runs_per_instance_a is not None and p.runs_per_instance_b is not None  # instances compared
            runs_each = max(p.runs_per_instance_a, p.runs_per_instance_b)
            found = needed.get(p.lesson)
            if found is None or p.instances_needed > found[0]:
                needed[p.lesson] = (p.instances_needed, runs_each)
    if needed:
        said.append(f"To detect {magnitude(detect)} points paired by instance (at "
                    f"{holm_threshold(by_instance.comparisons)}), about "
                    + ", ".join(f"{n} instances of {text(lesson)} at {_runs_per_instance(r)}"
                                for lesson, (n, r) in needed.items())
                    + " would be needed.")
    return " ".join(said)


def glance_section(result: statistics.Comparison, rows: Sequence[dict[str, Any]]) -> list[str]:
    out = ["## At a glance", ""]
    rates = {(r.model, r.task): r for r in result.rates}
    every = {(r["model"], task_key(r["lesson"], r["task"])): r["runs"] for r in rows}
    grid: list[dict[str, Any]] = []
    for key in result.tasks:
        lesson, _, task = key.partition("/")
        entry = {"task": Md(f"[{text(lesson)}]({lesson}/index.md) {code(task)}")}
        mine = [rates[(m, key)] for m in result.models]
        best = max((r.rate for r in mine if r.rate is not None), default=None)
        for r in mine:
            shown = rate_text(r, short=True, of_runs=every.get((r.model, key)))
            entry[r.model] = Md(f"**{shown}**" if r.rate == best and r.rate is not None and len(mine) > 1 else shown)
        grid.append(entry)
    columns = [("task", "lesson and task")] + [(m, text(m)) for m in result.models]
    out += ["Runs right (k/n · rate), as the build decides from recomputed numbers, with the 95 % Wilson interval "
            "in per cent (at 0 of n also the rule of three's 95 % upper bound); the highest share of each task in "
            "bold. Runs with identical transcripts count once: where some were copies, k/n counts the distinct "
            "runs, and the cell says of how many runs.", "",
            table(grid, columns), ""]
    out += ["![The share of right runs per task and model, with 95 % intervals](figures/comparison.png)", ""]
    return out


def by_instance_section(by_instance: statistics.ByInstance, detect: float) -> list[str]:
    if not by_instance.rates:
        return []
    rates = []
    for r in by_instance.rates:
        rates.append({
            "lesson": Md(f"[{text(r.lesson)}]({r.lesson}/index.md)"), "model": r.model,
            "instances": r.instances,
            "right": "no runs" if not r.runs else f"{r.right}/{r.runs} · {percent(r.rate)}",
            "interval": ("n/a" if not r.runs else "none: one instance" if r.rate_low is None
                         else f"{percent(r.rate_low)} to {percent(r.rate_high)}"),
            "deff": "" if r.design_effect is None else f"{r.design_effect:.3g}",
            "effective": "" if r.effective_runs is None else f"{r.effective_runs:.3g}",
        })
    out = ["## By instance", "",
           "**The instance is the unit of evidence here.** Runs of one instance share its question and its numbers, so "
           "they are not independent evidence about a model: the figures of this section count instances, not runs, and "
           f"rest on {rests_on(by_instance)} (each row states its own). Per lesson and model, the share of right runs with "
           "its 95 % interval clustered by instance; the design effect says how many times the variance exceeds that of "
           "as many independent runs, and the effective runs what the runs are worth as independent ones. Every count is "
           "in `instances.csv` (per model and instance: its runs and the right ones), from which each figure here can be "
           "recomputed.", "",
           table(rates, [("lesson", "lesson"), ("model", "model"), ("instances", "instances"), ("right", "right/runs · rate"),
                         ("interval", "95 % interval, clustered by instance"), ("deff", "design effect"),
                         ("effective", "effective runs")]), ""]
    if not by_instance.pairs:
        return out
    shown = []
    for p in by_instance.pairs:
        left_out = [f"{n} only {text(m)}" for n, m in ((p.only_a, p.model_a), (p.only_b, p.model_b)) if n]
        if p.instances_needed is not None:
            assert p.runs_per_instance_a is not None and p.runs_per_instance_b is not None  # instances compared
            runs_each = _runs_per_instance(max(p.runs_per_instance_a, p.runs_per_instance_b))
            needed = f"{p.instances_needed} (at {runs_each})"
        else:
            needed = f"n/a: {p.instances_needed_note}"
        shown.append({
            "lesson": text(p.lesson),
            "pair": Md(f"{text(p.model_a)} − {text(p.model_b)}"),
            "instances": str(p.instances) + (f" (left out: {', '.join(left_out)})" if left_out else ""),
            "ahead": f"{p.a_ahead} / {p.b_ahead}",
            "difference": points(p.difference),
            "interval": interval_text(p.difference_low, p.difference_high),
            "p": p_text(p.p_value),
            "holm": p_text(p.p_holm),
            "verdict": instance_verdict(p) + tied_mark(p),
            "detectable": "n/a" if p.detectable_difference is None else f"{magnitude(p.detectable_difference)} points",
            "needed": needed,
        })
    out += ["Each pair of models on each lesson, **paired by instance** on the instances both ran (an instance only one "
            "ran is counted and left out): the mean over those instances of a's share of right runs minus b's, with its "
            "paired t interval; how many instances favour a / b; the exact sign test over the instances where they "
            f"differ, with Holm's correction over these {by_instance.comparisons} tests (a family apart from the tests "
            "by task). The verdict is the test's: \"not separated\" says only that the test does not tell the two apart; the "
            "interval is built another way (from the spread of the differences, not Holm-adjusted), so with few instances "
            "it may exclude 0 where the test does not separate the models: the verdict is what the page concludes. "
            "The last two columns: the smallest mean difference these instances detect, and the instances needed to "
            f"detect {magnitude(detect)} points (`campaign.detect`) at the current runs per instance, both at power 0.8 "
            "(paired t-test, from the observed spread of the per-instance differences: the same whichever model is "
            f"named first) at {holm_threshold(by_instance.comparisons)} by instance. "
            "\"Tied\" is added only where the equivalence test (two one-sided tests at 0.05 on the paired t interval) "
            f"puts the mean difference within ±{magnitude(detect)} points.", "",
            table(shown, [("lesson", "lesson"), ("pair", "a − b"), ("instances", "instances"), ("ahead", "a / b ahead"),
                          ("difference", "mean difference"), ("interval", "95 % interval (points)"),
                          ("p", "sign test p"), ("holm", "Holm-adjusted p"), ("verdict", "verdict"),
                          ("detectable", "detectable now"), ("needed", f"instances needed for {magnitude(detect)} points")]),
            ""]
    return out


def across_section(result: statistics.Comparison) -> list[str]:
    if not result.across_tasks:
        return []
    shown = []
    for c in result.across_tasks:
        shown.append({
            "pair": Md(f"{text(c.model_a)} − {text(c.model_b)}"),
            "tasks": c.tasks if not c.tasks_left_out else Md(f"{c.tasks} (left out: {', '.join(code(t) for t in c.tasks_left_out)})"),
            "difference": points(c.difference),
            "interval": interval_text(c.difference_low, c.difference_high),
            "p": p_text(c.p_value),
            "holm": p_text(c.p_holm),
            "verdict": verdict(c) + tied_mark(c),
            "varies": ("n/a" if c.heterogeneity_p is None else
                       f"{p_text(c.heterogeneity_p)}: " + ("varies; " if c.heterogeneity_p < statistics.ALPHA else "")
                       + f"a ahead on {len(c.ahead_a)}, b on {len(c.ahead_b)}"),
        })
    return ["## Across tasks", "",
            "Each pair of models compared task by task, the per-task differences combined (Mantel-Haenszel weights), "
            "never one test over pooled counts of different tasks; `tasks` is the number of tasks combined. "
            "The verdict is the exact stratified test's, after Holm's correction; the interval is built another way "
            "(from the per-task Wilson intervals), so with few runs it may exclude 0 where the test does not separate "
            "the models, or include 0 where it does: the verdict is what the page concludes. \"Tied\" is added only "
            "where the equivalence test (two one-sided tests at 0.05, margin `campaign.detect`) puts the combined "
            "difference within the margin. The last column: whether the difference varies across tasks (the "
            "Breslow-Day test of one odds ratio, with Tarone's correction, not adjusted), and on how many tasks each "
            "model is ahead: where it varies, the combined difference hides opposite effects.", "",
            table(shown, [("pair", "a − b"), ("tasks", "tasks"), ("difference", "difference"),
                          ("interval", "95 % interval (points)"), ("p", "exact stratified test p"),
                          ("holm", "Holm-adjusted p"), ("verdict", "verdict"),
                          ("varies", "varies across tasks? (Breslow-Day p)")]), ""]


def pairs_section(result: statistics.Comparison, detect: float) -> list[str]:
    shown = []
    for p in result.pairs:
        lesson, _, task = p.task.partition("/")
        shown.append({
            "task": Md(f"{text(lesson)} {code(task)}"),
            "pair": Md(f"{text(p.model_a)} − {text(p.model_b)}"),
            "counts": f"{p.right_a}/{p.runs_a} − {p.right_b}/{p.runs_b}",
            "difference": points(p.difference),
            "interval": interval_text(p.difference_low, p.difference_high),
            "p": p_text(p.p_value),
            "holm": p_text(p.p_holm),
            "verdict": verdict(p) + tied_mark(p),
            "detectable": "n/a" if p.detectable_difference is None else f"{magnitude(p.detectable_difference)} points",
            "needed": "n/a" if p.runs_needed is None else p.runs_needed,
        })
    if not shown:
        return ["## Per task", "", "One model only: nothing to compare it with.", ""]
    return ["## Per task", "",
            f"Each pair of models on each task: the difference of their rates with Newcombe's 95 % interval, Fisher's "
            f"exact test, and Holm's correction over all {result.comparisons} tests of this page (pairs and tasks, and "
            f"the comparisons across tasks). The last two columns: the smallest difference these runs detect, and "
            f"the runs per model needed to detect {magnitude(detect)} points (`campaign.detect`), both at power 0.8 "
            f"for two rates centred on the pair's pooled rate (the same whichever model is named first), at the "
            f"threshold the verdicts use: 0.05/{result.comparisons}, the first step of Holm's correction. \"Tied\" is "
            f"added only where the equivalence test (two one-sided tests at 0.05) puts the difference within "
            f"±{magnitude(detect)} points. Runs with identical transcripts count once (`distinct_runs`).", "",
            table(shown, [("task", "task"), ("pair", "a − b"), ("counts", "right/runs"), ("difference", "difference"),
                          ("interval", "95 % interval (points)"), ("p", "Fisher p"), ("holm", "Holm-adjusted p"),
                          ("verdict", "verdict"), ("detectable", "detectable now"),
                          ("needed", f"runs needed for {magnitude(detect)} points")]), ""]


def ties_section(result: statistics.Comparison) -> list[str]:
    if len(result.models) < 2:
        return []
    out = ["## Not separated", "", "Models that no test (Holm-adjusted) separates, per task and across tasks. Not "
           "separated is not equal: only the equivalence test (marked \"tied\" in the tables) says two models are the "
           "same within a margin.", ""]
    for t in result.ties:
        where = "across tasks" if t.task is None else f"{text(t.task.partition('/')[0])} {code(t.task.partition('/')[2])}"
        groups = "; ".join(", ".join(text(m) for m in g) for g in t.groups if len(g) > 1)
        out.append(f"- {where}: " + (f"not separated: {groups}" if groups else "every two models are told apart"
                                     if t.groups else "no runs"))
    return out + [""]


def _number(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def scorecard_section(flat: Sequence[dict[str, Any]], priced: bool) -> list[str]:
    out = ["## Scorecard", "", "Per lesson task and model (`scorecard.csv`; the columns are explained below). Tokens "
           "are those the provider reported" + (", and the cost follows from the configured prices." if priced else "."), ""]
    shown = []
    for r in flat:
        shown.append({
            "lesson": Md(f"[{text(r['lesson'])}]({r['lesson']}/index.md)"), "task": code(r["task"]), "model": r["model"],
            "runs": r["runs"], "distinct": r["distinct_runs"], "answered": r["answered"], "right": r["right"],
            "rate": percent(r["rate"]),
            "interval": f"{percent(r['rate_low'])} to {percent(r['rate_high'])}",
            "three": "" if r["rule_of_three_high"] is None else f"≤ {percent(r['rule_of_three_high'])}",
            "supported": r["supported"], "right_unsupported": r["right_unsupported"],
            "supported_wrong": r["supported_wrong"], "calls": _number(r["mean_calls"]),
            "budget": _number(r["mean_budget_used"]),
            "tokens": "not reported" if r["mean_tokens"] is None else _number(r["mean_tokens"], 4),
            "cost": "no price" if r["mean_cost_usd"] is None else _number(r["mean_cost_usd"], 4),
            "mistakes": r["mistakes"] or "none",
        })
    columns = [("lesson", "lesson"), ("task", "task"), ("model", "model"), ("runs", "runs"),
               ("distinct", "distinct_runs"), ("answered", "answered"),
               ("right", "right"), ("rate", "rate"), ("interval", "rate_low to rate_high"),
               ("three", "rule_of_three_high"), ("supported", "supported"), ("right_unsupported", "right_unsupported"),
               ("supported_wrong", "supported_wrong"), ("calls", "mean_calls"), ("budget", "mean_budget_used"),
               ("tokens", "mean_tokens")]
    columns += [("cost", "mean_cost_usd")] if priced else []
    columns += [("mistakes", "mistakes")]
    return out + [table(shown, columns), ""]


def pass_k_section(result: statistics.Comparison) -> list[str]:
    ks = sorted({p.k for p in result.pass_k})
    if not ks:
        return []
    grid: dict[tuple[str, str], dict[Any, Any]] = {}
    for p in result.pass_k:
        lesson, _, task = p.task.partition("/")
        entry = grid.setdefault((p.task, p.model), {"task": Md(f"{text(lesson)} {code(task)}"), "model": p.model})
        entry[p.k] = f"{p.pass_at_k:.2f} / {p.pass_hat_k:.2f}"
    rows = [{**entry, **{k: entry.get(k, "") for k in ks}} for entry in grid.values()]
    rows += pass_k_means(result, ks)
    return ["## pass@k and pass^k", "",
            "Per task and model, for each k the runs allow (`pass_k.csv`): pass@k / pass^k, the chance that k runs "
            "drawn from the (distinct) runs include a right one / are all right; then, per model, their means over "
            "the tasks (each task once; a k some task of the model does not reach is left empty).", "",
            table(rows, [("task", "task"), ("model", "model")] + [(k, f"k = {k}") for k in ks]), ""]  # type: ignore[misc]  # rows keyed by k


def pass_k_means(result: statistics.Comparison, ks: Sequence[int]) -> list[dict[Any, Any]]:
    """Per model, pass@k / pass^k averaged over its tasks with runs, for each k every one of them reaches."""
    found: list[dict[Any, Any]] = []
    for model in result.models:
        mine = [p for p in result.pass_k if p.model == model]
        tasks = {p.task for p in mine}
        if len(tasks) < 2:
            continue
        entry: dict[Any, Any] = {"task": Md("**mean over tasks**"), "model": model}
        for k in ks:
            at_k = [p for p in mine if p.k == k]
            if len(at_k) == len(tasks):
                entry[k] = (f"{math.fsum(p.pass_at_k for p in at_k) / len(at_k):.2f} / "
                            f"{math.fsum(p.pass_hat_k for p in at_k) / len(at_k):.2f}")
        found.append({**entry, **{k: entry.get(k, "") for k in ks}})
    return found


def method_section(settings: dict[str, Any]) -> list[str]:
    limits = [f"{code(k)} {settings[k]:g}" for k in ("max_tokens_per_run", "max_seconds_per_run") if settings.get(k)]
    out = [
        "## How the build decides",
        "",
        "- Each run was recorded once, then replayed by this build: every tool call went again through the "
        "allowlist and the simulation, and every result was recomputed and compared with the recording.",
        "- Each run is judged on the answer it submitted with the tool `answer`, never on its words. **Right** is "
        "the lesson's own decision from recomputed numbers (its page says what is right); a run with no answer is "
        "not right. **Supported** says whether the run's own replayed experiments point at its answer.",
        "- Runs of one model and task with identical transcripts are copies (a deterministic model asked the same "
        "question again): the tests count each once (`distinct_runs`); the cost counts every run, each was paid for.",
        "- The tests by task and across tasks take the distinct runs of two models on one task as independent samples; a task is "
        "a lesson's variant (in a lesson of several agents per run, each agent). Tasks are never pooled: across tasks, the "
        "per-task differences are combined, with the number of tasks stated.",
        "- The instance is the unit of evidence: runs of one instance share its question and numbers, so they are not "
        "independent, and where a model ran an instance several times the tests that count runs can overstate the "
        "evidence. The section by instance counts instances: the rate's interval clustered by instance, the comparison "
        "paired by instance, and the instances needed; each states the instances it rests on.",
        "- Per-run limits: " + (", ".join(limits) + "; a run stopped by one is not right." if limits else "none."),
    ]
    out += [f"- {key.replace('_', ' ')}: {text(method)}" for key, method in statistics.METHODS.items()]
    return out + [""]


def columns_section() -> list[str]:
    out = ["## The columns of the tables", "",
           "The CSV files and `scorecard.json` use the same column names (in the JSON, a list for `tasks_left_out`; "
           "an empty CSV cell is `null`).", ""]
    for name_, columns in TABLES.items():
        out += [f"### [{FILES[name_]}]({FILES[name_]})", ""]
        out += [f"- {code(column)}: {text(explanation)}" for column, explanation in columns.items()]
        out.append("")
    return out


def not_counted_section(not_counted: dict[str, list[str]]) -> list[str]:
    if not any(not_counted.values()):
        return []
    out = ["## Recorded runs not counted", ""]
    for lesson, names in not_counted.items():
        if names:
            out.append(f"- {text(lesson)}: **{len(names)} recorded runs are not counted** here: the configuration no "
                       f"longer asks for them (their index is above `campaign.runs`, or their model is not among "
                       f"`campaign.models`). They stay on disk in `recordings/{lesson}/`; raise `campaign.runs` again "
                       "to count them.")
    return out + [""]


def runs_section(runs: pd.DataFrame, links: dict[tuple[str, str], str]) -> list[str]:
    out = ["## The runs", "", "Each run links to its page as this build replayed it (or, for a run its lesson's page "
           "does not show, to its transcript as replayed); every run is in `<lesson>/runs.csv.gz`.", ""]
    for lesson, mine in runs.groupby("lesson", sort=False):
        out += [f"### {text(lesson)} ({len(mine)} runs; [its page]({lesson}/index.md))", ""]
        listed = mine.sort_values("right", kind="stable").head(RUNS_LISTED)  # the wrong ones first
        shown = []
        for row in listed.to_dict("records"):
            n = str(row["recording"])
            shown.append({
                "run": Md(f"[{name(n)}]({links[(lesson, n)]})" if (lesson, n) in links else name(n)),
                "model": row["model"],
                "task": code(row["task"]),
                "right": "right" if row["right"] else Md("wrong: " + cell(row["wrong"])),
                "supported": "" if pd.isna(row["supported"]) else bool(row["supported"]),
                "calls": int(row["calls"]),
                "tokens": "" if pd.isna(row["tokens"]) else int(row["tokens"]),
            })
        out += [table(shown, [("run", "run"), ("model", "model"), ("task", "task"), ("right", "decided"),
                              ("supported", "supported"), ("calls", "tool calls"), ("tokens", "tokens")]), ""]
        if len(mine) > RUNS_LISTED:
            out += [f"{len(mine) - RUNS_LISTED} more runs of {text(lesson)} are in `{lesson}/runs.csv.gz`.", ""]
    return out


def page(settings: dict[str, Any], lessons: Sequence[str], runs: pd.DataFrame, rows: Sequence[dict[str, Any]],
         result: statistics.Comparison, links: dict[tuple[str, str], str], not_counted: dict[str, list[str]],
         summary_page: bool = True, by_instance: statistics.ByInstance | None = None,
         costs: Iterable[dict[str, Any]] = (), unfinished_spend: dict[str, Any] | None = None) -> str:
    models = list(settings["models"])
    priced = bool(settings.get("prices"))
    detect = settings.get("detect", DETECT)
    providers = {entry["name"]: entry["provider"] for entry in settings.get("entries", ())}
    labels = {m: LABELS[clients.load_provider(providers.get(m, settings["provider"])).kind_for(m)] for m in models}
    if len(set(labels.values())) == 1:
        who = f"{', '.join(text(m) for m in models)}, through the provider {code(settings['provider'])}: **{text(labels[models[0]])}**"
    else:  # providers, or a provider (inspect_ai), whose runs are a model's or a program's, by model
        who = (", ".join(f"{text(m)} (**{text(labels[m])}**)" for m in models)
               + f", through the provider {code(settings['provider'])}")
    flat = scorecard_rows(rows, result)
    out = [
        f"# Campaign {text(settings['name'])}: which model gets the lessons right more often",
        "",
        *(["[← All lessons and campaigns](../../index.md)", ""] if summary_page else []),
        f"Models: {who}. {counted(settings['runs'], 'run', 'runs')} per model and variant of each instance taken of each lesson "
        f"({', '.join(text(lesson) for lesson in lessons)}); {counted(len(result.tasks), 'task', 'tasks')}.",
        "",
        "## Summary",
        "",
        full_summary(result, rows, by_instance, detect),
        "",
    ]
    out += glance_section(result, rows)
    out += by_instance_section(by_instance, detect) if by_instance else []
    out += across_section(result)
    out += pairs_section(result, detect)
    out += ties_section(result)
    out += cost_accuracy.section(list(costs)) if len(result.models) > 1 else []
    out += cost_accuracy.unfinished_line(unfinished_spend) if unfinished_spend else []
    out += scorecard_section(flat, priced)
    out += pass_k_section(result)
    out += not_counted_section(not_counted)
    out += method_section(settings)
    out += columns_section()
    out += runs_section(runs, links)
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# The figure


def figure(result: statistics.Comparison) -> Figure:
    """Bars of the rate per task and model with the Wilson interval: narrow, with large labels, so
    that it reads on a phone (390 px) as on a desktop."""
    tasks, models = result.tasks, result.models
    rates = {(r.model, r.task): r for r in result.rates}
    height = 1.6 + 0.5 * max(1, len(tasks) * len(models))
    drawing = Figure(figsize=(5.2, height), layout="constrained")
    axes = drawing.add_subplot()
    width = 0.8 / max(1, len(models))
    for i, model in enumerate(models):
        positions: list[float]
        values: list[float]
        low: list[float]
        high: list[float]
        counts: list[str]
        positions, values, low, high, counts = [], [], [], [], []
        for t, key in enumerate(tasks):
            r = rates[(model, key)]
            if r.runs:
                assert r.rate is not None and r.rate_low is not None and r.rate_high is not None  # runs: a rate and its interval
                positions.append(t + (i - (len(models) - 1) / 2) * width)
                values.append(100 * r.rate)
                low.append(max(0.0, 100 * (r.rate - r.rate_low)))
                high.append(max(0.0, 100 * (r.rate_high - r.rate)))
                counts.append(f"{r.right}/{r.runs}")
        axes.barh(positions, values, height=width, color=f"C{i}", alpha=0.7, label=model)
        axes.errorbar(values, positions, xerr=[low, high], fmt="none", ecolor="black", capsize=3)
        for position, count in zip(positions, counts):
            axes.text(1, position, count, va="center", fontsize=11)
    axes.set_yticks(range(len(tasks)), [key.replace("/", "\n") for key in tasks], fontsize=11)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.tick_params(axis="x", labelsize=11)
    axes.set_xlabel("runs right (%), 95 % Wilson interval", fontsize=11)
    axes.grid(axis="x", alpha=0.3)
    drawing.legend(loc="outside lower center", ncols=min(2, max(1, len(models))), fontsize=11)
    drawing.suptitle("Which model is right more often", fontsize=12)
    return drawing


# ---------------------------------------------------------------------------------------------
# The job


def campaign_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The campaign's per-run table: one row per run of every lesson (RUN_COLUMNS, then the answers'
    fields), tidy: one column per variable, so that any figure of the page can be recomputed from it."""
    answers = [c for c in runs.columns if c.startswith("answer_")]
    return runs.reindex(columns=[*RUN_COLUMNS, *answers])


def transcript_links(lessons: Iterable[str], archives: Iterable[str | Path], root: str | Path) -> dict[tuple[str, str], str]:
    """{(lesson, run): the run's page (<lesson>/runs/<run>.md, the render job's) relative to the
    campaign's folder, or the file of its batch's transcripts as replayed (transcripts/<batch>.jsonl,
    a line each) where the lesson's page shows no page of it}."""
    links: dict[tuple[str, str], str] = {}
    for archive in map(Path, archives):
        lesson = archive.parent.parent.name  # <root>/<lesson>/transcripts/<batch>.jsonl
        for run in sorted(str(data["run"]) for data in pipeline.archived_transcripts(archive)):
            page = Path(root) / lesson / "runs" / f"{run}.md"
            links[(lesson, run)] = run_link(run, f"{lesson}/") if page.is_file() else archive.relative_to(root).as_posix()
    return links


def not_counted_runs(lessons: Iterable[str], runs: pd.DataFrame, folder: Path) -> dict[str, list[str]]:
    """{lesson: names of the recordings on disk that the per-run tables do not hold} (a lowered
    `campaign.runs`, or a model taken off the list)."""
    counted = set(runs["recording"].astype(str))
    return {lesson: sorted(p.stem for p in (folder / "recordings" / lesson).glob("*.json") if p.stem not in counted)
            for lesson in lessons}


def write(settings: dict[str, Any], lessons: Sequence[str], tables: Sequence[str | Path], transcripts: Iterable[str | Path],
          folder: str | Path) -> float:
    """The comparison of a campaign into `folder`: index.md (and index.html), scorecard.csv,
    pass_k.csv, pairs.csv, across_tasks.csv, instances.csv, instance_rates.csv,
    instance_pairs.csv, cost_accuracy.csv, scorecard.json (every table, the same columns), the
    campaign's per-run table runs.csv.gz, figures/comparison.png and (with a cost to show)
    figures/cost_accuracy.png. Returns the seconds the HTML took."""
    folder = Path(folder)
    models = list(settings["models"])
    detect = settings.get("detect", DETECT)
    runs = runs_of(lessons, tables, settings.get("prices", {}))
    evidence = distinct(runs)
    rows = compare(runs, models)
    result = statistics_of(counts_of(evidence), models, detect)
    instances = instance_rows(evidence, models)
    by_instance = instance_statistics_of(instances, models, detect)
    costs = cost_accuracy.rows(runs, evidence, _ordered_models(set(runs["model"]), models))
    found = {**tables_of(rows, result, instances, by_instance), "cost_accuracy": costs}
    not_counted = not_counted_runs(lessons, runs, folder)
    left = [run for lesson in lessons for run in unfinished.left_in(folder / "recordings" / lesson)]
    spend = cost_accuracy.unfinished_spend(left, settings.get("prices", {}))
    summary_page = (folder.parent.parent / "index.md").is_file()  # results/index.md: linked only where it is
    text_ = page(settings, lessons, runs, rows, result, transcript_links(lessons, transcripts, folder), not_counted,
                 summary_page, by_instance, costs, spend)
    pipeline.write_json(folder / "scorecard.json", {
        "campaign": settings["name"], "settings": settings, "detect": detect,
        "summary": full_summary(result, rows, by_instance, detect),
        "tests": result.comparisons, "instance_tests": by_instance.comparisons, **found,
        "ties": [dataclasses.asdict(t) for t in result.ties],
        "not_counted": {lesson: len(names) for lesson, names in not_counted.items()},
        "unfinished": spend,
        "columns": TABLES, "methods": statistics.METHODS,
    })
    for name_, flat in found.items():
        recording_io.write_atomic(folder / f"{name_}.csv", pipeline.csv_text(csv_rows(flat)) if flat else
                                  ",".join(TABLES[name_]) + "\n")
    render.save_figure(figure(result), folder / "figures" / "comparison.png")
    drawing = cost_accuracy.figure(costs)
    if drawing is not None:
        render.save_figure(drawing, folder / "figures" / "cost_accuracy.png")
    else:  # a figure of an earlier build (with prices then) would outlive the page that no longer shows it
        (folder / "figures" / "cost_accuracy.png").unlink(missing_ok=True)
    recording_io.write_atomic(folder / RUNS_FILE, runs_table_bytes(campaign_runs(runs)))
    return render.write_markdown_and_html(folder / "index.md", text_)
