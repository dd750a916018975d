"""The toy's tables, from results.json."""

from replaylab.lessons.markdown import call_rows
from replaylab.lessons.toy import lab

TABLES = ("squares", "run")


def tables(results):
    return {"squares": [{"x": row["x"], "square": row[lab.KEY]} for row in results["scans"]["squares"]], "run": call_rows(results)}
