"""The toy's tables, from results.json."""

from replaylab.lessons.markdown import answer_rows, call_rows
from replaylab.lessons.toy import lab

TABLES = ("squares", "run", "answers")


def tables(results):
    return {"squares": [{"x": row["x"], "square": row[lab.KEY]} for row in results["scans"]["squares"]],
            "run": call_rows(results), "answers": answer_rows(results)}
