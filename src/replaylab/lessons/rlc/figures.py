"""The rlc lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- voltage: the seeds' capacitor voltage over four natural periods, exact and simulated at a few dt,
  with the readings of the runs of the seeds' question (as recomputed by this build, one marker per
  run, a colour per dt); on the right a close-up around zero, where the undershoot shows.
- ringing: left, an overdamped circuit (ζ = 10) stepped at a few coarse dt against its exact
  voltage, near zero: above dt = 2/ω0 its trapezoidal voltage goes below zero; right, log-log, the
  error of the seeds' simulated voltage at its lowest point against dt, with its fitted order, and the
  error of each reading of the runs of the seeds' question against the exact voltage at its time.

Runs of the family's other instances are not drawn: their circuit differs.
"""

from collections.abc import Iterable
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from replaylab.lessons import drawn_runs
from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure
from replaylab.lessons.rlc import lab

EXACT_COLOUR = "black"
CLOSE_UP = 4  # the close-up's vertical range: this many times the seeds' lowest voltage, each side of zero
FLOOR = 1e-17  # V: an error drawn on a log scale is at least this (round-off reaches zero)


def seed_runs(results: dict[str, Any]) -> list[str]:
    """The drawn runs of the seeds' question: the figures draw its circuit."""
    seeds = results.get("family", {}).get("seeds")
    return [run for run in drawn_runs(results) if seeds is None or results["verdicts"][run].get("instance") in seeds]


def agent_points(results: dict[str, Any]) -> dict[tuple[str, float], list[tuple[float, float]]]:
    """{(run, dt): [(time, voltage)]} of the accepted calls of the seeds' drawn runs, as recomputed."""
    points: dict[tuple[str, float], list[tuple[float, float]]] = {}
    drawn = set(seed_runs(results))
    for run, arguments, content in drawn_calls(results, lab.TOOL):
        time, dt, value = arguments["time_ms"], arguments["dt_ms"], content[lab.KEY]
        if run in drawn and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (time, dt, value)):
            points.setdefault((run, dt), []).append((time, value))
    return points


def _colours(dts: Iterable[float]) -> dict[float, str]:
    """A colour per dt, the coarsest warmest."""
    palette = ("tab:red", "tab:orange", "tab:purple", "tab:blue", "tab:cyan", "tab:brown", "tab:pink", "tab:olive")
    return {dt: palette[i % len(palette)] for i, dt in enumerate(sorted(dts, reverse=True))}


