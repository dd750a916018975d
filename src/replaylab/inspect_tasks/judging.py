"""replaylab's judgement of one run, as the scorer of the Inspect tasks gives it: the run replayed
through the current code (every result recomputed), judged by its lesson, and scored against the
build's answer of its instance, exactly as the workflow scores it (`lessons.scorecard.scores`).

Imports nothing of Inspect (it works on replaylab recordings), so that it can be checked on its own.
"""

import dataclasses
import functools

from replaylab.agents.replay import DEFAULT_TOLERANCE, replay
from replaylab.lessons import registry


@functools.cache
def answer(lesson, instance):
    """The build's answer of one instance, computed once per process."""
    return registry.lesson(lesson).answers([instance])[instance]


def judge(recording, tolerance=DEFAULT_TOLERANCE):
    """(score, verdict, line) of one recording: `score` as the workflow's per-run table has it
    (right, answered, supported, wrong, answer, calls, budget_used), the lesson's verdict, and
    the verdict's one line. A result that differs from the current code raises ReplayMismatch."""
    from replaylab.lessons.scorecard import scores  # pandas: only here, never on the way of a replay

    lesson = registry.lesson(recording.lesson)
    run = dataclasses.replace(recording, transcript=replay(recording, lesson.variant_of(recording), tolerance))
    verdicts = lesson.judge([run], tolerance)
    stopped = {run.run: {"stopped_by": run.transcript.stopped_by}} if run.transcript.stopped_by else {}
    judge_part = lesson.part("judge")
    instance = lesson.instance_of(run).id
    truth = answer(lesson.name, instance)
    (score,) = scores(verdicts, {instance: truth}, judge_part.score, stopped)
    return score, verdicts[run.run], judge_part.verdict_line(run, truth)


def values(score):
    """Inspect's value of a run's score (right, answered, supported: each 0.0 or 1.0) from `judge`'s
    `score`: one formula for the scorer, and for the import's check of the score a log holds."""
    return {"right": float(score["right"]), "answered": float(score["answered"]), "supported": float(bool(score["supported"]))}
