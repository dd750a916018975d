"""The scripted baseline agents, run through the real loop and judged as the build judges them.

Each program reads the results of its earlier calls and chooses the next ones: the default
strategy (seed 0) reaches the right answer, the strategies that are wrong on purpose are wrong
as documented, and none of them replays the calls of the committed reference recordings.
"""

import dataclasses
import json
import re

import numpy as np
import pytest

from helpers import RECORDINGS, ROOT, cli
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.scripted import ScriptedClient
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
    """[(tool, arguments)] of every call, in order."""
    return [(call.name, call.arguments) for step in transcript.steps for call in step.message.tool_calls]


def results_of(transcript):
    return [result for step in transcript.steps for result in step.results]


def reference_calls(lesson, run):
    return calls_of(recording_io.load(RECORDINGS / lesson / f"{run}.json").transcript)


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


# ---------------------------------------------------------------------------------------------
# The default strategies reach the right answer


def test_strategy_of_seed_zero_is_the_documented_default():
    assert projectile_agent.strategy(0) == "careful"
    assert hunter_agent.strategy(0) == "coarse-first"
    assert review_agent.strategy(0) == "thorough"
    assert "not a language model" in projectile_agent.model("default", 0)


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
    assert projectile_judge.score({"conclusion": conclusion}, {}) is None
    # what it says is what the numbers say
    assert f"between {low} and {high} degrees" in transcript.steps[-1].message.text


def test_hunter_coarse_first_finds_a_counterexample_to_the_false_claim_within_budget():
    transcript = run_agent("hunter", "symplectic-euler")
    assert transcript.finished
    results = results_of(transcript)
    assert results and all(r.ok for r in results)
    assert not any(BUDGET_SPENT in r.content.get("error", "") for r in results)
    assert len(results) <= hunter_lab.BUDGET
    verdict = hunter_judge.hunt_verdict(transcript, hunter_lab.CLAIMS["symplectic-euler"])
    assert verdict["outcome"] == "counterexample"
    assert 1 <= verdict["tested"] <= 8
    assert verdict["witness"]["value"]["value"] > hunter_lab.CLAIMS["symplectic-euler"].limit
    assert verdict["evidence"].startswith("numerically verified")
    assert transcript.steps[-1].message.text.startswith("Counterexample: symplectic Euler")


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
    scans = {"worst_case": {name: hunter_scans.worst_case(c) for name, c in hunter_lab.CLAIMS.items()}}
    assert hunter_judge.score({"verdict": verdict}, scans) is None
    assert "does not show that the claim is true" in transcript.steps[-1].message.text


def test_three_thorough_reviewers_reject_piece_two_only():
    transcripts = review()
    assert all(t.finished and all(r.ok for r in results_of(t)) for t in transcripts.values())
    one, two = resolutions(transcripts).values()
    assert two["rejected"] and two["failed"] == ["bounded-energy"]
    assert two["not_covered"] == [] and two["conflicts"] == []
    assert not one["rejected"] and one["failed"] == []
    assert review_judge.score({"resolution": [one, two]}, {}) is None
    assert transcripts["physics"].steps[-1].message.text == "Piece 1: passes my checks. Piece 2: fails bounded-energy."


# ---------------------------------------------------------------------------------------------
# They decide their own calls


def test_projectile_agent_does_not_replay_the_reference_calls():
    assert calls_of(run_agent("projectile", "default")) != reference_calls("projectile", "reference")


@pytest.mark.parametrize("claim", ["symplectic-euler", "velocity-verlet"])
def test_hunter_agent_does_not_replay_the_reference_calls(claim):
    mine = calls_of(run_agent("hunter", claim))
    assert mine != reference_calls("hunter", claim)
    assert mine[0] != reference_calls("hunter", claim)[0]


def test_review_agents_do_not_replay_the_reference_calls():
    transcripts = review()
    for reviewer in ("physics", "evidence"):
        assert calls_of(transcripts[reviewer]) != reference_calls("review", reviewer), reviewer
    # The numerics reviewer has three checks of one argument each: a thorough review makes all six
    # calls there are, so its list cannot differ from any other thorough one (the reference's too).
    numerics = calls_of(transcripts["numerics"])
    possible = {(f"check_{c}", (("candidate", p),)) for c in ("clock", "purity", "convergence_order") for p in (1, 2)}
    assert len(numerics) == 6 and {(n, tuple(a.items())) for n, a in numerics} == possible
    together = [calls_of(transcripts[r]) for r in REVIEWERS]
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
        if call.arguments["dt"] == 0.001
    }
    low, high = sorted(sorted(finest, key=finest.get)[-2:])
    assert high - low == 1
    assert f"between {low} and {high} degrees" in heavy.steps[-1].message.text
    grid = np.arange(low - 2, high + 2 + 1e-9, 0.25)
    best = float(grid[np.argmax(projectile_physics.ranges_with_drag(25, grid, 0.001, drag))])
    assert low <= best <= high and best < 40  # a draggier ball flies best at a lower angle


def test_projectile_seeds_start_elsewhere_and_both_conclude_from_what_they_read():
    first, other = run_agent("projectile", "default", 0), run_agent("projectile", "default", 3)
    assert projectile_agent.strategy(3) == "careful"
    assert calls_of(first)[0] != calls_of(other)[0]
    assert [a["angle"] for _, a in calls_of(other)[:4]] == [33, 39, 45, 51]
    for transcript in (first, other):
        conclusion = projectile_judge.agent_conclusion(transcript)
        assert conclusion["bracket"] == [40, 41] and conclusion["inside"]


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
    assert len(results_of(smaller)) == hunter_lab.BUDGET
    assert smaller.steps[-1].message.text.startswith("No counterexample in 8 experiments")
    # the transcript keeps the real results: the judge still finds the counterexample in them
    assert hunter_judge.hunt_verdict(smaller, hunter_lab.CLAIMS["symplectic-euler"])["outcome"] == "counterexample"
    larger = shown("velocity-verlet", 10)
    assert len(larger.steps) == 2 and larger.steps[-1].message.text.startswith("Counterexample: velocity Verlet")
    assert hunter_judge.hunt_verdict(larger, hunter_lab.CLAIMS["velocity-verlet"])["outcome"] == "inconclusive"


