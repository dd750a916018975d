"""The toy's page, from results.json."""

from replaylab.lessons import markdown as md
from replaylab.lessons.toy import LESSON
from replaylab.lessons.toy import tables as lesson_tables


def question(results):
    return "What is 3 squared?"


def truth(results, verdict):
    return f"the build computes the square as {md.number(results['answers'][verdict['instance']]['square'])}"


def summary(results):
    lines = []
    for run, v in results["verdicts"].items():
        score = md.score_of(results, run)
        said = f"answered {md.number(v['answer']['square'])}" if v["answer"] else "gave no answer"
        decided = "**right**" if score["right"] else f"wrong ({md.text(score['wrong'])})"
        lines.append(f"run {md.name(run)} {said}: {decided}; largest square {md.number(v['largest'])}")
    return lines


def run_lines(results, run, verdict):
    said = f"the square is {md.number(verdict['answer']['square'])}" if verdict["answer"] else ""
    return [*md.answer_statement(results, run, verdict, said, truth(results, verdict), None), ""]


def page(results):
    return md.lesson_page(
        results,
        title=LESSON.heading,
        question=question(results),
        intro="A toy.",
        decisions=["## What the build decided", "", *md.judged_entries(results["verdicts"], lambda run, v: run_lines(results, run, v))],
        demos=["## Demonstrations and exercises", "", md.text(results["exercises"]["refused"]), ""],
        tables=(lesson_tables.TABLES, set(), ()),
        figure=md.figure("scorecard", "scorecard", "The scorecard."),
    )
