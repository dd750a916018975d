"""The resonance lesson's page (results/resonance/index.md), written from results.json alone.

Every number comes from the results; untrusted texts (the agent's words, tool names, arguments,
refusals) are escaped by `replaylab.lessons.markdown`.
"""

from typing import Any

from replaylab.lessons import counted
from replaylab.lessons import markdown as md
from replaylab.lessons.markdown import Md, code, name, table, text
from replaylab.lessons.resonance import LESSON, lab
from replaylab.lessons.resonance import tables as lesson_tables
from replaylab.lessons.resonance.judge import EVIDENCE

SIMULATION = (
    "The tool drives x'' + 2γx' + ω0²x = F cos(ωt) from rest with classical fourth-order Runge-Kutta, 64 steps per "
    "drive period; since the force repeats every period, the 64 steps of a period are the same affine map every "
    "period, which the tool builds once and applies as many times as the periods asked for, before it steps one "
    "more period and returns the amplitude of its displacement (its first Fourier harmonic). The build's scans and "
    "exercises call the same code."
)


def _rad(value: float) -> str:
    return md.number(value, "%g")


def question(results: dict[str, Any]) -> str:
    exact = results["scans"]["exact"]
    low, high = exact["range"]
    return (
        f"A driven, damped oscillator x'' + 2γx' + ω0²x = F cos(ωt), with F = {_rad(exact['force_m_s2'])} m/s² and ω0 and γ not "
        f"stated, has its largest steady amplitude at a drive frequency between {_rad(low)} and {_rad(high)} rad/s. "
        f"Which, to within {_rad(exact['tolerance_rad_s'])} rad/s?"
    )


def experiments_statement(run: str, conclusion: dict[str, Any]) -> list[str]:
    """Where the run's own amplitudes put the peak, as the build derives it from them (markdown lines)."""
    if not conclusion["checkable"]:
        return [f"Where the amplitudes of run {name(run)} put the peak: nowhere, {text(conclusion['reason'])}."]
    found = (
        f"Where the amplitudes of run {name(run)} put the peak, as the build derives it from them: at the largest number of "
        f"periods it used ({conclusion['periods']}), its largest recomputed amplitude is at {_rad(conclusion['best'])} rad/s, "
        f"between {_rad(conclusion['below'])} and {_rad(conclusion['above'])} rad/s, and the parabola through the three "
        f"peaks at {conclusion['top']['shown']} rad/s, {conclusion['off']['shown']} rad/s from the exact peak "
        f"{conclusion['exact']['shown']} rad/s"
    )
    if conclusion["within"]:
        lines = [f"{found}: within the tolerance, {_rad(conclusion['tolerance_rad_s'])} rad/s."]
    else:
        lines = [f"{found}: further than the tolerance, {_rad(conclusion['tolerance_rad_s'])} rad/s. Its numbers replayed "
                 "within the tolerance of the replay: the simulation agrees with every one of them, and the closed form "
                 "still puts the peak elsewhere."]
    label = md.evidence(conclusion["evidence"])
    return lines + (["", label] if label else [])


def truth(results: dict[str, Any], verdict: dict[str, Any]) -> str:
    exact = results["answers"][verdict["instance"]]
    return (f"the exact peak, ω_r = √(ω0² − 2γ²) of this oscillator, is at {exact['resonance']['shown']} rad/s; an answer "
            f"within {_rad(exact['tolerance_rad_s'])} rad/s of it is right")


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    answer = verdict["answer"]
    said = f"the steady amplitude is largest at {_rad(answer['frequency_rad_s'])} rad/s" if answer else ""
    lines = md.answer_statement(results, run, verdict, said, truth(results, verdict), EVIDENCE if answer else None)
    return lines + [""] + md.conclusion_lines(experiments_statement(run, verdict["experiments"]), run, rows, "agent-experiments")


