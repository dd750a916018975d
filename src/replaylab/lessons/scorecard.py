"""How often runs reach the right answer, per model or program, with a 95 % Wilson interval.

Right and wrong are decided by each lesson's `score` function from recomputed numbers; the
words of a run never enter. This module only counts and summarises.
"""

import math
from collections import Counter

Z95 = 1.959963984540054  # two-sided 95 % normal quantile
TOO_WIDE = 0.5  # an interval wider than this says nothing useful


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


def scores(verdicts, scans, decide):
    """One score per judged run (a group, for reviews): `decide(entry, scans)` gives what it got
    wrong, or None when it is right."""
    found = []
    for name, entry in verdicts.items():
        wrong = decide(entry, scans)
        found.append({"run": name, "model": entry["model"], "task": entry["task"], "right": wrong is None,
                      "wrong": wrong, "calls": entry["calls"], "budget_used": entry["ran"]})
    return found


def scorecard(scores):
    """Rows per model and task: runs, right, interval, calls and budget used, and what the wrong runs got wrong."""
    rows = []
    by_model = {}
    for score in scores:
        by_model.setdefault((score["model"], score["task"]), []).append(score)
    for (model, task), mine in sorted(by_model.items()):
        runs, right = len(mine), sum(s["right"] for s in mine)
        low, high = wilson(right, runs)
        mistakes = Counter(s["wrong"] for s in mine if not s["right"])
        rows.append(
            {
                "model": model,
                "task": task,
                "runs": runs,
                "right": right,
                "rate": right / runs,
                "low": low,
                "high": high,
                "conclusive": high - low <= TOO_WIDE,
                "mean_calls": sum(s["calls"] for s in mine) / runs,
                "mean_budget_used": sum(s["budget_used"] for s in mine) / runs,
                "mistakes": [{"what": what, "runs": count} for what, count in mistakes.most_common()],
            }
        )
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
