"""The pendulum lesson's tables, read from results.json (written as results/pendulum/tables/<name>.csv).

Each row is a flat dict of str, int and float: floats at full precision (the CSV writer prints
their repr), next to a "shown" column with the text the page shows where the page rounds.

- answers: per run, its answer as submitted and both judgements (right, supported);
- agent-experiments: per run, what its experiments show: its bracket at its smallest dt, against the exact
  crossing of its own instance's threshold;
- agent-errors: per run, each period it asked for, recomputed, against the exact period at its amplitude;
- exact-crossing: the exact 1 % crossing and the right bracket;
- crossing-by-dt: the simulated 1 % crossing at each dt of the convergence scan, its shift from the
  exact crossing and its whole-degree bracket;
- ratio-scan: T/T0 over every whole degree, exact and simulated at each of a few dt;
- convergence: the simulation's relative period error against the exact period, per amplitude and dt;
- convergence-order: the orders of convergence fitted to the errors and to the crossing's shift;
- misbehaving-calls, budget: calls through the allowlist and what became of them;
- largest-dt: the exercise, the largest dt at which the simulated crossing lands in the right bracket;
- changed-gravity: per run of the demonstration group, the replay against g = 9.80 m/s²;
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.markdown import answer_rows, call_rows, flag, outcome_columns
from replaylab.lessons.pendulum import lab

TABLES = (
    "answers",
    "agent-experiments",
    "agent-errors",
    "exact-crossing",
    "crossing-by-dt",
    "ratio-scan",
    "convergence",
    "convergence-order",
    "misbehaving-calls",
    "budget",
    "largest-dt",
    "changed-gravity",
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
    period = conclusion["small_angle_period_s"]
    add("small-angle period 2π√(L/g) (this build)", period["value"], "s", period["shown"])
    for item in conclusion["at_smallest"]:
        amplitude = f"{item['amplitude']:g}"
        add(f"period at {amplitude} deg (dt {smallest:g} s), recomputed", item["period_s"]["value"], "s", item["period_s"]["shown"])
        add(f"excess over the small-angle period at {amplitude} deg", item["excess_percent"]["value"], "%", item["excess_percent"]["shown"])
    low, high = conclusion["bracket"]
    percent, precision = lab.percent_text(conclusion["threshold"]), conclusion["precision_deg"]
    add(f"{percent} crossing from the run's own periods (derived by the build), low amplitude", low, "deg", f"{low:g}")
    add(f"{percent} crossing from the run's own periods (derived by the build), high amplitude", high, "deg", f"{high:g}")
    within = conclusion["within_precision"]
    fits = "two adjacent whole degrees" if precision == 1 else f"one bracket of the precision asked ({precision:g} degrees)"
    add(f"that bracket lies within {fits}", flag(within), "", "yes" if within else "no")
    exact = conclusion["exact_crossing"]
    add(f"exact {percent} crossing (arithmetic-geometric mean)", exact["value"], "deg", exact["shown"])
    add("exact crossing inside that bracket", flag(conclusion["inside"]), "", "yes" if conclusion["inside"] else "no")
    return rows


def changed_gravity_row(run: str, changed: dict[str, Any]) -> dict[str, Any]:
    """The replay of one run against another g: where it stopped and both values, or not caught."""
    row: dict[str, Any] = {"run": run, "g": changed["g"], "caught": flag(changed["caught"])}
    fields = ("message", "call", "tool", "key", "recorded", "recomputed", "text")
    return row | {field: changed[field] if changed["caught"] else "" for field in fields}


def _lands(dt_row: dict[str, Any], bracket: list[float]) -> str:
    return flag(dt_row["bracket"] == bracket)


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    verdicts, scans, exercises = results["verdicts"], results["scans"], results["exercises"]
    exact, ratio, convergence = scans["exact"], scans["ratio"], scans["convergence"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["answers"] = answer_rows(results)
    for run, verdict in verdicts.items():
        out["agent-experiments"] += conclusion_rows(run, verdict["experiments"])
        out["agent-errors"] += [
            {"run": run, "amplitude_deg": e["amplitude"], "dt_s": e["dt"], "period_s": e["period_s"],
             "exact_period_s": e["exact_period_s"], "relative_error": e["error"]}
            for e in verdict["period_errors"]
        ]
        if "changed_gravity" in verdict:  # the demonstration group's runs only
            out["changed-gravity"].append(changed_gravity_row(run, verdict["changed_gravity"]))
    low, high = exact["bracket"]
    out["exact-crossing"] = [
        {"quantity": "small-angle period 2π√(L/g)", "value": exact["small_angle_period_s"]["value"], "unit": "s", "shown": exact["small_angle_period_s"]["shown"]},
        {"quantity": f"exact crossing of {100 * exact['excess']:g} %", "value": exact["crossing"]["value"], "unit": "deg", "shown": exact["crossing"]["shown"]},
        {"quantity": "right bracket, low amplitude", "value": low, "unit": "deg", "shown": f"{low:g}"},
        {"quantity": "right bracket, high amplitude", "value": high, "unit": "deg", "shown": f"{high:g}"},
    ]
    out["crossing-by-dt"] = [
        {
            "dt_s": row["dt"],
            "crossing_deg": row["crossing"]["value"],
            "shown": row["crossing"]["shown"],
            "shift_deg": row["shift"]["value"],
            "shift_shown": row["shift"]["shown"],
            "bracket_low": row["bracket"][0],
            "bracket_high": row["bracket"][1],
            "right_bracket": _lands(row, exact["bracket"]),
        }
        for row in convergence["crossings"]
    ]
    out["ratio-scan"] = [
        {"amplitude_deg": a, "exact": r, **{f"simulated_dt_{s['dt']:g}": s["ratio"][i] for s in ratio["simulated"]}}
        for i, (a, r) in enumerate(zip(ratio["amplitudes"], ratio["exact"]))
    ]
    out["convergence"] = [
        {"amplitude_deg": item["amplitude"], "dt_s": row["dt"], "period_s": row["period_s"], "exact_period_s": row["exact_period_s"], "relative_error": row["error"]}
        for item in convergence["errors"]
        for row in item["rows"]
    ]
    out["convergence-order"] = [
        {"of": f"relative period error at {item['amplitude']:g} deg", "order": item["order"]["value"], "shown": item["order"]["shown"]}
        for item in convergence["errors"]
    ] + [{"of": "shift of the simulated 1 % crossing", "order": convergence["crossing_order"]["value"], "shown": convergence["crossing_order"]["shown"]}]
    out["misbehaving-calls"] = [
        {"number": number, "what": item["what"], "tool": item["name"], "arguments": json.dumps(item["arguments"]), **outcome_columns(item, lab.PERIOD_KEY)}
        for number, item in enumerate(exercises["misbehaving_calls"], start=1)
    ]
    out["budget"] = [
        {"call": item["call"], "tool": lab.SMALL_ANGLE_TOOL, **outcome_columns(item, lab.PERIOD_KEY)} for item in exercises["budget"]["repeats"]
    ]
    largest = exercises["largest_dt"]
    b_low, b_high = largest["bracket"]
    out["largest-dt"] = [
        {
            "what": what,
            "dt_s": at["dt"]["value"],
            "dt_shown": at["dt"]["shown"],
            f"excess_percent_at_{b_low:g}_deg": at["excess_percent"][0]["value"],
            f"excess_percent_at_{b_high:g}_deg": at["excess_percent"][1]["value"],
            "shown": f"{at['excess_percent'][0]['shown']} % and {at['excess_percent'][1]['shown']} %",
        }
        for what, at in (("largest dt that lands in the bracket", largest["largest"]), ("smallest dt found that does not", largest["outside"]))
    ]
    out["run"] = call_rows(results)
    return out
