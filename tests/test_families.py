"""Every lesson a family of instances: the contract every family keeps, the selection of instances
a campaign, `generate` and Inspect take, `replaylab tasks`, and the careful program that proves each
instance solvable (a family whose careful program is wrong anywhere stops the build)."""

import json
import math
import re

import pytest

from helpers import in_process
from replaylab.agents import recording
from replaylab.baselines import Baselines, FamilyDefect, run_baselines
from replaylab.lessons import DIFFICULTIES, Instance, registry
from replaylab.pipeline import Answers, answer_lesson
from replaylab.selection import ALL, SEEDS, SelectionError, option, select

LESSONS = registry.names()
SMALLEST_FAMILY = 60  # drawn instances of every family, besides the seeds' own questions


# ---------------------------------------------------------------------------------------------
# The contract of a family


@pytest.mark.parametrize("name", LESSONS)
def test_every_family_lists_its_seeds_first_with_unique_ids_every_difficulty_and_its_parameters(name):
    lesson = registry.lesson(name)
    instances = list(lesson.instances.values())
    seeds = [i for i in instances if i.seed]
    assert seeds and instances[: len(seeds)] == seeds  # the seeds' own questions first
    assert len(instances) - len(seeds) >= SMALLEST_FAMILY
    assert len({i.id for i in instances}) == len(instances)
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", i.id) and i.id.startswith(f"{name}-") for i in instances)
    assert {i.difficulty for i in instances} == set(DIFFICULTIES)
    columns = set(lesson.part("family").PARAMETERS)
    assert all(set(i.parameters) == columns for i in instances)
    # the seeds' variants are those a recording that names no instance is judged against
    assert {name for seed in seeds for name in lesson.instance_variants(seed.id)} == set(lesson.variants)


@pytest.mark.parametrize("name", LESSONS)
def test_a_family_is_drawn_the_same_way_twice(name):
    family = registry.lesson(name).part("family")
    first, second = family.instances(), family.instances()
    assert [(i.id, i.difficulty, i.parameters) for i in first] == [(i.id, i.difficulty, i.parameters) for i in second]


