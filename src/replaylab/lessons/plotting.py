"""What the lessons' figures share: the agents' calls to draw, a marker per run, the scorecard
figure, and the log-log steps-per-period axes."""

from collections.abc import Iterable, Iterator
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from replaylab.lessons import drawn_runs

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def run_markers(runs: Iterable[str]) -> dict[str, str]:
    """A marker per run, in order (they repeat after eight runs)."""
    return {run: MARKERS[i % len(MARKERS)] for i, run in enumerate(runs)}


def drawn_calls(results: dict[str, Any], tool: str) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(run, arguments, recomputed content) of each call of `tool` that ran, in the runs a figure
    draws (lessons.drawn_runs), from results.json."""
    for run_name, run in drawn_runs(results).items():
        for step in run["transcript"]["steps"]:
            for call, result in zip(step["tool_calls"], step["results"]):
                arguments = call["arguments"]
                if call["name"] == tool and result["ok"] and isinstance(arguments, dict):
                    yield run_name, arguments, result["content"]


def scorecard_figure(results: dict[str, Any]) -> Figure:
    """The scorecard as bars: the share of right runs (or groups) per model and task, with intervals."""
    rows = results["scorecard"]
    many = results["score_unit"][1]
    height = 3.0 + 0.55 * max(1, len(rows))
    figure = Figure(figsize=(9, height), layout="constrained")
    axes = figure.add_subplot()
    labels = [f"{r['model']}\n{r['task']}, {r['right']}/{r['runs']} right" for r in rows]
    rates = [100 * r["rate"] for r in rows]
    low = [max(0.0, 100 * (r["rate"] - r["low"])) for r in rows]  # rounding can make these -1e-15
    high = [max(0.0, 100 * (r["high"] - r["rate"])) for r in rows]
    positions = list(range(len(rows)))
    axes.barh(positions, rates, color="tab:blue", alpha=0.6, label=f"share of {many} right, judged from recomputed numbers (this build)")
    axes.errorbar(rates, positions, xerr=[low, high], fmt="none", ecolor="black", capsize=4, label="95 % Wilson interval")
    axes.set_yticks(positions, labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel(f"{many} that reached the right answer (%)")
    axes.set_ylabel("who made the runs")
    figure.suptitle(f"Scorecard of lesson {results['lesson']} (decided by the build)")
    figure.legend(loc="outside lower center", ncols=2, fontsize=8)
    axes.grid(axis="x", alpha=0.3)
    if not rows:
        axes.text(50, 0, f"no {many}", ha="center", va="center")
    return figure


def steps_per_period_axes(axes: Axes, steps: Iterable[float], ylabel: str, title: str) -> None:
    """Log-log axes over steps per period, with a tick at each value that was simulated."""
    axes.set_xscale("log")
    axes.set_yscale("log")
    steps = sorted(steps)
    axes.set_xticks(steps)
    axes.set_xticklabels([f"{s:g}" for s in steps])
    axes.minorticks_off()
    axes.set_xlabel("steps per period (log scale)")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, which="major", color="0.9")
