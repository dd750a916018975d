"""One Inspect task per lesson, `replaylab/<lesson>`, its dataset the lesson's family: a sample per
variant of each instance `-T instances=...` takes (seeds, the default: the seeds' own questions;
all; or a number drawn by seed 0), or only the variant of `-T variant=NAME`. A sample's input is
the variant's system text and task, verbatim;
its tools are the variant's allowlist (tools.py); the solver is replaylab's loop (solver.py); the
score is replaylab's judgement (scorer.py); the variant's message limit is Inspect's turn limit
(a turn is one model message; Inspect's own message limit counts every message). The tasks are
made from the registry, so `inspect list tasks`, which reads code without running it, does not see
them here: listing.py writes a file with one written-out task per lesson, which it lists."""

from inspect_ai import Epochs, Task, task
from inspect_ai._util.error import PrerequisiteError  # Inspect's one-line error for a bad -T value (pinned version)
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from replaylab import __version__
from replaylab.agents.recording import FORMAT
from replaylab.inspect_tasks.scorer import replaylab_judge
from replaylab.inspect_tasks.solver import allowlist_loop
from replaylab.lessons import registry
from replaylab.selection import SEEDS, SelectionError, select


def sample(lesson, instance, variant):
    """The sample of one variant of an instance: its id is the variant's name for the seeds' own
    questions (as before the families), else INSTANCE.VARIANT."""
    v = lesson.variant(variant, instance.id)
    return Sample(
        id=variant if instance.seed else f"{instance.id}.{variant}",
        input=[ChatMessageSystem(content=v.system), ChatMessageUser(content=v.task)],
        metadata={"lesson": lesson.name, "instance": instance.id, "difficulty": instance.difficulty, "variant": variant,
                  "replaylab": __version__},
    )


def lesson_task(name, variant=None, instances=SEEDS):
    lesson = registry.lesson(name)
    if isinstance(instances, str) and instances.isdigit():
        instances = int(instances)
    try:
        chosen = [lesson.instance(i) for i in select(lesson, instances, f"replaylab/{name}: -T instances")]
    except SelectionError as error:
        raise PrerequisiteError(str(error)) from None
    pairs = [(i, v) for i in chosen for v in lesson.instance_variants(i.id) if variant is None or v == variant]
    if not pairs:
        known = sorted({v for i in chosen for v in lesson.instance_variants(i.id)})
        raise PrerequisiteError(f"replaylab/{name}: -T variant={variant}: not a variant of {name} (its variants: {', '.join(known)})")
    return Task(
        dataset=MemoryDataset([sample(lesson, i, v) for i, v in pairs], name=name),
        solver=allowlist_loop(),
        scorer=replaylab_judge(),
        turn_limit=max(lesson.variant(v, i.id).max_steps for i, v in pairs),  # a guard: the solver stops at its variant's own
        epochs=Epochs(1, "mean"),  # a sample's epochs reduced to their mean before the metrics (--epochs N keeps it)
        version=FORMAT,
        metadata={"lesson": name, "replaylab": __version__},
    )


def _register(name):
    def make(variant: str | None = None, instances: str | int = SEEDS) -> Task:
        return lesson_task(name, variant, instances)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"replaylab's lesson {name}: every variant (or the one of -T variant=NAME) of the instances of -T "
                    "instances= (seeds, all, or a number drawn by seed 0).")
    return task(name=name)(make)


TASKS = {name: _register(name) for name in registry.names()}
globals().update(TASKS)
