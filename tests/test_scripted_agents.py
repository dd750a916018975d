"""The scripted baseline agents, run through the real loop and judged as the build judges them.

Each program reads the results of its earlier calls, chooses the next ones and ends with a call
of the answer tool: the default strategy (seed 0) gives the right answer, its experiments support
it, the strategies that are wrong on purpose are wrong as documented (`careless` experiments as
the default does and answers carelessly), and none of them replays the calls of the committed
reference recordings.
"""

import dataclasses
import json
import re
from functools import cache

import numpy as np
import pytest

from helpers import RECORDINGS, ROOT, in_process
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry
from replaylab.lessons.hunter import agent as hunter_agent
from replaylab.lessons.hunter import judge as hunter_judge
from replaylab.lessons.hunter import lab as hunter_lab
from replaylab.lessons.hunter import scans as hunter_scans
from replaylab.lessons.projectile import agent as projectile_agent
from replaylab.lessons.projectile import judge as projectile_judge
from replaylab.lessons.review import agent as review_agent
from replaylab.lessons.review import judge as review_judge
from replaylab.lessons.review import lab as review_lab
from replaylab.physics import projectile as projectile_physics

AGENTS = {"projectile": projectile_agent, "hunter": hunter_agent, "review": review_agent}
REVIEWERS = ("physics", "numerics", "evidence")
BUDGET_SPENT = "the budget of 8 experiments is spent"


# ---------------------------------------------------------------------------------------------
# Helpers


def run_agent(lesson, variant_name, seed=0, client=None, **settings):
    """The agent of `lesson` with `seed`, through the real loop, allowlist and step limit."""
    agent = AGENTS[lesson]
    v = registry.lesson(lesson).variant(variant_name)
    if client is None:
        client = ScriptedClient(agent.baseline(variant_name, seed), agent.model(variant_name, seed))
    return loop.run(client, v.system, v.task, v.allowlist(**settings), v.max_steps)


def calls_of(transcript):
    """[(tool, arguments)] of every call, in order, the answer included."""
    return [(call.name, call.arguments) for step in transcript.steps for call in step.message.tool_calls]


def experiments_of(transcript):
    """[(tool, arguments)] of every call but the answer, in order."""
    return [(name, arguments) for name, arguments in calls_of(transcript) if name != ANSWER]


def results_of(transcript):
    return [result for step in transcript.steps for result in step.results]


def experiment_results(transcript):
    """The results of every call but the answer."""
    return [r for step in transcript.steps for c, r in zip(step.message.tool_calls, step.results) if c.name != ANSWER]


def answer_of(transcript):
    """The arguments of the answer that ends the run (its last message holds it, accepted)."""
    last = transcript.steps[-1]
    assert [c.name for c in last.message.tool_calls] == [ANSWER] and last.results[0].ok
    return last.message.tool_calls[0].arguments


@cache
def scans(lesson):
    return registry.lesson(lesson).answers()


def judged(lesson, variant_name, transcript, model="scripted"):
    """(verdict, score) of a run of this transcript, judged and scored as a build does."""
    lesson_ = registry.lesson(lesson)
    run = recording_io.Recording(lesson, "run", variant_name, "g", recording_io.provenance("scripted", model, "a test"), transcript)
    verdict = lesson_.judge([run], 1e-6)["run"]
    return verdict, lesson_.score(verdict, scans(lesson)[verdict["instance"]])


def reference_calls(lesson, run):
    """The experiments of a committed reference recording (its answer left out)."""
    return experiments_of(recording_io.load(RECORDINGS / lesson / f"{run}.json").transcript)


class ResultsChanged:
    """A ScriptedClient-compatible client: the same program, shown results changed by `change`.

    The loop still runs every call for real and keeps the real results in the transcript; only
    what the program reads differs, which shows whether it decides from what it reads.
    """

    secrets = ()

    def __init__(self, program, model, change):
        self.model = model
        self._program = program
        self._change = change

    def complete(self, system, conversation, tools):
        shown = [
            {**item, "result": self._change(item["result"])} if item["role"] == "tool" else item
            for item in conversation
        ]
        return self._program(shown)


def with_content(change):
    def apply(result):
        if not result.ok:
            return result
        return dataclasses.replace(result, content=change(dict(result.content)))

    return apply


