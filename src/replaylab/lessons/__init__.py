"""The lesson contract: what every lesson declares, and what the lessons share.

A lesson is a package `replaylab.lessons.<name>` whose `__init__` exports one `Lesson` object,
`LESSON`, listed in `replaylab.lessons.registry`. Everything outside the package reaches the
lesson through that object; nothing else names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

from replaylab.agents.loop import CALLS_ONLY, MAX_CALLS_PER_MESSAGE
from replaylab.agents.messages import ModelMessage, ToolCall, ToolResult, Transcript
from replaylab.agents.tools import ANSWER, Allowlist, Refused, Tool
from replaylab.errors import InvalidInput

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from replaylab.agents.recording import Recording

Program = Callable[[list[dict[str, Any]]], ModelMessage]  # a scripted baseline: conversation -> next message


class UnknownLesson(InvalidInput):
    """A lesson or variant name that is not one of replaylab's: one line that lists the known ones."""


@dataclass(frozen=True)
class Prompts:
    """The system text and the task of a variant as a format of recordings had them."""

    system: str
    task: str


DIFFICULTIES = ("easy", "medium", "hard")  # an instance's difficulty level, in this order on the pages


@dataclass(frozen=True)
class Instance:
    """One question of a lesson's family: its own numbers, drawn from the family's stated ranges by
    the family's seed (or one of the seeds' own questions), with a difficulty level.

    `parameters` are what its task text states, named as there with their SI unit in the name
    (`launch_speed_m_s`): `replaylab tasks` lists them, and `instances.csv` has a column of each.
    `hidden` holds what the lab needs to build the instance and the agent must never see (a piece
    of code's faults, say): it is listed nowhere, and the build's answer is never stored in either:
    the build computes it (`answers`)."""

    id: str
    difficulty: str
    parameters: dict[str, Any]
    seed: bool = False
    hidden: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"instance {self.id}: difficulty must be one of {', '.join(DIFFICULTIES)}, not {self.difficulty!r}")


@dataclass(frozen=True)
class Variant:
    """What one kind of run of a lesson gets: prompts, tools (built with settings), the answer tool,
    budget, step limit. `intro`: the lesson's own part of the system text, which ends with the
    harness's rules (`harness_rules`) in the words of the interface the agent uses. `format1`: the
    prompts of recordings of format 1, made before runs ended with an answer (they replay against
    those prompts and an allowlist without the answer tool)."""

    name: str
    intro: str
    task: str
    tools: Callable[..., Iterable[Tool]]
    answer: Tool
    budget: int | None = None
    max_steps: int = 12
    format1: Prompts | None = None

    @property
    def system(self) -> str:
        """The system text of a run whose agent sends messages (a provider, a session, a program)."""
        return f"{self.intro} {harness_rules(self.max_steps, self.budget)}"

    def system_for(self, kind: str) -> str:
        """The system text as an agent of this kind of run reads it: an MCP client makes calls, never
        messages, so its text counts calls."""
        if kind == CALLS_ONLY:
            return f"{self.intro} {harness_rules(self.max_steps, self.budget, calls=True)}"
        return self.system

    def prompts(self, kind: str, format1: bool = False) -> Prompts | None:
        """The `Prompts` a recording of this kind (and format) was made with: what its replay compares."""
        if format1:
            return self.format1
        return Prompts(self.system_for(kind), self.task)

    def allowlist(self, answer: bool = True, **settings: Any) -> Allowlist:
        """A fresh allowlist (and budget): the experiment tools built with `settings`, and the answer
        tool unless `answer` is False (recordings of format 1)."""
        tools = list(self.tools(**settings))
        return Allowlist(tools + [self.answer] if answer else tools, budget=self.budget)