def voltage(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    exact, curve = scans["exact"], scans["curve"]
    points = agent_points(results)
    runs = seed_runs(results)
    markers = run_markers(runs)
    colours = _colours({s["dt"] for s in curve["simulated"]} | {dt for _, dt in points})
    figure = Figure(figsize=(11, 5.8), layout="constrained")
    overview, close = figure.subplots(1, 2)
    handles: dict[str, Any] = {}
    for axes in (overview, close):
        (line,) = axes.plot(curve["times"], curve["exact"], "-", color=EXACT_COLOUR, linewidth=2.2, zorder=2)
        handles.setdefault("exact voltage (this build)", line)
        for simulated in curve["simulated"]:
            (line,) = axes.plot(curve["times"], simulated["voltage"], "--", color=colours[simulated["dt"]], linewidth=1.2, zorder=2)
            handles.setdefault(f"trapezoidal rule, dt = {simulated['dt']:g} ms (this build's scan)", line)
        axes.axhline(0, color="0.4", linewidth=0.8)
        handles.setdefault(f"lowest exact voltage: {exact['lowest_voltage_v']['shown']} V at {exact['lowest_time_ms']['shown']} ms",
                           axes.axvline(exact["lowest_time_ms"]["value"], color="tab:green", linestyle=":", linewidth=1.4))
    for (run, dt), pts in sorted(points.items(), key=lambda item: (runs.index(item[0][0]), -item[0][1])):
        xs, ys = zip(*pts)
        for axes in (overview, close):
            artist = axes.scatter(xs, ys, s=45, marker=markers.get(run, "o"), facecolor=colours.get(dt, "0.5"), edgecolor="k",
                                  linewidth=0.7, zorder=4)
        handles.setdefault(f"agent's readings, recomputed: run {run}, dt = {dt:g} ms", artist)
    span = CLOSE_UP * abs(exact["lowest_voltage_v"]["value"])
    close.set_ylim(-span, span)
    close.set_xlim(0, curve["times"][-1])
    overview.set_title(f"the seeds' circuit (ζ = {exact['damping_ratio']['shown']}, {exact['regime']})")
    close.set_title("close-up around zero: the undershoot")
    for axes in (overview, close):
        axes.set_xlabel("time after the switch closes (ms)")
        axes.set_ylabel("capacitor voltage (V)")
        axes.grid(True, color="0.9")
    figure.suptitle("The capacitor's voltage: exact, simulated, and the agents' readings")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


def ringing(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    ring, convergence = scans["ringing"], scans["convergence"]
    figure = Figure(figsize=(11, 5.4), layout="constrained")
    left, right = figure.subplots(1, 2)
    handles: dict[str, Any] = {}
    (line,) = left.plot(ring["times"], ring["exact"], "-", color=EXACT_COLOUR, linewidth=2.0)
    handles[f"exact voltage of the overdamped circuit (R = {ring['resistance_ohm']:g} Ω, ζ = {ring['damping_ratio']['shown']})"] = line
    colours = _colours(s["dt"] for s in ring["series"])
    for series in ring["series"]:
        dt = series["dt"]
        times = [dt * (k + 1) for k in range(len(series["voltage"]))]
        (line,) = left.plot(times, series["voltage"], "-o", color=colours[dt], markersize=2.5, linewidth=0.8)
        below = "goes below zero" if min(series["voltage"]) < 0 else "stays above zero here"
        handles[f"trapezoidal rule at dt = {dt:g} ms: {below}"] = line
    left.axhline(0, color="0.4", linewidth=0.8)
    lowest = min(min(series["voltage"]) for series in ring["series"])
    span = max(3 * abs(lowest), 1e-3)  # the ringing below zero, and the slow decay above it
    left.set_ylim(-span, 2 * span)
    left.set_xlabel("time after the switch closes (ms)")
    left.set_ylabel("capacitor voltage (V)")
    left.set_title(f"ringing: below zero once dt > 2/ω0 = {ring['below_zero_dt_ms']['shown']} ms")
    rows = convergence["rows"]
    (line,) = right.loglog([r["dt"] for r in rows], [r["error"] for r in rows], "-s", color="tab:purple", markersize=4)
    handles[f"|simulated − exact| at the seeds' lowest point (this build's scan): fitted order {convergence['order']['shown']}"] = line
    runs = seed_runs(results)
    markers = run_markers(runs)
    for run in runs:
        read = results["verdicts"][run]["readings"]
        if read:
            artist = right.scatter([r["dt"] for r in read], [max(abs(r["voltage"] - r["exact"]), FLOOR) for r in read], s=50,
                                   marker=markers[run], facecolor="none", edgecolor="k", linewidth=1.0, zorder=3)
            handles[f"agent's readings, recomputed against the exact voltage at their time: run {run}"] = artist
    right.set_xlabel("time step dt (ms, log scale)")
    right.set_ylabel("|simulated − exact voltage| (V, log scale)")
    right.set_title("convergence of the trapezoidal rule")
    right.minorticks_off()
    for axis in (right.xaxis, right.yaxis):
        axis.set_major_formatter(FormatStrFormatter("%g"))
    for axes in (left, right):
        axes.grid(True, which="major", color="0.9")
    figure.suptitle("The step's two effects: a coarse dt rings an overdamped circuit below zero; a fine one converges")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"voltage": voltage, "ringing": ringing, "scorecard": scorecard_figure}