def review(seed=0):
    """{reviewer: transcript} of the three scripted reviewers with `seed`."""
    return {reviewer: run_agent("review", reviewer, seed) for reviewer in REVIEWERS}


def resolutions(transcripts):
    found = [v for reviewer, t in transcripts.items() for v in review_judge.verdicts(reviewer, t)]
    return {piece: review_judge.resolve(found, piece) for piece in review_lab.PIECES}


def review_scores(transcripts):
    """{reviewer: (score, supported)} of each reviewer's run, on its own answer."""
    found = {}
    for reviewer, transcript in transcripts.items():
        verdict, wrong = judged("review", reviewer, transcript)
        found[reviewer] = (wrong, verdict["supported"])
    return found


# ---------------------------------------------------------------------------------------------
# The default strategies reach the right answer


def test_strategy_of_seed_zero_is_the_documented_default():
    assert projectile_agent.strategy(0) == "careful"
    assert hunter_agent.strategy(0) == "coarse-first"
    assert review_agent.strategy(0) == "thorough"
    assert "not a language model" in projectile_agent.model("default", 0)


def test_every_lesson_has_a_careless_strategy_and_the_seeds_take_the_strategies_in_turn():
    for agent in (projectile_agent, hunter_agent, review_agent):
        assert "careless" in agent.STRATEGIES
        count = len(agent.STRATEGIES)
        assert [agent.strategy(seed) for seed in range(2 * count)] == list(agent.STRATEGIES) * 2
    assert projectile_agent.strategy(3) == hunter_agent.strategy(3) == review_agent.strategy(2) == "careless"


def test_projectile_careful_agent_brackets_the_scan_best_angle():
    transcript = run_agent("projectile", "default")
    assert transcript.finished
    assert all(r.ok for r in results_of(transcript))
    conclusion = projectile_judge.agent_conclusion(transcript)
    assert conclusion["checkable"] is True
    assert conclusion["inside"] is True and conclusion["verdict"] == "verified"
    low, high = conclusion["bracket"]
    assert high - low <= 1
    assert conclusion["best_angle"]["value"] == 40.5
    assert low <= 40.5 <= high
    assert conclusion["smallest_dt"] == 0.001  # it checked convergence down to the finest step
    # it answers with the bracket its experiments show: right, and supported
    assert answer_of(transcript) == {"low": low, "high": high}
    verdict, wrong = judged("projectile", "default", transcript)
    assert wrong is None and verdict["supported"] is True
    # what it says is what it answers
    assert f"between {low} and {high} degrees" in transcript.steps[-1].message.text


def test_hunter_coarse_first_finds_a_counterexample_to_the_false_claim_within_budget():
    transcript = run_agent("hunter", "symplectic-euler")
    assert transcript.finished
    results = experiment_results(transcript)
    assert results and all(r.ok for r in results_of(transcript))
    assert not any(BUDGET_SPENT in r.content.get("error", "") for r in results)
    assert len(results) <= hunter_lab.BUDGET
    verdict = hunter_judge.hunt_verdict(transcript, hunter_lab.CLAIMS["symplectic-euler"])
    assert verdict["outcome"] == "counterexample"
    assert 1 <= verdict["tested"] <= 8
    assert verdict["witness"]["value"]["value"] > hunter_lab.CLAIMS["symplectic-euler"].limit
    assert verdict["evidence"].startswith("numerically verified")
    assert transcript.steps[-1].message.text.startswith("Counterexample: symplectic Euler")
    # it answers with the experiment that broke the claim: right, and supported
    witness = verdict["witness"]
    assert answer_of(transcript) == {"outcome": "counterexample", **{k: witness[k] for k in ("method", "steps_per_period", "periods")}}
    judged_verdict, wrong = judged("hunter", "symplectic-euler", transcript)
    assert wrong is None and judged_verdict["supported"] is True