def harness_rules(max_steps: int, budget: int | None = None, calls: bool = False) -> str:
    """How a run works, the same words for every lesson (the end of every system text): its limit,
    refusals, the budget, and how the run ends. `calls`: in the words of an agent that makes calls
    one at a time (an MCP client), never messages."""
    spent = (
        f"You have a budget of {budget} experiments: each accepted call of an experiment tool uses one, "
        f"and the {ANSWER} tool uses none. "
        if budget is not None
        else f"There is no budget of experiments; the {ANSWER} tool is not an experiment either. "
    )
    answer = (
        f"End the run by calling the tool {ANSWER} with your answer: its fields are the only thing judged, never "
        "your words. An answer in a form the task rules out is refused with the reason, and the run goes on; an "
        "accepted answer is echoed back, and ends the run."
    )
    if calls:
        return (
            f"How the run works: you may make at most {max_steps * MAX_CALLS_PER_MESSAGE} tool calls in all, the "
            f"{ANSWER} call included. Every call counts against that limit, a refused one too; a refused call runs "
            f"nothing and costs no experiment, and its result says why it was refused. Each result says how many "
            f"calls are left. {spent}{answer}"
        )
    return (
        f"How the run works: you may send at most {max_steps} messages, each with at most "
        f"{MAX_CALLS_PER_MESSAGE} tool calls. Every message counts against that limit, whatever its calls; "
        f"a refused call runs nothing and costs no experiment, but it does use its message, and its result "
        f"says why it was refused. {spent}{answer} A message without a tool call also ends the run, with no answer."
    )


