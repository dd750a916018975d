"""The review lesson's figures, drawn from results.json alone (no pyplot state, no file written).

- error: the largest distance to the exact oscillator over the scan's periods against steps per
  period (log-log), one line per seed piece from the build's scan, and the evidence reviewer's
  `oscillator_error` calls as recomputed points (one marker per evidence run of the seed instance:
  a drawn instance's pieces are others, and are not drawn against the seed's lines).
"""

from typing import Any

from matplotlib.figure import Figure

from replaylab.lessons.plotting import drawn_calls, run_markers, scorecard_figure, steps_per_period_axes
from replaylab.lessons.review import lab
from replaylab.lessons.review.family import SEED_ID
from replaylab.lessons.review.tables import piece_names


def evidence_points(results: dict[str, Any]) -> dict[tuple[str, int], list[tuple[int, float]]]:
    """{(run, candidate): [(steps, error)]} of the accepted error measurements (the evidence
    reviewer's tool), as recomputed; the arguments as sent (a call the allowlist took has them all)."""
    found: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for run_name, arguments, content in drawn_calls(results, lab.ERROR_TOOL):
        if results["verdicts"].get(run_name, {}).get("instance", SEED_ID) != SEED_ID:
            continue
        value = content[lab.ERROR_KEY]
        if value is None or value <= 0:  # None: a value that was not finite, not drawn on log axes
            continue
        found.setdefault((run_name, arguments["candidate"]), []).append((arguments["steps_per_period"], value))
    return found


def error(results: dict[str, Any]) -> Figure:
    scan = results["scans"]["error"]
    periods = scan["periods"]
    names = piece_names(results)
    pieces = list(dict.fromkeys(row["candidate"] for row in scan["rows"]))
    colours = {piece: f"C{i}" for i, piece in enumerate(pieces)}
    points = evidence_points(results)
    runs = list(dict.fromkeys(run for run, _ in points))
    markers = run_markers(runs)

    figure = Figure(figsize=(9.5, 6.4), layout="constrained")
    axes = figure.subplots()
    handles: dict[str, Any] = {}
    for piece in pieces:
        rows = [r for r in scan["rows"] if r["candidate"] == piece]
        label = f"piece {piece}" + (f" ({names[piece]})" if piece in names else "") + ": scan (this build)"
        (line,) = axes.plot(
            [r["steps_per_period"] for r in rows], [r["error"] for r in rows], "-", marker=".", color=colours[piece], linewidth=1.6
        )
        handles[label] = line
    for (run, piece), pts in sorted(points.items(), key=lambda item: (runs.index(item[0][0]), str(item[0][1]))):
        xs, ys = zip(*pts)
        artist = axes.scatter(
            xs, ys, s=60, marker=markers[run], facecolor=colours.get(piece, "0.5"), edgecolor="k", linewidth=0.8, zorder=3
        )
        handles[f"piece {piece}: evidence reviewer's calls, recomputed (run '{run}')"] = artist

    steps_per_period_axes(
        axes,
        {r["steps_per_period"] for r in scan["rows"]} | {x for pts in points.values() for x, _ in pts},
        "largest distance to the exact oscillator in (x, v/ω) (m, log scale)",
        f"Error against the exact oscillator over {periods} periods, both pieces",
    )
    figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2, fontsize="small")
    return figure


FIGURES = {"error": error, "scorecard": scorecard_figure}
