"""The projectile lesson's tables, read from results.json (written as results/projectile/tables/<name>.csv).

Each row is a flat dict of str, int and float: floats at full precision (the CSV writer prints
their repr), next to a "shown" column with the text the page shows where the page rounds.

- answers: per run, its answer as submitted and both judgements (right, supported);
- located-maximum: per run, where its own data locate the maximum (what `supported` is decided from):
  its best angle at its smallest dt, the nearest measured angle on each side, the parabola's top;
- agent-experiments: per run, the seeds' check of its experiments (docs/physics.md 1.5: its two best angles at
  its smallest dt against a quarter-degree scan at that dt);
- experiments-scan: per run, that quarter-degree scan around the agent's two best angles;
- best-angle-scan: the build's own answer, the converged quarter-degree scan (one row per dt);
- evidence-scan: the independent scan of the figure (angles at a fixed dt);
- misbehaving-calls: the six calls through the allowlist and their outcomes;
- step-bounds, new-tool: the two exercises;
- rough-ball: per run of the demonstration group, the replay against a ball with more drag (where
  the replay stopped, the recorded and the recomputed value);
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.markdown import answer_rows, call_rows, flag, outcome_columns
from replaylab.lessons.projectile import lab

TABLES = (
    "answers",
    "located-maximum",
    "agent-experiments",
    "experiments-scan",
    "best-angle-scan",
    "evidence-scan",
    "misbehaving-calls",
    "step-bounds",
    "new-tool",
    "rough-ball",
    "run",
)


def conclusion_rows(run: str, conclusion: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(quantity: str, value: Any, unit: str, shown: str) -> None:
        rows.append({"run": run, "quantity": quantity, "value": value, "unit": unit, "shown": shown})

    if not conclusion["checkable"]:
        add("checkable", "false", "", "not checkable")
        add("reason", conclusion["reason"], "", conclusion["reason"])
        return rows
    smallest = conclusion["smallest_dt"]
    add("smallest dt the agent used", smallest, "s", f"{smallest:g}")
    for item in conclusion["at_smallest"]:
        add(f"agent's range at {item['angle']:g} deg (dt {smallest:g} s), recomputed", item["range_m"]["value"], "m", item["range_m"]["shown"])
    low, high = conclusion["bracket"]
    add("the lower of the agent's two best angles at that dt", low, "deg", f"{low:g}")
    add("the higher of the agent's two best angles at that dt", high, "deg", f"{high:g}")
    add("best angle of the build's scan at that dt", conclusion["best_angle"]["value"], "deg", conclusion["best_angle"]["shown"])
    add("range at the best angle", conclusion["best_range_m"]["value"], "m", conclusion["best_range_m"]["shown"])
    angle = f"{conclusion['reference_angle']:g}"
    reference = conclusion["reference_range_m"]
    add(f"range at {angle} deg", reference["value"], "m", reference["shown"])
    add(f"gain of the best angle over {angle} deg", conclusion["gain_m"]["value"], "m", conclusion["gain_m"]["shown"])
    add(f"gain in per cent of the range at {angle} deg", conclusion["gain_percent"]["value"], "%", conclusion["gain_percent"]["shown"])
    add("that best angle between the agent's two best angles", flag(conclusion["inside"]), "", "yes" if conclusion["inside"] else "no")
    return rows


def located_row(run: str, where: dict[str, Any]) -> dict[str, Any]:
    """Where one run's data locate the maximum, as one row (empty cells where they do not)."""
    row: dict[str, Any] = {"run": run, "located": flag(where["located"]), "smallest_dt_s": where.get("smallest_dt", ""),
           "reason": where.get("reason", "")}
    for side in ("below", "best", "above"):
        point = where.get(side)
        row[f"{side}_angle_deg"] = point["angle"] if point else ""
        row[f"{side}_range_m"] = point["range_m"]["value"] if point else ""
    top = where.get("top")
    return row | {"parabola_top_deg": top["value"] if top else "", "shown": top["shown"] if top else ""}


def rough_ball_row(run: str, rough: dict[str, Any]) -> dict[str, Any]:
    """The rough-ball replay of one run: where it stopped and both values, or not caught."""
    row: dict[str, Any] = {"run": run, "drag_factor": rough["drag_factor"], "caught": flag(rough["caught"])}
    fields = ("message", "call", "tool", "key", "recorded", "recomputed", "text")
    return row | {field: rough[field] if rough["caught"] else "" for field in fields}


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    verdicts = results["verdicts"]
    exercises = results["exercises"]
    evidence = results["scans"]["evidence"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["answers"] = answer_rows(results)
    for run, verdict in verdicts.items():
        out["located-maximum"].append(located_row(run, verdict["located"]))
        conclusion = verdict["experiments"]
        out["agent-experiments"] += conclusion_rows(run, conclusion)
        if conclusion["checkable"]:
            out["experiments-scan"] += [
                {"run": run, "angle_deg": row["angle"], "range_m": row["range_m"], "dt_s": conclusion["smallest_dt"]}
                for row in conclusion["grid"]
            ]
        if "rough_ball" in verdict:  # the demonstration group's runs only
            out["rough-ball"].append(rough_ball_row(run, verdict["rough_ball"]))
    best = results["scans"]["best_angle"]
    out["best-angle-scan"] = [
        {"dt_s": row["dt"], "best_angle_deg": row["angle"], "range_m": row["range_m"], "grid_step_deg": best["grid_step"],
         "grid_low_deg": best["low"], "grid_high_deg": best["high"]}
        for row in best["rows"]
    ]
    out["evidence-scan"] = [
        {"angle_deg": row["angle"], "range_m": row["range_m"], "dt_s": evidence["dt"], "speed_m_s": evidence["speed"]}
        for row in evidence["rows"]
    ]
    out["misbehaving-calls"] = [
        {
            "number": number,
            "what": item["what"],
            "tool": item["name"],
            "arguments": json.dumps(item["arguments"]),
            **outcome_columns(item, lab.RANGE_KEY),
        }
        for number, item in enumerate(exercises["misbehaving_calls"], start=1)
    ]
    bounds = exercises["step_bounds"]
    out["step-bounds"] = [
        {"quantity": "range with the smallest dt", "angle_deg": bounds["angle"], "dt_s": bounds["fine_dt"], "value_m": bounds["fine_m"]["value"], "shown": bounds["fine_m"]["shown"]},
        {"quantity": "range with the largest dt", "angle_deg": bounds["angle"], "dt_s": bounds["coarse_dt"], "value_m": bounds["coarse_m"]["value"], "shown": bounds["coarse_m"]["shown"]},
        {"quantity": "difference (largest dt minus smallest dt)", "angle_deg": bounds["angle"], "dt_s": "", "value_m": bounds["difference_m"]["value"], "shown": bounds["difference_m"]["shown"]},
    ]
    out["new-tool"] = [
        {"tool": lab.FLIGHT_TIME_TOOL, "arguments": json.dumps(item["arguments"]), **outcome_columns(item, lab.TIME_KEY)}
        for item in exercises["new_tool"]
    ]
    out["run"] = call_rows(results)
    return out
