"""How often runs reach the right answer, per model or program, with a 95 % Wilson interval.

Right and wrong are decided by each lesson's `score` function from recomputed numbers; the
words of a run never enter. A run that a per-run limit stopped is not right, whatever it
computed. This module counts and summarises: the judged runs become a table of one row per run
(a pandas DataFrame, `runs_table`), and a scorecard, a lesson's or a campaign's, is a group-by of
such a table (`scorecard`).

pandas is imported here and nowhere on the way of a replay, a judgement or a scan: only the jobs
that tabulate (render, compare) import this module (importing pandas costs about 0.4 s).
"""

import gzip
import math

import pandas as pd

Z95 = 1.959963984540054  # two-sided 95 % normal quantile
TOO_WIDE = 0.5  # an interval wider than this says nothing useful

# The per-run table: a judged run (in a lesson judged per group, a group of runs), who made it, its task, its
# score, the calls it made and ran, the tokens its provider reported (empty when none were) and the
# recordings it is made of.
COLUMNS = ("run", "model", "task", "right", "wrong", "calls", "budget_used", "input_tokens", "output_tokens", "recordings")


def wilson(right, runs, z=Z95):
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


def members_of(runs):
    """{judged entry: [its recordings]} of {run: facts}: each run is an entry of its own, and each
    group (a lesson judged per group) is an entry of its members."""
    found = {}
    for run, facts in runs.items():
        found.setdefault(facts["group"], []).append(run)
    return found | {run: [run] for run in runs}  # a run's own name before a group's


def stopped_by(names, runs):
    """The per-run limit that stopped one of the recordings `names`, or None."""
    for run in names:
        stopped = runs[run].get("stopped_by")
        if stopped:
            return stopped
    return None


def scores(verdicts, scans, decide, runs=None):
    """One score per judged run (a group, for reviews): `decide(entry, scans)` gives what it got
    wrong, or None when it is right; a run stopped by a per-run limit is wrong. `runs`: what the
    batches' verdicts say of each run ({run: {group, usage, stopped_by, ...}})."""
    runs = runs or {}
    members = members_of(runs)
    found = []
    for name, entry in verdicts.items():
        stopped = stopped_by(members.get(name, []), runs)
        wrong = f"stopped by its limit {stopped['limit']} ({stopped['allowed']:g})" if stopped else decide(entry, scans)
        found.append({"run": name, "model": entry["model"], "task": entry["task"], "right": wrong is None,
                      "wrong": wrong, "calls": entry["calls"], "budget_used": entry["ran"]})
    return found


def _tokens(names, runs, kind):
    reported = [runs[n]["usage"] for n in names if runs[n].get("usage")]
    return sum(usage.get(kind, 0) for usage in reported) if reported else None


def runs_table(found, runs=None):
    """The per-run table of a lesson: one row per score of `found`, with the tokens reported for
    its recordings and their names."""
    runs = runs or {}
    members = members_of(runs)
    rows = []
    for score in found:
        names = members.get(score["run"], [])
        rows.append({
            **score,
            "input_tokens": _tokens(names, runs, "input_tokens"),
            "output_tokens": _tokens(names, runs, "output_tokens"),
            "recordings": ";".join(names),
        })
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("input_tokens", "output_tokens"):
        table[column] = table[column].astype("Int64")  # empty when the provider reported nothing
    return table


def tabulate(found, runs):
    """(the scorecard rows, the per-run table) of the scores `found` of the runs {run: facts}."""
    table = runs_table(found, runs)
    return scorecard(table), table


def read_runs_table(path):
    """The per-run table back: names and mistakes stay text (a model named "7", a run "001", a
    mistake "NA"), an empty token count is missing."""
    text = dict.fromkeys(("run", "model", "task", "wrong", "recordings"), "string")
    return pd.read_csv(path, dtype={**text, "input_tokens": "Int64", "output_tokens": "Int64"}, keep_default_na=False)


def runs_table_bytes(table):
    """The table as gzipped CSV, the same bytes for the same table (no time in the gzip header)."""
    return gzip.compress(table.to_csv(index=False, lineterminator="\n").encode(), mtime=0)


def _python(value):
    """A value of a pandas cell as plain Python (None for a missing one)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _mistakes(table, keys):
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
    found = {}
    for row in counted.to_dict("records"):
        found.setdefault(tuple(row[k] for k in keys), []).append({"what": row["wrong"], "runs": int(row["runs"])})
    return found


def scorecard(table, keys=("model", "task"), means=()):
    """Rows per `keys` (by default model and task): runs, right, interval, mean calls and budget
    used (and the mean of each column of `means`), and what the wrong runs got wrong."""
    if table.empty:
        return []
    keys = list(keys)
    aggregations = {
        "runs": ("run", "size"),
        "right": ("right", "sum"),
        "mean_calls": ("calls", "mean"),
        "mean_budget_used": ("budget_used", "mean"),
    }
    aggregations.update({f"mean_{column}": (column, "mean") for column in means})
    summary = table.groupby(keys, sort=True).agg(**aggregations).reset_index()
    mistakes = _mistakes(table, keys)
    rows = []
    for found in summary.to_dict("records"):
        runs, right = int(found["runs"]), int(found["right"])
        low, high = wilson(right, runs)
        row = {key: found[key] for key in keys}
        row.update({
            "runs": runs,
            "right": right,
            "rate": right / runs,
            "low": low,
            "high": high,
            "conclusive": high - low <= TOO_WIDE,
            "mean_calls": float(found["mean_calls"]),
            "mean_budget_used": float(found["mean_budget_used"]),
        })
        row.update({f"mean_{column}": _python(found[f"mean_{column}"]) for column in means})
        row["mistakes"] = mistakes.get(tuple(found[k] for k in keys), [])
        rows.append(row)
    return rows


def scorecard_table(rows):
    """The scorecard as flat rows for a CSV file."""
    return [
        {
            "model": r["model"],
            "task": r["task"],
            "runs": r["runs"],
            "right": r["right"],
            "rate": r["rate"],
            "wilson95_low": r["low"],
            "wilson95_high": r["high"],
            "conclusive": r["conclusive"],
            "mean_calls": r["mean_calls"],
            "mean_calls_that_ran": r["mean_budget_used"],
            "mistakes": "; ".join(f"{m['what']} ({m['runs']})" for m in r["mistakes"]),
        }
        for r in rows
    ]
