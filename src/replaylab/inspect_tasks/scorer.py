"""The scorer of every replaylab task: replaylab's judge. The sample's messages become a
recording, which is replayed through the current code (every result recomputed, so a sample
served from Inspect's cache or resumed by `eval-retry` is checked too), judged by the lesson and
scored against its own scans: right, answered and supported, from recomputed numbers only."""

import json

from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from replaylab.agents.replay import ReplayMismatch
from replaylab.inspect_tasks import convert, judging

NOT_JUDGED = {"right": 0.0, "answered": 0.0, "supported": 0.0}


@scorer(metrics={"right": [accuracy(), stderr()], "answered": [accuracy()], "supported": [accuracy()]})
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
            value={"right": float(found["right"]), "answered": float(found["answered"]), "supported": float(bool(found["supported"]))},
            answer=None if found["answer"] is None else json.dumps(found["answer"]),
            explanation=line,
            metadata={key: found[key] for key in ("right", "answered", "supported", "wrong", "answer", "calls", "budget_used")}
            | {"explanation": verdict["explanation"], "no_answer": verdict["no_answer"]},
        )

    return score
