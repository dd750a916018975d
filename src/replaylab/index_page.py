"""The summary page of a build (results/index.md and index.html): one entry per lesson, written
from results.json alone, then one per campaign found in results/campaigns/ (its scorecard.json).

Each entry gives the lesson's question, what the build decided with the evidence label of each
statement (none for an inconclusive hunt or an unchecked conclusion), and a link to the lesson's page.
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.lessons import counted, registry
from replaylab.lessons.markdown import code, interval, text
from replaylab.render import write_markdown_and_html
from replaylab.results import load


def index(all_results: Iterable[dict[str, Any]]) -> str:
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


def campaigns_section(campaigns: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
    """One entry per campaign: its models, tasks and the comparison's summary, linked to its page."""
    out = ["## Campaigns", ""]
    if not campaigns:
        return out + ["No campaign in `results/campaigns/` when this page was written (`snakemake campaign` makes one; "
                      "this page lists it the next time it is written).", ""]
    out += ["Found in `results/campaigns/` when this page was written; each compares models on the same tasks.", ""]
    for folder, data in campaigns:
        settings = data["settings"]
        out += [f"### [Campaign {text(data['campaign'])}](campaigns/{folder}/index.md)", "",
                f"Models: {', '.join(text(m) for m in settings['models'])}; {settings['runs']} runs per model and "
                f"task; {counted(len({(r['lesson'], r['task']) for r in data['scorecard']}), 'task', 'tasks')}.", "",
                data["summary"], ""]
    return out


def read_campaigns(root: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """[(folder name, scorecard.json data)] of the campaigns under `root`, by name; a scorecard
    that is not the comparison's (unreadable, or of an older format) is left out."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(Path(root).glob("*/scorecard.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if {"campaign", "settings", "summary", "scorecard"} <= set(data):
                found.append((path.parent.name, data))
        except (OSError, ValueError):
            continue
    return found


@dataclass(frozen=True)
class Index:
    """The index stage: the summary page of every lesson, from their results.json files."""

    results: Sequence[str | Path]
    index: str | Path  # output: index.md, and index.html next to it
    campaigns: str | Path | None = None  # the folder of the campaigns (results/campaigns), read when the page is written


def write_index(stage: Index) -> float:
    """Returns the seconds the HTML page took (for the job's log)."""
    text_ = index([load(path) for path in stage.results])
    if stage.campaigns is not None:
        text_ = text_ + "\n" + "\n".join(campaigns_section(read_campaigns(stage.campaigns))).rstrip() + "\n"
    return write_markdown_and_html(stage.index, text_)
