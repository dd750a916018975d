"""The review lesson's tables, read from results.json (written as results/review/tables/<name>.csv).

Rows are flat dicts of str, int and float; floats at full precision, with "..._shown" columns
holding the texts the page shows (measured %.3g, tolerance %g, as chosen by the judge).

- answers: per reviewer's run, its answer as submitted and both judgements (right, supported);
- verdicts: every verdict of every reviewer, per group (and instance), read from recomputed tool results;
- resolution: the decision on each piece, per group and instance (and the conflict exercise's, marked
  as made by hand);
- every-check: the five checks on the seed's two pieces, no reviewer involved (the exercise);
- error-scan: the error of the seed's two pieces against the exact oscillator against steps per
  period (the figure's lines);
- boasting-reviewer, conflict-exercise: the demonstrations;
- strict-replay: per run of the demonstration group's physics reviewer, the replay with a stricter
  exact-check tolerance (where it stopped, the recorded and the recomputed value);
- run: every tool call of every run with its recomputed result.
"""

import json
from typing import Any

from replaylab.lessons.markdown import answer_rows, call_rows, flag
from replaylab.lessons.review.lab import PIECES

TABLES = (
    "answers",
    "verdicts",
    "resolution",
    "every-check",
    "error-scan",
    "boasting-reviewer",
    "conflict-exercise",
    "strict-replay",
    "run",
)


CONFLICT_GROUP = "conflict exercise (verdicts made by hand)"


def verdict_row(verdict: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "reviewer": verdict["reviewer"],
        "candidate": verdict["candidate"],
        "check": verdict["check"],
        "passed": flag(verdict["passed"]),
        "measured": verdict["measured"]["value"] if verdict["measured"]["value"] is not None else "",
        "measured_shown": verdict["measured"]["shown"],
        "tolerance": verdict["tolerance"]["value"],
        "tolerance_shown": verdict["tolerance"]["shown"],
    }


def resolution_row(resolution: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "instance": resolution.get("instance", ""),  # none for the conflict exercise's
        "candidate": resolution["candidate"],
        "name": resolution["name"],
        "rejected": flag(resolution["rejected"]),
        "failed": ";".join(resolution["failed"]),
        "flagged_by": ";".join(resolution["flagged_by"]),
        "clear_by": ";".join(resolution["clear_by"]),
        "not_covered": ";".join(resolution["not_covered"]),
        "conflicts": ";".join(resolution["conflicts"]),
        "evidence": resolution.get("evidence") or "",  # none for the conflict exercise's
    }


def strict_replay_row(group: str, run: str, item: dict[str, Any]) -> dict[str, Any]:
    """The strict-tolerance replay of one run: where it stopped and both values, or not caught."""
    row: dict[str, Any] = {"group": group, "run": run, "exact": item["exact"], "caught": flag(item["caught"])}
    fields = ("message", "call", "tool", "key", "recorded", "recomputed", "text")
    return row | {field: item[field] if item["caught"] else "" for field in fields}


def details_shown(details: dict[str, Any]) -> str:
    return "; ".join(f"{key} {item['shown']}" for key, item in details.items())


def piece_names(results: dict[str, Any]) -> dict[int, str]:
    """{piece: name} of the seed's two pieces, those of the scan and the exercise (a drawn instance's
    pieces are named in its own groups' resolutions, by number only)."""
    return {piece: candidate.name for piece, candidate in PIECES.items()}


def tables(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    exercises = results["exercises"]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    out["answers"] = answer_rows(results)
    for judged in results["groups"].values():
        out["verdicts"] += [verdict_row(v, group=judged["group"], model=judged["model"], instance=v.get("instance", ""))
                            for v in judged["verdicts"]]
        out["resolution"] += [resolution_row(r, group=judged["group"], model=judged["model"]) for r in judged["resolution"]]
    for run, verdict in results["verdicts"].items():
        if "strict_replay" in verdict:  # the demonstration group's physics reviewer only
            out["strict-replay"].append(strict_replay_row(verdict["group"], run, verdict["strict_replay"]))
    out["every-check"] = [
        {
            "candidate": row["candidate"],
            "check": row["check"],
            "passed": flag(row["passed"]),
            "measured": row["measured"]["value"],
            "measured_shown": row["measured"]["shown"],
            "tolerance": row["tolerance"]["value"],
            "tolerance_shown": row["tolerance"]["shown"],
            "details_shown": details_shown(row["details"]),
            "details": json.dumps({k: item["value"] for k, item in row["details"].items()}),
        }
        for row in exercises["every_check"]
    ]
    scan = results["scans"]["error"]
    names = piece_names(results)
    out["error-scan"] = [
        {
            "candidate": row["candidate"],
            "name": names.get(row["candidate"], ""),
            "steps_per_period": row["steps_per_period"],
            "periods": scan["periods"],
            "error_m": row["error"],
        }
        for row in scan["rows"]
    ]
    boast = exercises["boasting_reviewer"]
    out["boasting-reviewer"] = [{**verdict_row(v), "summary": v["summary"], "text": boast["text"]} for v in boast["verdicts"]]
    conflict = exercises["conflict"]
    out["conflict-exercise"] = [verdict_row(v, note=conflict["note"]) for v in conflict["verdicts"]]
    out["resolution"].append(resolution_row(conflict["resolution"], group=CONFLICT_GROUP, model=""))
    out["run"] = call_rows(results)
    return out
