"""The hunter lesson's tables, read from results.json (written as results/hunter/tables/<name>.csv).

Rows are flat dicts of str, int and float; floats at full precision, with a "shown" column where
the page rounds.

- drift-scan: largest energy drift against steps per period, per method (the figure's lines);
- answers: per run, its answer as submitted and both judgements (right, supported);
- verdicts: per run, what its experiments show about its claim (and the exercise's stricter claim);
- words-ignored: per run of the demonstration group, the verdict after its words or stored results were changed;
- boundary: the attempts through the allowlist and the budget demonstration;
- false-claim-boundary: the smallest steps per period that keep symplectic Euler within the limit;
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.hunter import lab
from replaylab.lessons.markdown import answer_rows, call_rows, outcome_columns

TABLES = ("drift-scan", "answers", "verdicts", "words-ignored", "boundary", "false-claim-boundary", "run")


def _experiment(prefix: str, item: dict[str, Any] | None) -> dict[str, Any]:
    if item is None:
        return {f"{prefix}_method": "", f"{prefix}_steps_per_period": "", f"{prefix}_periods": "", f"{prefix}_value": "", f"{prefix}_shown": ""}
    return {
        f"{prefix}_method": item["method"],
        f"{prefix}_steps_per_period": item["steps_per_period"],
        f"{prefix}_periods": item["periods"],
        f"{prefix}_value": item["value"]["value"],
        f"{prefix}_shown": item["value"]["shown"],
    }


def verdict_row(run: str, which: str, verdict: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": run,
        "which": which,
        "claim": verdict["claim"],
        "statement": verdict["statement"],
        "limit": verdict["limit"],
        "tested": verdict["tested"],
        "outcome": verdict["outcome"],
        **_experiment("witness", verdict["witness"]),
        **_experiment("closest", verdict["closest"]),
        "evidence": verdict["evidence"] or "",
    }


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    scans = results["scans"]
    drift = scans["drift"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["drift-scan"] = [
        {"method": row["method"], "steps_per_period": row["steps_per_period"], "periods": drift["periods"], "max_energy_drift": row["max_energy_drift"]}
        for row in drift["rows"]
    ]
    out["answers"] = answer_rows(results)
    for run, verdicts in results["verdicts"].items():
        out["verdicts"].append(verdict_row(run, "experiments", verdicts["experiments"]))
        if "stricter_claim" in verdicts:  # a demonstration run of a claim without a counterexample only
            out["verdicts"].append(verdict_row(run, "stricter claim (exercise)", verdicts["stricter_claim"]))
        out["words-ignored"] += [
            {"run": run, "probe": probe["probe"], "outcome": probe["outcome"], "verdict_unchanged": verdicts["experiments"]["outcome"]}
            for probe in verdicts.get("words_ignored", [])  # the demonstration group's runs only
        ]
    boundary = results["exercises"]["boundary"]
    out["boundary"] = [
        {"part": "attempt", "number": number, "what": item["what"], "arguments": json.dumps(item["arguments"]), **outcome_columns(item, lab.RESULT_KEY)}
        for number, item in enumerate(boundary["attempts"], start=1)
    ] + [
        {
            "part": "same valid experiment on a fresh allowlist",
            "number": item["call"],
            "what": f"call {item['call']}",
            "arguments": json.dumps(boundary["attempts"][0]["arguments"]),
            **outcome_columns(item, lab.RESULT_KEY),
        }
        for item in boundary["repeats"]
    ]
    fcb = scans["false_claim_boundary"]
    if fcb["smallest"] is not None:
        out["false-claim-boundary"].append(
            {
                "quantity": "smallest steps per period within the limit",
                "steps_per_period": fcb["smallest"],
                "periods": fcb["periods"],
                "limit": fcb["limit"],
                "max_energy_drift": fcb["drift_at_smallest"]["value"],
                "shown": fcb["drift_at_smallest"]["shown"],
            }
        )
        below = fcb.get("drift_below")  # absent when the smallest is the domain's first
        if below:
            out["false-claim-boundary"].append(
                {
                    "quantity": "one step per period fewer",
                    "steps_per_period": below["steps_per_period"],
                    "periods": fcb["periods"],
                    "limit": fcb["limit"],
                    "max_energy_drift": below["value"],
                    "shown": below["shown"],
                }
            )
    out["run"] = call_rows(results)
    return out
