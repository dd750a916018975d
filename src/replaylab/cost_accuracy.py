"""A campaign's cost against its accuracy: per model, its share of right runs over every task it ran
(with its interval) against what a run cost on average, and the models on the frontier, those no
other model beats on both (the cost-accuracy frontier evaluation teams read, as HAL shows it).

The cost is the mean cost per run at the configured prices, over every run (a copy of a run was
paid for too); without a price for every model, the mean tokens per run as the provider reported
them; without either, there is no view. The rate counts the distinct runs, as the tests do.
"""

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from replaylab import statistics
from replaylab.lessons.markdown import table, text

if TYPE_CHECKING:
    import pandas as pd

    from replaylab.agents.recording import Recording

COLUMNS = {
    "model": "The model (or scripted program).",
    "distinct_runs": "Its distinct runs over every task of the campaign (identical transcripts counted once).",
    "distinct_right": "Of those, the runs judged right.",
    "rate": "distinct_right/distinct_runs: its share of right runs over every task it ran, pooled (a summary for "
            "this view; the tests never pool tasks).",
    "rate_low": "Lower end of the 95 % Wilson score interval of the rate.",
    "rate_high": "Upper end of the 95 % Wilson score interval of the rate.",
    "runs": "Every run of the model, copies included: what the cost is the mean over.",
    "mean_cost_usd": "Mean cost per run in USD at the configured prices; empty without a price for the model.",
    "mean_tokens": "Mean input plus output tokens per run as the provider reported them; empty where a provider gave none.",
    "frontier": "Whether no other model has a rate at least as high at a cost (or, without prices, tokens) at most "
                "as high, better in one of the two: the models worth paying for.",
}


def rows(runs: "pd.DataFrame", evidence: "pd.DataFrame", models: Iterable[str]) -> list[dict[str, Any]]:
    """One row per model (COLUMNS), in the order of `models`: `runs` every run of the campaign's
    per-run table (cost_usd and tokens per run), `evidence` its distinct runs."""
    found: list[dict[str, Any]] = []
    for model in models:
        mine, kept = runs[runs["model"] == model], evidence[evidence["model"] == model]
        if mine.empty:
            continue
        right, counted = int(kept["right"].astype(bool).sum()), len(kept)
        low, high = statistics.wilson(right, counted)
        found.append({
            "model": model, "distinct_runs": counted, "distinct_right": right, "rate": right / counted,
            "rate_low": low, "rate_high": high, "runs": len(mine),
            "mean_cost_usd": _mean(mine["cost_usd"]), "mean_tokens": _mean(mine["tokens"]),
        })
    axis = measure(found)
    for row in found:
        row["frontier"] = axis is not None and not any(_beats(other, row, axis) for other in found if other is not row)
    return found


def _mean(column: "pd.Series") -> float | None:
    """The mean of a column of numbers, None where any is missing (a cost without a price)."""
    values = column.astype(float)
    return None if values.isna().any() or values.empty else float(values.mean())


def measure(found: Sequence[dict[str, Any]]) -> str | None:
    """The cost column the view uses: 'mean_cost_usd' when every model has a price, else
    'mean_tokens' when every model's tokens were reported, else None."""
    for column in ("mean_cost_usd", "mean_tokens"):
        if found and all(row[column] is not None and math.isfinite(row[column]) for row in found):
            return column
    return None


def _beats(other: dict[str, Any], row: dict[str, Any], axis: str) -> bool:
    """Whether `other` is at least as right at no more cost, and better in one."""
    at_least: bool = other["rate"] >= row["rate"] and other[axis] <= row[axis]
    return at_least and (other["rate"] > row["rate"] or other[axis] < row[axis])


def label(axis: str) -> str:
    return "mean cost per run (USD)" if axis == "mean_cost_usd" else "mean tokens per run"


