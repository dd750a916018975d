"""The lessons: each is a question about a simulation, an allowlist, reference runs and what the build decides.

Each lesson is a package with `lab` (prompts, tools, allowlists, claims), `judge` (verdicts from
recomputed numbers), `scans` (independent computations), `exercises`, and, outside the audited
code, `figures` and `page`. This module only names them and offers what they share.
"""

from dataclasses import dataclass
from typing import Callable

from replaylab.agents.tools import Allowlist, Refused

LESSONS = ("projectile", "hunter", "review")


class UnknownLesson(ValueError):
    pass


@dataclass(frozen=True)
class Variant:
    """What one kind of run of a lesson gets: prompts, tools (built with settings), budget, step limit."""

    name: str
    system: str
    task: str
    tools: Callable
    budget: int | None = None
    max_steps: int = 12

    def allowlist(self, **settings):
        return Allowlist(self.tools(**settings), budget=self.budget)


def lab(lesson):
    """The `lab` module of a lesson (prompts, variants, tools)."""
    if lesson == "projectile":
        from replaylab.lessons.projectile import lab as module
    elif lesson == "hunter":
        from replaylab.lessons.hunter import lab as module
    elif lesson == "review":
        from replaylab.lessons.review import lab as module
    else:
        raise UnknownLesson(f"unknown lesson {lesson!r}; the lessons are: {', '.join(LESSONS)}")
    return module


def variant(lesson, name):
    variants = lab(lesson).VARIANTS
    if name not in variants:
        raise UnknownLesson(f"lesson {lesson} has no variant {name!r}; its variants are: {', '.join(variants)}")
    return variants[name]


def accepted_calls(transcript, tools):
    """(step number, call, validated arguments) of each call that was accepted and still validates.

    Judges use this to recompute results from arguments: a stored result is never trusted, and a
    call whose arguments would be refused now could not have been accepted.
    """
    for number, step in enumerate(transcript.steps, start=1):
        for call, result in zip(step.message.tool_calls, step.results):
            if not result.ok or not isinstance(call.name, str) or call.name not in tools:
                continue
            try:
                arguments = tools[call.name].validate(call.arguments)
            except Refused:
                continue
            yield number, call, arguments


def shown(value, text):
    """A number at full precision with the text the page shows for it."""
    return {"value": value, "shown": text}


def count_calls(transcript):
    """Calls asked for and calls that ran, over the whole run."""
    results = [r for step in transcript.steps for r in step.results]
    return {"calls": len(results), "ran": sum(r.ok for r in results)}


DRAWN_RUNS_LIMIT = 6


def drawn_runs(results):
    """The runs a figure draws one by one: all of them when few, else the reference runs only
    (every run is still judged and counted in the scorecard)."""
    runs = results.get("runs", {})
    if len(runs) <= DRAWN_RUNS_LIMIT:
        return runs
    return {name: run for name, run in runs.items() if run["group"] == "reference"}