def test_hunter_coarse_first_reaches_the_worst_case_of_the_open_claim():
    transcript = run_agent("hunter", "velocity-verlet")
    results = results_of(transcript)
    assert transcript.finished and all(r.ok for r in results)
    assert not any(BUDGET_SPENT in r.content.get("error", "") for r in results)
    claim = hunter_lab.CLAIMS["velocity-verlet"]
    verdict = hunter_judge.hunt_verdict(transcript, claim)
    worst = hunter_scans.worst_case(claim)
    assert verdict["outcome"] == "inconclusive" and verdict["evidence"] is None
    assert verdict["tested"] <= claim.budget
    assert verdict["closest"]["value"]["value"] == worst["value"]
    assert (verdict["closest"]["steps_per_period"], verdict["closest"]["periods"]) == (
        worst["steps_per_period"], worst["periods"]
    )
    assert hunter_scans.worst_case(claim) == scans("hunter")["hunter-seed-velocity-verlet"]["worst"]
    assert answer_of(transcript) == {"outcome": "none found"}
    judged_verdict, wrong = judged("hunter", "velocity-verlet", transcript)
    assert wrong is None and judged_verdict["supported"] is True
    assert "does not show that the claim is true" in transcript.steps[-1].message.text


def test_three_thorough_reviewers_reject_piece_two_only():
    transcripts = review()
    assert all(t.finished and all(r.ok for r in results_of(t)) for t in transcripts.values())
    one, two = resolutions(transcripts).values()
    assert two["rejected"] and two["failed"] == ["bounded-energy"]
    assert two["not_covered"] == [] and two["conflicts"] == []
    assert not one["rejected"] and one["failed"] == []
    # each reviewer answers what its own checks showed: right, and supported
    assert review_scores(transcripts) == {reviewer: (None, True) for reviewer in REVIEWERS}
    assert answer_of(transcripts["physics"]) == {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]}
    assert answer_of(transcripts["numerics"]) == {"piece_1_failed": [], "piece_2_failed": []}
    assert transcripts["physics"].steps[-1].message.text == "Piece 1: passes my checks. Piece 2: fails bounded-energy."


# ---------------------------------------------------------------------------------------------
# They decide their own calls


def test_projectile_agent_does_not_replay_the_reference_calls():
    assert experiments_of(run_agent("projectile", "default")) != reference_calls("projectile", "reference")


@pytest.mark.parametrize("claim", ["symplectic-euler", "velocity-verlet"])
def test_hunter_agent_does_not_replay_the_reference_calls(claim):
    mine = experiments_of(run_agent("hunter", claim))
    assert mine != reference_calls("hunter", claim)
    assert mine[0] != reference_calls("hunter", claim)[0]


def test_review_agents_do_not_replay_the_reference_calls():
    """Their experiments differ (their answers are the same: the right ones)."""
    transcripts = review()
    for reviewer in ("physics", "evidence"):
        assert experiments_of(transcripts[reviewer]) != reference_calls("review", reviewer), reviewer
    # The numerics reviewer has three checks of one argument each: a thorough review makes all six
    # calls there are, so its list cannot differ from any other thorough one (the reference's too).
    numerics = experiments_of(transcripts["numerics"])
    possible = {(f"check_{c}", (("candidate", p),)) for c in ("clock", "purity", "convergence_order") for p in (1, 2)}
    assert len(numerics) == 6 and {(n, tuple(a.items())) for n, a in numerics} == possible
    together = [experiments_of(transcripts[r]) for r in REVIEWERS]
    assert together != [reference_calls("review", r) for r in REVIEWERS]


def test_projectile_agent_reads_its_results_a_heavier_ball_moves_its_later_angles():
    """The same program with a ball three times as draggy (the real simulation, other drag)."""
    normal = run_agent("projectile", "default")
    drag = 3 * projectile_physics.DRAG
    heavy = run_agent("projectile", "default", drag=drag)
    assert calls_of(heavy)[:4] == calls_of(normal)[:4]  # the same first survey...
    assert calls_of(heavy)[4:] != calls_of(normal)[4:]  # ...then other angles, chosen from the results
    finest = {
        call.arguments["angle"]: result.content["range_m"]
        for step in heavy.steps
        for call, result in zip(step.message.tool_calls, step.results)
        if call.name != ANSWER and call.arguments["dt"] == 0.001
    }
    low, high = sorted(sorted(finest, key=finest.get)[-2:])
    assert high - low == 1
    assert answer_of(heavy) == {"low": low, "high": high}
    assert f"between {low} and {high} degrees" in heavy.steps[-1].message.text
    grid = np.arange(low - 2, high + 2 + 1e-9, 0.25)
    best = float(grid[np.argmax(projectile_physics.ranges_with_drag(25, grid, 0.001, drag))])
    assert low <= best <= high and best < 40  # a draggier ball flies best at a lower angle


