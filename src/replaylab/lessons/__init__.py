"""The lesson contract: what every lesson declares, and what the lessons share.

A lesson is a package `replaylab.lessons.<name>` whose `__init__` exports one `Lesson` object,
`LESSON`, listed in `replaylab.lessons.registry`. Everything outside the package reaches the
lesson through that object; nothing else names it.
"""

from dataclasses import dataclass
from importlib import import_module
from typing import Callable

from replaylab.agents.tools import Allowlist, Refused


class UnknownLesson(ValueError):
    """A lesson or variant name that is not one of replaylab's: one line that lists the known ones."""


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


# The modules of a lesson package, and what each must define (checked for every lesson by
# tests/test_lesson_contract.py). They are imported when first asked for, so that a job imports
# only the parts it uses (and the workflow reruns it only when one of those changes).
PARTS = {
    "lab": ("VARIANTS", "all_tools"),
    "judge": ("judge", "score", "RIGHT_ANSWER", "verdict_line"),
    "scans": ("scans",),
    "exercises": ("exercises",),
    "agent": ("STRATEGIES", "strategy", "model", "baseline"),
    "tables": ("TABLES", "tables"),
    "figures": ("FIGURES",),
    "page": ("page", "question", "summary"),
}
JUDGED = ("run", "group")


@dataclass(frozen=True)
class Lesson:
    """Everything the rest of replaylab knows of one lesson.

    Declared in the package (`LESSON = Lesson(name=..., package=__name__, title=...)`):
    - `name`: its folder under lessons/, recordings/ and results/, its config entry, its target rule;
    - `title`: what its page is about, after "Lesson `<name>`: ";
    - `judged`: what one verdict and one score are about: "run", or "group" (one run of each
      variant, recorded with the same group name, judged together);
    - `unit`: how pages name what a score counts (singular, plural).
    The rest comes from its parts (`PARTS`): variants and allowlists (lab), judge, scorecard rule
    and promote's one-line verdict (judge), scans, exercises, scripted strategies (agent), tables,
    figures and page.
    """

    name: str
    package: str
    title: str
    judged: str = "run"
    unit: tuple = ("run", "runs")

    def __post_init__(self):
        if self.judged not in JUDGED:
            raise ValueError(f"lesson {self.name}: judged must be one of {', '.join(JUDGED)}, not {self.judged!r}")

    def part(self, name):
        """A module of the lesson's package, one of PARTS (a name from the code, never from a file)."""
        if name not in PARTS:
            raise ValueError(f"{name!r} is not a part of a lesson; the parts are: {', '.join(PARTS)}")
        return import_module(f"{self.package}.{name}")

    # lab
    @property
    def variants(self):
        """{name: Variant}, in the order the pages list them."""
        return self.part("lab").VARIANTS

    def variant(self, name):
        variants = self.variants
        if name not in variants:
            raise UnknownLesson(f"lesson {self.name} has no variant {name!r}; its variants are: {', '.join(variants)}")
        return variants[name]

    def all_tools(self):
        """Every tool of the lesson, exercise tools included, on a fresh allowlist (`replaylab call`)."""
        return self.part("lab").all_tools()

    # judge
    def judge(self, runs, tolerance):
        """{run or group: verdict} of replayed recordings, from recomputed numbers only. Called
        once per replay batch (a lesson judged per group gets whole groups): a verdict depends on
        its own run or group only."""
        return self.part("judge").judge(runs, tolerance)

    def score(self, entry, scans):
        """None when a judged entry reached the right answer, else what it got wrong."""
        return self.part("judge").score(entry, scans)

    @property
    def right_answer(self):
        return self.part("judge").RIGHT_ANSWER

    def verdict_line(self, recording):
        """One line: what the build decides about this recording alone (shown by `replaylab promote`)."""
        return self.part("judge").verdict_line(recording)

    # computed from the code alone
    def scans(self):
        return self.part("scans").scans()

    def exercises(self):
        return self.part("exercises").exercises()

    # scripted baselines
    def scripted(self, variant, seed):
        """(the program's name, the program) of the scripted baseline for a variant and a seed."""
        agent = self.part("agent")
        self.variant(variant)
        return agent.model(variant, seed), agent.baseline(variant, seed)

    # what the build shows
    @property
    def table_names(self):
        return tuple(self.part("tables").TABLES)

    def tables(self, results):
        return self.part("tables").tables(results)

    @property
    def figures(self):
        """{name: function(results) -> matplotlib Figure}."""
        return dict(self.part("figures").FIGURES)

    @property
    def heading(self):
        return f"Lesson `{self.name}`: {self.title}"

    def page(self, results):
        return self.part("page").page(results)

    def question(self, results):
        return self.part("page").question(results)

    def summary(self, results):
        """Lines for the index page: what the build decided, with evidence labels."""
        return self.part("page").summary(results)


def validated_calls(transcript, tools):
    """(message number, call, validated arguments) of each call that was accepted and still validates.

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


def caught(mismatch):
    """What a demonstration's replay against changed code caught, as fields: where (message and
    call, from 1), the tool, the result's key, the recorded and the recomputed value, and the
    message the replay stopped with. A demonstration changes a tool and keeps the prompts and the
    messages, so its replay stops at a result (`mismatch.difference`)."""
    difference = mismatch.difference
    return {
        "caught": True,
        "message": difference.message,
        "call": difference.call,
        "tool": difference.tool,
        "key": difference.key,
        "recorded": difference.recorded,
        "recomputed": difference.recomputed,
        "text": str(mismatch),
    }


def counted(count, one, many):
    """A count with its noun, singular for one: "1 period", "3 periods"."""
    return f"{count} {one if count == 1 else many}"


def shown(value, text):
    """A number at full precision with the text the page shows for it."""
    return {"value": value, "shown": text}


REFERENCE_GROUP = "reference"  # the group of the committed reference runs: the pages' demonstrations are made with them


def run_facts(run, task=None):
    """What every judge says of a run before its verdict: who made it, for which task (the variant by
    default), its group, and its calls."""
    return {"model": run.model, "task": run.variant if task is None else task, "group": run.group,
            **count_calls(run.transcript)}


def count_calls(transcript):
    """Calls asked for and calls that ran, over the whole run."""
    results = [r for step in transcript.steps for r in step.results]
    return {"calls": len(results), "ran": sum(r.ok for r in results)}


DRAWN_RUNS_LIMIT = 6


def drawn_runs(results):
    """The runs a figure draws one by one: all of them when few, else the reference runs only
    (every run is still judged and counted in the scorecard)."""
    runs = results["runs"]
    if len(runs) <= DRAWN_RUNS_LIMIT:
        return runs
    return {name: run for name, run in runs.items() if run["group"] == "reference"}
