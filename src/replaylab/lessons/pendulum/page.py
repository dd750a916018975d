"""The pendulum lesson's page (results/pendulum/index.md), written from results.json alone.

Every number comes from the results; untrusted texts (the agent's words, tool names, arguments,
refusals) are escaped by `replaylab.lessons.markdown`.
"""

from collections.abc import Sequence
from typing import Any

from replaylab.lessons import counted
from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, code, name, table, text
from replaylab.lessons.pendulum import LESSON, lab
from replaylab.lessons.pendulum import tables as lesson_tables
from replaylab.lessons.pendulum.judge import EVIDENCE

READ_OFF = (
    "The simulation steps θ'' = −(g/L) sin θ with symplectic Euler (first ω += −(g/L) sin θ · dt, then "
    "θ += ω · dt) from θ0 at rest, and reads the period off the angle alone: a downward zero crossing is a "
    "step from θ > 0 to θ ≤ 0, placed by linear interpolation between the two steps, and the period is the "
    "time from the first downward crossing to the second. The tool, the build's scans and its exercises "
    "all read it so."
)


def _degrees(value: float) -> str:
    return md.number(value, "%g")


def _bracket(bracket: Sequence[float]) -> str:
    return f"{_degrees(bracket[0])} to {_degrees(bracket[1])} degrees"


def question(results: dict[str, Any]) -> str:
    exact = results["scans"]["exact"]
    return (
        f"A pendulum of length {md.number(exact['length'], '%g')} m under g = {md.number(exact['g'], '%g')} m/s² is "
        f"released at rest from an amplitude θ0. From which amplitude on does the true period exceed the small-angle "
        f"period 2π√(L/g) by more than {md.number(100 * exact['excess'], '%g')} % of the small-angle period, to within one degree?"
    )


def _degree_words(precision: float) -> str:
    return f"{md.number(precision, '%g')} degree" + ("" if precision == 1 else "s")


def experiments_statement(run: str, conclusion: dict[str, Any], threshold: float) -> list[str]:
    """Where the run's own periods put the crossing of its instance's `threshold` (a fraction), as the
    build derives it from them (markdown lines)."""
    percent = f"{md.number(100 * threshold, '%g')} %"
    if not conclusion["checkable"]:
        return [f"Where the periods of run {name(run)} put the {percent} crossing: nowhere, {text(conclusion['reason'])}."]
    dt = md.number(conclusion["smallest_dt"], "%g")
    low, high = conclusion["bracket"]
    exact = conclusion["exact_crossing"]["shown"]
    found = (
        f"Where the periods of run {name(run)} put the {percent} crossing, as the build derives it from them: at the smallest "
        f"step it used (dt {dt} s), its recomputed periods cross {percent} above the small-angle period between the amplitudes "
        f"{_degrees(low)} and {_degrees(high)} degrees"
    )
    if conclusion["verdict"] == "verified":
        lines = [f"{found}; the exact crossing, {exact} degrees, lies between them."]
    elif conclusion["verdict"] == "too coarse":
        lines = [f"{found}; the exact crossing, {exact} degrees, lies between them, but they do not fit in one bracket of "
                 f"{_degree_words(conclusion['precision_deg'])}, the precision asked."]
    else:
        lines = [
            f"{found}; the exact crossing, {exact} degrees, lies outside. Its numbers replayed within the tolerance: the "
            "simulation agrees with every one of them, and the exact formula still puts the crossing elsewhere."
        ]
    label = md.evidence(conclusion["evidence"])
    return lines + (["", label] if label else [])


def truth(results: dict[str, Any], verdict: dict[str, Any]) -> str:
    exact = results["answers"][verdict["instance"]]
    return f"the exact crossing, from the arithmetic-geometric mean, is at {exact['crossing']['shown']} degrees"


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    answer = verdict["answer"]
    said = f"the crossing lies between {_degrees(answer['low'])} and {_degrees(answer['high'])} degrees" if answer else ""
    lines = md.answer_statement(results, run, verdict, said, truth(results, verdict), EVIDENCE if answer else None)
    threshold = results["answers"][verdict["instance"]]["threshold"]
    return lines + [""] + md.conclusion_lines(experiments_statement(run, verdict["experiments"], threshold), run, rows,
                                             "agent-experiments")