def test_projectile_seeds_start_elsewhere_and_both_conclude_from_what_they_read():
    first, other = run_agent("projectile", "default", 0), run_agent("projectile", "default", 4)
    assert projectile_agent.strategy(4) == "careful"
    assert calls_of(first)[0] != calls_of(other)[0]
    assert [a["angle"] for _, a in calls_of(other)[:4]] == [34, 40, 46, 52]
    for transcript in (first, other):
        conclusion = projectile_judge.agent_conclusion(transcript)
        assert conclusion["bracket"] == [40, 41] and conclusion["inside"]
        assert answer_of(transcript) == {"low": 40, "high": 41}


def test_hunter_agent_reads_its_results():
    """Shown drifts ten times smaller, the hunt of the symplectic Euler claim no longer stops at its first
    batch; shown ten times larger, the hunt of the velocity Verlet claim stops at once."""
    key = hunter_lab.RESULT_KEY
    real = run_agent("hunter", "symplectic-euler")
    assert len(real.steps) == 2  # one batch, then the counterexample

    def shown(variant_name, factor):
        program = hunter_agent.baseline(variant_name, 0)
        change = with_content(lambda c: {**c, key: factor * c[key]})
        return run_agent("hunter", variant_name, client=ResultsChanged(program, "changed", change))

    smaller = shown("symplectic-euler", 0.1)
    assert len(experiment_results(smaller)) == hunter_lab.BUDGET
    assert smaller.steps[-1].message.text.startswith("No counterexample in 8 experiments")
    assert answer_of(smaller) == {"outcome": "none found"}
    # the transcript keeps the real results: the judge still finds the counterexample in them, so the
    # answer is wrong and the hunt's own (real) experiments do not support it
    assert hunter_judge.hunt_verdict(smaller, hunter_lab.CLAIMS["symplectic-euler"])["outcome"] == "counterexample"
    verdict, wrong = judged("hunter", "symplectic-euler", smaller)
    assert wrong == "none found, but the claim's domain has a counterexample" and verdict["supported"] is False
    larger = shown("velocity-verlet", 10)
    assert len(larger.steps) == 2 and larger.steps[-1].message.text.startswith("Counterexample: velocity Verlet")
    assert answer_of(larger)["outcome"] == "counterexample"
    assert hunter_judge.hunt_verdict(larger, hunter_lab.CLAIMS["velocity-verlet"])["outcome"] == "inconclusive"
    # the build runs the answer's experiment again: it does not break the claim
    verdict, wrong = judged("hunter", "velocity-verlet", larger)
    assert wrong == "its counterexample does not break the claim" and not verdict["answer_check"]["breaks"]
    assert verdict["supported"] is False


def test_reviewer_verdict_text_comes_from_the_results():
    program = review_agent.baseline("physics", 0)
    everything_passes = with_content(lambda c: {**c, "passed": 1.0})
    changed = run_agent("review", "physics", client=ResultsChanged(program, "changed", everything_passes))
    assert changed.steps[-1].message.text == "Piece 1: passes my checks. Piece 2: passes my checks."
    assert answer_of(changed) == {"piece_1_failed": [], "piece_2_failed": []}
    # the judge recomputes: the real failure stands whatever the reviewer was shown
    verdicts = review_judge.verdicts("physics", changed)
    assert [(v.candidate, v.check) for v in verdicts if not v.passed] == [(2, "bounded-energy")]
    verdict, wrong = judged("review", "physics", changed)
    assert wrong == "piece 2: misses a check that fails" and verdict["supported"] is False


# ---------------------------------------------------------------------------------------------
# The strategies that are wrong on purpose


