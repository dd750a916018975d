"""The toy's page, from results.json."""

from replaylab.lessons import markdown as md
from replaylab.lessons.toy import LESSON
from replaylab.lessons.toy import tables as lesson_tables


def question(results):
    return "What is 3 squared?"


def summary(results):
    return [f"run {md.name(run)}: largest square {md.number(v['largest'])}" for run, v in results["verdicts"].items()]


def page(results):
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="A toy.",
        decisions=["## What the build decided", "", *summary(results), ""],
        demos=["## Demonstrations and exercises", "", md.text(results["exercises"]["refused"]), ""],
        tables=(lesson_tables.TABLES, set(), ()),
        figure=md.figure("scorecard", "scorecard", "The scorecard."),
    )