def section(found: Sequence[dict[str, Any]]) -> list[str]:
    """The page's section: the table, the figure, or why there is none."""
    out = ["## Cost and accuracy", ""]
    axis = measure(found)
    if axis is None:
        return out + ["No cost to compare: the configuration prices no model (`campaign.prices`) and the providers "
                      "reported no tokens for some model.", ""]
    shown = [{"model": text(r["model"]), "rate": f"{r['distinct_right']}/{r['distinct_runs']} · {100 * r['rate']:.0f} %",
              "interval": f"{100 * r['rate_low']:.0f} to {100 * r['rate_high']:.0f} %",
              "cost": f"{r[axis]:.4g}", "frontier": "yes" if r["frontier"] else ""} for r in found]
    out += [f"Per model, its share of right runs over every task (the distinct runs, pooled over tasks for this view "
            f"only) against its {label(axis)} (`cost_accuracy.csv`). On the frontier: the models no other model beats "
            "on both; a model off it is matched or beaten in accuracy by one that costs no more.", "",
            table(shown, [("model", "model"), ("rate", "right · rate"), ("interval", "95 % interval"),
                          ("cost", label(axis)), ("frontier", "on the frontier")]), "",
            "![Share of right runs against cost per run, the frontier joined](figures/cost_accuracy.png)", ""]
    return out


def figure(found: Sequence[dict[str, Any]]) -> Figure | None:
    """Rate (with its interval) against cost per model, the frontier joined by a line; None without
    a cost axis."""
    axis = measure(found)
    if axis is None:
        return None
    drawing = Figure(figsize=(5.2, 4.2), layout="constrained")
    axes = drawing.add_subplot()
    for row in found:
        rate = 100 * row["rate"]
        errors = [[rate - 100 * row["rate_low"]], [100 * row["rate_high"] - rate]]
        axes.errorbar([row[axis]], [rate], yerr=errors, fmt="o" if row["frontier"] else "s", capsize=4,
                      color="#1f5fa8" if row["frontier"] else "#888888")
        axes.annotate(row["model"], (row[axis], rate), textcoords="offset points", xytext=(6, 6), fontsize=9)
    on = sorted((r for r in found if r["frontier"]), key=lambda r: r[axis])
    if len(on) > 1:
        axes.plot([r[axis] for r in on], [100 * r["rate"] for r in on], color="#1f5fa8", linewidth=1.2,
                  label="frontier")
        axes.legend(loc="lower right", fontsize=9)
    axes.set_xlabel(label(axis), fontsize=11)
    axes.set_ylabel("right runs (%), 95 % interval", fontsize=11)
    axes.set_ylim(-5, 105)
    axes.grid(alpha=0.3)
    drawing.suptitle("Accuracy against cost", fontsize=12)
    return drawing


def unfinished_spend(runs: Iterable["Recording"], prices: dict[str, Any]) -> dict[str, Any]:
    """What the unfinished runs left in partial files (replaylab.unfinished.left_in) used: their
    number, the tokens their provider reported, and their cost at `prices` (None where a run's
    model has no price, or a count is unknown)."""
    found: dict[str, Any] = {"runs": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    for run in runs:
        found["runs"] += 1
        usage, price = run.provenance.get("usage") or {}, prices.get(run.model)
        for side, rate in (("input_tokens", "input"), ("output_tokens", "output")):
            count = usage.get(side)
            found[side] = None if count is None or found[side] is None else found[side] + count
            cost = None if count is None or price is None or found["cost_usd"] is None else count * price[rate] / 1e6
            found["cost_usd"] = None if cost is None else found["cost_usd"] + cost
    return found


def unfinished_line(spend: dict[str, Any]) -> list[str]:
    """The page's line on the spend of unfinished runs, where there is any."""
    if not spend["runs"]:
        return []
    tokens = (f"{spend['input_tokens'] + spend['output_tokens']} tokens" if None not in (spend["input_tokens"], spend["output_tokens"])
              else "tokens not all reported")
    cost = f", {spend['cost_usd']:.4g} USD at the configured prices" if spend["cost_usd"] is not None else ""
    return [f"Plus {spend['runs']} unfinished {'run' if spend['runs'] == 1 else 'runs'}, kept in partial files and never "
            f"completed (a provider that kept failing, or a run the campaign no longer asks for): {tokens}{cost}, paid for "
            "and in no figure above (`unfinished` in `scorecard.json`).", ""]
