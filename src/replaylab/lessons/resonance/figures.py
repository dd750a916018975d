"""The resonance lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- amplitude: the steady amplitude of the seeds' oscillator over its range: exact, and simulated after
  a few numbers of periods (the start not yet died out at the smallest), the calls of the runs of
  the seeds' question (as recomputed by this build, one marker per run, a colour per number of
  periods) and ω_r with its tolerance; on the right a close-up of the peak, and below it each of
  those runs' answer against the tolerance band.
- settling: left, at ω_r, the simulated amplitude's difference from the exact one against the number
  of periods, beside the envelope e^{-γt} of the free oscillation, and each call of the runs of the
  seeds' question against the exact amplitude at its frequency; right, log-log, how far the peak
  Runge-Kutta settles to lies from ω_r against the steps per period, with its fitted order.

Runs of the family's other instances are not drawn: their oscillator and range differ.
"""

from collections.abc import Iterable
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from replaylab.lessons import drawn_runs
from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure
from replaylab.lessons.resonance import lab

EXACT_COLOUR, BAND_COLOUR = "black", "tab:green"
CLOSE_UP = 0.06  # rad/s on each side of ω_r
FLOOR = 1e-17  # a relative difference drawn on a log scale is at least this (round-off reaches zero)


def seed_runs(results: dict[str, Any]) -> list[str]:
    """The drawn runs of the seeds' question: the figures draw its oscillator."""
    seeds = results.get("family", {}).get("seeds")
    return [run for run in drawn_runs(results) if seeds is None or results["verdicts"][run].get("instance") in seeds]


def agent_points(results: dict[str, Any]) -> dict[tuple[str, int], list[tuple[float, float]]]:
    """{(run, periods): [(frequency, amplitude)]} of the accepted calls of the seeds' drawn runs, as recomputed."""
    points: dict[tuple[str, int], list[tuple[float, float]]] = {}
    drawn = set(seed_runs(results))
    for run, arguments, content in drawn_calls(results, lab.TOOL):
        frequency, periods, value = arguments["frequency_rad_s"], arguments["periods"], content[lab.KEY]
        if run in drawn and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (frequency, periods, value)):
            points.setdefault((run, int(periods)), []).append((frequency, value))
    return points


def _colours(periods: Iterable[int]) -> dict[int, str]:
    """A colour per number of periods, the fewest warmest."""
    palette = ("tab:red", "tab:orange", "tab:purple", "tab:blue", "tab:cyan", "tab:brown", "tab:pink", "tab:olive")
    return {p: palette[i % len(palette)] for i, p in enumerate(sorted(periods))}


