"""The hunter lesson's page (results/hunter/index.md), written from results.json alone.

A counterexample is numerically verified about the experiment that breaks the claim; an
inconclusive hunt has no evidence label and the page says it is not a result.
"""

from typing import Any

from replaylab.lessons import counted
from replaylab.lessons import markdown as md
from replaylab.lessons.hunter import LESSON, lab
from replaylab.lessons.hunter.judge import DEMONSTRATION_GROUP, DOMAIN_EVIDENCE, EVIDENCE
from replaylab.lessons.hunter.judge import truth_text
from replaylab.lessons.hunter import tables as lesson_tables
from replaylab.lessons.markdown import Md, name, table, text



def question(results: dict[str, Any]) -> str:
    return (
        "Given a claim about a numerical integrator and a fixed budget of experiments, can an agent find "
        "an experiment that breaks the claim, and what may we conclude when it finds none?"
    )


def _outcome(item: dict[str, Any]) -> Md:
    """An exercise's call through the allowlist: what it measured, or the refusal."""
    if item["ok"]:
        return Md(f"ran: {lab.RESULT_KEY} = {item['value']['shown']}")
    return Md("refused: " + md.cell(item["error"]))


def _percent(limit: float) -> str:
    return md.number(100 * limit, "%g")


def _experiment(item: dict[str, Any]) -> str:
    return (
        f"{text(item['method'])}, {md.number(item['steps_per_period'], '%d')} steps per period, "
        f"{counted(item['periods'], 'period', 'periods')}"
    )


def verdict_lines(run: str, verdict: dict[str, Any]) -> list[str]:
    """What a hunt's own experiments show, with its evidence label (none for an inconclusive hunt)."""
    limit = md.number(verdict["limit"], "%g")
    budget_text = f" (budget {md.number(verdict['budget'], '%d')})"
    tested = (
        f"The build recomputed each accepted experiment of the run inside the claim's domain: "
        f"{md.number(verdict['tested'], '%d')} counted{budget_text}."
    )
    if verdict["outcome"] == "counterexample":
        witness = verdict["witness"]
        return [
            f"What the experiments of run {name(run)} show, claim {name(verdict['claim'])}: **a counterexample.** "
            f"{tested} The first one above the limit {limit} is {_experiment(witness)}: largest energy drift "
            f"{witness['value']['shown']}, above {limit}. The claim is false.",
            "",
            md.evidence(verdict["evidence"]),
        ]
    closest = verdict["closest"]
    closest_text = (
        f" The closest to the limit was {_experiment(closest)}: {closest['value']['shown']}, below {limit}."
        if closest
        else " No experiment fell inside the claim's domain."
    )
    return [
        f"What the experiments of run {name(run)} show, claim {name(verdict['claim'])}: **inconclusive on their own. "
        f"This is not a result.** {tested} None went above the limit {limit}.{closest_text} A hunt's experiments "
        "never show that a claim is true: an experiment the agent did not try may still break it. (No evidence "
        "label: whether the answer is right is decided above, against the build's scan of the whole domain.)"
    ]


def answer_words(answer: dict[str, Any]) -> str:
    """A hunt's answer as submitted, in words."""
    if answer["outcome"] == lab.COUNTEREXAMPLE:
        return f"counterexample, {_experiment(answer)}"
    return "none found"


def answer_evidence(verdict: dict[str, Any]) -> str:
    """The evidence label of the build's judgement of an answer: about the experiment it ran again, or
    about its scan of the whole domain."""
    checked = verdict["answer_check"]
    if checked is not None:
        return EVIDENCE.format(method=checked["method"], steps=checked["steps_per_period"],
                               periods=counted(checked["periods"], "period", "periods"))
    return DOMAIN_EVIDENCE


def run_lines(results: dict[str, Any], run: str, verdict: dict[str, Any]) -> list[str]:
    said = answer_words(verdict["answer"]) if verdict["answer"] else ""
    truth = truth_text(verdict, results["answers"][verdict["instance"]])
    lines = md.answer_statement(results, run, verdict, said, truth, answer_evidence(verdict) if verdict["answer"] else None)
    return [*lines, "", *verdict_lines(run, verdict["experiments"]), ""]


