"""The runs a lesson's results.json and page show: a bounded sample of those worth reading,
whatever the number of runs. The per-run table (runs.csv.gz), the batches' verdicts (judged/) and
the transcripts (transcripts/<batch>.jsonl) hold every run.

Worth reading first: the runs of the reference group (the page's demonstrations are made with
them), then the wrong ones, then the right ones; within each, one of every model, task and mistake
before a second of any. Ties go by name, so the same runs give the same sample, however they were
batched.
"""

from collections.abc import Sequence
from typing import Any

from replaylab.lessons import REFERENCE_GROUP as REFERENCE

SHOWN = 12  # runs shown in full: every message and every recomputed result
LISTED = 100  # more runs listed, each with a link to its transcript


def _category(score: dict[str, Any], runs: dict[str, dict[str, Any]]) -> int:
    if runs[score["run"]]["group"] == REFERENCE:
        return 0
    return 2 if score["right"] else 1


def worth_reading(found: Sequence[dict[str, Any]], runs: dict[str, dict[str, Any]]) -> list[str]:
    """The names of the runs of `found` (their scores), in the order worth reading. `runs`: {run:
    facts} (`pipeline.run_facts`)."""
    keyed = sorted(
        ((_category(s, runs), s["model"], s["task"], s["wrong"] or ""), s["run"]) for s in found
    )
    seen: dict[tuple[Any, ...], int]
    ranked: list[tuple[tuple[Any, ...], str]]
    seen, ranked = {}, []
    for key, name in keyed:
        rank = seen.get(key, 0)  # the how-many-th of its kind
        seen[key] = rank + 1
        ranked.append(((key[0], rank, *key[1:], name), name))
    return [name for _, name in sorted(ranked)]


def choose(found: Sequence[dict[str, Any]], runs: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(the runs shown in full, the runs listed after them): every run, in name order, when there
    are at most SHOWN; else the first SHOWN and the next LISTED worth reading."""
    if len(found) <= SHOWN:
        return sorted(s["run"] for s in found), []
    order = worth_reading(found, runs)
    return order[:SHOWN], order[SHOWN : SHOWN + LISTED]
