"""How often runs give the right answer, per model or program, with a 95 % Wilson interval, and
with a 95 % interval that counts instances rather than runs.

Each run is scored on the answer it submitted (its `answer` call): right and wrong are decided by
each lesson's `score` function from recomputed numbers; the words of a run never enter. A run
with no answer is not right; nor is a run that a per-run limit stopped (it has no answer).
Beside `right`, each run says whether it `answered` and whether its own experiments `supported`
its answer (empty when there is no answer). This module counts and summarises: the judged runs
become a table of one row per run (a pandas DataFrame, `runs_table`), and a scorecard, a
lesson's or a campaign's, is a group-by of such a table (`scorecard`).

Runs of one instance (one question of the lesson's family, with its own numbers) are not
independent evidence: each scorecard row also says how many instances its runs took, and gives the
rate's interval clustered by instance (`instance_interval`, the formula of
`replaylab.statistics.clustered`, written again here so that a render job does not import
statsmodels: about 0.35 s; a test holds the two equal).

pandas is imported here and nowhere on the way of a replay, a judgement or a scan: only the jobs
that tabulate (render, compare) import this module (importing pandas costs about 0.4 s).
"""

import gzip
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from replaylab.lessons.cells import from_cell, quoting, to_cell

Z95 = 1.959963984540054  # two-sided 95 % normal quantile
TOO_WIDE = 0.5  # an interval wider than this says nothing useful

# The per-run table: a run, who made it, its task, its instance and the instance's difficulty, whether it
# answered, its score, whether its experiments
# support its answer (empty without an answer), what it got wrong, the calls it made and ran, the tokens its
# provider reported (empty when none were), its recording, the digest of what it did (pipeline.behaviour: runs
# with one digest are copies), then its answer's fields (answer_<field>, empty without an answer; a list of
# names as "a;b").
COLUMNS = ("run", "model", "task", "instance", "difficulty", "answered", "right", "supported", "wrong", "calls", "budget_used",
           "input_tokens", "output_tokens", "seconds", "recording", "behaviour")


