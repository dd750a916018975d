"""The review lesson's page (results/review/index.md), written from results.json alone.

Per reviewer's run: its answer, right or wrong against the build's own checks of its own instance's
pieces, and whether its own checks support it. Per group of reviewer runs (one group name, one model) and per piece: each check
each reviewer ran (measured %.3g, tolerance %g, as shown by the judge), the checks nobody ran, the
conflicts and the decision. A rejection is numerically verified; "not rejected" only speaks of the
checks that were run.
"""

from collections.abc import Sequence
from typing import Any

from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, name, table, text
from replaylab.lessons.review import LESSON
from replaylab.lessons.review import tables as lesson_tables
from replaylab.lessons.review.judge import DEMONSTRATION_GROUP, DRAWN_NAME, EVIDENCE_ANSWER


def question(results: dict[str, Any]) -> str:
    reviewers = len(results["allowlists"])
    pieces = len({row["candidate"] for row in results["scans"]["error"]["rows"]})
    return (
        f"Each of {reviewers} reviewer agents, with its own tools, checks the same {pieces} pieces of code, which claim "
        "to be the same integrator. Which piece does the build reject, and can a reviewer talk its way past a failed check?"
    )


def _pieces(results: dict[str, Any]) -> dict[int, str]:
    return lesson_tables.piece_names(results)


def _drawn(resolution: dict[str, Any]) -> bool:
    """Whether a resolution is of a drawn instance's piece (named by number only: its faults are hidden)."""
    instance = resolution.get("instance")
    return instance is not None and resolution["name"] == DRAWN_NAME.format(candidate=resolution["candidate"], instance=instance)


def piece_label(resolution: dict[str, Any]) -> str:
    """A piece as the pages name it: the seed's by what it is, a drawn instance's by number and instance."""
    piece, instance = resolution["candidate"], resolution.get("instance")
    if _drawn(resolution):
        return f"piece {piece} of instance {name(instance)}"
    return f"piece {piece} ({text(resolution['name'])})"


def reviewer_order(results: dict[str, Any], group: dict[str, Any]) -> list[str]:
    """The reviewers of a group in the order of the lesson's variants."""
    present = group["reviewers"]
    order = [v for v in results["allowlists"] if v in present]
    return order + sorted(v for v in present if v not in order)


def _outcome(passed: bool) -> str:
    return "passed" if passed else "failed"


def check_text(verdict: dict[str, Any]) -> str:
    return f"{verdict['check']} {_outcome(verdict['passed'])} (measured {verdict['measured']['shown']}, tolerance {verdict['tolerance']['shown']})"


def decision_text(resolution: dict[str, Any], reviewers: Sequence[str], verdicts: Sequence[dict[str, Any]]) -> str:
    piece = resolution["candidate"]
    if not resolution["rejected"]:
        return f"**Decision: piece {piece} is not rejected by the checks that were run.** Passing them does not prove the code correct."
    failed = md.join_words(resolution["failed"])
    flagged = md.join_words(resolution["flagged_by"])
    missing: list[str] = []
    for check in resolution["failed"]:
        ran = {v["reviewer"] for v in verdicts if v["candidate"] == piece and v["check"] == check}
        silent = [r for r in reviewers if r not in ran]
        if silent:
            missing.append(f"{md.join_words(silent)} did not run {check}")
    line = f"**Decision: piece {piece} is rejected because of {failed}**, flagged by {flagged}"
    if missing:
        line += f" ({'; '.join(missing)})"
    line += ". A failed recomputed check stands, whoever else passed the piece."
    return line


def group_lines(results: dict[str, Any], group_name: str, group: dict[str, Any]) -> list[str]:
    reviewers = reviewer_order(results, group)
    runs = ", ".join(f"{r}: " + ", ".join(f"run {name(run)}" for run in group["reviewers"][r]) for r in reviewers)
    instances = md.join_words([name(i) for i in group.get("instances", [])])
    out = [f"### Group {name(group['group'])} (messages produced by: {text(group['model'])})", "",
           f"Reviewers and their runs: {runs}." + (f" Instance: {instances}." if instances else ""), ""]
    for resolution in group["resolution"]:
        piece, instance = resolution["candidate"], resolution.get("instance")
        verdicts = [v for v in group["verdicts"] if v.get("instance") == instance]
        out += [f"#### Piece {piece} of instance {name(instance)}" if _drawn(resolution) else f"#### Piece {piece}: {text(resolution['name'])}", ""]
        for reviewer in reviewers:
            mine = [v for v in verdicts if v["reviewer"] == reviewer and v["candidate"] == piece]
            checks = "; ".join(check_text(v) for v in mine) if mine else "ran no check on this piece"
            out.append(f"- {reviewer}: {checks}")
        out.append(f"- Checks nobody ran: {md.join_words(resolution['not_covered'])}")
        out.append(f"- Conflicts (a check both passed and failed): {md.join_words(resolution['conflicts'])}")
        out += ["", decision_text(resolution, reviewers, verdicts), ""]
        if resolution["evidence"]:
            out += [md.evidence(resolution["evidence"]), ""]
    return out


