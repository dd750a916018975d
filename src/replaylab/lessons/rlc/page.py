"""The rlc lesson's page (results/rlc/index.md), written from results.json alone.

Every number comes from the results; untrusted texts (the agent's words, tool names, arguments,
refusals) are escaped by `replaylab.lessons.markdown`.
"""

from typing import Any

from replaylab.lessons import counted
from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, code, name, table, text
from replaylab.lessons.rlc import LESSON, lab
from replaylab.lessons.rlc import tables as lesson_tables
from replaylab.lessons.rlc.judge import EVIDENCE

SIMULATION = (
    "The tool integrates v' = −i/C, i' = (v − R i)/L from v = V0, i = 0 with the trapezoidal rule, as circuit "
    "simulators do: each step of dt is the same linear map, applied as a matrix power for the whole steps up to the "
    "time asked, then one step of the rest. Its modes are complex exactly when the circuit's are, at every dt; but "
    "above dt = 2/ω0 the fast mode of an overdamped circuit alternates in sign for longer than the slow one decays, "
    "and its voltage goes below zero: a coarse step makes an overdamped circuit look underdamped. The build's scans "
    "and exercises call the same code."
)


def _n(value: float) -> str:
    return md.number(value, "%g")


def question(results: dict[str, Any]) -> str:
    exact = results["scans"]["exact"]
    low, high = lab.PERIOD_RANGE
    return (
        f"A capacitor charged to {_n(exact['initial_voltage_v'])} V discharges through a coil of {_n(exact['inductance_mh'])} mH "
        f"and a resistor; R and C are not stated, only that the natural period lies between {_n(low)} and {_n(high)} ms. "
        "Is the circuit underdamped or overdamped?"
    )


def experiments_statement(run: str, conclusion: dict[str, Any]) -> list[str]:
    """What the run's own voltages show, as the build derives it from them (markdown lines)."""
    if not conclusion["checkable"]:
        return [f"What the voltages of run {name(run)} show: neither regime, {text(conclusion['reason'])}."]
    dt = _n(conclusion["smallest_dt"])
    value = next(r["voltage"]["shown"] for r in conclusion["at_smallest"] if r["time"] == conclusion["when"])
    found = (f"What the voltages of run {name(run)} show, as the build derives it from them: at the smallest step it used "
             f"(dt {dt} ms), its recomputed voltage at {_n(conclusion['when'])} ms is {value} V, so they show "
             f"{conclusion['shows']}")
    if conclusion["agrees"]:
        lines = [f"{found}; the exact damping ratio, {conclusion['damping_ratio']['shown']}, agrees."]
    else:
        lines = [f"{found}; the exact damping ratio, {conclusion['damping_ratio']['shown']}, makes the circuit {conclusion['exact']}. "
                 "Its numbers replayed within the tolerance: the simulation agrees with every one of them, and the exact "
                 "formula still says otherwise."]
    label = md.evidence(conclusion["evidence"])
    return lines + (["", label] if label else [])


def truth(results: dict[str, Any], verdict: dict[str, Any]) -> str:
    exact = results["answers"][verdict["instance"]]
    return f"the exact damping ratio ζ = (R/2)√(C/L) of this circuit is {exact['damping_ratio']['shown']}: {exact['regime']}"


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    answer = verdict["answer"]
    said = f"the circuit is {answer['regime']}" if answer else ""
    lines = md.answer_statement(results, run, verdict, said, truth(results, verdict), EVIDENCE if answer else None)
    return lines + [""] + md.conclusion_lines(experiments_statement(run, verdict["experiments"]), run, rows, "agent-experiments")