def wilson(right: int, runs: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion right/runs (0..1); (0, 1) for no runs."""
    if runs == 0:
        return 0.0, 1.0
    p = right / runs
    centre = p + z * z / (2 * runs)
    spread = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    denominator = 1 + z * z / runs
    low = 0.0 if right == 0 else max(0.0, (centre - spread) / denominator)  # exact at the ends, not 5e-17
    high = 1.0 if right == runs else min(1.0, (centre + spread) / denominator)
    return low, high


def instance_interval(rights: Sequence[int], runs: Sequence[int],
                      confidence: float = 0.95) -> tuple[float, float] | tuple[None, None]:
    """(low, high): the interval of the rate sum(rights)/sum(runs) clustered by instance, for
    parallel lists of right and runs per instance (each with runs); (None, None) with fewer than two
    instances. Wilson's score interval on the effective runs n/deff, deff = the cluster-robust
    variance with C/(C-1) over p(1-p)/(n-1), at least 1 (1 where it cannot be estimated), with the
    t quantile on C-1 degrees of freedom in place of z (see replaylab.statistics.METHODS)."""
    from scipy.special import stdtrit  # about 0.08 s, and only where a scorecard is made

    clusters, total = len(runs), sum(runs)
    if clusters < 2:
        return None, None
    p = sum(rights) / total
    variance = clusters / (clusters - 1) * math.fsum((k - n * p) ** 2 for k, n in zip(rights, runs)) / total**2
    independent = p * (1 - p) / (total - 1)
    effective = total / max(1.0, variance / independent) if independent > 0 else total
    q = float(stdtrit(clusters - 1, 0.5 + confidence / 2))
    spread = q * q / effective
    centre = (p + spread / 2) / (1 + spread)
    half = q * math.sqrt(p * (1 - p) / effective + spread / (4 * effective)) / (1 + spread)
    low = 0.0 if p == 0 else max(0.0, min(centre - half, p))
    high = 1.0 if p == 1 else min(1.0, max(centre + half, p))
    return low, high


def _by_instance(table: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """{key: (instances, low, high)} per group of `keys`: the distinct instances its runs took and
    the interval clustered by them; empty when the table has no instance column."""
    if "instance" not in table.columns:
        return {}
    counted = (table.assign(right_count=table["right"].astype(bool).astype(int))
               .groupby([*keys, "instance"], sort=True, dropna=False)
               .agg(runs=("run", "size"), right=("right_count", "sum")).reset_index())
    found: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for key, group in counted.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        found[key] = (len(group), *instance_interval([int(k) for k in group["right"]], [int(n) for n in group["runs"]]))
    return found


def scores(verdicts: dict[str, dict[str, Any]], answers: dict[str, Any], decide: Callable[[dict[str, Any], Any], str | None],
           runs: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One score per judged run: `decide(entry, truth)` gives what it got wrong against the build's
    answer of the run's instance (`answers[instance]`), or None when its answer is right; a run stopped
    by a per-run limit has no answer, so is wrong. `runs`: what the batches' verdicts say of each run
    ({run: {group, usage, stopped_by, ...}})."""
    runs = runs or {}
    found: list[dict[str, Any]] = []
    for name, entry in verdicts.items():
        stopped = runs.get(name, {}).get("stopped_by")
        wrong = (f"stopped by its limit {stopped['limit']} ({stopped['allowed']:g})" if stopped
                 else decide(entry, answers[entry["instance"]]))
        answer = entry["answer"]
        found.append({"run": name, "model": entry["model"], "task": entry["task"], "instance": entry["instance"],
                      "difficulty": entry["difficulty"], "answered": answer is not None,
                      "right": wrong is None, "supported": entry["supported"], "wrong": wrong, "answer": answer,
                      "calls": entry["calls"], "budget_used": entry["ran"]})
    return found


def _cell(value: object) -> str:
    """An answer's field as a cell of the per-run table, as text (a whole number stays "45", never
    "45.0", beside a run with no answer): a list of names as "a;b"."""
    return ";".join(value) if isinstance(value, list) else str(value)


def answer_columns(found: Iterable[dict[str, Any]]) -> list[str]:
    """The answer_<field> columns of some scores, in the order their fields first appear."""
    fields = dict.fromkeys(field for score in found for field in (score["answer"] or {}))
    return [f"answer_{field}" for field in fields]


def runs_table(found: Sequence[dict[str, Any]], runs: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """The per-run table of a lesson: one row per score of `found`, with the tokens reported for
    its recording and its answer's fields."""
    runs = runs or {}
    rows = []
    for score in found:
        usage = runs.get(score["run"], {}).get("usage") or {}
        row = {key: value for key, value in score.items() if key != "answer"}
        row.update(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                   seconds=runs.get(score["run"], {}).get("seconds"), recording=score["run"],
                   behaviour=runs.get(score["run"], {}).get("behaviour", ""))
        row.update({f"answer_{field}": _cell(value) for field, value in (score["answer"] or {}).items()})
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(COLUMNS) + answer_columns(found))
    for column in ("input_tokens", "output_tokens"):
        table[column] = table[column].astype("Int64")  # empty when the provider reported nothing
    table["supported"] = table["supported"].astype("boolean")  # empty without an answer
    table["seconds"] = table["seconds"].astype("Float64")  # empty for a run recorded without its time
    return table


def tabulate(found: Sequence[dict[str, Any]],
             runs: dict[str, dict[str, Any]] | None) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """(the scorecard rows, the per-run table) of the scores `found` of the runs {run: facts}."""
    table = runs_table(found, runs)
    return scorecard(table), table


def read_runs_table(path: Any) -> pd.DataFrame:
    """The per-run table back: names, mistakes and answers stay text (a model named "7", a run
    "001", a mistake "NA"), an empty token count or `supported` is missing."""
    columns = pd.read_csv(path, nrows=0).columns
    text = dict.fromkeys(["run", "model", "task", "instance", "difficulty", "wrong", "recording", "behaviour"]
                         + [c for c in columns if c.startswith("answer_")], "string")
    kinds = {**text, "input_tokens": "Int64", "output_tokens": "Int64", "seconds": "Float64", "supported": "boolean"}
    table = pd.read_csv(path, dtype=kinds, keep_default_na=False,
                        na_values={"input_tokens": [""], "output_tokens": [""], "seconds": [""], "supported": [""]})
    for column in text:
        if column in table.columns:
            table[column] = table[column].map(from_cell).astype("string")
    return table


def runs_table_bytes(table: pd.DataFrame) -> bytes:
    """The table as gzipped CSV, the same bytes for the same table (no time in the gzip header)."""
    texts = [c for c in table.columns if table[c].dtype == object or pd.api.types.is_string_dtype(table[c].dtype)]
    table = table.assign(**{c: table[c].map(to_cell) for c in texts})  # cells a spreadsheet shows as text
    chosen = quoting(value for c in texts for value in table[c])
    return gzip.compress(table.to_csv(index=False, lineterminator="\n", quoting=chosen).encode(), mtime=0)


def _python(value: Any) -> Any:
    """A value of a pandas cell as plain Python (None for a missing one)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _mistakes(table: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """{key: [{"what", "runs"}]}: what the wrong runs got wrong, most frequent first (ties in the
    order they first occur)."""
    wrong = table[~table["right"].astype(bool)].assign(order=lambda t: range(len(t)))
    if wrong.empty:
        return {}
    counted = (
        wrong.groupby([*keys, "wrong"])
        .agg(runs=("run", "size"), first=("order", "min"))
        .reset_index()
        .sort_values(["runs", "first"], ascending=[False, True])  # a total order: each group has its own first
    )
    found: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in counted.to_dict("records"):
        found.setdefault(tuple(row[k] for k in keys), []).append({"what": row["wrong"], "runs": int(row["runs"])})
    return found


def scorecard(table: pd.DataFrame, keys: Iterable[str] = ("model", "task"),
              means: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Rows per `keys` (by default model and task): runs, answered, right, interval, supported (of
    the answered runs), right but not supported, supported but wrong, the instances the runs took
    and the interval clustered by them (None without an instance column), mean calls and budget used
    (and the mean of each column of `means`), and what the wrong runs got wrong."""
    if table.empty:
        return []
    keys = list(keys)
    supported = table["supported"].fillna(False).astype(bool)
    right = table["right"].astype(bool)
    table = table.assign(supported_count=supported, right_unsupported=right & ~supported & table["answered"].astype(bool),
                         supported_wrong=supported & ~right)
    aggregations = {
        "runs": ("run", "size"),
        "answered": ("answered", "sum"),
        "right": ("right", "sum"),
        "supported": ("supported_count", "sum"),
        "right_unsupported": ("right_unsupported", "sum"),
        "supported_wrong": ("supported_wrong", "sum"),
        "mean_calls": ("calls", "mean"),
        "mean_budget_used": ("budget_used", "mean"),
    }
    aggregations.update({f"mean_{column}": (column, "mean") for column in means})
    summary = table.groupby(keys, sort=True).agg(**aggregations).reset_index()
    mistakes = _mistakes(table, keys)
    by_instance = _by_instance(table, keys)
    rows = []
    for found in summary.to_dict("records"):
        runs, right = int(found["runs"]), int(found["right"])
        low, high = wilson(right, runs)
        row = {key: found[key] for key in keys}
        row.update({
            "runs": runs,
            "answered": int(found["answered"]),
            "right": right,
            "rate": right / runs,
            "low": low,
            "high": high,
            "conclusive": high - low <= TOO_WIDE,
            "supported": int(found["supported"]),
            "right_unsupported": int(found["right_unsupported"]),
            "supported_wrong": int(found["supported_wrong"]),
        })
        instances, instance_low, instance_high = by_instance.get(tuple(found[k] for k in keys), (None, None, None))
        row.update({
            "instances": instances,
            "instance_low": instance_low,
            "instance_high": instance_high,
            "mean_calls": float(found["mean_calls"]),
            "mean_budget_used": float(found["mean_budget_used"]),
        })
        row.update({f"mean_{column}": _python(found[f"mean_{column}"]) for column in means})
        row["mistakes"] = mistakes.get(tuple(found[k] for k in keys), [])
        rows.append(row)
    return rows


# The columns of a lesson's scorecard, the same names in scorecard.csv and scorecard.json (where
# `mistakes` is a list of {what, runs}); the page prints these explanations.
SCORECARD_COLUMNS = {
    "model": "The model or program that made the runs.",
    "task": "The task: a variant of the lesson (in a lesson of several agents per run, an agent scored on its own answer).",
    "runs": "Runs judged (n).",
    "answered": "Runs that submitted an answer with the tool `answer`.",
    "right": "Runs judged right (k), decided from numbers this build recomputed.",
    "rate": "k/n, the share of runs that were right.",
    "low": "Lower end of the 95 % Wilson score interval of the rate.",
    "high": "Upper end of the 95 % Wilson score interval of the rate.",
    "conclusive": f"Whether that interval is at most {100 * TOO_WIDE:.0f} points wide; wider, the runs are too few "
                  "to conclude anything about the rate.",
    "supported": "Answered runs whose own replayed experiments point at their answer.",
    "right_unsupported": "Runs right but not supported by their own experiments.",
    "supported_wrong": "Runs supported by their own experiments but wrong.",
    "instances": "How many distinct instances (questions of the lesson's family, each with its own numbers) the runs "
                 "took. Runs of one instance are not independent evidence: the instance is the unit of the next two "
                 "columns.",
    "instance_low": "Lower end of the 95 % interval of the rate clustered by instance (Wilson's score interval on the "
                    "runs divided by the design effect, t on instances - 1 degrees of freedom: never narrower than "
                    "`low` to `high`, and wider the more runs of one instance agree); empty with fewer than two "
                    "instances, where nothing can be said of the rate over instances.",
    "instance_high": "Upper end of the 95 % interval of the rate clustered by instance; empty with fewer than two instances.",
    "mean_calls": "Mean tool calls per run, every call made (refused ones included).",
    "mean_budget_used": "Mean tool calls per run that ran an experiment, and so counted against the budget.",
    "mistakes": "What the wrong runs got wrong, each with its number of runs.",
}


def scorecard_table(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scorecard as flat rows for a CSV file: the columns of SCORECARD_COLUMNS, named as in the JSON."""
    return [
        {
            **{key: r[key] for key in SCORECARD_COLUMNS if key != "mistakes"},
            "mistakes": "; ".join(f"{m['what']} ({m['runs']})" for m in r["mistakes"]),
        }
        for r in rows
    ]
