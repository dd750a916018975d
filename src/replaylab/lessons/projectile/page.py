"""The projectile lesson's page (results/projectile/index.md), written from results.json alone.

Every number comes from the results; untrusted texts (the agent's words, tool names, arguments,
refusals) are escaped by `replaylab.lessons.markdown`.
"""

from typing import Any

from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, code, name, table, text
from replaylab.lessons.projectile import LESSON, lab
from replaylab.lessons.projectile import tables as lesson_tables
from replaylab.lessons.projectile.judge import evidence


def question(results: dict[str, Any]) -> str:
    speed = results["scans"]["evidence"]["speed"]
    return (
        f"At a launch speed of {md.number(speed, '%g')} m/s, which launch angle throws the lesson's tennis ball "
        "(with air drag) the furthest, to within a degree?"
    )


def label(verdict: dict[str, Any]) -> str:
    """The evidence label of a run's right answer: the ball of its instance (the seed's tennis ball)."""
    return evidence(LESSON.instance(verdict["instance"]).parameters["ball"])


def truth(results: dict[str, Any], verdict: dict[str, Any]) -> str:
    """What the build computed to decide a run's answer (its instance's), in words."""
    best = results["answers"][verdict["instance"]]
    return (f"the build's own converged scan ({md.number(best['low'], '%g')} to {md.number(best['high'], '%g')} degrees in "
            f"steps of {md.number(best['grid_step'], '%g')} degrees, dt halved down to {md.number(best['rows'][-1]['dt'], '%g')} s "
            f"until its best angle stopped moving) puts the best angle at {best['angle']['shown']} degrees")


def located_statement(run: str, where: dict[str, Any]) -> str:
    """Where the run's own experiments locate the maximum (what `supported` is decided from), in words."""
    if not where["located"]:
        return f"Where the experiments of run {name(run)} locate the maximum: nowhere, {text(where['reason'])}."
    dt = md.number(where["smallest_dt"], "%g")
    return (
        f"Where the experiments of run {name(run)} locate the maximum: at the smallest step it used (dt {dt} s), its "
        f"longest throw is at {md.number(where['best']['angle'], '%g')} degrees ({where['best']['range_m']['shown']} m), "
        f"between shorter throws at {md.number(where['below']['angle'], '%g')} degrees ({where['below']['range_m']['shown']} m) "
        f"and {md.number(where['above']['angle'], '%g')} degrees ({where['above']['range_m']['shown']} m); the parabola "
        f"through these three points tops at {where['top']['shown']} degrees."
    )


def experiments_statement(run: str, conclusion: dict[str, Any]) -> list[str]:
    """The seeds' check of the run's two best measured angles (docs/physics.md 1.5), in markdown lines."""
    if not conclusion["checkable"]:
        return [f"The seeds' check of the two best angles run {name(run)} measured: not made, {text(conclusion['reason'])}."]
    low, high = conclusion["bracket"]
    dt = md.number(conclusion["smallest_dt"], "%g")
    best = conclusion["best_angle"]["shown"]
    pair = f"{md.number(low, '%g')} and {md.number(high, '%g')} degrees"
    grid = conclusion["grid"]
    scan = "an independent scan"
    if len(grid) > 1:
        step = grid[1]["angle"] - grid[0]["angle"]
        scan = (
            f"an independent scan ({md.number(grid[0]['angle'], '%g')} to {md.number(grid[-1]['angle'], '%g')} degrees "
            f"in steps of {md.number(step, '%g')} degrees)"
        )
    where = "between" if conclusion["inside"] else "outside"
    lines = [
        f"The seeds' check of the two best angles run {name(run)} measured: at the smallest step it used (dt {dt} s), "
        f"they are {pair}; {scan} at the same dt finds the best angle at {best} degrees, {where} them."
    ]
    label = md.evidence(conclusion["evidence"])
    if label:
        lines += ["", label]
    return lines


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    answer = verdict["answer"]
    said = answer_words(answer) if answer else ""
    lines = md.answer_statement(results, run, verdict, said, truth(results, verdict), label(verdict))
    lines += ["", located_statement(run, verdict["located"])]
    return lines + [""] + md.conclusion_lines(experiments_statement(run, verdict["experiments"]), run, rows, "agent-experiments")


def answer_words(answer: dict[str, Any]) -> str:
    return f"the best angle lies between {md.number(answer['low'], '%g')} and {md.number(answer['high'], '%g')} degrees"


def summary(results: dict[str, Any]) -> list[str]:
    """One line per run for the index page: its answer, whether it is right, whether it is supported."""
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        best = results["answers"][verdict["instance"]]["angle"]["shown"]
        score = md.score_of(results, run)
        answer = verdict["answer"]
        if answer is None:
            lines.append(f"run {name(run)}: no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = "**right**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own experiments" if verdict["supported"] else "not supported by its own experiments"
        line = (f"run {name(run)} answered {md.number(answer['low'], '%g')} to {md.number(answer['high'], '%g')} degrees: "
                f"{decided}, the build's converged scan puts the best angle at {best} degrees; {support}")
        if score["right"]:
            line += f"; **{label(verdict)}**"
        lines.append(line)
    return lines


def _decisions(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    out = [
        "## What the build decided",
        "",
        "The build judges the answer each run submitted with the tool `answer`, never the agent's words, and "
        "judges it twice. **Right**: the best angle of the build's own converged scan lies between the answer's "
        "two angles (adjacent whole degrees: the tool refuses any other pair). **Supported**: the run's own "
        f"{code(lab.RANGE_TOOL)} calls at the question's speed and at the smallest dt it used, recomputed, locate "
        "the maximum in the answer: its longest throw at that dt is at an angle of the answer, it measured a shorter "
        "throw on each side of that angle, and the top of the parabola through those three points lies in the "
        "answer. A right answer its experiments do not support, and a supported answer that is wrong, are named as such.",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, verdict: run_lines(results, run, verdict, rows))


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
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


def _figure(results: dict[str, Any]) -> str:
    evidence = results["scans"]["evidence"]
    angles = [row["angle"] for row in evidence["rows"]]
    dt = md.number(evidence["dt"], "%g")
    span = f"{md.number(min(angles), '%g')} to {md.number(max(angles), '%g')} degrees" if angles else "(none)"
    caption = (
        f"The agent's evidence. Line: the build's independent scan, angles {span} at dt {dt} s. "
        f"Points: the agent's calls with dt at most {dt} s, as recomputed by this build. "
        "Right: close-up near the maximum, with the build's fine scan at the agent's smallest dt, each agent's answer "
        "(shaded) and the best angle of the build's converged scan (dotted). Only the runs of the seed's question are "
        "drawn: the scans are of its ball, speed and launch height."
    )
    return md.figure("evidence", "The agent's evidence: range against launch angle", caption)


def page(results: dict[str, Any]) -> str:
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
        tables=(lesson_tables.TABLES, {"agent-experiments", "misbehaving-calls", "step-bounds", "new-tool"}, scan_table),
        figure=_figure(results),
    )
