"""The toy judge: the answer against the build's own square of the instance's number (right), and
against the run's own recomputed squares (supported)."""

from replaylab.lessons import answer_facts, judgement_line, run_facts, validated_calls
from replaylab.lessons.toy import LESSON, lab

RIGHT_ANSWER = "the answer's square is the build's own square of the instance's number."
NO_ANSWER, WRONG = "no answer", "its square is not the build's square of the number"


def squares(transcript):
    """{x: x squared} of the run's accepted calls, recomputed."""
    tools = {t.name: t for t in lab.tools()}
    return {arguments["x"]: tools[call.name].function(**arguments)[lab.KEY]
            for _, call, arguments in validated_calls(transcript, tools)}


def verdict_of(run):
    instance = LESSON.instance_of(run)
    number = instance.parameters["number"]
    facts = answer_facts(run, LESSON.variant_of(run))
    computed = squares(run.transcript)
    answer = facts["answer"]
    if answer is None:
        supported, support = None, "no answer to support"
    elif number not in computed:
        supported, support = False, f"the run did not square {number}"
    else:
        supported = computed[number] == answer["square"]
        support = f"the run squared {number} and got {computed[number]:g}"
    return {**run_facts(run, instance), **facts, "supported": supported, "support": support,
            "largest": max(computed.values(), default=None)}


def judge(runs, tolerance):
    return {run.run: verdict_of(run) for run in runs}


def score(entry, truth):
    """None when the answer is right against `truth`, the build's answer of the run's instance, else what is wrong."""
    if entry["answer"] is None:
        return NO_ANSWER
    return None if entry["answer"]["square"] == truth["square"] else WRONG


def answer_text(answer):
    return f"square {answer['square']:g}"


def verdict_line(recording, truth):
    verdict = verdict_of(recording)
    return judgement_line(verdict, score(verdict, truth), answer_text, f"the build computes the square as {truth['square']:g}")
