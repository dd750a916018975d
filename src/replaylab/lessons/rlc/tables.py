"""The rlc lesson's tables, read from results.json (written as results/rlc/tables/<name>.csv).

Each row is a flat dict of str, int and float: floats at full precision, next to a "shown" column
with the text the page shows where the page rounds.

- answers: per run, its answer as submitted and both judgements (right, supported);
- agent-experiments: per run, what its own voltages at its smallest dt show, against the exact regime;
- agent-readings: per run, each voltage it asked for, recomputed, beside the exact one;
- exact-circuit: the seeds' circuit and its regime, from the exact solution;
- curve: the seeds' voltage over four natural periods, exact and simulated at a few dt;
- convergence: the simulated voltage at the seeds' lowest point against the exact one, per dt;
- ringing: an overdamped circuit's lowest simulated voltage per dt, below zero above 2/ω0;
- misbehaving-calls, budget: calls through the allowlist and what became of them;
- largest-positive-dt: the exercise, the largest dt at which that circuit's voltage stays positive;
- changed-resistance: per run of the demonstration group, the replay against a 0.1 % higher R;
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.markdown import answer_rows, call_rows, flag, outcome_columns
from replaylab.lessons.rlc import lab

TABLES = (
    "answers",
    "agent-experiments",
    "agent-readings",
    "exact-circuit",
    "curve",
    "convergence",
    "ringing",
    "misbehaving-calls",
    "budget",
    "largest-positive-dt",
    "changed-resistance",
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
    dt = conclusion["smallest_dt"]
    add("smallest dt the agent used", dt, "ms", f"{dt:g}")
    for item in conclusion["at_smallest"]:
        add(f"voltage at {item['time']:g} ms (dt {dt:g} ms), recomputed", item["voltage"]["value"], "V", item["voltage"]["shown"])
    add("what those voltages show (derived by the build)", conclusion["shows"], "", conclusion["shows"])
    add("time of the reading that shows it", conclusion["when"], "ms", f"{conclusion['when']:g}")
    add("exact damping ratio ζ = (R/2)√(C/L)", conclusion["damping_ratio"]["value"], "", conclusion["damping_ratio"]["shown"])
    add("regime of the exact damping ratio", conclusion["exact"], "", conclusion["exact"])
    add("the readings show the exact regime", flag(conclusion["agrees"]), "", "yes" if conclusion["agrees"] else "no")
    return rows


def changed_row(run: str, changed: dict[str, Any]) -> dict[str, Any]:
    """The replay of one run against another R: where it stopped and both values, or not caught."""
    row: dict[str, Any] = {"run": run, "resistance_ohm": changed["resistance"], "caught": flag(changed["caught"])}
    fields = ("message", "call", "tool", "key", "recorded", "recomputed", "text")
    return row | {field: changed[field] if changed["caught"] else "" for field in fields}


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    verdicts, scans, exercises = results["verdicts"], results["scans"], results["exercises"]
    exact, curve = scans["exact"], scans["curve"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["answers"] = answer_rows(results)
    for run, verdict in verdicts.items():
        out["agent-experiments"] += conclusion_rows(run, verdict["experiments"])
        out["agent-readings"] += [{"run": run, "time_ms": r["time"], "dt_ms": r["dt"], "voltage_v": r["voltage"], "exact_v": r["exact"]}
                                  for r in verdict["readings"]]
        if "changed_resistance" in verdict:  # the demonstration group's runs only
            out["changed-resistance"].append(changed_row(run, verdict["changed_resistance"]))

    def quantity(what: str, value: Any, unit: str, shown: str) -> dict[str, Any]:
        return {"quantity": what, "value": value, "unit": unit, "shown": shown}

    out["exact-circuit"] = [
        quantity("resistance R (never stated to the agent)", exact["resistance_ohm"], "Ω", f"{exact['resistance_ohm']:g}"),
        quantity("inductance L", exact["inductance_mh"], "mH", f"{exact['inductance_mh']:g}"),
        quantity("capacitance C (never stated to the agent)", exact["capacitance_uf"], "µF", f"{exact['capacitance_uf']:g}"),
        quantity("initial voltage V0", exact["initial_voltage_v"], "V", f"{exact['initial_voltage_v']:g}"),
        quantity("natural period 2π√(LC)", exact["natural_period_ms"]["value"], "ms", exact["natural_period_ms"]["shown"]),
        quantity("damping ratio ζ = (R/2)√(C/L)", exact["damping_ratio"]["value"], "", exact["damping_ratio"]["shown"]),
        quantity("regime", exact["regime"], "", exact["regime"]),
        quantity("time of the lowest voltage π/ω_d", exact["lowest_time_ms"]["value"], "ms", exact["lowest_time_ms"]["shown"]),
        quantity("lowest voltage", exact["lowest_voltage_v"]["value"], "V", exact["lowest_voltage_v"]["shown"]),
    ]
    out["curve"] = [{"time_ms": t, "exact_v": v, **{f"simulated_dt_{s['dt']:g}_v": s["voltage"][i] for s in curve["simulated"]}}
                    for i, (t, v) in enumerate(zip(curve["times"], curve["exact"]))]
    convergence = scans["convergence"]
    out["convergence"] = [{"dt_ms": row["dt"], "voltage_v": row["voltage"], "exact_v": convergence["exact"], "error_v": row["error"],
                           "fitted_order": convergence["order"]["value"]} for row in convergence["rows"]]
    ringing = scans["ringing"]
    out["ringing"] = [{"dt_ms": row["dt"], "lowest_voltage_v": row["lowest_voltage_v"], "at_ms": row["at_ms"],
                       "below_zero": flag(row["negative"]), "below_zero_dt_ms": ringing["below_zero_dt_ms"]["value"]}
                      for row in ringing["rows"]]
    out["misbehaving-calls"] = [
        {"number": number, "what": item["what"], "tool": item["name"], "arguments": json.dumps(item["arguments"]), **outcome_columns(item, lab.KEY)}
        for number, item in enumerate(exercises["misbehaving_calls"], start=1)
    ]
    out["budget"] = [{"call": item["call"], "tool": lab.TOOL, **outcome_columns(item, lab.KEY)} for item in exercises["budget"]["repeats"]]
    largest = exercises["largest_positive_dt"]
    out["largest-positive-dt"] = [
        {"what": "largest dt whose voltage stays at or above zero", "dt_ms": largest["largest"]["value"], "shown": largest["largest"]["shown"]},
        {"what": "smallest dt found whose voltage goes below zero", "dt_ms": largest["outside"]["value"], "shown": largest["outside"]["shown"]},
        {"what": "2/ω0, its limit over an unbounded time", "dt_ms": largest["theory"]["value"], "shown": largest["theory"]["shown"]},
    ]
    out["run"] = call_rows(results)
    return out
