"""The projectile lesson's page (results/projectile/index.md), written from results.json alone.

Every number comes from the results; untrusted texts (the agent's words, tool names, arguments,
refusals) are escaped by `replaylab.lessons.markdown`.
"""

from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, code, name, table, text
from replaylab.lessons.projectile import LESSON, lab
from replaylab.lessons.projectile import tables as lesson_tables


def question(results):
    speed = results["scans"]["evidence"]["speed"]
    return (
        f"At a launch speed of {md.number(speed, '%g')} m/s, which launch angle throws the lesson's tennis ball "
        "(with air drag) the furthest, to within a degree?"
    )


def conclusion_statement(run, conclusion):
    """What the build decided about the agent's conclusion in one run (markdown lines)."""
    if not conclusion["checkable"]:
        return [
            f"**Run {name(run)}: the agent's conclusion is not checkable**: {text(conclusion['reason'])}. "
            "This is not a result (no evidence label)."
        ]
    low, high = conclusion["bracket"]
    dt = md.number(conclusion["smallest_dt"], "%g")
    best = conclusion["best_angle"]["shown"]
    bracket = f"{md.number(low, '%g')} to {md.number(high, '%g')} degrees"
    grid = conclusion["grid"]
    scan = "an independent scan"
    if len(grid) > 1:
        step = grid[1]["angle"] - grid[0]["angle"]
        scan = (
            f"an independent scan ({md.number(grid[0]['angle'], '%g')} to {md.number(grid[-1]['angle'], '%g')} degrees "
            f"in steps of {md.number(step, '%g')} degrees)"
        )
    if conclusion["inside"]:
        lines = [
            f"**Run {name(run)}: the agent's conclusion holds.** At the smallest step it used (dt {dt} s), its two "
            f"best angles bracket {bracket}; {scan} at the same dt finds the best "
            f"angle at {best} degrees, inside that bracket."
        ]
    else:
        lines = [
            f"**Run {name(run)}: the scan refutes the agent's bracket.** At the smallest step it used (dt {dt} s), "
            f"its two best angles bracket {bracket}; {scan} at the same dt finds the "
            f"best angle at {best} degrees, outside that bracket."
        ]
    label = md.evidence(conclusion["evidence"])
    if label:
        lines += ["", label]
    return lines


def summary(results):
    """One line per run for the index page: the decision and its evidence label."""
    lines = []
    for run, verdict in results["verdicts"].items():
        conclusion = verdict["conclusion"]
        if not conclusion["checkable"]:
            lines.append(f"run {name(run)}: the agent's conclusion is not checkable ({text(conclusion['reason'])}); not a result")
            continue
        low, high = conclusion["bracket"]
        where = "inside" if conclusion["inside"] else "outside"
        verdict_text = "holds" if conclusion["inside"] else "is refuted by the build's scan"
        line = (
            f"run {name(run)}: the agent's conclusion (best angle between {md.number(low, '%g')} and "
            f"{md.number(high, '%g')} degrees) {verdict_text}: the build's scan puts it at "
            f"{conclusion['best_angle']['shown']} degrees, {where} the bracket"
        )
        if conclusion["evidence"]:
            line += f"; **{conclusion['evidence']}**"
        lines.append(line)
    return lines


def _decisions(results, rows):
    out = [
        "## What the build decided",
        "",
        "The build decides from numbers it recomputes, never from the agent's words. For each run it "
        f"takes the smallest dt the agent used with {code(lab.RANGE_TOOL)}, the two angles with the largest "
        "recomputed ranges at that dt (the agent's bracket), and scans a fine grid of angles around the "
        "bracket at the same dt. If the scan's best angle lies inside the bracket, the agent's conclusion holds.",
        "",
    ]
    return out + md.judged_entries(
        results["verdicts"], lambda run, verdict: md.conclusion_lines(conclusion_statement(run, verdict["conclusion"]), run, rows))


