"""The pendulum lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- ratio: the period over the small-angle period against the amplitude: the exact curve and the
  simulation at a few dt from the build's scan, the calls of the runs of the seed's question (as
  recomputed by this build, one marker per run, a colour per dt) and the 1 % line; on the right, a
  close-up of the excess near 1 %, where a coarse dt visibly moves the crossing, and below it each
  of those runs' answer, against the right bracket.
- convergence: log-log against dt, the simulation's relative period error against the exact
  period (the build's scan as lines, the calls of the runs of the seed's question as points), and
  the shift of its 1 % crossing from the exact one, each with its fitted order.

Runs of the family's other instances are not drawn: their pendulum, threshold and bracket differ.
"""

from collections.abc import Iterable, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from replaylab.lessons import drawn_runs
from replaylab.lessons.pendulum import lab
from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure

CLOSE_UP = (15, 31)  # degrees: the close-up's amplitudes
EXACT_COLOUR, BRACKET_COLOUR = "black", "tab:green"


def seed_runs(results: dict[str, Any]) -> list[str]:
    """The drawn runs of the seed's question, in order: the figures draw the seed's pendulum and threshold,
    so a run of another instance (another T0, another threshold) has no place on them."""
    seeds = results.get("family", {}).get("seeds")
    return [run for run in drawn_runs(results) if seeds is None or results["verdicts"][run].get("instance") in seeds]


def agent_points(results: dict[str, Any]) -> dict[tuple[str, float], list[tuple[float, float]]]:
    """{(run, dt): [(amplitude, period)]} of the accepted pendulum_period calls of the seed's question's
    drawn runs, as recomputed."""
    points: dict[tuple[str, float], list[tuple[float, float]]] = {}
    drawn = set(seed_runs(results))
    for run_name, arguments, content in drawn_calls(results, lab.PERIOD_TOOL):
        if run_name not in drawn:
            continue
        amplitude, dt, value = arguments["amplitude_deg"], arguments["dt"], content[lab.PERIOD_KEY]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (amplitude, dt, value)):
            points.setdefault((run_name, dt), []).append((amplitude, value))
    return points


def _dt_colours(dts: Iterable[float]) -> dict[float, str]:
    """A colour per dt, the coarsest warmest; the same in both figures."""
    palette = ("tab:red", "tab:orange", "tab:purple", "tab:blue", "tab:cyan", "tab:brown", "tab:pink", "tab:olive", "tab:gray")
    return {dt: palette[i % len(palette)] for i, dt in enumerate(sorted(dts, reverse=True))}


def answered(results: dict[str, Any], runs: Iterable[str]) -> list[tuple[str, dict[str, Any], bool]]:
    """(run, its answer, whether it is right) of the drawn runs that answered."""
    right = {score["run"]: score["right"] for score in results["scores"]}
    return [(run, results["verdicts"][run]["answer"], right[run]) for run in runs if results["verdicts"][run]["answer"]]


def _brackets(strip: Axes, results: dict[str, Any], runs: Sequence[str], exact: dict[str, Any]) -> dict[str, Any]:
    """One bar per drawn run that answered: its answer's bracket, green when the answer is right, red
    otherwise; the right bracket shaded and the exact crossing marked behind."""
    low, high = exact["bracket"]
    strip.axvspan(low, high, color=BRACKET_COLOUR, alpha=0.15, zorder=0)
    strip.axvline(exact["crossing"]["value"], color=EXACT_COLOUR, linewidth=1.0)
    checked = answered(results, runs)
    handles: dict[str, Any] = {}
    for row, (_run, answer, right) in enumerate(checked):
        colour = BRACKET_COLOUR if right else "tab:red"
        width = max(answer["high"] - answer["low"], 0.05)  # a bracket of one amplitude still shows
        bar = strip.barh(row, width, left=answer["low"], height=0.5, color=colour, alpha=0.8, edgecolor="k", linewidth=0.6)
        what = "right" if right else "wrong"
        handles.setdefault(f"agent's answer (judged by this build): {what}", bar)
    strip.set_yticks(range(len(checked)), [f"{run} (answer)" for run, *_ in checked], fontsize=8)
    strip.set_ylim(-0.6, max(len(checked), 1) - 0.4)
    strip.invert_yaxis()
    if not checked:
        strip.text(0.5, 0.5, "no run answered", transform=strip.transAxes, ha="center", va="center", fontsize=8)
    strip.set_xlabel("amplitude θ0 (degrees)")
    strip.set_ylabel("run")
    strip.grid(True, axis="x", color="0.9")
    return handles