def summary(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for run, verdict in results["verdicts"].items():
        v, answer = verdict["experiments"], verdict["answer"]
        score = md.score_of(results, run)
        head = f"run {name(run)} (claim {name(v['claim'])}, limit {md.number(v['limit'], '%g')})"
        if answer is None:
            lines.append(f"{head}: no answer ({text(verdict['no_answer'])}); not right")
            continue
        decided = f"**right**; **{answer_evidence(verdict)}**" if score["right"] else f"wrong ({text(score['wrong'])})"
        support = "supported by its own experiments" if verdict["supported"] else "not supported by its own experiments"
        lines.append(f"{head} answered {text(answer_words(answer))}: {decided}; {support}")
    return lines


def _claims(results: dict[str, Any]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for verdicts in results["verdicts"].values():
        v = verdicts["experiments"]
        if v["claim"] in seen:
            continue
        seen.add(v["claim"])
        out.append(f"- Claim {name(v['claim'])} (limit {md.number(v['limit'], '%g')}): {text(v['statement'])}")
    return out


def _decisions(results: dict[str, Any]) -> list[str]:
    out = [
        "## What the build decided",
        "",
        "The build judges the answer each hunt submitted with the tool `answer`, never the agent's words, and "
        "judges it twice. **Right**: a counterexample is right when the build runs its experiment again and the "
        "result, inside the claim's domain, breaks the claim (any such experiment, not only the worst case); "
        "none found is right when the build's own scan of the whole domain finds no experiment breaking the "
        "claim. **Supported**: the hunt's own experiments point at its answer: it ran its counterexample and saw "
        "it break the claim, or none of its experiments broke the claim. For what the experiments show, the judge "
        "walks through the run's tool calls in order, keeps those that were accepted, fall inside the claim's "
        "domain and fit in the budget, and recomputes each one (it never reads a stored result).",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, item: run_lines(results, run, item))


def _demos(results: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    exercises = results["exercises"]
    scans = results["scans"]
    verdicts = results["verdicts"]
    out = ["## Demonstrations and exercises", ""]

    boundary = exercises["boundary"]
    attempts = boundary["attempts"]
    out += [
        "### The boundary of the allowlist",
        "",
        f"{len(attempts)} attempts through one allowlist; only the valid one runs the simulation:",
        "",
    ]
    attempt_rows = [
        {
            "what": item["what"],
            "call": md.call_text(lab.TOOL_NAME, item["arguments"]),
            "outcome": _outcome(item),
        }
        for item in attempts
    ]
    out += [table(attempt_rows, [("what", "what"), ("call", "call"), ("outcome", "outcome")]), ""]
    repeats = boundary["repeats"]
    if repeats:
        out += [
            f"Then, on a fresh allowlist with a budget of {counted(boundary['budget'], 'experiment', 'experiments')}, the same "
            f"valid experiment {len(repeats)} times:",
            "",
        ]
        repeat_rows = [
            {
                "n": item["call"],
                "outcome": _outcome(item),
            }
            for item in repeats
        ]
        out += [table(repeat_rows, [("n", "call"), ("outcome", "outcome")]), ""]

    out += ["### The verdict ignores the words", ""]
    probe_rows = [{"run": r["run"], "probe": r["probe"], "outcome": r["outcome"], "original": r["verdict_unchanged"]} for r in rows["words-ignored"]]
    if probe_rows:
        out += [
            f"Each run of the group {name(DEMONSTRATION_GROUP)} judged again after its words, or its stored results, "
            "were changed. The verdict is computed from the arguments of the calls alone, so it does not move:",
            "",
            table(probe_rows, [("run", "run"), ("probe", "change"), ("outcome", "verdict after the change"), ("original", "verdict of the run")]),
            "",
        ]
    else:
        out += [f"*(not run in this build: it judges the runs of the group {name(DEMONSTRATION_GROUP)} again, and there is none)*", ""]

    fcb = scans["false_claim_boundary"]
    out += ["### Exercise: the boundary of the symplectic Euler claim", ""]
    if fcb["smallest"] is not None:
        below = fcb.get("drift_below")  # absent when the smallest is the domain's first
        line = (
            f"The smallest number of steps per period in the claim's domain at which symplectic Euler keeps the "
            f"energy within {_percent(fcb['limit'])} % over {md.number(fcb['periods'], '%d')} periods is "
            f"**{md.number(fcb['smallest'], '%d')}** (largest drift {fcb['drift_at_smallest']['shown']})"
        )
        if below:
            line += f"; {md.number(below['steps_per_period'], '%d')} steps per period give {below['shown']}"
        out += [line + ".", ""]
        out += [
            table(
                [{"n": r["steps_per_period"], "shown": r["shown"], "q": r["quantity"]} for r in rows["false-claim-boundary"]],
                [("q", "row"), ("n", "steps per period"), ("shown", "largest drift")],
            ),
            "",
        ]
    else:
        out += ["No number of steps per period in the scan keeps the drift within the limit.", ""]

    stricter = [(run, v["stricter_claim"], v["experiments"]) for run, v in verdicts.items() if "stricter_claim" in v]
    if stricter:
        out += ["### Exercise: a stricter claim", ""]
        for run, strict, original in stricter:
            limit = md.number(strict["limit"], "%g")
            if strict["outcome"] == "counterexample":
                found = (
                    f"the judge finds a counterexample, {_experiment(strict['witness'])} "
                    f"({strict['witness']['value']['shown']}, above {limit})"
                )
            else:
                found = "still inconclusive"
            out += [
                f"The experiments of run {name(run)} judged against a stricter limit of {limit} "
                f"({_percent(strict['limit'])} %) instead of {md.number(original['limit'], '%g')}: {found}. "
                f"Against its own claim the run's experiments are still {original['outcome']}.",
                "",
            ]
            if strict["evidence"]:
                out += [md.evidence(strict["evidence"]), ""]
    return out


def _figure(results: dict[str, Any]) -> str:
    drift = results["scans"]["drift"]
    periods = md.number(drift["periods"], "%d")
    methods = md.join_words(list(dict.fromkeys(row["method"] for row in drift["rows"])))
    caption = (
        f"Lines: largest energy drift over {periods} periods against steps per period (log-log), computed by this "
        f"build for {methods}. Dashed: each claim's limit. Points: the hunts' experiments as recomputed by this "
        f"build (filled: {periods} periods, comparable with the lines; hollow: other run lengths)."
    )
    return md.figure("drift", "Energy drift against steps per period, with the hunts' experiments", caption)


def page(results: dict[str, Any]) -> str:
    rows = lesson_tables.tables(results)
    drift_rows = [
        {"method": r["method"], "n": r["steps_per_period"], "drift": Md(md.number(r["max_energy_drift"]))} for r in rows["drift-scan"]
    ]
    periods = md.number(results["scans"]["drift"]["periods"], "%d")
    intro = [
        "The claims (each run hunts one of them; the task given to the agent contains the claim and the budget):",
        "",
        *_claims(results),
        "",
        "The tool measures the largest relative energy error `|E/E0 - 1|` of a simulated oscillator over a run. "
        "One experiment above the limit refutes a claim; no number of experiments below it proves the claim.",
    ]
    drift_table = [
        f"Table `drift-scan`: largest energy drift over {periods} periods, computed by this build (6 significant digits):",
        table(drift_rows, [("method", "method"), ("n", "steps per period"), ("drift", "largest drift")]),
    ]
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="\n".join(intro),
        decisions=_decisions(results),
        demos=_demos(results, rows),
        tables=(lesson_tables.TABLES, {"boundary", "words-ignored", "false-claim-boundary"}, drift_table),
        figure=_figure(results),
    )
