"""The review lesson's tables, read from results.json (written as results/review/tables/<name>.csv).

Rows are flat dicts of str, int and float; floats at full precision, with "..._shown" columns
holding the texts the page shows (measured %.3g, tolerance %g, as chosen by the judge).

- verdicts: every verdict of every reviewer, per group, read from recomputed tool results;
- resolution: the decision on each piece, per group (and the conflict exercise's, marked as made by hand);
- every-check: the five checks on both pieces, no reviewer involved (the exercise);
- error-scan: the error against the exact oscillator against steps per period (the figure's lines);
- boasting-reviewer, conflict-exercise, strict-replay: the demonstrations;
- run: every tool call of every run with its recomputed result.
"""

import json

from replaylab.lessons.markdown import call_rows, flag

TABLES = (
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


def verdict_row(verdict, **extra):
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


def resolution_row(resolution, **extra):
    return {
        **extra,
        "candidate": resolution["candidate"],
        "name": resolution["name"],
        "rejected": flag(resolution["rejected"]),
        "failed": ";".join(resolution["failed"]),
        "flagged_by": ";".join(resolution["flagged_by"]),
        "clear_by": ";".join(resolution["clear_by"]),
        "not_covered": ";".join(resolution["not_covered"]),
        "conflicts": ";".join(resolution["conflicts"]),
        "evidence": resolution.get("evidence") or "",
    }


def details_shown(details):
    return "; ".join(f"{key} {item['shown']}" for key, item in details.items())


def piece_names(results):
    names = {}
    for group in results.get("verdicts", {}).values():
        for resolution in group.get("resolution", []):
            names.setdefault(resolution["candidate"], resolution["name"])
    return names


def tables(results):
    exercises = results.get("exercises", {})
    out = {name: [] for name in TABLES}
    for group, judged in results.get("verdicts", {}).items():
        out["verdicts"] += [verdict_row(v, group=group) for v in judged.get("verdicts", [])]
        out["resolution"] += [resolution_row(r, group=group) for r in judged.get("resolution", [])]
        out["strict-replay"] += [
            {"group": group, "run": run, "exact": item["exact"], "caught": flag(item["caught"]), "message": item["message"]}
            for run, item in judged.get("strict_replays", {}).items()
        ]
    out["every-check"] = [
        {
            "candidate": row["candidate"],
            "check": row["check"],
            "passed": flag(row["passed"]),
            "measured": row["measured"]["value"],
            "measured_shown": row["measured"]["shown"],
            "tolerance": row["tolerance"]["value"],
            "tolerance_shown": row["tolerance"]["shown"],
            "details_shown": details_shown(row.get("details", {})),
            "details": json.dumps({k: item["value"] for k, item in row.get("details", {}).items()}),
        }
        for row in exercises.get("every_check", [])
    ]
    scan = results.get("scans", {}).get("error", {})
    names = piece_names(results)
    out["error-scan"] = [
        {
            "candidate": row["candidate"],
            "name": names.get(row["candidate"], ""),
            "steps_per_period": row["steps_per_period"],
            "periods": scan.get("periods"),
            "error_m": row["error"],
        }
        for row in scan.get("rows", [])
    ]
    boast = exercises.get("boasting_reviewer", {})
    out["boasting-reviewer"] = [
        {**verdict_row(v), "summary": v.get("summary", ""), "text": boast.get("text", "")} for v in boast.get("verdicts", [])
    ]
    conflict = exercises.get("conflict", {})
    out["conflict-exercise"] = [verdict_row(v, note=conflict.get("note", "")) for v in conflict.get("verdicts", [])]
    if conflict.get("resolution"):
        out["resolution"].append(resolution_row(conflict["resolution"], group=CONFLICT_GROUP))
    out["run"] = call_rows(results)
    return out