def test_projectile_stops_early_answers_from_its_coarse_survey():
    """Its survey's best angle and the degree next to it towards the runner-up: wrong, and its own
    survey locates the top elsewhere (the parabola through 37, 43 and 49 degrees)."""
    assert projectile_agent.strategy(1) == "stops-early"
    transcript = run_agent("projectile", "default", 1)
    assert len(transcript.steps) == 2  # one survey, then the answer
    conclusion = projectile_judge.agent_conclusion(transcript)
    low, high = conclusion["bracket"]
    assert high - low > 1 and answer_of(transcript) == {"low": 42, "high": 43}
    verdict, wrong = judged("projectile", "default", transcript)
    assert wrong == "the best angle of the build's scan lies outside its bracket"
    assert verdict["supported"] is False and verdict["located"]["top"]["shown"] == "40.50"


def test_projectile_wrong_neighbour_brackets_the_wrong_side():
    assert projectile_agent.strategy(2) == "wrong-neighbour"
    transcript = run_agent("projectile", "default", 2)
    conclusion = projectile_judge.agent_conclusion(transcript)
    assert conclusion["bracket"] == [41, 42] and conclusion["best_angle"]["value"] == 40.5
    assert answer_of(transcript) == {"low": 41, "high": 42}
    verdict, wrong = judged("projectile", "default", transcript)
    assert wrong == "the best angle of the build's scan lies outside its bracket" and verdict["supported"] is False
    assert not verdict["located"]["located"]  # at the finest step it measured nothing below 41


def test_projectile_careless_experiments_well_and_answers_the_wrong_side():
    """Not supported, and wrong: its experiments at the finest step locate the top at 40.54, and it
    answers the degree on the other side of its best angle."""
    transcript = run_agent("projectile", "default", 3)
    conclusion = projectile_judge.agent_conclusion(transcript)
    assert conclusion["bracket"] == [40, 41] and conclusion["smallest_dt"] == 0.001 and conclusion["inside"]
    assert answer_of(transcript) == {"low": 41, "high": 42}
    verdict, wrong = judged("projectile", "default", transcript)
    assert wrong == "the best angle of the build's scan lies outside its bracket" and verdict["supported"] is False
    assert verdict["located"]["top"]["shown"] == "40.54"


def test_hunter_safe_region_finds_no_counterexample_to_the_false_claim():
    assert hunter_agent.strategy(1) == "safe-region"
    transcript = run_agent("hunter", "symplectic-euler", 1)
    verdict = hunter_judge.hunt_verdict(transcript, hunter_lab.CLAIMS["symplectic-euler"])
    assert verdict["outcome"] == "inconclusive" and verdict["witness"] is None
    assert verdict["tested"] == hunter_lab.BUDGET
    assert min(a["steps_per_period"] for _, a in experiments_of(transcript)) >= 100
    assert answer_of(transcript) == {"outcome": "none found"}
    judged_verdict, wrong = judged("hunter", "symplectic-euler", transcript)
    assert wrong == "none found, but the claim's domain has a counterexample"
    assert judged_verdict["supported"] is True  # a supported answer that is wrong: none of its experiments broke the claim


def test_hunter_careless_answers_its_largest_drift_as_a_counterexample():
    """On the claim that holds, its largest drift breaks nothing: the build runs it again, and the
    answer is wrong; on the false claim its largest drift does break the claim."""
    transcript = run_agent("hunter", "velocity-verlet", 3)
    claim = hunter_lab.CLAIMS["velocity-verlet"]
    hunt = hunter_judge.hunt_verdict(transcript, claim)
    assert hunt["outcome"] == "inconclusive" and hunt["tested"] == claim.budget
    answer = answer_of(transcript)
    largest = hunt["closest"]
    assert answer == {"outcome": "counterexample", **{k: largest[k] for k in ("method", "steps_per_period", "periods")}}
    verdict, wrong = judged("hunter", "velocity-verlet", transcript)
    assert wrong == "its counterexample does not break the claim"
    assert verdict["answer_check"]["value"]["value"] == largest["value"]["value"] <= claim.limit
    false_claim = run_agent("hunter", "symplectic-euler", 3)
    verdict, wrong = judged("hunter", "symplectic-euler", false_claim)
    assert wrong is None and verdict["answer_check"]["breaks"]