def amplitude(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    exact, curve = scans["exact"], scans["curve"]
    peak, tolerance = exact["resonance"]["value"], exact["tolerance_rad_s"]
    points = agent_points(results)
    runs = seed_runs(results)
    markers = run_markers(runs)
    colours = _colours({s["periods"] for s in curve["simulated"]} | {p for _, p in points})
    right = {score["run"]: score["right"] for score in results["scores"]}
    answered = [(run, results["verdicts"][run]["answer"]) for run in runs if results["verdicts"][run]["answer"]]

    figure = Figure(figsize=(11, 6.6 + 0.25 * len(answered)), layout="constrained")
    grid = figure.add_gridspec(2, 2, width_ratios=[1, 1], height_ratios=[4, 0.8 + 0.3 * len(answered)])
    overview, close = figure.add_subplot(grid[:, 0]), figure.add_subplot(grid[0, 1])
    strip = figure.add_subplot(grid[1, 1], sharex=close)
    handles: dict[str, Any] = {}
    for axes in (overview, close):
        (line,) = axes.plot(curve["frequencies"], curve["exact"], "-", color=EXACT_COLOUR, linewidth=2.2, zorder=2)
        handles.setdefault("exact steady amplitude F / √((ω0² − ω²)² + (2γω)²) (this build)", line)
        for simulated in curve["simulated"]:
            p = simulated["periods"]
            (line,) = axes.plot(curve["frequencies"], simulated["amplitude_m"], "--", color=colours[p], linewidth=1.2, zorder=2)
            handles.setdefault(f"simulated after {p} periods from rest (this build's scan)", line)
        band = axes.axvspan(peak - tolerance, peak + tolerance, color=BAND_COLOUR, alpha=0.15, zorder=0)
        handles.setdefault(f"within {tolerance:g} rad/s of the exact peak", band)
        handles.setdefault(f"exact peak ω_r = {exact['resonance']['shown']} rad/s", axes.axvline(peak, color=EXACT_COLOUR, linewidth=1.0))
    for (run, periods), pts in sorted(points.items(), key=lambda item: (runs.index(item[0][0]), item[0][1])):
        xs, ys = zip(*pts)
        for axes in (overview, close):
            artist = axes.scatter(xs, ys, s=45, marker=markers.get(run, "o"), facecolor=colours.get(periods, "0.5"),
                                  edgecolor="k", linewidth=0.7, zorder=4)
        handles.setdefault(f"agent's calls, recomputed: run {run}, {periods} periods", artist)
    strip.axvspan(peak - tolerance, peak + tolerance, color=BAND_COLOUR, alpha=0.15, zorder=0)
    strip.axvline(peak, color=EXACT_COLOUR, linewidth=1.0)
    for row, (run, answer) in enumerate(answered):
        colour = BAND_COLOUR if right[run] else "tab:red"
        artist = strip.scatter([answer["frequency_rad_s"]], [row], s=70, marker="D", color=colour, edgecolor="k", zorder=3)
        handles.setdefault(f"agent's answer (judged by this build): {'right' if right[run] else 'wrong'}", artist)
    strip.set_yticks(range(len(answered)), [f"{run} (answer)" for run, _ in answered], fontsize=8)
    strip.set_ylim(-0.6, max(len(answered), 1) - 0.4)
    strip.invert_yaxis()
    if not answered:
        strip.text(0.5, 0.5, "no run answered", transform=strip.transAxes, ha="center", va="center", fontsize=8)
    strip.set_xlabel("drive frequency ω (rad/s)")
    strip.set_ylabel("run")
    close.set_xlim(peak - CLOSE_UP, peak + CLOSE_UP)
    top = exact["peak_amplitude_m"]["value"]
    close.set_ylim(0.93 * top, 1.02 * top)
    overview.set_title("the seeds' range")
    close.set_title("close-up of the peak")
    for axes in (overview, close):
        axes.set_xlabel("drive frequency ω (rad/s)")
        axes.set_ylabel("amplitude (m)")
        axes.grid(True, color="0.9")
    figure.suptitle("The steady amplitude against the drive frequency: exact, simulated, and the agents' calls")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


def settling(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    rows, convergence = scans["settling"]["rows"], scans["convergence"]
    figure = Figure(figsize=(11, 5.2), layout="constrained")
    left, right = figure.subplots(1, 2)
    handles: dict[str, Any] = {}
    (line,) = left.loglog([r["periods"] for r in rows], [max(r["error"], FLOOR) for r in rows], "-o", color="tab:blue", markersize=3)
    handles["|simulated / exact amplitude − 1| at ω_r (this build's scan)"] = line
    (line,) = left.loglog([r["periods"] for r in rows], [max(r["envelope"], FLOOR) for r in rows], ":", color="0.3")
    handles["envelope of the free oscillation exp(−γt) at the end of those periods"] = line
    runs = seed_runs(results)
    markers = run_markers(runs)
    for run in runs:
        measured = results["verdicts"][run]["measurements"]
        if measured:
            artist = left.scatter([m["periods"] for m in measured], [max(m["error"], FLOOR) for m in measured], s=50,
                                  marker=markers[run], facecolor="none", edgecolor="k", linewidth=1.0, zorder=3)
            handles[f"agent's calls, recomputed against the exact steady amplitude at their frequency: run {run}"] = artist
    left.set_xlabel("drive periods simulated from rest (log scale)")
    left.set_ylabel("relative difference")
    left.set_title("how long the start takes to die out")
    steps = [r["steps"] for r in convergence["rows"]]
    (line,) = right.loglog(steps, [r["error"] for r in convergence["rows"]], "-s", color="tab:purple", markersize=4)
    handles[f"|simulated peak − ω_r| (this build's scan): fitted order {convergence['order']['shown']}"] = line
    right.set_xlabel("Runge-Kutta steps per drive period (log scale)")
    right.set_ylabel("rad/s (log scale)")
    right.set_title("how far the step moves the simulated peak")
    right.minorticks_off()
    for axis in (right.xaxis, right.yaxis):
        axis.set_major_formatter(FormatStrFormatter("%g"))
    for axes in (left, right):
        axes.grid(True, which="major", color="0.9")
    figure.suptitle("The two limits of the simulation: the start that has not died out, and the step")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"amplitude": amplitude, "settling": settling, "scorecard": scorecard_figure}
