"""The summary page of a build (results/index.md): one entry per lesson, written from results.json alone.

Each entry gives the lesson's question, what the build decided with the evidence label of each
statement (none for an inconclusive hunt or an unchecked conclusion), and a link to the lesson's page.
"""

from replaylab.lessons.hunter import page as hunter_page
from replaylab.lessons.markdown import FULL_RUNS_LIMIT, code, interval, text
from replaylab.lessons.projectile import page as projectile_page
from replaylab.lessons.review import page as review_page

PAGES = {"projectile": projectile_page, "hunter": hunter_page, "review": review_page}


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
        lesson = results.get("lesson", "")
        module = PAGES.get(lesson)
        if module is None:
            out += [f"## {text(lesson)}", "", "Unknown lesson: no page.", ""]
            continue
        runs = results.get("runs", {})
        labels = sorted({run["label"] for run in runs.values()})
        out += [
            f"## [{module.title()}]({lesson}/index.md)",
            "",
            f"**Question:** {module.question(results)}",
            "",
            f"Runs: {len(runs)} ({text('; '.join(labels)) if labels else 'none'}).",
            "",
        ]
        if len(runs) > FULL_RUNS_LIMIT:
            lines = [
                f"{text(r['model'])} ({code(r['task'])}): {r['right']} of {r['runs']} runs right "
                f"(95 % interval {interval(r)})"
                for r in results.get("scorecard", [])
            ]
            out += ["Too many runs to list one by one; the scorecard, decided by the build:", ""]
        else:
            lines = module.summary(results)
        out += [f"- {line}" for line in lines] if lines else ["- no run was judged"]
        out += ["", f"[The page of lesson {code(lesson)}: its runs, decisions, figures and tables]({lesson}/index.md).", ""]
    return "\n".join(out).rstrip() + "\n"
