"""The hunter lesson's page (results/hunter/index.md), written from results.json alone.

A counterexample is numerically verified about the experiment that breaks the claim; an
inconclusive hunt has no evidence label and the page says it is not a result.
"""

from replaylab.lessons import counted
from replaylab.lessons import markdown as md
from replaylab.lessons.hunter import LESSON, lab
from replaylab.lessons.hunter.judge import DEMONSTRATION_GROUP
from replaylab.lessons.hunter import tables as lesson_tables
from replaylab.lessons.markdown import Md, name, table, text



def question(results):
    return (
        "Given a claim about a numerical integrator and a fixed budget of experiments, can an agent find "
        "an experiment that breaks the claim, and what may we conclude when it finds none?"
    )


def _outcome(item):
    """An exercise's call through the allowlist: what it measured, or the refusal."""
    if item["ok"]:
        return Md(f"ran: {lab.RESULT_KEY} = {item['value']['shown']}")
    return Md("refused: " + md.cell(item["error"]))


def _percent(limit):
    return md.number(100 * limit, "%g")


def _experiment(item):
    return (
        f"{text(item['method'])}, {md.number(item['steps_per_period'], '%d')} steps per period, "
        f"{counted(item['periods'], 'period', 'periods')}"
    )


def verdict_lines(run, verdict):
    """The decision on one hunt, with its evidence label (none for an inconclusive hunt)."""
    limit = md.number(verdict["limit"], "%g")
    budget_text = f" (budget {md.number(verdict['budget'], '%d')})"
    tested = (
        f"The build recomputed each accepted experiment of the run inside the claim's domain: "
        f"{md.number(verdict['tested'], '%d')} counted{budget_text}."
    )
    if verdict["outcome"] == "counterexample":
        witness = verdict["witness"]
        return [
            f"**Run {name(run)}, claim {name(verdict['claim'])}: counterexample found.** {tested} The first one "
            f"above the limit {limit} is {_experiment(witness)}: largest energy drift {witness['value']['shown']}, "
            f"above {limit}. The claim is false.",
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
        f"**Run {name(run)}, claim {name(verdict['claim'])}: inconclusive. This is not a result.** {tested}"
        f" None went above the limit {limit}.{closest_text} This does not show that the claim is true: "
        "an experiment the agent did not try may still break it. (No evidence label.)"
    ]


def summary(results):
    lines = []
    for run, verdicts in results["verdicts"].items():
        v = verdicts["verdict"]
        if v["outcome"] == "counterexample":
            lines.append(
                f"run {name(run)} (claim {name(v['claim'])}, limit {md.number(v['limit'], '%g')}): counterexample, "
                f"{_experiment(v['witness'])} gives {v['witness']['value']['shown']}; **{v['evidence']}**"
            )
        else:
            lines.append(
                f"run {name(run)} (claim {name(v['claim'])}, limit {md.number(v['limit'], '%g')}): inconclusive after "
                f"{counted(v['tested'], 'experiment', 'experiments')}; not a result, and it does not show the claim is true"
            )
    return lines


def _claims(results):
    seen, out = set(), []
    for verdicts in results["verdicts"].values():
        v = verdicts["verdict"]
        if v["claim"] in seen:
            continue
        seen.add(v["claim"])
        out.append(f"- Claim {name(v['claim'])} (limit {md.number(v['limit'], '%g')}): {text(v['statement'])}")
    return out


def _decisions(results):
    out = [
        "## What the build decided",
        "",
        "The judge walks through the run's tool calls in order, keeps those that were accepted, fall inside "
        "the claim's domain and fit in the budget, and recomputes each one (it never reads a stored result or "
        "the agent's words). The first experiment above the claim's limit is a counterexample.",
        "",
    ]
    return out + md.judged_entries(results["verdicts"], lambda run, item: [*verdict_lines(run, item["verdict"]), ""])


def _demos(results, rows):
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

    stricter = [(run, v["stricter_claim"], v["verdict"]) for run, v in verdicts.items() if "stricter_claim" in v]
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
                f"Against its own claim the run is still {original['outcome']}.",
                "",
            ]
            if strict["evidence"]:
                out += [md.evidence(strict["evidence"]), ""]
    return out


def _figure(results):
    drift = results["scans"]["drift"]
    periods = md.number(drift["periods"], "%d")
    methods = md.join_words(list(dict.fromkeys(row["method"] for row in drift["rows"])))
    caption = (
        f"Lines: largest energy drift over {periods} periods against steps per period (log-log), computed by this "
        f"build for {methods}. Dashed: each claim's limit. Points: the hunts' experiments as recomputed by this "
        f"build (filled: {periods} periods, comparable with the lines; hollow: other run lengths)."
    )
    return md.figure("drift", "Energy drift against steps per period, with the hunts' experiments", caption)


def page(results):
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
