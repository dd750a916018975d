"""The toy judge: the answer against the build's own square of 3 (right), and against the run's own
recomputed squares (supported)."""

from replaylab.lessons import answer_facts, judgement_line, run_facts, validated_calls
from replaylab.lessons.toy import lab

RIGHT_ANSWER = "the answer's square is the build's own square of 3."
NO_ANSWER, WRONG = "no answer", "its square is not the build's square of 3"


def squares(transcript):
    """{x: x squared} of the run's accepted calls, recomputed."""
    tools = {t.name: t for t in lab.tools()}
    return {arguments["x"]: tools[call.name].function(**arguments)[lab.KEY]
            for _, call, arguments in validated_calls(transcript, tools)}


def verdict_of(run):
    facts = answer_facts(run, lab.VARIANTS[run.variant])
    computed = squares(run.transcript)
    answer = facts["answer"]
    if answer is None:
        supported, support = None, "no answer to support"
    elif lab.NUMBER not in computed:
        supported, support = False, f"the run did not square {lab.NUMBER}"
    else:
        supported = computed[lab.NUMBER] == answer["square"]
        support = f"the run squared {lab.NUMBER} and got {computed[lab.NUMBER]:g}"
    return {**run_facts(run), **facts, "supported": supported, "support": support,
            "largest": max(computed.values(), default=None)}


def judge(runs, tolerance):
    return {run.run: verdict_of(run) for run in runs}


def truth(scans):
    square = next(row[lab.KEY] for row in scans["squares"] if row["x"] == lab.NUMBER)
    return square, f"the build computes {lab.NUMBER} squared as {square:g}"


def score(entry, scans):
    """None when the answer is right, else what is wrong."""
    if entry["answer"] is None:
        return NO_ANSWER
    return None if entry["answer"]["square"] == truth(scans)[0] else WRONG


def answer_text(answer):
    return f"square {answer['square']:g}"


def verdict_line(recording, scans):
    verdict = verdict_of(recording)
    return judgement_line(verdict, score(verdict, scans), answer_text, truth(scans)[1])
