"""The registry: the one list of replaylab's lessons. Adding a lesson adds its name here.

Every module outside a lesson's package (pipeline, command line, promote, generate, index page,
doctor, workflow, tests) finds lessons here, by name, and never names one itself. A package is
imported only when its lesson is asked for, and only after its name was found in the list.
"""

from importlib import import_module

from replaylab.lessons import Lesson, UnknownLesson

NAMES = ("projectile", "hunter", "review", "pendulum", "resonance", "rlc")  # packages under replaylab/lessons/, in the index's order


def names() -> tuple[str, ...]:
    return NAMES


def lesson(name: object) -> Lesson:
    """The `Lesson` of that name; `UnknownLesson` (one line listing the lessons) for any other."""
    if not isinstance(name, str) or name not in NAMES:
        raise UnknownLesson(f"unknown lesson {name!r}; the lessons are: {', '.join(NAMES)}")
    declared: Lesson = import_module(f"{__package__}.{name}").LESSON
    if declared.name != name:
        raise UnknownLesson(f"the package of lesson {name!r} declares the lesson {declared.name!r}")
    return declared


def lessons() -> list[Lesson]:
    return [lesson(name) for name in NAMES]
