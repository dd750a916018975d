"""Which instances of a lesson's family a campaign, `replaylab generate` or an Inspect task takes.

A selection is `seeds` (the seeds' own questions: what a campaign took before the families), `all`,
a number of instances drawn by a seed, or `{count, difficulty, seed}` (any of the three). A draw
gives each instance a key from its id and the seed alone (`random.Random` seeded with text, whose
stream Python keeps from version to version) and takes the smallest keys, so that a draw keeps its
instances when the family grows; the instances are listed in the family's order.
"""

import argparse
import random
from typing import TYPE_CHECKING, Any

from replaylab.lessons import DIFFICULTIES
from replaylab.errors import InvalidInput

if TYPE_CHECKING:
    from replaylab.lessons import Lesson

SEEDS, ALL = "seeds", "all"


class SelectionError(InvalidInput):
    """A selection that names no instance, or more than the family has: one line."""


def problem(spec: Any, where: str) -> str | None:
    """What is wrong with a selection's form (the lessons aside), as one line, or None."""
    if spec in (SEEDS, ALL) or (isinstance(spec, int) and not isinstance(spec, bool) and spec >= 1):
        return None
    if isinstance(spec, dict):
        unknown = sorted(set(spec) - {"count", "difficulty", "seed"})
        if unknown:
            return f"{where}: unknown key {unknown[0]!r}: a selection has count, difficulty and seed"
        count, levels, seed = spec.get("count"), spec.get("difficulty", list(DIFFICULTIES)), spec.get("seed", 0)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            return f"{where}.count: {count!r} is not a whole number of at least 1"
        if not isinstance(levels, list) or not levels or any(level not in DIFFICULTIES for level in levels):
            return f"{where}.difficulty: {levels!r} is not a list of difficulties ({', '.join(DIFFICULTIES)})"
        if isinstance(seed, bool) or not isinstance(seed, int):
            return f"{where}.seed: {seed!r} is not a whole number"
        return None
    return (f"{where}: {spec!r} is not a selection of instances: {SEEDS}, {ALL}, a number of instances drawn by the "
            "seed, or {count, difficulty, seed}")


def select(lesson: "Lesson", spec: Any, where: str = "instances") -> list[str]:
    """The ids of the instances of `lesson` that `spec` takes, in the family's order; `SelectionError`
    when it takes none, or asks for more than the family (of those difficulties) has."""
    found = problem(spec, where)
    if found:
        raise SelectionError(found)
    instances = list(lesson.instances.values())
    if spec == SEEDS:
        return [i.id for i in instances if i.seed]
    if spec == ALL:
        return [i.id for i in instances]
    settings = spec if isinstance(spec, dict) else {"count": spec}
    levels = settings.get("difficulty", list(DIFFICULTIES))
    pool = [i for i in instances if i.difficulty in levels]
    count, seed = settings.get("count"), settings.get("seed", 0)
    if not pool:
        raise SelectionError(f"{where}: the {lesson.name} family has no instance of difficulty {', '.join(levels)}")
    if count is None:
        return [i.id for i in pool]
    if count > len(pool):
        raise SelectionError(f"{where}: asks for {count} instances of {lesson.name}, whose family has {len(pool)}"
                             + ("" if len(pool) == len(instances) else f" of difficulty {', '.join(levels)}"))
    drawn = {i for _, i in sorted((random.Random(f"{seed}:{i.id}").random(), i.id) for i in pool)[:count]}
    return [i.id for i in pool if i.id in drawn]


def option(text: str) -> str | int:
    """A selection on the command line (argparse's `type`): seeds, all, or a whole number of at least 1."""
    if text in (SEEDS, ALL):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not {SEEDS}, {ALL} or a whole number of at least 1")