# The modules of a lesson package, and what each must define (checked for every lesson by
# tests/test_lesson_contract.py). They are imported when first asked for, so that a job imports
# only the parts it uses (and the workflow reruns it only when one of those changes).
PARTS = {
    "family": ("SEED", "PARAMETERS", "seeds", "instances", "variants"),
    "answers": ("answers",),
    "lab": ("VARIANTS", "all_tools"),
    "judge": ("judge", "score", "RIGHT_ANSWER", "verdict_line"),
    "scans": ("scans",),
    "exercises": ("exercises",),
    "agent": ("STRATEGIES", "CAREFUL", "TRIVIAL", "strategy", "model", "baseline"),
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
    - `judged`: "run", or "group": besides its own verdict and score, each run is decided together
      with the other runs of its group (one run of each variant, recorded with the same group name
      by the same model), and the judge has `decide(runs, verdicts)`;
    - `unit`: how pages name a run of the lesson (singular, plural).
    The rest comes from its parts (`PARTS`): variants and allowlists (lab), judge, scorecard rule
    and promote's one-line verdict (judge), scans, exercises, scripted strategies (agent), tables,
    figures and page.
    """

    name: str
    package: str
    title: str
    judged: str = "run"
    unit: tuple[str, str] = ("run", "runs")

    def __post_init__(self) -> None:
        if self.judged not in JUDGED:
            raise ValueError(f"lesson {self.name}: judged must be one of {', '.join(JUDGED)}, not {self.judged!r}")

    def part(self, name: str) -> ModuleType:
        """A module of the lesson's package, one of PARTS (a name from the code, never from a file)."""
        if name not in PARTS:
            raise ValueError(f"{name!r} is not a part of a lesson; the parts are: {', '.join(PARTS)}")
        return import_module(f"{self.package}.{name}")

    # family
    @property
    def instances(self) -> dict[str, Instance]:
        """{id: Instance} of the lesson's family: the seeds' own questions first, then the drawn ones."""
        return _instances(self)

    def instance(self, instance_id: object) -> Instance:
        """The instance of that id; `UnknownLesson` (one line) for any other. A seed's question is
        found without drawing the family (a recording of it, a session on it, cost no draw)."""
        seeds = _seeds(self)
        if isinstance(instance_id, str) and instance_id in seeds:
            return seeds[instance_id]
        found = self.instances
        if not isinstance(instance_id, str) or instance_id not in found:
            ids = list(found)
            shown = ", ".join(ids) if len(ids) <= 6 else f"{', '.join(ids[:3])}, ..., {ids[-1]}"
            raise UnknownLesson(f"lesson {self.name} has no instance {instance_id!r}; its {len(ids)} instances are "
                                f"{shown} (`replaylab tasks {self.name}` lists them)")
        return found[instance_id]

    def instance_variants(self, instance_id: str) -> dict[str, Variant]:
        """{name: Variant} of one instance: its prompts, tools and answer tool, made from its numbers."""
        return _instance_variants(self, instance_id)

    @property
    def seeds(self) -> dict[str, Instance]:
        """{variant name: the seed instance that holds it}: what a recording that names no instance
        (made before the families, or naming only its variant) is an instance of. Found without
        drawing the family."""
        return {name: i for i in _seeds(self).values() for name in self.instance_variants(i.id)}

    def answers(self, ids: Iterable[str] | None = None) -> dict[str, Any]:
        """{id: the build's answer} of some instances (all by default), computed from the simulation
        or an exact formula: never stored, never shown to an agent."""
        chosen = list(self.instances.values()) if ids is None else [self.instance(i) for i in ids]
        return cast(dict[str, Any], self.part("answers").answers(chosen))

    # lab
    @property
    def variants(self) -> dict[str, Variant]:
        """{name: Variant} of the seeds' own questions, in the order the pages list them: the variants
        a recording that names no instance may name."""
        return {name: self.instance_variants(instance.id)[name] for name, instance in self.seeds.items()}

    def variant(self, name: str, instance: str | None = None) -> Variant:
        """The Variant `name` of an instance (its id; None: the seed instance that holds `name`)."""
        if instance is None:
            return self.instance_variants(self.seed_of(name).id)[name]
        variants = self.instance_variants(self.instance(instance).id)
        if name not in variants:
            raise UnknownLesson(f"instance {instance} of lesson {self.name} has no variant {name!r}; its variants are: "
                                f"{', '.join(variants)}")
        return variants[name]

    def seed_of(self, variant: str) -> Instance:
        """The seed instance that holds a variant; `UnknownLesson` for a name no seed holds."""
        seeds = self.seeds
        if variant not in seeds:
            raise UnknownLesson(f"lesson {self.name} has no variant {variant!r}; its variants are: {', '.join(seeds)}")
        return seeds[variant]

    def instance_of(self, run: Recording) -> Instance:
        """The instance a recording is of: the one it names, else the seed instance of its variant."""
        if run.instance is not None:
            return self.instance(run.instance)
        return self.seed_of(run.variant)

    def variant_of(self, run: Recording) -> Variant:
        """The Variant a recording was made with (its instance's, of its variant's name)."""
        return self.variant(run.variant, self.instance_of(run).id)

    def all_tools(self) -> Allowlist:
        """Every tool of the lesson, exercise tools included, on a fresh allowlist (`replaylab call`)."""
        return cast(Allowlist, self.part("lab").all_tools())

    # judge
    def judge(self, runs: Sequence[Recording], tolerance: float) -> dict[str, dict[str, Any]]:
        """{run: verdict} of replayed recordings, from recomputed numbers only. Called once per
        replay batch (a lesson judged per group gets whole groups): a verdict depends on its own run
        only."""
        return cast(dict[str, dict[str, Any]], self.part("judge").judge(runs, tolerance))

    def score(self, entry: dict[str, Any], truth: Any) -> str | None:
        """None when a judged run's answer is right against `truth`, the build's answer of its
        instance, else what it got wrong."""
        return cast("str | None", self.part("judge").score(entry, truth))

    def group_key(self, run: Recording) -> str:
        """The group a run is decided with (a lesson judged per group): its group and its model, so
        that runs of two models that share a group name are never decided together."""
        return f"{run.group} [{run.model}]"

    def decide(self, runs: Sequence[Recording], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """{group key: decision} of the groups of replayed runs (whole groups, their verdicts), for
        a lesson that decides per group; {} for the others."""
        if self.judged != "group":
            return {}
        members: dict[str, list[Recording]] = {}
        for run in runs:
            members.setdefault(self.group_key(run), []).append(run)
        decide = self.part("judge").decide
        return {key: decide(group, verdicts) for key, group in sorted(members.items())}

    @property
    def right_answer(self) -> str:
        return cast(str, self.part("judge").RIGHT_ANSWER)

    def verdict_line(self, recording: Recording) -> str:
        """One line: what the build decides about this recording alone, against the build's answer of
        its instance (shown by `replaylab promote` and `replaylab replay`). The answer is computed
        here, never by the judge, so that a change to how it is computed reruns no replay job."""
        instance = self.instance_of(recording).id
        return cast(str, self.part("judge").verdict_line(recording, self.answers([instance])[instance]))

    # computed from the code alone
    def scans(self) -> dict[str, Any]:
        return cast(dict[str, Any], self.part("scans").scans())

    def exercises(self) -> dict[str, Any]:
        return cast(dict[str, Any], self.part("exercises").exercises())

    # scripted baselines
    def scripted(self, variant: str, seed: int, instance: str | None = None,
                 plan: str | None = None) -> tuple[str, Program]:
        """(the program's name, the program) of the scripted baseline for a variant of an instance (its
        id; None: the seed instance of the variant) and a seed; `plan` names a strategy instead of the
        seed's (the careful one, the trivial one)."""
        agent = self.part("agent")
        found = self.instance(instance) if instance is not None else self.seed_of(variant)
        self.variant(variant, found.id)
        return agent.model(variant, seed, plan), agent.baseline(variant, seed, found, plan)

    # what the build shows
    @property
    def table_names(self) -> tuple[str, ...]:
        return tuple(self.part("tables").TABLES)

    def tables(self, results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        return cast(dict[str, list[dict[str, Any]]], self.part("tables").tables(results))

    @property
    def figures(self) -> dict[str, Callable[[dict[str, Any]], Figure]]:
        """{name: function(results) -> matplotlib Figure}."""
        return dict(self.part("figures").FIGURES)

    @property
    def heading(self) -> str:
        return f"Lesson `{self.name}`: {self.title}"

    def page(self, results: dict[str, Any]) -> str:
        return cast(str, self.part("page").page(results))

    def question(self, results: dict[str, Any]) -> str:
        return cast(str, self.part("page").question(results))

    def summary(self, results: dict[str, Any]) -> list[str]:
        """Lines for the index page: what the build decided, with evidence labels."""
        return cast(list[str], self.part("page").summary(results))


@cache
def _instances(lesson: Lesson) -> dict[str, Instance]:
    """{id: Instance} of a lesson's family, drawn once per process."""
    found: dict[str, Instance] = {}
    for instance in lesson.part("family").instances():
        if instance.id in found:
            raise ValueError(f"lesson {lesson.name}: the instance id {instance.id!r} appears twice")
        found[instance.id] = instance
    return found


@cache
def _seeds(lesson: Lesson) -> dict[str, Instance]:
    """{id: Instance} of the seeds' own questions: the family's `seeds()`, which draws nothing."""
    return {instance.id: instance for instance in lesson.part("family").seeds()}


@cache
def _instance_variants(lesson: Lesson, instance_id: str) -> dict[str, Variant]:
    return dict(lesson.part("family").variants(lesson.instance(instance_id)))


def validated_calls(transcript: Transcript, tools: Mapping[str, Tool]) -> Iterator[tuple[int, ToolCall, dict[str, Any]]]:
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


NO_ANSWER = "no answer: the run ended without an accepted call of answer"
FORMAT1 = "no answer: recorded in format 1, before runs ended with an answer, so it is judged as no answer"


def submitted(recording: Recording, variant: Variant) -> tuple[dict[str, Any] | None, str | None]:
    """(the answer's fields as validated, None) of the accepted answer that ended a run, or (None,
    why there is none). A run that a per-run limit stopped has no answer, even if its last message
    held one; so has a run of format 1."""
    transcript = recording.transcript
    if recording.format1:
        return None, FORMAT1
    if transcript.stopped_by:
        return None, f"no answer: the run was stopped by its limit {transcript.stopped_by['limit']}"
    if transcript.finished and transcript.steps:
        found = [a for _, call, a in validated_calls(transcript, {ANSWER: variant.answer}) if call.name == ANSWER]
        if found:
            return found[-1], None
    return None, NO_ANSWER


def judgement_line(verdict: dict[str, Any], wrong: str | None, answer_text: Callable[[dict[str, Any]], str],
                   truth: str) -> str:
    """One line of a verdict (`replaylab promote`, `replaylab replay`): the answer as submitted, and
    both judgements. `wrong`: the lesson's score (None when right); `answer_text(answer)`: the
    answer in words; `truth`: what the build computed to decide."""
    if verdict["answer"] is None:
        return f"{verdict['no_answer']}: not right"
    right = "right" if wrong is None else f"wrong, {wrong}"
    supported = "supported" if verdict["supported"] else "not supported"
    return f"answer {answer_text(verdict['answer'])}: {right} ({truth}); {supported}: {verdict['support']}"


def answer_facts(recording: Recording, variant: Variant) -> dict[str, Any]:
    """What every verdict says of a run's answer: the fields as submitted (their explanation is kept
    apart: shown, never judged), or None and why there is none."""
    fields, why = submitted(recording, variant)
    if fields is None:
        return {"answer": None, "no_answer": why, "explanation": None}
    fields = dict(fields)
    return {"answer": fields, "no_answer": None, "explanation": fields.pop("explanation", None)}


class _Mismatch(Protocol):
    """A replay's mismatch (agents.replay.ReplayMismatch), as `caught` reads it."""

    @property
    def difference(self) -> Any: ...


def caught(mismatch: _Mismatch) -> dict[str, Any]:
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


def counted(count: int, one: str, many: str) -> str:
    """A count with its noun, singular for one: "1 period", "3 periods"."""
    return f"{count} {one if count == 1 else many}"


def shown(value: Any, text: str) -> dict[str, Any]:
    """A number at full precision with the text the page shows for it."""
    return {"value": value, "shown": text}


def call_outcome(result: ToolResult, key: str) -> dict[str, Any]:
    """An exercise's call as its page shows it: the value of result `key` (six digits), or the refusal."""
    if result.ok:
        value = result.content[key]
        return {"ok": True, "value": shown(value, f"{value:.6g}")}
    return {"ok": False, "error": result.content["error"]}


def misbehaving_calls(allowlist: Allowlist, calls: Sequence[tuple[str, str, dict[str, Any]]], key: str) -> list[dict[str, Any]]:
    """Each call (what it tries, tool, arguments) through one fresh allowlist, and what became of it
    (a refused call costs nothing)."""
    return [
        {"what": what, "name": name, "arguments": arguments, **call_outcome(allowlist.dispatch(ToolCall(str(i), name, arguments)), key)}
        for i, (what, name, arguments) in enumerate(calls, start=1)
    ]


def past_the_budget(allowlist: Allowlist, tool: str, arguments: dict[str, Any], budget: int, key: str) -> dict[str, Any]:
    """One valid call asked for once more than the budget allows, on a fresh allowlist: the last is refused."""
    repeats = [{"call": i, **call_outcome(allowlist.dispatch(ToolCall(str(i), tool, arguments)), key)} for i in range(1, budget + 2)]
    return {"budget": budget, "repeats": repeats}


REFERENCE_GROUP = "reference"  # the group of the committed reference runs: the pages' demonstrations are made with them


def run_facts(run: Recording, instance: Instance, task: str | None = None) -> dict[str, Any]:
    """What every judge says of a run before its verdict: who made it, for which task (the variant by
    default), of which instance (and its difficulty), its group, and its calls."""
    return {"model": run.model, "task": run.variant if task is None else task, "instance": instance.id,
            "difficulty": instance.difficulty, "group": run.group, **count_calls(run.transcript)}


def count_calls(transcript: Transcript) -> dict[str, int]:
    """Calls asked for and calls that ran, over the whole run; the answer is not counted (it is not
    an experiment)."""
    results = [r for step in transcript.steps for call, r in zip(step.message.tool_calls, step.results) if call.name != ANSWER]
    return {"calls": len(results), "ran": sum(r.ok for r in results)}


DRAWN_RUNS_LIMIT = 6


def drawn_runs(results: dict[str, Any]) -> dict[str, Any]:
    """The runs a figure draws one by one: all of them when few, else the reference runs only
    (every run is still judged and counted in the scorecard)."""
    runs: dict[str, Any] = results["runs"]
    if len(runs) <= DRAWN_RUNS_LIMIT:
        return runs
    return {name: run for name, run in runs.items() if run["group"] == "reference"}