def summary(results: dict[str, Any]) -> list[str]:
    """One line per run for the index page: its answer, whether it is right, whether it is supported."""
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        exact = results["answers"][verdict["instance"]]["resonance"]["shown"]
        score = md.score_of(results, run)
        answer = verdict["answer"]
        if answer is None:
            lines.append(f"run {name(run)}: no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = f"**right**; **{EVIDENCE}**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own experiments" if verdict["supported"] else "not supported by its own experiments"
        lines.append(f"run {name(run)} answered {_rad(answer['frequency_rad_s'])} rad/s: {decided}, the exact peak is at "
                     f"{exact} rad/s; {support}")
    return lines


def _decisions(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exact = results["scans"]["exact"]
    out = [
        "## What the build decided",
        "",
        SIMULATION,
        "",
        "**The exact answer, which no simulation produced.** The steady amplitude of the oscillator is "
        "A(ω) = F / √((ω0² − ω²)² + (2γω)²), largest where (ω0² − ω²)² + (2γω)² is smallest, at ω_r = √(ω0² − 2γ²). For "
        f"the seeds' oscillator (ω0 = {_rad(exact['natural_rad_s'])} rad/s and γ = {_rad(exact['damping_rate_s'])} 1/s, never "
        f"stated to the agent) that is **{exact['resonance']['shown']} rad/s**; the damped frequency √(ω0² − γ²), "
        f"{exact['damped']['shown']} rad/s, and ω0 itself lie further than the tolerance from it.",
        "",
        table(rows["exact-peak"], [("quantity", "quantity"), ("shown", "value"), ("unit", "unit")]),
        "",
        "The build judges the answer each run submitted with the tool `answer`, never the agent's words, twice, against "
        "the run's own question (its oscillator, its range, its tolerance). **Right**: the answer lies within the "
        "tolerance of ω_r. **Supported**: the run's own amplitudes put the peak there: the build takes the largest number "
        f"of periods the run used with {code(lab.TOOL)}, recomputes every amplitude it asked for with that number, finds "
        "the largest, which must lie at neither the lowest nor the highest frequency measured, and the top of the "
        "parabola through it and the nearest frequency measured on each side; the answer is supported when that top lies "
        "within the tolerance of it. The top is derived by the build from the run's calls; the run never states it. A run "
        "that measured before the start had died out replays perfectly and may still be wrong: a supported answer "
        "that is wrong.",
        "",
        "A question's difficulty is how many drive periods the free oscillation needs to die out below what decides "
        "the peak (its envelope e^{-γt} down to the relative drop of the steady amplitude from the peak to ω_r ± the "
        f"tolerance): fewer than 20 easy, fewer than 80 medium, more hard; the seeds' question needs "
        f"{exact['periods_needed']['shown']}. The family keeps no oscillator that needs more than a quarter of the "
        f"tool's {md.number(lab.PERIODS.high, '%g')} periods.",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, verdict: run_lines(results, run, verdict, rows))


def _figures(results: dict[str, Any]) -> str:
    scans = results["scans"]
    periods = md.join_words([str(s["periods"]) for s in scans["curve"]["simulated"]])
    amplitude = md.figure(
        "amplitude",
        "The steady amplitude against the drive frequency: exact, simulated, and the agents' calls",
        f"Left: the amplitude over the seeds' range, exact (solid) and simulated by this build after {periods} periods from "
        "rest (dashed); the green band lies within the tolerance of the exact peak. Points: the calls of the runs of the "
        "seeds' question as recomputed by this build, coloured by their number of periods (runs of other instances are "
        "not drawn: their oscillator differs). Right: close-up of the peak; below it, each of those runs' answer (green: right).",
    )
    settling = md.figure(
        "settling",
        "How long the start takes to die out, and how far the step moves the peak",
        "Left, log-log: at the exact peak, the simulated amplitude's relative difference from the exact one against the "
        "periods simulated, beside the envelope of the free oscillation (it levels off at the error of the step), and each "
        "call of the runs of the seeds' question, recomputed, against the exact amplitude at its frequency (open markers). "
        "Right, log-log: "
        "how far the peak the simulation settles to lies from ω_r against the Runge-Kutta steps per period, with the "
        "order fitted to it.",
    )
    return "\n".join([amplitude, "", settling])


def _outcome(item: dict[str, Any]) -> Md:
    if item["ok"]:
        return Md(f"ran: {lab.KEY} = {item['value']['shown']}")
    return Md("refused: " + md.cell(item["error"]))


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exercises, verdicts = results["exercises"], results["verdicts"]
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
    demonstrated = {run: verdict["changed_oscillator"] for run, verdict in verdicts.items() if "changed_oscillator" in verdict}
    if not demonstrated:
        out += ["*(not run in this build: it replays the runs of the reference group, and there is none)*", ""]
    for run, changed in demonstrated.items():
        if changed["caught"]:
            out += [f"Run {name(run)} replayed against an oscillator whose ω0 is 0.1 % higher "
                    f"({md.number(changed['natural'], '%.6g')} rad/s): the replay stops at the first result that differs from "
                    "the recording, with this message:", "", md.fenced(changed["text"]), ""]
        else:
            out += [f"Run {name(run)} replayed against an oscillator whose ω0 is 0.1 % higher: **not caught** (every result "
                    "stayed within the replay tolerance).", ""]
    fewest = exercises["fewest_periods"]
    exact = results["scans"]["exact"]
    found = (f"from **{fewest['fewest']} periods** on, every number of periods up to {len(fewest['rows'])} puts it within the "
             "tolerance" if fewest["fewest"] is not None else f"no number of periods up to {len(fewest['rows'])} keeps it there")
    out += [
        "### Exercise: how many periods the seeds' question needs",
        "",
        f"After how many periods from rest do the simulated amplitudes place the seeds' peak within "
        f"{_rad(exact['tolerance_rad_s'])} rad/s of ω_r? The build measures a grid of frequencies "
        f"{md.number(fewest['grid_step'], '%g')} rad/s apart around ω_r after each number of periods and locates the peak "
        f"as the rule of `supported` does: {found}. The family's rule of difficulty asks for {fewest['rule']['shown']} periods: "
        "it errs on the side of more.",
        "",
        table([{"periods": r["periods"], "top": r["shown"], "within": Md("yes" if r["within_tolerance"] == "true" else "**no**")}
               for r in rows["fewest-periods"][:12]],
              [("periods", "periods"), ("top", "peak located (rad/s)"), ("within", "within the tolerance?")]),
        "",
    ]
    return out


def page(results: dict[str, Any]) -> str:
    rows = lesson_tables.tables(results)
    order = results["scans"]["convergence"]["order"]["shown"]
    extra = [
        f"Table `convergence`: the peak Runge-Kutta settles to against the steps per period (fitted order {order}):",
        table([{"steps": r["steps_per_period"], "peak": Md(md.number(r["simulated_peak_rad_s"], "%.10g")),
                "error": Md(md.number(r["error_rad_s"], "%.3g"))} for r in rows["convergence"]],
              [("steps", "steps per period"), ("peak", "simulated peak (rad/s)"), ("error", "distance from ω_r (rad/s)")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="An agent (a language model, a program, or a person standing in for one) may only drive the simulated "
        "oscillator through an allowlist, and is never told its natural frequency or damping. This page shows what it "
        "may do, what it did, and what the build decided from numbers it recomputed itself, against a closed form that "
        "no simulation produced: an agent that measured before the start had died out is caught even when its numbers "
        "replay perfectly.",
        decisions=_decisions(results, rows),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"agent-experiments", "exact-peak", "misbehaving-calls", "fewest-periods"}, extra),
        figure=_figures(results),
    )
