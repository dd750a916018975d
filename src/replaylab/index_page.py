"""The summary page of a build (results/index.md and index.html): one entry per lesson, written
from results.json alone.

Each entry gives the lesson's question, what the build decided with the evidence label of each
statement (none for an inconclusive hunt or an unchecked conclusion), and a link to the lesson's page.
"""

from dataclasses import dataclass

from replaylab.lessons import registry
from replaylab.lessons.markdown import code, counted, interval, text
from replaylab.render import write_markdown_and_html
from replaylab.results import load


def index(all_results):
    out = [
        "# replaylab: the lessons and what the build decided",
        "",
        "Each lesson replays recorded runs of an agent that drives a physics simulation through an allowlist "
        "of tools, recomputes every result, and decides from those numbers alone, never from the agent's words. "
        "A statement marked **numerically verified** rests on numbers this build recomputed; a statement without "
        "a label is not a result. Nothing here is a measurement or a proof.",
        "",
    ]
    for results in all_results:
        lesson = registry.lesson(results["lesson"])
        counts = results["counts"]
        labels = [f"{label}: {count}" if count < counts["runs"] else label for label, count in counts["labels"].items()]
        one, many = results["score_unit"]
        out += [
            f"## [{lesson.heading}]({lesson.name}/index.md)",
            "",
            f"**Question:** {lesson.question(results)}",
            "",
            f"Runs: {counts['runs']} ({text('; '.join(labels)) if labels else 'none'}): {counts['answered']} answered, "
            f"{counts['right']} right, {counts['supported']} supported by their own experiments.",
            "",
        ]
        if len(results["scores"]) < counts["runs"]:
            lines = [
                f"{text(r['model'])} ({code(r['task'])}): {r['right']} of {counted(r['runs'], one, many)} right "
                f"(95 % interval {interval(r)})"
                for r in results["scorecard"]
            ]
            out += ["Too many runs to list one by one; the scorecard, decided by the build:", ""]
        else:
            lines = lesson.summary(results)
        out += [f"- {line}" for line in lines] if lines else ["- no run was judged"]
        out += ["", f"[The page of lesson {code(lesson.name)}: its runs, decisions, figures and tables]({lesson.name}/index.md).", ""]
    return "\n".join(out).rstrip() + "\n"


@dataclass(frozen=True)
class Index:
    """The index stage: the summary page of every lesson, from their results.json files."""

    results: list
    index: str  # output: index.md, and index.html next to it


def write_index(stage):
    """Returns the seconds the HTML page took (for the job's log)."""
    return write_markdown_and_html(stage.index, index([load(path) for path in stage.results]))