def ratio(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    exact, scan = scans["exact"], scans["ratio"]
    reference = exact["small_angle_period_s"]["value"]
    limit = 1 + exact["excess"]
    amplitudes = scan["amplitudes"]
    points = agent_points(results)
    runs = seed_runs(results)
    markers = run_markers(runs)
    crossings = {row["dt"]: row["crossing"] for row in scans["convergence"]["crossings"]}
    colours = _dt_colours({s["dt"] for s in scan["simulated"]} | {dt for _, dt in points})
    checked = len(answered(results, runs))

    figure = Figure(figsize=(11, 6.6 + 0.25 * checked), layout="constrained")
    grid = figure.add_gridspec(2, 2, width_ratios=[0.8, 1.3], height_ratios=[4, 0.8 + 0.3 * checked])
    overview = figure.add_subplot(grid[:, 0])
    close = figure.add_subplot(grid[0, 1])
    strip = figure.add_subplot(grid[1, 1], sharex=close)
    handles: dict[str, Any] = {}

    def remember(label: str, artist: Any) -> None:
        handles.setdefault(label, artist)

    def excess(values: Iterable[float | None]) -> list[Any]:  # None: no period (over the top), a gap
        return [None if v is None else 100 * (v - 1) for v in values]

    low, high = exact["bracket"]
    remember(f"right bracket: {low:g} to {high:g} deg", close.axvspan(low, high, color=BRACKET_COLOUR, alpha=0.15, zorder=0))
    for axes, transform in ((overview, list), (close, excess)):
        (line,) = axes.plot(amplitudes, transform(scan["exact"]), "-", color=EXACT_COLOUR, linewidth=2.2, zorder=2)
        remember("exact: 1/AGM(1, cos(θ0/2)) (this build)", line)
        for simulated in scan["simulated"]:
            dt = simulated["dt"]
            (line,) = axes.plot(amplitudes, transform(simulated["ratio"]), "--", color=colours[dt], linewidth=1.3, zorder=2)
            at = f", crosses 1 % at {crossings[dt]['shown']} deg" if dt in crossings else ""
            remember(f"simulated, dt = {dt:g} s (this build's scan{at})", line)
    overview.axhline(limit, color="0.4", linestyle=":", linewidth=1.2)
    remember(f"{100 * exact['excess']:g} % above the small-angle period", close.axhline(100 * exact["excess"], color="0.4", linestyle=":", linewidth=1.2))
    crossing = exact["crossing"]
    remember(f"exact crossing: {crossing['shown']} deg", close.axvline(crossing["value"], color=EXACT_COLOUR, linewidth=1.0))
    for simulated in scan["simulated"]:
        dt = simulated["dt"]
        if dt in crossings and CLOSE_UP[0] <= crossings[dt]["value"] <= CLOSE_UP[1]:
            close.plot([crossings[dt]["value"]], [100 * exact["excess"]], "o", color=colours[dt], markersize=7, zorder=4)

    for (run, dt), pts in sorted(points.items(), key=lambda item: (runs.index(item[0][0]), -item[0][1])):
        xs, ys = zip(*pts)
        ratios = [y / reference for y in ys]
        overview.scatter(xs, ratios, s=40, marker=markers.get(run, "o"), facecolor=colours.get(dt, "0.5"), edgecolor="k", linewidth=0.7, zorder=3)
        near = [(x, 100 * (r - 1)) for x, r in zip(xs, ratios) if CLOSE_UP[0] <= x <= CLOSE_UP[1]]
        if near:
            nx, ny = zip(*near)
            artist = close.scatter(nx, ny, s=55, marker=markers.get(run, "o"), facecolor=colours.get(dt, "0.5"), edgecolor="k", linewidth=0.7, zorder=5)
            remember(f"agent's calls, recomputed: run {run}, dt = {dt:g} s", artist)
    for label, artist in _brackets(strip, results, runs, exact).items():
        remember(label, artist)

    overview.set_xlabel("amplitude θ0 (degrees)")
    overview.set_ylabel("period / small-angle period 2π√(L/g)")
    overview.set_title("every amplitude the tool allows")
    close.set_xlim(*CLOSE_UP)
    close.set_ylim(0.3, 2.1)
    close.set_xlabel("amplitude θ0 (degrees)")
    close.set_ylabel("excess over 2π√(L/g) (%)")
    close.set_title("close-up: where each curve crosses 1 % (dots: the crossing)")
    for axes in (overview, close):
        axes.grid(True, color="0.9")
    figure.suptitle("The pendulum's period against its amplitude: exact, simulated, and the agents' calls")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


def convergence(results: dict[str, Any]) -> Figure:
    scans = results["scans"]
    scan = scans["convergence"]
    exact = scans["exact"]
    largest = results["exercises"]["largest_dt"]
    figure = Figure(figsize=(11, 5.6), layout="constrained")
    errors, shifts = figure.subplots(1, 2)
    handles: dict[str, Any] = {}
    for i, item in enumerate(scan["errors"]):
        rows = item["rows"]
        (line,) = errors.plot([r["dt"] for r in rows], [r["error"] for r in rows], "-o", color=f"C{i}", markersize=4)
        handles[f"relative period error at {item['amplitude']:g} deg (this build's scan): fitted order {item['order']['shown']}"] = line
    runs = seed_runs(results)
    markers = run_markers(runs)
    for run in runs:
        errors_of_run = [e for e in results["verdicts"][run]["period_errors"] if e["error"] > 0]
        if errors_of_run:
            artist = errors.scatter([e["dt"] for e in errors_of_run], [e["error"] for e in errors_of_run], s=50, marker=markers[run],
                                    facecolor="none", edgecolor="k", linewidth=1.0, zorder=3)
            handles[f"agent's calls, recomputed against the exact period at their amplitude: run {run}"] = artist
    rows = scan["crossings"]
    (line,) = shifts.plot([r["dt"] for r in rows], [abs(r["shift"]["value"]) for r in rows], "-s", color="tab:purple", markersize=4)
    handles[f"shift of the simulated 1 % crossing (this build's scan): fitted order {scan['crossing_order']['shown']}"] = line
    room = exact["bracket"][1] - exact["crossing"]["value"]
    handles[f"room above the exact crossing in its bracket ({room:.3f} deg)"] = shifts.axhline(room, color=BRACKET_COLOUR, linestyle=":", linewidth=1.4)
    dt = largest["largest"]["dt"]
    handles[f"largest dt that still lands in {largest['bracket'][0]:g} to {largest['bracket'][1]:g} deg: {dt['shown']} s"] = shifts.axvline(
        dt["value"], color=BRACKET_COLOUR, linewidth=1.4)
    for axes, ylabel, title in (
        (errors, "|simulated period / exact period − 1|", "period error of the simulation"),
        (shifts, "|simulated crossing − exact crossing| (degrees)", "how far dt moves the 1 % crossing"),
    ):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.minorticks_off()  # a label per decade is enough, and the minor ticks take most of the drawing time
        for axis in (axes.xaxis, axes.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))  # 0.01 and 1e-05: plain text, no typeset powers
        axes.set_xlabel("time step dt (s, log scale)")
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(True, which="major", color="0.9")
    figure.suptitle("Convergence in dt of symplectic Euler against the exact period (this build's scan)")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"ratio": ratio, "convergence": convergence, "scorecard": scorecard_figure}
