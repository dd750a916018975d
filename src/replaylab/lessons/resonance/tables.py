"""The resonance lesson's tables, read from results.json (written as results/resonance/tables/<name>.csv).

Each row is a flat dict of str, int and float: floats at full precision, next to a "shown" column
with the text the page shows where the page rounds.

- answers: per run, its answer as submitted and both judgements (right, supported);
- agent-experiments: per run, where its own amplitudes at its largest number of periods put the
  peak, against ω_r of its own instance;
- agent-measurements: per run, each amplitude it asked for, recomputed, against the exact steady one;
- exact-peak: the seeds' oscillator and its peak, from the closed form;
- curve: the seeds' steady amplitude over its range, exact and simulated after a few numbers of periods;
- settling: at ω_r, the simulated amplitude after 1 to 60 periods against the exact one;
- convergence: the peak Runge-Kutta settles to at 8 to 128 steps per period against ω_r;
- misbehaving-calls, budget: calls through the allowlist and what became of them;
- fewest-periods: the exercise, where the simulated amplitudes after each number of periods put the peak;
- changed-oscillator: per run of the demonstration group, the replay against a 0.1 % higher ω0;
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.markdown import answer_rows, call_rows, flag, outcome_columns
from replaylab.lessons.resonance import lab

TABLES = (
    "answers",
    "agent-experiments",
    "agent-measurements",
    "exact-peak",
    "curve",
    "settling",
    "convergence",
    "misbehaving-calls",
    "budget",
    "fewest-periods",
    "changed-oscillator",
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
    periods = conclusion["periods"]
    add("largest number of periods the agent used", periods, "", f"{periods}")
    for item in conclusion["at_most"]:
        add(f"amplitude at {item['frequency']:g} rad/s ({periods} periods), recomputed", item["amplitude_m"]["value"], "m",
            item["amplitude_m"]["shown"])
    for what in ("below", "best", "above"):
        words = {"below": "nearest frequency below it", "best": "frequency of the largest amplitude", "above": "nearest frequency above it"}
        add(words[what], conclusion[what], "rad/s", f"{conclusion[what]:g}")
    add("top of the parabola through those three (derived by the build)", conclusion["top"]["value"], "rad/s", conclusion["top"]["shown"])
    add("exact peak ω_r = √(ω0² − 2γ²)", conclusion["exact"]["value"], "rad/s", conclusion["exact"]["shown"])
    add("top minus exact peak", conclusion["off"]["value"], "rad/s", conclusion["off"]["shown"])
    within = conclusion["within"]
    add(f"within the tolerance ({conclusion['tolerance_rad_s']:g} rad/s)", flag(within), "", "yes" if within else "no")
    return rows


def changed_row(run: str, changed: dict[str, Any]) -> dict[str, Any]:
    """The replay of one run against another ω0: where it stopped and both values, or not caught."""
    row: dict[str, Any] = {"run": run, "natural_rad_s": changed["natural"], "caught": flag(changed["caught"])}
    fields = ("message", "call", "tool", "key", "recorded", "recomputed", "text")
    return row | {field: changed[field] if changed["caught"] else "" for field in fields}


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    verdicts, scans, exercises = results["verdicts"], results["scans"], results["exercises"]
    exact, curve = scans["exact"], scans["curve"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["answers"] = answer_rows(results)
    for run, verdict in verdicts.items():
        out["agent-experiments"] += conclusion_rows(run, verdict["experiments"])
        out["agent-measurements"] += [
            {"run": run, "frequency_rad_s": m["frequency"], "periods": m["periods"], "amplitude_m": m["amplitude_m"],
             "exact_m": m["exact_m"], "relative_difference": m["error"]}
            for m in verdict["measurements"]
        ]
        if "changed_oscillator" in verdict:  # the demonstration group's runs only
            out["changed-oscillator"].append(changed_row(run, verdict["changed_oscillator"]))
    out["exact-peak"] = [
        {"quantity": "natural frequency ω0 (never stated to the agent)", "value": exact["natural_rad_s"], "unit": "rad/s", "shown": f"{exact['natural_rad_s']:g}"},
        {"quantity": "damping rate γ (never stated to the agent)", "value": exact["damping_rate_s"], "unit": "1/s", "shown": f"{exact['damping_rate_s']:g}"},
        {"quantity": "force per unit mass F", "value": exact["force_m_s2"], "unit": "m/s²", "shown": f"{exact['force_m_s2']:g}"},
        {"quantity": "exact peak ω_r = √(ω0² − 2γ²)", "value": exact["resonance"]["value"], "unit": "rad/s", "shown": exact["resonance"]["shown"]},
        {"quantity": "damped frequency √(ω0² − γ²)", "value": exact["damped"]["value"], "unit": "rad/s", "shown": exact["damped"]["shown"]},
        {"quantity": "amplitude at the peak F / (2γ√(ω0² − γ²))", "value": exact["peak_amplitude_m"]["value"], "unit": "m", "shown": exact["peak_amplitude_m"]["shown"]},
        {"quantity": "tolerance", "value": exact["tolerance_rad_s"], "unit": "rad/s", "shown": f"{exact['tolerance_rad_s']:g}"},
    ]
    out["curve"] = [
        {"frequency_rad_s": w, "exact_m": a, **{f"simulated_after_{s['periods']}_periods_m": s["amplitude_m"][i] for s in curve["simulated"]}}
        for i, (w, a) in enumerate(zip(curve["frequencies"], curve["exact"]))
    ]
    out["settling"] = [
        {"periods": row["periods"], "amplitude_m": row["amplitude_m"], "relative_difference": row["error"], "envelope": row["envelope"]}
        for row in scans["settling"]["rows"]
    ]
    convergence = scans["convergence"]
    out["convergence"] = [
        {"steps_per_period": row["steps"], "simulated_peak_rad_s": row["resonance"], "error_rad_s": row["error"],
         "fitted_order": convergence["order"]["value"]}
        for row in convergence["rows"]
    ]
    out["misbehaving-calls"] = [
        {"number": number, "what": item["what"], "tool": item["name"], "arguments": json.dumps(item["arguments"]), **outcome_columns(item, lab.KEY)}
        for number, item in enumerate(exercises["misbehaving_calls"], start=1)
    ]
    out["budget"] = [{"call": item["call"], "tool": lab.TOOL, **outcome_columns(item, lab.KEY)} for item in exercises["budget"]["repeats"]]
    out["fewest-periods"] = [
        {"periods": row["periods"], "top_rad_s": row["top"]["value"] if row["top"] else "",
         "shown": row["top"]["shown"] if row["top"] else "no peak inside the grid", "off_rad_s": row["off"]["value"] if row["top"] else "",
         "within_tolerance": flag(row["within"])}
        for row in exercises["fewest_periods"]["rows"]
    ]
    out["run"] = call_rows(results)
    return out
