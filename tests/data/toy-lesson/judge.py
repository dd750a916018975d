"""The toy judge: the largest square the run computed, recomputed."""

from replaylab.lessons import count_calls, validated_calls
from replaylab.lessons.toy import lab

RIGHT_ANSWER = "the run squared 3."


def largest(transcript):
    tools = {t.name: t for t in lab.tools()}
    return max((tools[call.name].function(**arguments)[lab.KEY] for _, call, arguments in validated_calls(transcript, tools)), default=None)


def judge(runs, tolerance):
    return {
        run.run: {"model": run.provenance["model"], "task": run.variant, "group": run.group, **count_calls(run.transcript),
                  "largest": largest(run.transcript)}
        for run in runs
    }


def score(entry, scans):
    return None if entry["largest"] == 9 else "did not square 3"


def verdict_line(recording):
    return f"largest square {largest(recording.transcript)}"