def summary(results: dict[str, Any]) -> list[str]:
    """One line per run for the index page: its answer, whether it is right, whether it is supported."""
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        exact = results["answers"][verdict["instance"]]
        score = md.score_of(results, run)
        answer = verdict["answer"]
        if answer is None:
            lines.append(f"run {name(run)}: no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = f"**right**; **{EVIDENCE}**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own experiments" if verdict["supported"] else "not supported by its own experiments"
        lines.append(f"run {name(run)} answered {text(answer['regime'])}: {decided}, the exact damping ratio is "
                     f"{exact['damping_ratio']['shown']}; {support}")
    return lines


def _decisions(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exact = results["scans"]["exact"]
    out = [
        "## What the build decided",
        "",
        SIMULATION,
        "",
        "**The exact answer, which no simulation produced.** The capacitor's voltage obeys v'' + (R/L) v' + v/(LC) = 0, "
        "whose damping ratio ζ = (R/2)√(C/L) decides the regime: below 1 the voltage oscillates and goes below zero "
        "(underdamped), above 1 it decays without crossing zero (overdamped). For the seeds' circuit "
        f"(R = {_n(exact['resistance_ohm'])} Ω and C = {_n(exact['capacitance_uf'])} µF, never stated to the agent) "
        f"ζ = **{exact['damping_ratio']['shown']}**: **{exact['regime']}**; its exact voltage is lowest at "
        f"{exact['lowest_time_ms']['shown']} ms, {exact['lowest_voltage_v']['shown']} V.",
        "",
        table(rows["exact-circuit"], [("quantity", "quantity"), ("shown", "value"), ("unit", "unit")]),
        "",
        "The build judges the answer each run submitted with the tool `answer`, never the agent's words, twice, against "
        "the run's own circuit. **Right**: the answer is the regime of the exact ζ. **Supported**: the run's own "
        f"voltages show it: the build takes the smallest dt the run used with {code(lab.TOOL)} and recomputes every "
        "voltage it asked for at that dt; they show underdamped when one is below zero, and overdamped when none is and "
        f"one is at most {md.number(100 * lab.SUPPORT_FRACTION, '%g')} % of V0. What they show is derived by the build "
        "from the run's calls; the run never states it. A run that trusted a coarse step replays perfectly and may still "
        "be wrong: a supported answer that is wrong.",
        "",
        "A question's difficulty is how close the circuit is to critical damping, where both regimes look alike: within "
        "5 % hard (an undershoot below 7e-5 of V0, late), within 25 % medium, else easy; the family never draws a circuit "
        "within 1 % of it. Half the circuits of every level are underdamped.",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, verdict: run_lines(results, run, verdict, rows))


def _figures(results: dict[str, Any]) -> str:
    dts = md.join_words([_n(s["dt"]) for s in results["scans"]["curve"]["simulated"]])
    voltage = md.figure(
        "voltage",
        "The capacitor's voltage: exact, simulated, and the agents' readings",
        f"Left: the seeds' voltage over four natural periods, exact (solid) and by the trapezoidal rule at dt {dts} ms "
        "(dashed); the dotted line marks where the exact voltage is lowest. Points: the readings of the runs of the "
        "seeds' question as recomputed by this build, coloured by dt (runs of other instances are not drawn: their "
        "circuit differs). Right: close-up around zero, where the undershoot shows.",
    )
    ringing = md.figure(
        "ringing",
        "A coarse step rings an overdamped circuit below zero; a fine one converges",
        "Left: an overdamped circuit (the seeds' L and C, a larger R) stepped at a few coarse dt, every step drawn, against "
        "its exact voltage, which never crosses zero. Right, log-log: the error of the seeds' simulated voltage at its "
        "lowest point against dt, with the order fitted to it, and each reading of the runs of the seeds' question, "
        "recomputed, against the exact voltage at its time (open markers).",
    )
    return "\n".join([voltage, "", ringing])


def _outcome(item: dict[str, Any]) -> Md:
    if item["ok"]:
        return Md(f"ran: {lab.KEY} = {item['value']['shown']}")
    return Md("refused: " + md.cell(item["error"]))


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exercises, verdicts, ring = results["exercises"], results["verdicts"], results["scans"]["ringing"]
    calls = [{"what": item["what"], "call": md.call_text(item["name"], item["arguments"]), "outcome": _outcome(item)}
             for item in exercises["misbehaving_calls"]]
    repeats = exercises["budget"]["repeats"]
    refused = [item for item in repeats if not item["ok"]]
    out = [
        "## Demonstrations and exercises",
        "",
        "### Misbehaving calls",
        "",
        f"{len(calls)} calls sent through a fresh allowlist, as a careless or hostile agent might send them. Only the valid "
        "one runs the simulation; the others are refused with the text the agent would read, and cost nothing.",
        "",
        table(calls, [("what", "what"), ("call", "call"), ("outcome", "outcome")]),
        "",
        f"Then the valid call asked for {len(repeats)} times on a fresh allowlist with a budget of "
        f"{counted(exercises['budget']['budget'], 'experiment', 'experiments')}: {len(repeats) - len(refused)} ran"
        + ("" if not refused else f", and call {refused[0]['call']} was refused: {md.cell(refused[0]['error'])}") + ".",
        "",
        "### A changed simulation is caught",
        "",
    ]
    demonstrated = {run: verdict["changed_resistance"] for run, verdict in verdicts.items() if "changed_resistance" in verdict}
    if not demonstrated:
        out += ["*(not run in this build: it replays the runs of the reference group, and there is none)*", ""]
    for run, changed in demonstrated.items():
        if changed["caught"]:
            out += [f"Run {name(run)} replayed against a circuit whose R is 0.1 % higher ({md.number(changed['resistance'], '%.6g')} Ω): "
                    "the replay stops at the first result that differs from the recording, with this message:", "",
                    md.fenced(changed["text"]), ""]
        else:
            out += [f"Run {name(run)} replayed against a circuit whose R is 0.1 % higher: **not caught** (every result stayed "
                    "within the replay tolerance).", ""]
    largest = exercises["largest_positive_dt"]
    checked = md.join_words([_n(r["dt"]) for r in largest["checked"]])
    monotone = (f"On each dt of the ringing scan ({checked} ms) the voltage stays at or above zero exactly when dt is at most this one."
                if largest["monotone"] else
                f"**On the dts of the ringing scan ({checked} ms) the voltage does not go below zero only above this dt: the "
                "bisection may not have found the largest such step.**")
    ringing_rows = [{"dt": _n(r["dt_ms"]), "lowest": Md(md.number(r["lowest_voltage_v"], "%.3g")), "at": _n(r["at_ms"]),
                     "below": Md("**yes**" if r["below_zero"] == "true" else "no")} for r in rows["ringing"]]
    out += [
        "### Exercise: the largest step that keeps an overdamped circuit above zero",
        "",
        f"The circuit of the ringing scan (the seeds' L and C, R = {_n(ring['resistance_ohm'])} Ω, ζ = "
        f"{ring['damping_ratio']['shown']}) is overdamped: its exact voltage never crosses zero. Its fast mode alternates "
        f"in sign from dt = {ring['ringing_dt_ms']['shown']} ms, and outlasts the slow decay from 2/ω0 = "
        f"{largest['theory']['shown']} ms. The build bisects dt until the two ends are {md.number(largest['within'], '%g')} ms "
        f"apart: within the tool's {_n(ring['span_ms'])} ms, the voltage stays at or above zero up to dt = "
        f"**{largest['largest']['shown']} ms**; from {largest['outside']['shown']} ms on it goes below zero, and an agent that "
        f"reads it there sees an overshoot that is not there. {monotone}",
        "",
        table(ringing_rows, [("dt", "dt (ms)"), ("lowest", "lowest voltage (V)"), ("at", "at (ms)"), ("below", "below zero?")]),
        "",
    ]
    return out


def page(results: dict[str, Any]) -> str:
    rows = lesson_tables.tables(results)
    order = results["scans"]["convergence"]["order"]["shown"]
    extra = [
        f"Table `convergence`: the seeds' simulated voltage at its lowest point against dt (fitted order {order}):",
        table([{"dt": _n(r["dt_ms"]), "voltage": Md(md.number(r["voltage_v"], "%.10g")), "error": Md(md.number(r["error_v"], "%.3g"))}
               for r in rows["convergence"]], [("dt", "dt (ms)"), ("voltage", "voltage (V)"), ("error", "distance from the exact voltage (V)")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="An agent (a language model, a program, or a person standing in for one) may only read the simulated "
        "circuit's voltage through an allowlist, and is never told its resistance or capacitance. This page shows what it "
        "may do, what it did, and what the build decided from numbers it recomputed itself, against an exact formula that "
        "no simulation produced: an agent that trusted a coarse step is caught even when its numbers replay perfectly.",
        decisions=_decisions(results, rows),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"agent-experiments", "exact-circuit", "misbehaving-calls", "ringing"}, extra),
        figure=_figures(results),
    )
