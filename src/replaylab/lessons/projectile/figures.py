"""The projectile lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- evidence: the build's independent scan of range against angle as a line, the agent's calls with
  a dt no larger than the scan's as points (as recomputed by this build, one marker per run), and a
  close-up near the maximum with the build's fine scan at the agent's smallest dt, the agent's
  answer (its bracket, shaded) and the best angle of the build's converged scan. The scans are of the
  seed's question, so only the runs of the seed instance are drawn (a run of another instance throws
  another ball, at another speed or height).
"""

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure
from replaylab.lessons import drawn_runs
from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure
from replaylab.lessons.projectile import lab


def of_the_seed(results: dict[str, Any]) -> set[str]:
    """The runs whose instance is the seed's question, the one the figure's scans are of."""
    return {run for run, verdict in results["verdicts"].items() if verdict.get("instance", lab.SEED_ID) == lab.SEED_ID}


def agent_points(results: dict[str, Any], max_dt: float) -> dict[tuple[str, float], list[tuple[float, float]]]:
    """{(run, dt): [(angle, range)]} of the accepted range_with_drag calls with dt <= max_dt of the
    runs of the seed's question; the arguments are as the agent sent them (a call the allowlist took
    has them all, as numbers)."""
    points: dict[tuple[str, float], list[tuple[float, float]]] = {}
    seed_runs = of_the_seed(results)
    for run_name, arguments, content in drawn_calls(results, lab.RANGE_TOOL):
        if run_name not in seed_runs:
            continue
        dt, angle, value = arguments["dt"], arguments["angle"], content[lab.RANGE_KEY]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (dt, angle, value)):
            continue
        if dt <= max_dt:
            points.setdefault((run_name, dt), []).append((angle, value))
    return points


def evidence(results: dict[str, Any]) -> Figure:
    scan = results["scans"]["evidence"]
    scan_dt, speed = scan["dt"], scan["speed"]
    angles = [row["angle"] for row in scan["rows"]]
    ranges = [row["range_m"] for row in scan["rows"]]
    points = agent_points(results, scan_dt)
    seed_runs = of_the_seed(results)
    runs = [run for run in drawn_runs(results) if run in seed_runs]
    conclusions = {
        run: verdict["experiments"]
        for run, verdict in results["verdicts"].items()
        if run in runs and verdict["experiments"]["checkable"]
    }
    answers = {run: verdict["answer"] for run, verdict in results["verdicts"].items() if run in runs and verdict["answer"]}

    dts = sorted(({dt for _, dt in points} | {c["smallest_dt"] for c in conclusions.values()}) - {scan_dt}, reverse=True)
    colours = {scan_dt: "C0", **{dt: f"C{i + 1}" for i, dt in enumerate(dts)}}
    markers = run_markers(runs)

    figure = Figure(figsize=(11, 5.6), layout="constrained")
    overview, close = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.15, 1]})
    handles: dict[str, Any] = {}

    def remember(label: str, artist: Any) -> None:
        handles.setdefault(label, artist)

    for axes in (overview, close):
        (line,) = axes.plot(angles, ranges, "-", color=colours[scan_dt], linewidth=1.6, marker=".", markersize=5)
        remember(f"independent scan (this build), dt = {scan_dt:g} s", line)

    fine_lo: float | None = None
    fine_hi: float | None = None
    xs: Sequence[float]
    for conclusion in conclusions.values():
        grid = conclusion["grid"]
        dt = conclusion["smallest_dt"]
        if grid:
            xs = [g["angle"] for g in grid]
            (line,) = close.plot(xs, [g["range_m"] for g in grid], "--", color=colours[dt], linewidth=1.3)
            remember(f"fine scan at the agent's smallest dt (this build), dt = {dt:g} s", line)
            fine_lo = min(xs) if fine_lo is None else min(fine_lo, min(xs))
            fine_hi = max(xs) if fine_hi is None else max(fine_hi, max(xs))
    for run, answer in answers.items():
        span = close.axvspan(answer["low"], answer["high"], color="0.85", zorder=0)
        remember(f"agent's answer, run {run}: {answer['low']:g} to {answer['high']:g} deg", span)
    best = results["scans"]["best_angle"]["angle"]
    marker_line = close.axvline(best["value"], color="k", linestyle=":", linewidth=1.2)
    remember(f"best angle of the build's converged scan: {best['shown']} deg", marker_line)

    for (run, dt), pts in sorted(points.items(), key=lambda item: (runs.index(item[0][0]), -item[0][1])):
        xs, ys = zip(*pts)
        for axes in (overview, close):
            artist = axes.scatter(
                xs, ys, s=46, marker=markers.get(run, "o"), facecolor=colours.get(dt, "C7"), edgecolor="k", linewidth=0.7, zorder=3
            )
        remember(f"agent's calls, recomputed: run {run}, dt = {dt:g} s", artist)

    if fine_lo is None:
        fine_lo, fine_hi = best["value"] - 3, best["value"] + 3
    assert fine_hi is not None  # set with fine_lo
    pad = 0.25
    close.set_xlim(fine_lo - pad, fine_hi + pad)
    visible = [r for a, r in zip(angles, ranges) if fine_lo - pad <= a <= fine_hi + pad]
    visible += [g["range_m"] for c in conclusions.values() for g in c["grid"]]
    visible += [y for pts in points.values() for x, y in pts if fine_lo - pad <= x <= fine_hi + pad]
    if visible:
        margin = 0.08 * (max(visible) - min(visible) or 1.0)
        close.set_ylim(min(visible) - margin, max(visible) + margin)

    overview.set_title("all scanned angles")
    close.set_title("close-up near the maximum")
    for axes in (overview, close):
        axes.set_xlabel("launch angle (degrees)")
        axes.set_ylabel("range with drag (m)")
        axes.grid(True, color="0.9")
    figure.suptitle(f"The agent's evidence: range of the tennis ball at {speed:g} m/s against launch angle")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"evidence": evidence, "scorecard": scorecard_figure}