def summary(results: dict[str, Any]) -> list[str]:
    """One line per run for the index page: its answer, whether it is right, whether it is supported."""
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        exact = results["answers"][verdict["instance"]]["crossing"]["shown"]
        score = md.score_of(results, run)
        answer = verdict["answer"]
        if answer is None:
            lines.append(f"run {name(run)}: no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = f"**right**; **{EVIDENCE}**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own experiments" if verdict["supported"] else "not supported by its own experiments"
        lines.append(f"run {name(run)} answered {_bracket([answer['low'], answer['high']])}: {decided}, the exact crossing "
                     f"is at {exact} degrees; {support}")
    return lines


def _exact_lines(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exact = results["scans"]["exact"]
    percent = md.number(100 * exact["excess"], "%g")
    return [
        f"**The exact answer, which no simulation produced.** The exact period is T = 2π√(L/g) / AGM(1, cos(θ0/2)), "
        f"with AGM the arithmetic-geometric mean, iterated until it stops changing. The build finds the amplitude at "
        f"which T exceeds the small-angle period by {percent} % by bisection until the two ends are neighbouring "
        f"doubles: **{exact['crossing']['shown']} degrees**, so the right bracket is {_bracket(exact['bracket'])}.",
        "",
        table(rows["exact-crossing"], [("quantity", "quantity"), ("shown", "value"), ("unit", "unit")]),
        "",
    ]


def _decisions(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    out = [
        "## What the build decided",
        "",
        READ_OFF,
        "",
        *_exact_lines(results, rows),
        "The build judges the answer each run submitted with the tool `answer`, never the agent's words, and judges "
        "it twice, against the run's own question (its threshold, its precision, its pendulum's L and g; the seed's "
        "are 1 %, one degree, 1 m and 9.81 m/s²). **Right**: the exact crossing lies between the answer's two "
        "amplitudes (a bracket of the precision asked, low a multiple of it: the tool refuses any other pair). "
        "**Supported**: the run's own periods put the crossing in the answer: the "
        f"build takes the smallest dt the run used with {code(lab.PERIOD_TOOL)}, recomputes every period the run "
        "asked for at that dt, divides it by the small-angle period of its pendulum and, in order of amplitude, finds "
        "the two neighbouring amplitudes between which the excess goes from at most the threshold to above it (no "
        "bracket when there is no such pair, or more than one); the answer is supported when both lie between its low "
        "and high. This "
        "bracket is derived by the build from the run's calls; the run never states it. A run whose numbers replay "
        "perfectly is still wrong when the step it trusted moved the crossing out of its answer: a supported "
        "answer that is wrong.",
        "",
        "The family's questions are drawn so that none is decided by round-off: at the tool's smallest step "
        f"({md.number(lab.DT_PARAMETER.low, '%g')} s) the simulation's error in the excess is below a quarter of the "
        "distance between the exact excess and the threshold at both edges of the right bracket (a question that "
        "misses it is drawn again). A question's difficulty is how many steps per small-angle period its bracket's "
        "upper edge needs before the simulated crossing lands in the right bracket: fewer than 50 easy, fewer than "
        "200 medium, more hard.",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, verdict: run_lines(results, run, verdict, rows))


def _shift_section(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """How far the step moves the simulated crossing: the table that makes a coarse dt visible."""
    exact = results["scans"]["exact"]
    shown_rows = [
        {
            "dt": md.number(r["dt_s"], "%g"),
            "crossing": r["shown"],
            "shift": r["shift_shown"],
            "bracket": f"{_degrees(r['bracket_low'])} to {_degrees(r['bracket_high'])}",
            "right": Md("yes") if r["right_bracket"] == "true" else Md("**no**"),
        }
        for r in rows["crossing-by-dt"]
    ]
    order = results["scans"]["convergence"]["crossing_order"]["shown"]
    wrong = [r for r in rows["crossing-by-dt"] if r["right_bracket"] != "true"]
    coarse = (
        f" At dt {md.number(wrong[-1]['dt_s'], '%g')} s it lies in {_degrees(wrong[-1]['bracket_low'])} to "
        f"{_degrees(wrong[-1]['bracket_high'])} degrees, and at {md.number(wrong[0]['dt_s'], '%g')} s "
        f"{wrong[0]['shift_shown']} degrees from the exact crossing: an agent that trusts such a step brackets "
        "the wrong amplitudes, however well its numbers replay."
        if wrong
        else ""
    )
    return [
        "### How far the step moves the crossing",
        "",
        f"The amplitude at which the *simulated* period exceeds the small-angle period by 1 %, at each dt of the "
        f"build's convergence scan (bisection on the amplitude to 1e-9 degrees), against the exact "
        f"{exact['crossing']['shown']} degrees. The shift shrinks with dt at a fitted order of {order}.{coarse}",
        "",
        f"Columns: dt; the simulated crossing; it minus the exact crossing; the two whole degrees around it; whether "
        f"those are the right bracket, {_bracket(exact['bracket'])}.",
        "",
        table(shown_rows, [("dt", "dt (s)"), ("crossing", "crossing (deg)"), ("shift", "− exact"), ("bracket", "bracket"),
                           ("right", "right?")]),
        "",
    ]


def _figures(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> str:
    scans = results["scans"]
    dts = md.join_words([md.number(s["dt"], "%g") for s in scans["ratio"]["simulated"]])
    amplitudes = scans["ratio"]["amplitudes"]
    span = f"{_degrees(min(amplitudes))} to {_degrees(max(amplitudes))} degrees" if amplitudes else "(none)"
    ratio = md.figure(
        "ratio",
        "The period over the small-angle period against the amplitude: exact, simulated, and the agents' calls",
        f"Left: the period over the small-angle period at every whole degree from {span}, exact (solid) and simulated "
        f"by this build at dt {dts} s (dashed). Points: the calls of the runs of the seed's question as recomputed by "
        "this build, coloured by dt (the runs of other instances are not drawn: their pendulum and threshold differ). "
        "Right: close-up of the excess near 1 %: the dots mark where each simulated curve crosses 1 %, the green "
        "band is the right bracket; below it, each of those runs' answer (green: right).",
    )
    errors = scans["convergence"]["errors"]
    dts_all = [row["dt"] for row in errors[0]["rows"]] if errors else []
    convergence = md.figure(
        "convergence",
        "The simulation's period error and the shift of its crossing against dt, log-log",
        f"Log-log against dt from {md.number(max(dts_all), '%g') if dts_all else '-'} s down to "
        f"{md.number(min(dts_all), '%g') if dts_all else '-'} s (halved each time). Left: the relative error of "
        "the simulated period against the exact one, the build's scan as lines and each period the runs of the seed's "
        "question asked for, recomputed, as an open marker; right: how far the simulated 1 % crossing lies from the exact one, with the "
        "room the right bracket leaves and the largest dt of the exercise below.",
    )
    order_rows = [{"of": r["of"], "order": r["shown"]} for r in rows["convergence-order"]]
    return "\n".join([
        *_shift_section(results, rows),
        ratio,
        "",
        "Table `convergence-order`: the orders of convergence, fitted by least squares to log error against log dt "
        "over every dt of the scan:",
        "",
        table(order_rows, [("of", "fitted to"), ("order", "order")]),
        "",
        convergence,
    ])


def _outcome(item: dict[str, Any]) -> Md:
    if item["ok"]:
        return Md(f"ran: {lab.PERIOD_KEY} = {item['value']['shown']}")
    return Md("refused: " + md.cell(item["error"]))


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exercises, verdicts = results["exercises"], results["verdicts"]
    out = ["## Demonstrations and exercises", ""]

    calls = [
        {"what": item["what"], "call": md.call_text(item["name"], item["arguments"]), "outcome": _outcome(item)}
        for item in exercises["misbehaving_calls"]
    ]
    out += [
        "### Misbehaving calls",
        "",
        f"{len(calls)} calls sent through a fresh allowlist, as a careless or hostile agent might send them. Only "
        "the valid one runs the simulation; the others are refused with the text the agent would read, and cost nothing.",
        "",
        table(calls, [("what", "what"), ("call", "call"), ("outcome", "outcome")]),
        "",
    ]
    budget = exercises["budget"]
    repeats = budget["repeats"]
    ran = [item for item in repeats if item["ok"]]
    refused = [item for item in repeats if not item["ok"]]
    out += [
        f"Then {code(lab.SMALL_ANGLE_TOOL)} asked for {len(repeats)} times on a fresh allowlist with a budget of "
        f"{counted(budget['budget'], 'call', 'calls')}: {len(ran)} ran"
        + ("" if not refused else f", and call {refused[0]['call']} was refused: {md.cell(refused[0]['error'])}")
        + ".",
        "",
    ]

    demonstrated = {run: verdict["changed_gravity"] for run, verdict in verdicts.items() if "changed_gravity" in verdict}
    out += ["### A changed simulation is caught", ""]
    if not demonstrated:
        out += ["*(not run in this build: it replays the runs of the reference group, and there is none)*", ""]
    for run, changed in demonstrated.items():
        g = md.number(changed["g"], "%.2f")
        if changed["caught"]:
            out += [
                f"Run {name(run)} replayed against a simulation with g = {g} m/s² instead of "
                f"{md.number(results['scans']['exact']['g'], '%.2f')} m/s²: the replay stops at the first result that differs "
                "from the recording, with this message:",
                "",
                md.fenced(changed["text"]),
                "",
            ]
        else:
            out += [f"Run {name(run)} replayed against a simulation with g = {g} m/s²: **not caught** "
                    "(every result stayed within the replay tolerance).", ""]

    largest = exercises["largest_dt"]
    bracket = _bracket(largest["bracket"])
    at, outside = largest["largest"], largest["outside"]
    checked = md.join_words([md.number(r["dt"], "%g") for r in largest["checked"]])
    monotone = (
        f"The bisection takes the crossing to move up steadily as dt grows; on each dt of the convergence scan ({checked} s) "
        "it does: the crossing lands in the bracket exactly when dt is at most this one."
        if largest["monotone"]
        else f"**The bisection takes the crossing to move up steadily as dt grows, but on the dts of the convergence scan "
        f"({checked} s) it does not: the answer may not be the largest such dt.**"
    )
    out += [
        "### Exercise: the largest dt that still gives the right bracket",
        "",
        f"Up to which dt does the simulated crossing still land in the right bracket, {bracket}? The build bisects dt "
        f"between the smallest and the largest the tool allows until the two ends are {md.number(largest['within'], '%g')} s "
        f"apart: the crossing lands in the bracket up to dt = **{at['dt']['shown']} s**; from {outside['dt']['shown']} s "
        f"on, the excess at {_degrees(largest['bracket'][1])} degrees is no longer above 1 %, and the crossing lies above "
        f"the bracket. {monotone}",
        "",
        table(rows["largest-dt"], [("what", "dt"), ("dt_shown", "value (s)"), ("shown", f"excess at {_degrees(largest['bracket'][0])} and {_degrees(largest['bracket'][1])} degrees")]),
        "",
    ]
    return out


def page(results: dict[str, Any]) -> str:
    rows = lesson_tables.tables(results)
    errors = results["scans"]["convergence"]["errors"]
    error_rows = [
        {"amplitude": _degrees(r["amplitude_deg"]), "dt": md.number(r["dt_s"], "%g"), "error": Md(md.number(r["relative_error"], "%.3g"))}
        for r in rows["convergence"]
    ]
    error_table = [
        f"Table `convergence`: the relative error of the simulated period against the exact one at "
        f"{md.join_words([_degrees(e['amplitude']) for e in errors])} degrees (3 significant digits):",
        table(error_rows, [("amplitude", "amplitude (deg)"), ("dt", "dt (s)"), ("error", "relative error")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="An agent (a language model, a program, or a person standing in for one) may only call the simulation "
        "through an allowlist. This page shows what it may do, what it did, and what the build decided from numbers "
        "it recomputed itself, against an exact formula that no simulation produced: an agent that never checked "
        "convergence in dt is caught even when its numbers replay perfectly.",
        decisions=_decisions(results, rows),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"agent-experiments", "exact-crossing", "crossing-by-dt", "convergence-order",
                                       "misbehaving-calls", "largest-dt"}, error_table),
        figure=_figures(results, rows),
    )