def test_thorough_reviewers_of_other_seeds_take_other_paths_to_the_same_answer():
    paths = {}
    for seed in (0, 3, 9):  # seed 9's evidence reviewer draws another step count than seeds 0 and 3 (100)
        assert review_agent.strategy(seed) == "thorough"
        transcripts = review(seed)
        paths[seed] = tuple((name, tuple(sorted(args.items()))) for t in transcripts.values() for name, args in experiments_of(t))
        one, two = resolutions(transcripts).values()
        assert two["rejected"] and not one["rejected"], seed
        assert review_scores(transcripts) == {reviewer: (None, True) for reviewer in REVIEWERS}, seed
    assert len(set(paths.values())) == 3  # three different orders of calls
    assert {frozenset(p) for p in paths.values()} != {frozenset(paths[0])}  # not only the order: the step counts differ


def test_hasty_reviewers_do_not_reject_piece_two():
    assert review_agent.strategy(1) == "hasty"
    transcripts = review(1)
    one, two = resolutions(transcripts).values()
    assert not two["rejected"] and "bounded-energy" in two["not_covered"]
    assert not one["rejected"]
    # each answers from its one check: the numerics reviewer is right by luck (nothing of its remit fails), unsupported
    assert review_scores(transcripts) == {
        "physics": ("piece 2: misses a check that fails", False),
        "numerics": (None, False),
        "evidence": ("piece 2: misses a check that fails", False),
    }


def test_careless_reviewers_run_every_check_and_answer_that_nothing_failed():
    assert review_agent.strategy(2) == "careless"
    transcripts = review(2)
    one, two = resolutions(transcripts).values()  # the group's decision is made from the recomputed checks
    assert two["rejected"] and two["failed"] == ["bounded-energy"] and two["not_covered"] == [] and not one["rejected"]
    assert all(answer_of(t) == {"piece_1_failed": [], "piece_2_failed": []} for t in transcripts.values())
    assert review_scores(transcripts) == {
        "physics": ("piece 2: misses a check that fails", False),
        "numerics": (None, True),  # nothing of its remit fails: its careless answer is the right one
        "evidence": ("piece 2: misses a check that fails", False),
    }


# ---------------------------------------------------------------------------------------------
# Through the command line


@pytest.mark.parametrize("lesson", ["projectile", "hunter", "review"])
def test_record_with_the_scripted_provider_writes_a_labelled_run_that_replays(tmp_path, lesson):
    out = in_process("record", lesson, "--provider", "scripted", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "results" / "live" / lesson).glob("*.json")
    assert f"wrote {path.relative_to(tmp_path)}" in out.stdout
    run = recording_io.load(path)
    assert run.label == "Scripted baseline (a program, not a language model)"
    assert run.provenance["kind"] == "scripted" and run.provenance["seed"] == 0
    assert run.provenance["model"] == AGENTS[lesson].model(run.variant, 0)
    assert run.transcript.finished
    # the same calls the program makes in this process
    assert calls_of(run.transcript) == calls_of(run_agent(lesson, run.variant))
    replayed = in_process("replay", str(path), cwd=ROOT)
    assert replayed.returncode == 0, replayed.stderr
    assert "every result agrees with the recording" in replayed.stdout


def test_generate_writes_runs_with_distinct_seeds_and_mixed_strategies(tmp_path):
    out = in_process("generate", "hunter", "--count", "6", "--out", str(tmp_path / "gen"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    paths = sorted((tmp_path / "gen" / "hunter").glob("*.json"))
    assert len(paths) == 6
    runs = [recording_io.load(p) for p in paths]
    assert sorted(r.provenance["seed"] for r in runs) == list(range(6))
    models = {r.provenance["model"] for r in runs}
    assert {re.search(r"baseline, ([\w-]+)", m).group(1) for m in models} == set(hunter_agent.STRATEGIES)
    assert all(answer_of(r.transcript) for r in runs)  # every program ends with an answer
    assert {r.variant for r in runs} == {"symplectic-euler", "velocity-verlet"}
    assert all(r.label == "Scripted baseline (a program, not a language model)" for r in runs)
    for run in runs:  # each file holds what its program made with its seed
        assert calls_of(run.transcript) == calls_of(run_agent("hunter", run.variant, run.provenance["seed"]))
    data = json.loads(paths[0].read_text())
    assert data["provenance"]["kind"] == "scripted"
