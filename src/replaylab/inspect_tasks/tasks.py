"""One Inspect task per lesson, `replaylab/<lesson>`, with a sample per variant (or only the one
named by `-T variant=NAME`). A sample's input is the variant's system text and task, verbatim;
its tools are the variant's allowlist (tools.py); the solver is replaylab's loop (solver.py); the
score is replaylab's judgement (scorer.py); the variant's message limit is Inspect's turn limit
(a turn is one model message; Inspect's own message limit counts every message)."""

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError  # Inspect's one-line error for a bad -T value (pinned version)
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from replaylab import __version__
from replaylab.agents.recording import FORMAT
from replaylab.inspect_tasks.scorer import replaylab_judge
from replaylab.inspect_tasks.solver import allowlist_loop
from replaylab.lessons import registry


def sample(lesson, variant):
    v = lesson.variant(variant)
    return Sample(
        id=variant,
        input=[ChatMessageSystem(content=v.system), ChatMessageUser(content=v.task)],
        metadata={"lesson": lesson.name, "variant": variant, "replaylab": __version__},
    )


def lesson_task(name, variant=None):
    lesson = registry.lesson(name)
    if variant is None:
        variants = list(lesson.variants)
    elif variant in lesson.variants:
        variants = [variant]
    else:
        raise PrerequisiteError(f"replaylab/{name}: -T variant={variant}: not a variant of {name} (its variants: {', '.join(lesson.variants)})")
    return Task(
        dataset=MemoryDataset([sample(lesson, v) for v in variants], name=name),
        solver=allowlist_loop(),
        scorer=replaylab_judge(),
        turn_limit=max(lesson.variant(v).max_steps for v in variants),  # a guard: the solver stops at its variant's own
        version=FORMAT,
        metadata={"lesson": name, "replaylab": __version__},
    )


def _register(name):
    def make(variant: str | None = None) -> Task:
        return lesson_task(name, variant)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"replaylab's lesson {name}: every variant, or the one of -T variant=NAME."
    return task(name=name)(make)


TASKS = {name: _register(name) for name in registry.names()}
globals().update(TASKS)