def answer_words(answer: dict[str, Any]) -> str:
    return "; ".join(
        f"piece {piece} fails {md.join_words(answer[f'piece_{piece}_failed'])}" if answer[f"piece_{piece}_failed"]
        else f"piece {piece} fails none of its checks"
        for piece in (1, 2)
    )


def truth(results: dict[str, Any], verdict: dict[str, Any]) -> str:
    failures = results["answers"][verdict["instance"]]["failures"]
    return "the build's own checks of this reviewer's remit fail " + "; ".join(
        f"on piece {piece}: {md.join_words([c for c in failures[piece] if c in verdict['remit']])}" for piece in sorted(failures)
    )


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any]) -> list[str]:
    answer = verdict["answer"]
    lines = md.answer_statement(results, run, verdict, answer_words(answer) if answer else "", truth(results, verdict),
                                EVIDENCE_ANSWER if answer else None)
    checks = "; ".join(f"piece {v['candidate']} {check_text(v)}" for v in verdict["verdicts"]) or "none"
    return [*lines, "", f"The checks run {name(run)} ran, as recomputed by this build: {checks}.", ""]


def summary(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        answer, score = verdict["answer"], md.score_of(results, run)
        if answer is None:
            lines.append(f"run {name(run)} ({verdict['task']}): no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = f"**right**; **{EVIDENCE_ANSWER}**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own checks" if verdict["supported"] else "not supported by its own checks"
        lines.append(f"run {name(run)} ({verdict['task']}) answered {answer_words(answer)}: {decided}; {support}")
    for group in results["groups"].values():
        for r in group["resolution"]:
            where = f"group {name(group['group'])} ({text(group['model'])}), {piece_label(r)}"
            if r["rejected"]:
                lines.append(f"{where}: rejected because of {md.join_words(r['failed'])}, flagged by "
                             f"{md.join_words(r['flagged_by'])}; **{r['evidence']}**")
            else:
                lines.append(f"{where}: not rejected by the checks that were run")
    return lines


def _decisions(results: dict[str, Any]) -> list[str]:
    out = [
        "## What the build decided",
        "",
        "The build judges the answer each reviewer submitted with the tool `answer` (per piece, the checks of its "
        "remit that fail), never the reviewer's words, and judges it twice. **Right**: each list holds exactly the "
        "checks of its remit that fail when the build runs them itself. **Supported**: the reviewer ran every "
        "check of its remit on both pieces, and named as failed exactly those whose recomputed results failed.",
        "",
        "### Each reviewer's answer",
        "",
    ]
    out += md.judged_entries(results["verdicts"], lambda run, verdict: run_lines(results, run, verdict))
    out += [
        "### The decision on each piece, per group of reviewers",
        "",
        "Each verdict comes from a check call a reviewer made and the build recomputed. Per piece, a check with at "
        "least one failed recomputed verdict rejects the piece, whatever the other reviewers say: there is no vote. "
        "A group is the runs of one group name made by one model; runs of two models are never decided together.",
        "",
    ]
    return out + md.judged_entries(results["groups"], lambda key, group: group_lines(results, key, group), what="group")


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exercises = results["exercises"]
    pieces = _pieces(results)
    out = ["## Demonstrations and exercises", ""]

    boast = exercises["boasting_reviewer"]
    if boast:
        out += [
            "### A reviewer cannot talk its way past the build",
            "",
            "A scripted reviewer runs one check and then writes a verdict of its own:",
            "",
            md.quote(boast["text"], f"Reviewer's words ({text(boast['text_label'])}):"),
            "",
            "What the build reads from the recomputed result:",
            "",
        ]
        out += [
            f"- {v['reviewer']} reviewer, piece {v['candidate']}, {v['check']}: **{v['summary']}**" for v in boast["verdicts"]
        ]
        out += [""]

    strict = [(v["group"], run, v["strict_replay"]) for run, v in results["verdicts"].items() if "strict_replay" in v]
    out += ["### The replay keeps the page honest", ""]
    if not strict:
        out += [f"*(not run in this build: it replays the runs of the group {name(DEMONSTRATION_GROUP)}, and there is none)*", ""]
    for group_name, run, item in strict:
        exact = md.number(item["exact"], "%g")
        if item["caught"]:
            out += [
                f"Run {name(run)} (group {name(group_name)}) replayed with the exact-check tolerance made {exact}: "
                "the pass flag of a recorded result no longer matches, and the replay stops with:",
                "",
                md.fenced(item["text"]),
                "",
            ]
        else:
            out += [f"Run {name(run)} replayed with the exact-check tolerance made {exact}: **not caught**.", ""]

    every = rows["every-check"]
    if every:
        out += [
            "### Exercise: every check, no reviewer",
            "",
            f"All {len({r['check'] for r in every})} checks of the contract on {len({r['candidate'] for r in every})} "
            "pieces, run by the build directly (details as the check reports them):",
            "",
        ]
        shown_rows = [
            {
                "piece": r["candidate"],
                "check": r["check"],
                "outcome": Md(_outcome(r["passed"] == "true")),
                "measured": Md(md.text(r["measured_shown"])),
                "tolerance": Md(md.text(r["tolerance_shown"])),
                "details": r["details_shown"],
            }
            for r in every
        ]
        out += [
            table(
                shown_rows,
                [("piece", "piece"), ("check", "check"), ("outcome", "outcome"), ("measured", "measured"), ("tolerance", "tolerance"), ("details", "details")],
            ),
            "",
        ]
        failing = [r for r in every if r["passed"] != "true"]
        if failing:
            listed = md.join_words([f"{r['check']} for piece {r['candidate']}" for r in failing])
            out += [f"Failed: {listed}; every other check passes.", ""]
        else:
            out += ["Every check passes on both pieces.", ""]

    conflict = exercises["conflict"]
    if conflict:
        res = conflict["resolution"]
        out += [
            "### Exercise: a conflict",
            "",
            f"**Note: {text(conflict['note'])}.** These {len(conflict['verdicts'])} verdicts only "
            "exercise the rule of the resolution:",
            "",
        ]
        made = [
            {
                "reviewer": v["reviewer"],
                "piece": v["candidate"],
                "check": v["check"],
                "outcome": Md(_outcome(v["passed"])),
                "measured": Md(md.text(v["measured"]["shown"])),
                "tolerance": Md(md.text(v["tolerance"]["shown"])),
            }
            for v in conflict["verdicts"]
        ]
        out += [
            table(made, [("reviewer", "reviewer"), ("piece", "piece"), ("check", "check"), ("outcome", "outcome"), ("measured", "measured"), ("tolerance", "tolerance")]),
            "",
            f"Resolution of piece {res['candidate']} ({text(pieces.get(res['candidate'], res['name']))}): "
            f"{'rejected' if res['rejected'] else 'not rejected'}; failed: {md.join_words(res['failed'])}; "
            f"conflicts: {md.join_words(res['conflicts'])}; flagged by {md.join_words(res['flagged_by'])}, "
            f"clear by {md.join_words(res['clear_by'])}. The failure stands although another reviewer passed the same check.",
            "",
        ]
    return out


def _figure(results: dict[str, Any]) -> str:
    scan = results["scans"]["error"]
    periods = md.number(scan["periods"], "%d")
    steps = [row["steps_per_period"] for row in scan["rows"]]
    span = f"{md.number(min(steps), '%d')} to {md.number(max(steps), '%d')}" if steps else "(none)"
    caption = (
        f"Lines: the largest distance to the exact oscillator in the phase plane (x, v/ω) over {periods} periods, "
        f"against steps per period ({span}, log-log), computed by this build for both pieces of the seed's own question. Points: the "
        "evidence reviewer's oscillator_error calls on those pieces, as recomputed by this build."
    )
    return md.figure("error", "Error against the exact oscillator, both pieces", caption)


def _runs_order(results: dict[str, Any]) -> list[str]:
    runs = results["runs"]
    variants = list(results["allowlists"])
    return sorted(runs, key=lambda r: (runs[r]["group"], variants.index(runs[r]["variant"]) if runs[r]["variant"] in variants else len(variants), r))


def page(results: dict[str, Any]) -> str:
    rows = lesson_tables.tables(results)
    pieces = _pieces(results)
    scan_rows = [
        {"piece": r["candidate"], "n": r["steps_per_period"], "error": Md(md.number(r["error_m"]))} for r in rows["error-scan"]
    ]
    periods = md.number(results["scans"]["error"]["periods"], "%d")
    scan_table = [
        f"Table `error-scan`: largest phase-plane distance to the exact oscillator over {periods} periods, "
        "in m, computed by this build (6 significant digits):",
        table(scan_rows, [("piece", "piece"), ("n", "steps per period"), ("error", "error (m)")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="The pieces under review in the seed's own question: "
        + "; ".join(f"piece {p}, {text(n)}" for p, n in sorted(pieces.items()))
        + ". Every piece claims to be symplectic Euler, first order, with bounded energy. Each other instance "
        "of the family has its own two pieces, drawn from a catalogue of faults (a wrong clock, hidden state, a wrong "
        "constant-force response, a wrong order, unbounded energy, two of these, or a near miss that passes); they "
        "are named by number only, since their faults are hidden. The checks and their tolerances are fixed in the "
        "code before any reviewer runs.",
        decisions=_decisions(results),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"every-check", "conflict-exercise", "boasting-reviewer"}, scan_table),
        figure=_figure(results),
        runs_order=_runs_order(results),
        allowlist_intro="Each reviewer is a separate run with its own allowlist (its variant).",
    )