@pytest.mark.parametrize("name", LESSONS)
def test_what_an_agent_reads_of_an_instance_never_holds_its_answer(name):
    """The listing of `replaylab tasks --json` holds ids, difficulties, variants and parameters: none
    of them is the build's answer, and an instance's hidden part is listed nowhere."""
    out = in_process("tasks", name, "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    lesson = registry.lesson(name)
    assert [item["instance"] for item in listed] == list(lesson.instances)
    assert all(set(item) == {"lesson", "instance", "difficulty", "seed", "variants", "parameters"} for item in listed)
    text = out.stdout
    for instance in lesson.instances.values():
        for value in instance.hidden.values():
            assert json.dumps(value) not in text


def test_replaylab_tasks_lists_every_family_and_counts_them():
    out = in_process("tasks")
    assert out.returncode == 0, out.stderr
    total = sum(len(registry.lesson(name).instances) for name in LESSONS)
    assert out.stdout.splitlines()[-1] == f"{total} instances: " + ", ".join(
        f"{len(registry.lesson(name).instances)} of {name}" for name in LESSONS)
    assert total >= 240
    assert in_process("tasks", "astronomy").stderr.startswith("replaylab: unknown lesson 'astronomy'")


def test_an_unknown_instance_is_one_line_that_says_where_the_instances_are_listed():
    out = in_process("session", "projectile", "--instance", "projectile-999999")
    assert out.returncode == 2
    assert re.fullmatch(r"replaylab: lesson projectile has no instance 'projectile-999999'; its \d+ instances are "
                        r"projectile-seed, .*, projectile-\d+ \(`replaylab tasks projectile` lists them\)\n", out.stderr), out.stderr


# ---------------------------------------------------------------------------------------------
# The selection of instances


class Family:
    """A lesson-like family for the selection: a name and its instances."""

    def __init__(self, name, instances):
        self.name = name
        self.instances = {i.id: i for i in instances}


def family(count, name="f"):
    levels = list(DIFFICULTIES)
    return Family(name, [Instance(f"{name}-seed", "medium", {}, seed=True)]
                  + [Instance(f"{name}-{n:03d}", levels[n % 3], {}) for n in range(1, count + 1)])


def test_a_selection_takes_the_seeds_all_or_a_draw_in_the_familys_order():
    f = family(30)
    assert select(f, SEEDS) == ["f-seed"] and select(f, ALL) == list(f.instances)
    drawn = select(f, 10)
    assert len(drawn) == 10 and drawn == [i for i in f.instances if i in drawn]
    assert select(f, 10) == drawn and select(f, {"count": 10, "seed": 1}) != drawn  # the seed decides the draw
    hard = select(f, {"difficulty": ["hard"]})
    assert hard and all(f.instances[i].difficulty == "hard" for i in hard)
    assert set(select(f, {"count": 3, "difficulty": ["hard"]})) <= set(hard)


def test_a_draw_keeps_its_instances_when_the_family_grows():
    """Each instance's key depends on its id and the seed alone: a larger family adds instances,
    and those drawn before stay drawn unless a new one takes their place."""
    small, large = family(30), family(60)
    drawn, again = set(select(small, 10)), set(select(large, 20))
    assert len(drawn & again) >= 5 and len(again) == 20


@pytest.mark.parametrize("spec, message", [
    (0, "instances: 0 is not a selection of instances: seeds, all, a number of instances drawn by the seed, or {count, difficulty, seed}"),
    ("some", "instances: 'some' is not a selection of instances"),
    ({"count": 3, "level": ["hard"]}, "instances: unknown key 'level': a selection has count, difficulty and seed"),
    ({"difficulty": ["impossible"]}, "instances.difficulty: ['impossible'] is not a list of difficulties (easy, medium, hard)"),
    ({"count": True}, "instances.count: True is not a whole number of at least 1"),
    (32, "instances: asks for 32 instances of f, whose family has 31"),
    ({"count": 12, "difficulty": ["hard"]}, "instances: asks for 12 instances of f, whose family has 10 of difficulty hard"),
])
def test_a_bad_selection_is_one_line(spec, message):
    with pytest.raises(SelectionError) as error:
        select(family(30), spec)
    assert str(error.value).startswith(message)


def test_the_command_line_takes_seeds_all_or_a_number():
    assert [option(t) for t in ("seeds", "all", "7")] == ["seeds", "all", 7]
    for text in ("0", "-1", "7.5", "hard"):
        with pytest.raises(Exception, match="is not seeds, all or a whole number of at least 1"):
            option(text)


# ---------------------------------------------------------------------------------------------
# The careful program proves every instance solvable; a family where it fails stops the build


def test_the_careful_and_the_trivial_program_run_on_every_instance_of_a_family(tmp_path):
    lesson = registry.lesson("review")
    answers, baselines = tmp_path / "answers.json", tmp_path / "baselines.json"
    answer_lesson(Answers(lesson.name, answers, tmp_path / "instances.csv"))
    run_baselines(Baselines(lesson.name, answers, baselines, 1e-6))
    found = json.loads(baselines.read_text())
    careful, trivial = found["programs"]["careful"], found["programs"]["trivial"]
    runs = sum(len(lesson.instance_variants(i)) for i in lesson.instances)
    assert careful["runs"] == trivial["runs"] == runs and careful["right"] == runs and careful["wrong"] == []
    assert trivial["right"] < runs and careful["strategy"] == lesson.part("agent").CAREFUL
    assert sum(row["runs"] for row in careful["by_difficulty"]) == runs
    rows = (tmp_path / "instances.csv").read_text().splitlines()
    assert rows[0].startswith("instance,difficulty,seed,") and rows[0].endswith(",answer") and len(rows) == 1 + len(lesson.instances)


def test_a_family_whose_careful_program_is_wrong_somewhere_stops_the_build(tmp_path):
    """The build's answers changed by hand for one instance (a square of 4 said to be 17): the
    careful program, right by the family's own tools, is then wrong there, and the build stops
    with one line that names the instance, and writes nothing."""
    lesson = registry.lesson("review")
    answers, baselines = tmp_path / "answers.json", tmp_path / "baselines.json"
    answer_lesson(Answers(lesson.name, answers, tmp_path / "instances.csv"))
    data = json.loads(answers.read_text())
    seed = next(iter(data))
    data[seed]["failures"]["1"] = ["clock"]  # piece 1 said to fail its clock check, which it passes
    answers.write_text(json.dumps(data))
    with pytest.raises(FamilyDefect) as error:
        run_baselines(Baselines(lesson.name, answers, baselines, 1e-6))
    assert re.fullmatch(rf".*baselines\.json: the careful program \(thorough\) is wrong on \d+ of \d+ runs, the first {seed} "
                        r"\((physics|numerics|evidence)\): .*; each instance must be solvable as posed: a defect of the review family",
                        str(error.value)), str(error.value)
    assert not baselines.exists()


# ---------------------------------------------------------------------------------------------
# A drawn instance through `replaylab session --instance`: its own answer right, a neighbour wrong


def answers_for(lesson, instance, variant, truth):
    """(the build's answer of an instance as the answer tool takes it, an answer next to it that is wrong)."""
    if lesson == "projectile":
        low = math.floor(truth["angle"]["value"])
        return {"low": low, "high": low + 1}, {"low": low + 1, "high": low + 2}
    if lesson == "pendulum":
        low, high = truth["bracket"]
        step = high - low
        return {"low": low, "high": high}, {"low": low + step, "high": high + step}
    if lesson == "resonance":
        exact, tolerance = truth["resonance"]["value"], truth["tolerance_rad_s"]
        return {"frequency_rad_s": exact}, {"frequency_rad_s": exact + 2 * tolerance}
    if lesson == "rlc":
        other = {"underdamped": "overdamped", "overdamped": "underdamped"}[truth["regime"]]
        return {"regime": truth["regime"]}, {"regime": other}
    if lesson == "hunter":
        worst = {k: truth["worst"][k] for k in ("method", "steps_per_period", "periods")}
        counterexample = {"outcome": "counterexample", **worst}
        return (counterexample, {"outcome": "none found"}) if not truth["holds"] else ({"outcome": "none found"}, counterexample)
    remit = registry.lesson(lesson).part("lab").remit(variant)
    right = {f"piece_{p}_failed": [c for c in truth["failures"][p] if c in remit] for p in ("1", "2")}
    named = right["piece_1_failed"]
    wrong = named[1:] if named else list(remit[:1])  # one check less, or one more: never the build's list
    return right, {**right, "piece_1_failed": wrong}


@pytest.mark.parametrize("name", LESSONS)
def test_a_drawn_instance_through_a_session_is_judged_against_its_own_answer(tmp_path, name):
    lesson = registry.lesson(name)
    drawn = [i for i in lesson.instances.values() if not i.seed]
    instance = drawn[len(drawn) // 2]
    variant = next(iter(lesson.instance_variants(instance.id)))
    truth = lesson.answers([instance.id])[instance.id]
    right, wrong = answers_for(name, instance.id, variant, truth)
    lines = {}
    for label, answer in (("right", right), ("wrong", wrong)):
        message = {"text": "My answer.", "tool_calls": [{"id": "1", "name": "answer", "arguments": answer}]}
        out = in_process("session", name, "--instance", instance.id, "--variant", variant, "--run", label, stdin=json.dumps(message) + "\n",
                  cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        header, reply = map(json.loads, out.stdout.splitlines()[:2])
        assert header["instance"] == instance.id and header["task"] == lesson.variant(variant, instance.id).task
        assert reply["results"][0]["ok"] and reply["end"]["finished"], reply
        run = recording.load(tmp_path / "results" / "live" / name / f"{label}.json")
        assert run.instance == instance.id
        lines[label] = in_process("replay", f"results/live/{name}/{label}.json", cwd=tmp_path).stdout.splitlines()[-1]
    assert ": right (" in lines["right"], lines["right"]
    assert ": wrong, " in lines["wrong"], lines["wrong"]


# ---------------------------------------------------------------------------------------------
# A campaign takes instances


def test_a_campaign_plans_every_variant_of_every_instance_it_takes_and_names_each_run_after_it():
    from replaylab.campaign import Campaign

    settings = {"name": "f", "models": ["a", "b"], "lessons": ["pendulum", "review"], "instances": 3, "runs": 2,
                "max_connections": 4}
    plan = Campaign(settings, batch_size=2000)
    for lesson in ("pendulum", "review"):
        family = registry.lesson(lesson)
        taken = select(family, 3)
        runs = plan.runs(lesson)
        per_instance = len(family.instance_variants(taken[0]))
        assert len(runs) == 2 * 2 * 3 * per_instance
        assert {run.instance for run in runs.values()} == set(taken)
        assert all(name == f"{run.model}__{run.instance}__{run.variant}__{run.index:03d}" for name, run in runs.items())
    # a group of reviewers is one instance's: decided together, never across instances
    groups = {}
    for run in plan.runs("review").values():
        groups.setdefault(run.group, set()).add(run.instance)
    assert all(len(instances) == 1 for instances in groups.values())
    # the seeds' own questions keep the names their runs had before the families
    seeds = Campaign({**settings, "instances": SEEDS}, batch_size=2000).runs("pendulum")
    assert sorted(seeds) == ["a__default__001", "a__default__002", "b__default__001", "b__default__002"]


def test_a_selection_a_family_cannot_give_stops_the_campaign_with_one_line(tmp_path):
    from helpers.workflow import copy_project, snakemake

    copy = copy_project(tmp_path / "project")
    out = snakemake(copy, "-n", "campaign", "--config", 'campaign={"instances": 100000}', check=False)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        f"config/config.yaml + --config: $.campaign.instances (projectile): asks for 100000 instances of projectile, "
        f"whose family has {len(registry.lesson('projectile').instances)}")
    listed = snakemake(copy, "-n", "campaign", "--config", 'campaign={"instances": 2}')
    assert "campaign_record" in listed.stdout