def test_reviewer_verdict_text_comes_from_the_results():
    program = review_agent.baseline("physics", 0)
    everything_passes = with_content(lambda c: {**c, "passed": 1.0})
    changed = run_agent("review", "physics", client=ResultsChanged(program, "changed", everything_passes))
    assert changed.steps[-1].message.text == "Piece 1: passes my checks. Piece 2: passes my checks."
    # the judge recomputes: the real failure stands whatever the reviewer was shown
    verdicts = review_judge.verdicts("physics", changed)
    assert [(v.candidate, v.check) for v in verdicts if not v.passed] == [(2, "bounded-energy")]


# ---------------------------------------------------------------------------------------------
# The strategies that are wrong on purpose


def test_projectile_stops_early_brackets_too_wide():
    assert projectile_agent.strategy(1) == "stops-early"
    transcript = run_agent("projectile", "default", 1)
    assert len(transcript.steps) == 2  # one survey, then the answer
    conclusion = projectile_judge.agent_conclusion(transcript)
    low, high = conclusion["bracket"]
    assert high - low > 1
    assert projectile_judge.score({"conclusion": conclusion}, {}) == "the bracket is wider than one degree"


def test_projectile_wrong_neighbour_brackets_the_wrong_side():
    assert projectile_agent.strategy(2) == "wrong-neighbour"
    conclusion = projectile_judge.agent_conclusion(run_agent("projectile", "default", 2))
    assert conclusion["bracket"] == [41, 42] and conclusion["best_angle"]["value"] == 40.5
    assert projectile_judge.score({"conclusion": conclusion}, {}) == "the scan's best angle lies outside the bracket"


def test_hunter_safe_region_finds_no_counterexample_to_the_false_claim():
    assert hunter_agent.strategy(1) == "safe-region"
    transcript = run_agent("hunter", "symplectic-euler", 1)
    verdict = hunter_judge.hunt_verdict(transcript, hunter_lab.CLAIMS["symplectic-euler"])
    assert verdict["outcome"] == "inconclusive" and verdict["witness"] is None
    assert verdict["tested"] == hunter_lab.BUDGET
    assert min(a["steps_per_period"] for _, a in calls_of(transcript)) >= 100
    scans = {"worst_case": {name: hunter_scans.worst_case(c) for name, c in hunter_lab.CLAIMS.items()}}
    assert hunter_judge.score({"verdict": verdict}, scans) == "no counterexample found, though the domain has one"


def test_thorough_reviewers_of_other_seeds_take_other_paths_to_the_same_answer():
    paths = {}
    for seed in (0, 2, 4):
        assert review_agent.strategy(seed) == "thorough"
        transcripts = review(seed)
        paths[seed] = tuple((name, tuple(sorted(args.items()))) for t in transcripts.values() for name, args in calls_of(t))
        one, two = resolutions(transcripts).values()
        assert two["rejected"] and not one["rejected"], seed
        assert review_judge.score({"resolution": [one, two]}, {}) is None, seed
    assert len(set(paths.values())) == 3  # three different orders of calls
    assert {frozenset(p) for p in paths.values()} != {frozenset(paths[0])}  # not only the order: the step counts differ


def test_hasty_reviewers_do_not_reject_piece_two():
    assert review_agent.strategy(1) == "hasty"
    one, two = resolutions(review(1)).values()
    assert not two["rejected"] and "bounded-energy" in two["not_covered"]
    assert not one["rejected"]
    assert review_judge.score({"resolution": [one, two]}, {}) == "piece 2 not rejected (bounded-energy was not run on it)"


# ---------------------------------------------------------------------------------------------
# Through the command line


@pytest.mark.parametrize("lesson", ["projectile", "hunter", "review"])
def test_record_with_the_scripted_provider_writes_a_labelled_run_that_replays(tmp_path, lesson):
    out = cli("record", lesson, "--provider", "scripted", cwd=tmp_path)
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
    replayed = cli("replay", str(path), cwd=ROOT)
    assert replayed.returncode == 0, replayed.stderr
    assert "every result agrees with the recording" in replayed.stdout


def test_generate_writes_runs_with_distinct_seeds_and_mixed_strategies(tmp_path):
    out = cli("generate", "hunter", "--count", "6", "--out", str(tmp_path / "gen"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    paths = sorted((tmp_path / "gen" / "hunter").glob("*.json"))
    assert len(paths) == 6
    runs = [recording_io.load(p) for p in paths]
    assert sorted(r.provenance["seed"] for r in runs) == list(range(6))
    models = {r.provenance["model"] for r in runs}
    assert {re.search(r"baseline, ([\w-]+)", m).group(1) for m in models} == set(hunter_agent.STRATEGIES)
    assert {r.variant for r in runs} == {"symplectic-euler", "velocity-verlet"}
    assert all(r.label == "Scripted baseline (a program, not a language model)" for r in runs)
    for run in runs:  # each file holds what its program made with its seed
        assert calls_of(run.transcript) == calls_of(run_agent("hunter", run.variant, run.provenance["seed"]))
    data = json.loads(paths[0].read_text())
    assert data["provenance"]["kind"] == "scripted"
