"""The scorer of every replaylab task: replaylab's judge. The sample's messages become a
recording, which is replayed through the current code (every result recomputed, so a sample
served from Inspect's cache or resumed by `eval-retry` is checked too), judged by the lesson and
scored against its own scans: right, answered and supported, from recomputed numbers only.

Each of the three has its accuracy and its standard error over instances (`replaylab/stderr`): the runs of
one instance share its question, so they are not independent evidence, and the workflow's lesson
pages count instances too. Inspect first reduces each sample's epochs to their mean (the task's
reducer, `mean`), then the error is clustered by instance (`statistics.clustered`, the lesson
pages' own formula): with E epochs of every sample it is the clustered error of all the runs. With
fewer than two instances it is nan, not 0: one instance cannot show how a rate varies between
questions, however many epochs ran (`-T instances=20` takes 20 of the family).
"""

import json

from inspect_ai.scorer import Metric, SampleScore, Score, Target, accuracy, metric, scorer
from inspect_ai.solver import TaskState

from replaylab.agents.replay import ReplayMismatch
from replaylab.inspect_tasks import convert, judging

NOT_JUDGED = {"right": 0.0, "answered": 0.0, "supported": 0.0}


@metric(name="stderr")
def instance_stderr() -> Metric:
    """The standard error of the mean score over instances (the module's docstring): Inspect's own
    `stderr` takes the samples as independent, and gives 0 for one sample."""

    def compute(scores: list[SampleScore]) -> float:
        from replaylab.statistics import clustered  # scipy: only when the metric is computed

        by_instance = {}
        for found in scores:
            instance = (found.sample_metadata or {}).get("instance", found.sample_id)
            total, count = by_instance.get(instance, (0.0, 0))
            by_instance[instance] = (total + found.score.as_float(), count + 1)
        error = clustered([total for total, _ in by_instance.values()], [count for _, count in by_instance.values()])
        return float("nan") if error["standard_error"] is None else error["standard_error"]

    return compute


@scorer(metrics={key: [accuracy(), instance_stderr()] for key in NOT_JUDGED})
def replaylab_judge():
    async def score(state: TaskState, target: Target) -> Score:
        where = f"sample {state.sample_id} epoch {state.epoch}"
        stopped_by = None
        if state.store.get(convert.FINISHED) is None:
            limit = state.store.get(convert.LIMIT)
            stopped_by = convert.stopped_by(limit) if limit else None
            if stopped_by is None:
                what = f"Inspect's {limit['type']} limit" if limit else "Inspect (a limit or an error)"
                return Score(value=NOT_JUDGED, explanation=f"not judged: {what} ended the sample inside the run, "
                             "which replaylab does not replay")
        try:
            run = convert.recording(
                state.metadata["lesson"], state.metadata["variant"], "inspect-sample", "inspect",
                convert.scorer_provenance(str(state.model)),
                convert.transcript(state.messages, str(state.model), bool(state.store.get(convert.FINISHED)), stopped_by, where),
                state.metadata.get("instance"),
            )
            found, verdict, line = judging.judge(run)
        except (convert.NotARun, ReplayMismatch) as error:
            return Score(value=NOT_JUDGED, explanation=f"not judged: {error}")
        return Score(
            value=judging.values(found),
            answer=None if found["answer"] is None else json.dumps(found["answer"]),
            explanation=line,
            metadata={key: found[key] for key in ("right", "answered", "supported", "wrong", "answer", "calls", "budget_used")}
            | {"explanation": verdict["explanation"], "no_answer": verdict["no_answer"]},
        )

    return score
