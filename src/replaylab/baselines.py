"""The family's floor and ceiling: a careful program and a trivial one, run on every instance.

The careful program (each lesson's `agent.CAREFUL`) must be right on every instance, using only the
tools within the budget: that is the proof that each instance is solvable as posed, and an instance
it gets wrong is a defect of the family, which stops the build (`FamilyDefect`). The trivial one
(`agent.TRIVIAL`: no experiment, or a fixed guess) shows the floor a model must beat. Both are run
through the harness (the allowlist, the budget, the message limit), judged and scored exactly as a
recorded run, against the build's answer of each instance.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.errors import ReplaylabError
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.pipeline import read_json, write_json

if TYPE_CHECKING:
    from replaylab.lessons import Lesson

HOW = "Scripted baseline run by the build on every instance of the family ({plan}): a program chose each call from the results it had read."
PROGRAMS = ("careful", "trivial")  # the keys of baselines.json, with the lesson's strategy of each


class FamilyDefect(ReplaylabError, ValueError):
    """An instance the careful program gets wrong: the family poses a question its own tools cannot answer."""


@dataclass(frozen=True)
class Baselines:
    """The baselines stage of a lesson: its answers in, baselines.json out."""

    lesson: str
    answers: str | Path  # input: answers.json
    baselines: str | Path  # output
    tolerance: float


def strategies(lesson: "Lesson") -> dict[str, str]:
    """{program: the lesson's strategy} of the careful and the trivial program."""
    agent = lesson.part("agent")
    return {"careful": agent.CAREFUL, "trivial": agent.TRIVIAL}


def run_program(lesson: "Lesson", plan: str, instance: str, variant: str, tolerance: float) -> tuple[dict[str, Any], str]:
    """(the verdict, the model's name) of one scripted run of `plan` on one variant of an instance."""
    model, program = lesson.scripted(variant, 0, instance, plan)
    v = lesson.variant(variant, instance)
    transcript = loop.run(ScriptedClient(program, model), v.system, v.task, v.allowlist(), v.max_steps)
    name = f"{plan}--{instance}--{variant}"
    run = recording_io.Recording(lesson.name, name, variant, "baseline",
                                 recording_io.provenance("scripted", model, HOW.format(plan=plan)), transcript,
                                 instance=instance)
    return lesson.judge([run], tolerance)[name], model


def outcomes(lesson: "Lesson", answers: dict[str, Any], tolerance: float) -> dict[str, dict[str, Any]]:
    """{program: {"strategy", "runs": [{instance, variant, difficulty, right, wrong}]}}."""
    found: dict[str, dict[str, Any]] = {}
    for program, plan in strategies(lesson).items():
        runs = []
        for instance in lesson.instances.values():
            for variant in lesson.instance_variants(instance.id):
                verdict, _ = run_program(lesson, plan, instance.id, variant, tolerance)
                wrong = lesson.score(verdict, answers[instance.id])
                runs.append({"instance": instance.id, "variant": variant, "difficulty": instance.difficulty,
                             "right": wrong is None, "wrong": wrong})
        found[program] = {"strategy": plan, "runs": runs}
    return found


def summary(program: dict[str, Any]) -> dict[str, Any]:
    """Runs and right ones, in all and per difficulty, and the runs it got wrong."""
    runs = program["runs"]
    by_difficulty = [{"difficulty": level, "runs": sum(r["difficulty"] == level for r in runs),
                      "right": sum(r["right"] for r in runs if r["difficulty"] == level)} for level in DIFFICULTIES]
    return {"strategy": program["strategy"], "runs": len(runs), "right": sum(r["right"] for r in runs),
            "by_difficulty": by_difficulty, "wrong": [r for r in runs if not r["right"]]}


def run_baselines(stage: Baselines) -> None:
    """Write baselines.json; `FamilyDefect` (nothing written) when the careful program is wrong anywhere."""
    lesson = registry.lesson(stage.lesson)
    found = {program: summary(runs) for program, runs in outcomes(lesson, read_json(stage.answers), stage.tolerance).items()}
    careful = found["careful"]
    if careful["wrong"]:
        first = careful["wrong"][0]
        raise FamilyDefect(
            f"{recording_io.printable(str(stage.baselines))}: the careful program ({careful['strategy']}) is wrong on "
            f"{len(careful['wrong'])} of {careful['runs']} runs, the first {first['instance']} ({first['variant']}): "
            f"{first['wrong']}; each instance must be solvable as posed: a defect of the {lesson.name} family")
    write_json(stage.baselines, {"lesson": lesson.name, "instances": len(lesson.instances), "programs": found})