def _demos(results, rows):
    exercises = results["exercises"]
    verdicts = results["verdicts"]
    out = ["## Demonstrations and exercises", ""]

    calls = [
        {
            "what": r["what"],
            "call": md.call_text(r["tool"], item["arguments"]),
            "outcome": Md("ran: " + md.text(f"{next(iter(item['content']))} = {r['shown']}"))
            if item["ok"]
            else Md("refused: " + md.cell(r["error"])),
        }
        for r, item in zip(rows["misbehaving-calls"], exercises["misbehaving_calls"])
    ]
    out += [
        "### Misbehaving calls",
        "",
        f"{len(calls)} calls sent through a fresh allowlist, as a careless or hostile agent might send them. Only "
        "the valid one runs the simulation; the others are refused with the text the agent would read.",
        "",
    ]
    out += [table(calls, [("what", "what"), ("call", "call"), ("outcome", "outcome")]), ""]

    demonstrated = {run: verdict["rough_ball"] for run, verdict in verdicts.items() if "rough_ball" in verdict}
    out += ["### A changed simulation is caught", ""]
    if not demonstrated:
        out += ["*(not run in this build: it replays the runs of the reference group, and there is none)*", ""]
    for run, rough in demonstrated.items():
        factor = md.number(rough["drag_factor"], "%g")
        if rough["caught"]:
            out += [
                f"Run {name(run)} replayed against a ball with {factor} times the drag constant: the replay "
                "stops at the first result that differs from the recording, with this message:",
                "",
                md.fenced(rough["text"]),
                "",
            ]
        else:
            out += [
                f"Run {name(run)} replayed against a ball with {factor} times the drag constant: **not caught** "
                "(every result stayed within the replay tolerance).",
                "",
            ]

    bounds = exercises["step_bounds"]
    if bounds:
        out += [
            "### Exercise: step bounds",
            "",
            f"The range at {md.number(bounds['angle'], '%g')} degrees with the smallest and the largest dt the "
            f"allowlist accepts ({md.number(bounds['fine_dt'], '%g')} s and {md.number(bounds['coarse_dt'], '%g')} s): "
            f"{bounds['fine_m']['shown']} m and {bounds['coarse_m']['shown']} m, a difference of "
            f"{bounds['difference_m']['shown']} m. The step size matters at the scale of the question.",
            "",
            table(rows["step-bounds"], [("quantity", "quantity"), ("dt_s", "dt (s)"), ("shown", "range (m)")]),
            "",
        ]

    new_tool = rows["new-tool"]
    if new_tool:
        out += [
            "### Exercise: a new tool",
            "",
            f"{code(lab.FLIGHT_TIME_TOOL)} added to the allowlist with the same bounds as the other tools:",
            "",
        ]
        shown_rows = [
            {
                "call": md.call_text(r["tool"], item["arguments"]),
                "outcome": Md(f"{lab.TIME_KEY} = {r['shown']} s") if item["ok"] else Md("refused: " + md.cell(r["error"])),
            }
            for r, item in zip(new_tool, exercises["new_tool"])
        ]
        out += [table(shown_rows, [("call", "call"), ("outcome", "outcome")]), ""]
    return out


def _figure(results):
    evidence = results["scans"]["evidence"]
    angles = [row["angle"] for row in evidence["rows"]]
    dt = md.number(evidence["dt"], "%g")
    span = f"{md.number(min(angles), '%g')} to {md.number(max(angles), '%g')} degrees" if angles else "(none)"
    caption = (
        f"The agent's evidence. Line: the build's independent scan, angles {span} at dt {dt} s. "
        f"Points: the agent's calls with dt at most {dt} s, as recomputed by this build. "
        "Right: close-up near the maximum, with the build's fine scan at the agent's smallest dt and its best angle."
    )
    return md.figure("evidence", "The agent's evidence: range against launch angle", caption)


def page(results):
    rows = lesson_tables.tables(results)
    evidence = results["scans"]["evidence"]
    scan_rows = [{"angle": r["angle_deg"], "range": Md(md.number(r["range_m"]))} for r in rows["evidence-scan"]]
    scan_table = [
        f"Table `evidence-scan`: the independent scan of the figure (speed {md.number(evidence['speed'], '%g')} m/s, "
        f"dt {md.number(evidence['dt'], '%g')} s, ranges to 6 significant digits):",
        table(scan_rows, [("angle", "angle (deg)"), ("range", "range (m)")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="An agent (a language model, a program, or a person standing in for one) may only call the simulation "
        "through an allowlist. This page shows what it may do, what it did, and what the build decided from "
        "numbers it recomputed itself.",
        decisions=_decisions(results, rows),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"agent-conclusion", "misbehaving-calls", "step-bounds", "new-tool"}, scan_table),
        figure=_figure(results),
    )
