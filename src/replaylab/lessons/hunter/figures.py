"""The hunter lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- drift: largest energy drift against steps per period (log-log) from the build's scan, one line
  per method of the seeds' claims; the limit of each claim of the runs drawn as a dashed line; the hunts' experiments as recomputed points
  (filled at the scan's number of periods, hollow at other run lengths, one marker per run) and
  their counterexamples; with many runs, those of the reference runs only (lessons.drawn_runs).
"""

from collections.abc import Iterable
from typing import Any

from matplotlib.figure import Figure
from replaylab.lessons import counted, drawn_runs
from replaylab.lessons.hunter import lab
from replaylab.lessons.markdown import join_words
from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure, steps_per_period_axes
from replaylab.physics.integrators import STEPPERS


def experiments(results: dict[str, Any]) -> dict[tuple[str, str, int], list[tuple[int, float]]]:
    """{(run, method, periods): [(steps, drift)]} of the accepted drift calls, as recomputed (the
    arguments as the agent sent them: a call the allowlist took has them all)."""
    found: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    for run_name, arguments, content in drawn_calls(results, lab.TOOL_NAME):
        value = content[lab.RESULT_KEY]
        if value is None or value <= 0:  # None: a value that was not finite, not drawn on log axes
            continue
        key = (run_name, arguments["method"], arguments["periods"])
        found.setdefault(key, []).append((arguments["steps_per_period"], value))
    return found


def _claim_method(statement: str, methods: Iterable[str]) -> str | None:
    for method in methods:
        if statement.lower().startswith(method.lower()):
            return method
    return None


def drift(results: dict[str, Any]) -> Figure:
    scan = results["scans"]["drift"]
    periods = scan["periods"]
    methods = list(dict.fromkeys(row["method"] for row in scan["rows"]))
    colours = {method: f"C{i}" for i, method in enumerate(methods)}
    method: str | None  # a scan's method, then a claim's (None when no method names it)
    for method in STEPPERS:  # a drawn claim's method that the scan does not draw
        colours.setdefault(method, f"C{len(colours)}")
    runs = list(drawn_runs(results))
    markers = run_markers(runs)

    figure = Figure(figsize=(9.5, 6.6), layout="constrained")
    axes = figure.subplots()
    handles: dict[Any, Any] = {}  # label -> artist; (run, method, hollow) -> (artist, label) until sorted

    for method in methods:
        rows = [r for r in scan["rows"] if r["method"] == method]
        (line,) = axes.plot(
            [r["steps_per_period"] for r in rows], [r["max_energy_drift"] for r in rows], "-", color=colours[method], marker=".", linewidth=1.6
        )
        handles[f"{method}, {periods} periods (scan, this build)"] = line

    claims: dict[str, dict[str, Any]] = {}
    for run in runs:  # the claims of the runs drawn (with many runs, the reference runs')
        verdict = results["verdicts"][run]["experiments"]
        claims.setdefault(verdict["claim"], verdict)
    for name, verdict in claims.items():
        method = _claim_method(verdict["statement"], list(colours))
        line = axes.axhline(verdict["limit"], linestyle="--", linewidth=1.3, color=colours.get(method, "0.4"))
        about = f" ({method})" if method else ""
        handles[f"limit of the '{name}' claim{about}: {verdict['limit']:g}"] = line

    groups: dict[tuple[str, str, bool], tuple[list[int], list[tuple[int, float]]]] = {}  # (run, method, filled) -> periods, points
    for (run, method, run_periods), points in experiments(results).items():
        group = groups.setdefault((run, method, run_periods == periods), ([], []))
        group[0].append(run_periods)
        group[1].extend(points)
    order = sorted(groups, key=lambda key: (runs.index(key[0]), str(key[1]), not key[2]))
    for run, method, filled in sorted(order, key=lambda key: key[2]):  # hollow first, filled on top
        lengths, points = groups[(run, method, filled)]
        xs, ys = zip(*points)
        colour = colours.get(method, "0.3")
        artist = axes.scatter(
            xs, ys, s=55 if filled else 130, marker=markers.get(run, "o"), zorder=4 if filled else 3, linewidth=1.3,
            facecolor=colour if filled else "none", edgecolor="k" if filled else colour,
        )
        counts = sorted(set(lengths))
        words = join_words(f"{c:g}" for c in counts)
        unit = "period" if counts == [1] else "periods"
        handles[(runs.index(run), str(method), not filled)] = (artist, f"hunt '{run}': {method}, {words} {unit} (agent's calls, recomputed)")
    points_handles = [handles.pop(key) for key in sorted(k for k in handles if isinstance(k, tuple))]
    for artist, label in points_handles:
        handles[label] = artist

    for run, verdicts in results["verdicts"].items():
        answered = verdicts["answer_check"]  # a counterexample answer, run again by the build
        if answered and run in runs:  # with many runs, the reference runs' only
            relation = ">" if answered["value"]["value"] > verdicts["experiments"]["limit"] else "<="
            axes.annotate(
                f"counterexample answered by hunt '{run}':\n{answered['method']}, {answered['steps_per_period']} steps per period,\n"
                f"{counted(answered['periods'], 'period', 'periods')}: {answered['value']['shown']} {relation} {verdicts['experiments']['limit']:g}",
                (answered["steps_per_period"], answered["value"]["value"]), xytext=(30, 38), textcoords="offset points",
                fontsize="small", arrowprops={"arrowstyle": "->", "color": "0.3"},
                bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.7"},
            )

    steps_per_period_axes(
        axes,
        {r["steps_per_period"] for r in scan["rows"]},
        "largest energy drift |E/E0 - 1| (dimensionless, log scale)",
        f"Energy drift of the oscillator over {periods} periods, and the hunts' experiments",
    )
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"drift": drift, "scorecard": scorecard_figure}
