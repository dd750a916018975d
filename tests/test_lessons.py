"""The committed reference recordings replay without a key or network, and those of the specification's
three lessons give its verdicts."""

import dataclasses

import pytest

from helpers import RECORDINGS
from replaylab.agents import recording
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.tools import ANSWER
from replaylab.lessons import registry
from replaylab.lessons.hunter import exercises as hunter_exercises
from replaylab.lessons.hunter import judge as hunter_judge
from replaylab.lessons.hunter import lab as hunter_lab
from replaylab.lessons.projectile import exercises as projectile_exercises
from replaylab.lessons.projectile import judge as projectile_judge
from replaylab.lessons.review import exercises as review_exercises
from replaylab.lessons.review import judge as review_judge
from replaylab.physics import projectile

REFERENCE_RUNS = {  # the specification's reference runs; a lesson added later brings its own
    "projectile": ["reference"],
    "hunter": ["symplectic-euler", "velocity-verlet"],
    "review": ["physics", "numerics", "evidence"],
}


def replayed(lesson, run):
    loaded = recording.load(RECORDINGS / lesson / f"{run}.json")
    transcript = replay(loaded, registry.lesson(lesson).variant(loaded.variant))
    return dataclasses.replace(loaded, transcript=transcript)


COMMITTED = sorted((p.parent.name, p.stem) for p in RECORDINGS.glob("*/*.json"))


def test_exactly_the_reference_recordings_are_committed():
    found = {f"{lesson}/{run}" for lesson, run in COMMITTED if lesson in REFERENCE_RUNS}
    assert found == {f"{lesson}/{run}" for lesson, runs in REFERENCE_RUNS.items() for run in runs}
    # every lesson of the registry has reference runs, and every folder of recordings is a lesson's
    assert {lesson for lesson, _ in COMMITTED} == set(registry.names())


@pytest.mark.parametrize("lesson,run", COMMITTED)
def test_reference_recording_is_authored_and_replays(lesson, run):
    loaded = recording.load(RECORDINGS / lesson / f"{run}.json")
    assert loaded.provenance["kind"] == "authored"
    assert "authored client" in loaded.provenance["how"]
    assert loaded.label == "Authored example, not a recorded model run"
    assert loaded.transcript.finished
    replayed(lesson, run)


def calls_of(run):
    """(name, argument values, accepted) of the run's experiments: every call but its answer, which ends it."""
    steps = run.transcript.steps
    assert [c.name for c in steps[-1].message.tool_calls] == [ANSWER] and steps[-1].results[0].ok
    return [
        (call.name, tuple(call.arguments.values()), result.ok)
        for step in steps[:-1]
        for call, result in zip(step.message.tool_calls, step.results)
    ]


def answer_of(run):
    """The arguments of the answer that ends a run, its explanation left out."""
    arguments = dict(run.transcript.steps[-1].message.tool_calls[0].arguments)
    arguments.pop("explanation", None)
    return arguments


def test_reference_tool_calls_are_the_specified_ones():
    ref = calls_of(replayed("projectile", "reference"))
    assert [(n, a) for n, a, _ in ref] == [
        ("range_without_drag", (25, 45)),
        ("range_with_drag", (25, 35, 0.01)), ("range_with_drag", (25, 40, 0.01)), ("range_with_drag", (25, 45, 0.01)),
        ("range_with_drag", (25, 40, 0.002)), ("range_with_drag", (25, 41, 0.002)), ("range_with_drag", (25, 45, 0.002)),
        ("range_with_drag", (25, 40, 0.001)), ("range_with_drag", (25, 41, 0.001)), ("range_with_drag", (25, 45, 0.001)),
    ]
    opened = calls_of(replayed("hunter", "velocity-verlet"))
    assert [a[1:] for _, a, _ in opened] == [(200, 50), (100, 50), (32, 50), (16, 50), (16, 1), (16, 25), (17, 50), (20, 50), (24, 50)]
    assert [ok for *_, ok in opened] == [True] * 8 + [False]
    evidence = calls_of(replayed("review", "evidence"))
    assert len(evidence) == 16 and evidence[-1] == ("oscillator_error", (2, 200), True)
    # the answers the seeds give
    assert answer_of(replayed("projectile", "reference")) == {"low": 40, "high": 41}
    assert answer_of(replayed("hunter", "velocity-verlet")) == {"outcome": "none found"}
    assert answer_of(replayed("hunter", "symplectic-euler")) == {
        "outcome": "counterexample", "method": "symplectic Euler", "steps_per_period": 64, "periods": 20}
    assert answer_of(replayed("review", "evidence")) == {"piece_1_failed": [], "piece_2_failed": ["bounded-energy"]}


def test_projectile_bracket_contains_the_scan_best_angle():
    conclusion = projectile_judge.agent_conclusion(replayed("projectile", "reference").transcript)
    assert conclusion["bracket"] == [40, 41]
    assert conclusion["best_angle"]["value"] == 40.5
    assert conclusion["inside"] and conclusion["evidence"].startswith("numerically verified")
    assert [conclusion[k]["shown"] for k in ("best_angle", "best_range_m", "reference_range_m", "gain_m", "gain_percent")] == [
        "40.50", "35.74", "35.4", "0.3332", "0.9411"
    ]


def test_projectile_conclusion_uses_the_smallest_dt_and_needs_two_angles():
    run = replayed("projectile", "reference")
    # Only the first message (dt 0.01): the two best angles there are 40 and 45.
    steps = run.transcript.steps[:1] + (run.transcript.steps[-1],)
    partial = dataclasses.replace(run.transcript, steps=steps)
    conclusion = projectile_judge.agent_conclusion(partial)
    assert conclusion["bracket"] == [40, 45] and conclusion["best_angle"]["value"] == 40.5 and conclusion["inside"]
    only_two = dataclasses.replace(run.transcript, steps=(run.transcript.steps[2],))  # 40, 41, 45 at 0.002
    one_angle = dataclasses.replace(
        only_two,
        steps=(dataclasses.replace(only_two.steps[0], message=dataclasses.replace(
            only_two.steps[0].message, tool_calls=only_two.steps[0].message.tool_calls[:1]), results=only_two.steps[0].results[:1]),),
    )
    assert projectile_judge.agent_conclusion(one_angle)["checkable"] is False
    empty = dataclasses.replace(run.transcript, steps=())
    assert projectile_judge.agent_conclusion(empty)["checkable"] is False


def test_projectile_bracket_outside_the_scan_is_refuted():
    from replaylab.agents import loop
    from replaylab.agents.clients.authored import client
    from replaylab.agents.messages import ModelMessage, ToolCall

    v = registry.lesson("projectile").variant("default")
    calls = tuple(ToolCall(str(a), "range_with_drag", {"speed": 25, "angle": a, "dt": 0.05}) for a in (30, 31, 60))
    transcript = loop.run(client([ModelMessage("coarse", calls), ModelMessage("done")]), v.system, v.task, v.allowlist(), 12)
    conclusion = projectile_judge.agent_conclusion(transcript)
    assert conclusion["bracket"] == [30, 31]
    assert not conclusion["inside"] and conclusion["verdict"] == "refuted" and conclusion["evidence"] is None


def test_rough_ball_is_caught_at_message_one_call_two_on_the_35_degree_call():
    run = recording.load(RECORDINGS / "projectile" / "reference.json")
    result = projectile_judge.rough_ball(run, 1e-6)
    assert result["caught"] and result["drag_factor"] == 1.01
    assert (result["message"], result["call"], result["tool"], result["key"]) == (1, 2, "range_with_drag", "range_m")
    assert (result["recorded"], result["recomputed"]) == (35.27758864537781, 35.14527765986668)
    assert result["text"].startswith(
        "message 1, call 2, tool range_with_drag: range_m was 35.27758864537781 when recorded and is 35.14527765986668 now "
        "(tolerance 1e-06). If the change is intended, record the run again with: replaylab record projectile "
        "--provider authored --from "
    )
    with pytest.raises(ReplayMismatch):
        replay(run, registry.lesson("projectile").variant("default"), drag=1.01 * projectile.DRAG)


def test_projectile_exercises():
    calls = projectile_exercises.misbehaving_calls()
    assert calls[0]["ok"] and calls[0]["value"]["shown"] == "35.789"
    assert [c.get("error") for c in calls[1:]] == [
        "'os.system' is not an allowed tool; the allowed tools are: range_with_drag, range_without_drag",
        "dt must be between 0.001 and 0.05, got 0",
        "missing arguments: dt",
        "speed must be a number, got str: send 25 as a number, without quotes",
        "unknown arguments: code",
    ]
    bounds = projectile_exercises.step_bounds()
    assert [bounds[k]["shown"] for k in ("fine_m", "coarse_m", "difference_m")] == ["35.732", "36.042", "0.311"]
    refused, ran = projectile_exercises.new_tool()
    assert refused["error"] == "angle must be between 1 and 89, got 90"
    assert ran["value"]["shown"] == "4.416"


def test_hunter_verdicts():
    false = hunter_judge.hunt_verdict(replayed("hunter", "symplectic-euler").transcript, hunter_lab.CLAIMS["symplectic-euler"])
    assert false["outcome"] == "counterexample" and false["tested"] == 4
    assert (false["witness"]["steps_per_period"], false["witness"]["periods"]) == (64, 20)
    assert false["witness"]["value"]["value"] == 0.05156720861978181
    assert false["evidence"].startswith("numerically verified")
    opened = hunter_judge.hunt_verdict(replayed("hunter", "velocity-verlet").transcript, hunter_lab.CLAIMS["velocity-verlet"])
    assert opened["outcome"] == "inconclusive" and opened["tested"] == 8 and opened["evidence"] is None
    assert (opened["closest"]["steps_per_period"], opened["closest"]["periods"]) == (16, 50)
    assert opened["closest"]["value"]["value"] == 0.038553134656324484


def test_hunter_verdict_ignores_the_words_and_stored_results():
    for run, outcome in (("symplectic-euler", "counterexample"), ("velocity-verlet", "inconclusive")):
        transcript = replayed("hunter", run).transcript
        probes = hunter_judge.words_ignored(transcript, hunter_lab.CLAIMS[run])
        assert [p["outcome"] for p in probes] == [outcome] * 3


def test_hunter_stricter_claim_and_judge_output():
    verdicts = hunter_judge.judge([replayed("hunter", "symplectic-euler"), replayed("hunter", "velocity-verlet")])
    stricter = verdicts["velocity-verlet"]["stricter_claim"]
    assert stricter["outcome"] == "counterexample" and stricter["limit"] == 0.035
    assert (stricter["witness"]["steps_per_period"], stricter["witness"]["periods"]) == (16, 50)
    assert "3.5 %" in stricter["statement"]
    opened, false = verdicts["velocity-verlet"], verdicts["symplectic-euler"]
    assert opened["experiments"]["outcome"] == "inconclusive" and opened["answer"] == {"outcome": "none found"}
    assert opened["answer_check"] is None and opened["supported"] is True
    assert false["answer_check"]["breaks"] and false["answer_check"]["value"]["value"] == false["experiments"]["witness"]["value"]["value"]


def test_hunter_judge_skips_refused_uncovered_and_over_budget_calls():
    from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript

    claim = hunter_lab.CLAIMS["symplectic-euler"]
    def call(i, **a):
        return ToolCall(str(i), "oscillator_energy_drift", a)
    se = "symplectic Euler"
    steps = (
        Step(ModelMessage("", (call(1, method=se, steps_per_period=8, periods=20),  # outside the domain
                               call(2, method="velocity Verlet", steps_per_period=64, periods=20),  # other method
                               call(3, method=se, steps_per_period=64, periods=20))),
             (ToolResult("1", "oscillator_energy_drift", True, {"max_energy_drift": 0.5}),
              ToolResult("2", "oscillator_energy_drift", True, {"max_energy_drift": 0.5}),
              ToolResult("3", "oscillator_energy_drift", False, {"error": "refused"}))),  # not accepted
    )
    verdict = hunter_judge.hunt_verdict(Transcript("m", "s", "t", steps, True), claim)
    assert verdict["tested"] == 0 and verdict["outcome"] == "inconclusive" and verdict["closest"] is None


def test_projectile_best_angle_on_the_edge_of_the_bracket_is_inside():
    """A real agent's run: 40.5, 41 and 45 at dt 0.001; the scan's best is exactly 40.50, the
    bracket's lower edge, and the edges belong to the bracket (issue 16, case 18). The answer 40 to
    41 is then right; it is supported only where the run measured a shorter throw on each side of its
    best angle."""
    from replaylab.agents import loop
    from replaylab.agents.clients.authored import client as make_client
    from replaylab.agents.messages import ModelMessage, ToolCall

    v = registry.lesson("projectile").variant("default")
    answer = ModelMessage("", (ToolCall("a", ANSWER, {"low": 40, "high": 41}),))

    def run_of(*angles):
        calls = tuple(ToolCall(str(a), "range_with_drag", {"speed": 25, "angle": a, "dt": 0.001}) for a in angles)
        transcript = loop.run(make_client([ModelMessage("", calls), answer]), v.system, v.task, v.allowlist(), 12)
        return recording.Recording("projectile", "edge", "default", "g", recording.provenance("authored", "m", "test"), transcript)

    scans = registry.lesson("projectile").answers()["projectile-seed"]
    run = run_of(40.5, 41, 45)
    conclusion = projectile_judge.agent_conclusion(run.transcript)
    assert conclusion["bracket"] == [40.5, 41] and conclusion["best_angle"]["value"] == 40.5
    assert conclusion["inside"] is True and conclusion["verdict"] == "verified"
    verdict = projectile_judge.verdict_of(run)
    # right; not supported, though: nothing was measured below its best angle, 40.5
    assert verdict["supported"] is False and projectile_judge.score(verdict, scans) is None
    # and on the upper edge: 40, 40.5 (the best) and 45
    run = run_of(40, 40.5, 45)
    conclusion = projectile_judge.agent_conclusion(run.transcript)
    assert conclusion["bracket"] == [40, 40.5] and conclusion["best_angle"]["value"] == 40.5 and conclusion["inside"] is True
    assert projectile_judge.verdict_of(run)["supported"] is True
    # the best measured angle may be an edge of the answer: 41, with 40 and 42 around it, the top at 40.54
    run = run_of(40, 41, 42)
    assert projectile_judge.verdict_of(run)["located"]["best"]["angle"] == 41 and projectile_judge.verdict_of(run)["supported"] is True


def test_hunter_judge_counts_only_the_budget_of_accepted_calls():
    """A transcript with a 9th accepted call (not replayed: the allowlist would have refused it)
    whose result is the counterexample is judged on its first 8 calls (issue 16, case 19)."""
    from replaylab.agents.messages import ModelMessage, Step, ToolCall, ToolResult, Transcript

    claim = hunter_lab.CLAIMS["symplectic-euler"]
    se = "symplectic Euler"
    safe = [{"method": se, "steps_per_period": 200, "periods": 20}] * claim.budget  # each well within the claim
    witness = {"method": se, "steps_per_period": 16, "periods": 50}
    calls = tuple(ToolCall(str(i), "oscillator_energy_drift", a) for i, a in enumerate(safe + [witness]))
    steps = (Step(ModelMessage("", calls), tuple(ToolResult(c.id, c.name, True, {"max_energy_drift": 0.0}) for c in calls)),)
    verdict = hunter_judge.hunt_verdict(Transcript("m", "s", "t", steps, True), claim)
    assert claim.budget == 8 and verdict["tested"] == 8
    assert verdict["outcome"] == "inconclusive" and verdict["witness"] is None
    shorter = (Step(ModelMessage("", calls[1:]), steps[0].results[1:]),)  # the witness is now the 8th
    assert hunter_judge.hunt_verdict(Transcript("m", "s", "t", shorter, True), claim)["outcome"] == "counterexample"


def test_the_rough_ball_and_the_strict_exact_replays_use_the_tolerance_given():
    """A 1 % rougher ball changes a range by far less than 1: with a tolerance of 1 the replay
    agrees, with the build's 1e-6 it is caught. A run with no range call has nothing to catch."""
    run = replayed("projectile", "reference")
    caught = projectile_judge.rough_ball(run, 1e-6)
    assert caught["caught"] is True and caught["drag_factor"] == 1.01
    assert (caught["message"], caught["call"], caught["tool"]) == (1, 2, "range_with_drag")
    assert caught["text"].startswith("message 1, call 2, tool range_with_drag")
    assert projectile_judge.rough_ball(run, 1.0) == {"caught": False, "drag_factor": 1.01}
    physics = replayed("review", "physics")
    assert review_judge.replay_with_strict_exact(physics, 1e-6)["caught"] is True
    assert review_judge.replay_with_strict_exact(physics, 1.0) == {"exact": 1e-30, "caught": False}


def test_hunter_boundary_exercise():
    boundary = hunter_exercises.boundary()
    assert boundary["attempts"][0]["value"]["shown"] == "0.0096"
    assert [a.get("error") for a in boundary["attempts"][1:]] == [
        "method must be one of explicit Euler, symplectic Euler, velocity Verlet, Runge-Kutta 4, got 'os.system'",
        "method must be one of explicit Euler, symplectic Euler, velocity Verlet, Runge-Kutta 4, got a list",
        "steps_per_period must be between 4 and 200, got 0",
        "periods must be between 1 and 50, got 1000000",
        "steps_per_period must be an integer, got 32.5",
        "unknown arguments: code",
    ]
    repeats = boundary["repeats"]
    assert [r["ok"] for r in repeats] == [True] * 8 + [False]
    assert repeats[-1]["error"] == "the budget of 8 experiments is spent"


def review_runs():
    return [replayed("review", r) for r in REFERENCE_RUNS["review"]]


def reference_decision():
    runs = review_runs()
    review = registry.lesson("review")
    (decision,) = review.decide(runs, review_judge.judge(runs, 1e-6)).values()  # one group, one model
    return decision


def test_review_resolution():
    decision = reference_decision()
    assert decision["group"] == "reference" and decision["reviewers"] == {r: [r] for r in sorted(REFERENCE_RUNS["review"])}
    one, two = decision["resolution"]
    assert not one["rejected"] and one["clear_by"] == ["evidence", "numerics", "physics"]
    assert two["rejected"] and two["failed"] == ["bounded-energy"]
    assert two["flagged_by"] == ["evidence", "physics"] and two["clear_by"] == ["numerics"]
    assert two["conflicts"] == [] and two["not_covered"] == []
    assert two["evidence"].startswith("numerically verified") and one["evidence"] is None


def test_review_strict_tolerance_replay_fails_on_passed():
    verdicts = review_judge.judge(review_runs(), 1e-6)
    assert [run for run, verdict in verdicts.items() if "strict_replay" in verdict] == ["physics"]
    result = verdicts["physics"]["strict_replay"]
    assert result["caught"]
    assert (result["message"], result["call"], result["key"], result["recorded"], result["recomputed"]) == (1, 1, "passed", 1.0, 0.0)
    assert result["text"].startswith("message 1, call 1, tool check_limits: passed was 1.0 when recorded and is 0.0 now (tolerance 1e-06).")


def test_review_verdicts_are_recomputed_not_read():
    run = replayed("review", "physics")
    forged_steps = tuple(
        dataclasses.replace(step, results=tuple(
            dataclasses.replace(r, content={"measured": 0.0, "tolerance": 1.5, "passed": 1.0}) for r in step.results))
        for step in run.transcript.steps
    )
    forged = dataclasses.replace(run.transcript, steps=forged_steps)
    found = review_judge.verdicts("physics", forged)
    energy_two = [v for v in found if v.candidate == 2 and v.check == "bounded-energy"]
    assert len(energy_two) == 1 and not energy_two[0].passed


def test_review_exercises():
    boast = review_exercises.boasting_reviewer()
    assert [v["summary"] for v in boast["verdicts"]] == ["failed (measured 9.1e+49, tolerance 1.5)"]
    rows = review_exercises.every_check()
    failed = [(r["candidate"], r["check"]) for r in rows if not r["passed"]]
    assert failed == [(2, "bounded-energy")]
    conflict = review_exercises.conflict()["resolution"]
    assert conflict["rejected"] and conflict["conflicts"] == ["limits"]


def test_what_the_agent_sees_never_names_the_answer():
    """Variant names say what a claim is about, never whether it holds; no label the agent sees says
    false, true, open or refuted."""
    from replaylab.lessons.hunter import lab

    assert set(lab.VARIANTS) == {"symplectic-euler", "velocity-verlet"}
    for name, v in lab.VARIANTS.items():
        texts = [name, v.system, v.task]
        for spec in v.allowlist().specs():
            texts += [spec["name"], spec["description"]]
            texts += [p["description"] + " " + " ".join(p.get("enum", [])) for p in spec["parameters"]["properties"].values()]
        seen = " ".join(texts).lower()
        for word in ("false", "true", "open claim", "refuted", "holds"):
            assert word not in seen, (name, word)


def test_reproduce_check_names_every_check_by_number_and_in_every_result():
    from replaylab.agents.messages import ToolCall
    from replaylab.lessons.review import lab
    from replaylab.verification.checks import CHECK_NAMES

    tool = lab.reproduce_tool(lab.checks.EXACT)
    numbered = "1 clock, 2 purity, 3 limits, 4 convergence-order, 5 bounded-energy"
    assert numbered in tool.description
    assert numbered in tool.spec()["parameters"]["properties"]["check"]["description"]
    allowlist = lab.VARIANTS["evidence"].allowlist()
    for number, name in enumerate(CHECK_NAMES, start=1):
        result = allowlist.dispatch(ToolCall("1", "reproduce_check", {"check": number, "candidate": 2}))
        assert result.ok and result.content["check"] == name
        assert list(result.content) == ["check", "measured", "tolerance", "passed"]


def test_the_drift_tool_gives_every_thread_its_answer(monkeypatch):
    """A campaign's recording job runs its runs in threads of one process: the drift tool's shared
    table of each method (computed by the first call that needs it) must answer every call of every
    thread, with the bits of a run of its own."""
    import sys
    import threading

    from replaylab.agents.messages import ToolCall
    from replaylab.lessons.hunter import drift_table
    from replaylab.physics.drift import max_energy_drift
    from replaylab.physics.integrators import STEPPERS

    calls = [(method, n, 50) for n in range(20, 52) for method in STEPPERS]  # finite energy for every method
    alone = {call: max_energy_drift(*call) for call in calls[::7]}
    drift_table._table.cache_clear()  # the tables are computed again, by whichever thread comes first
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    found, start = [], threading.Barrier(8)

    def run(offset):
        start.wait()
        tools = hunter_lab.all_tools()
        tools.budget = None
        for i, (method, steps, periods) in enumerate(calls[offset:] + calls[:offset]):
            arguments = {"method": method, "steps_per_period": steps, "periods": periods}
            found.append(((method, steps, periods), tools.dispatch(ToolCall(f"c{i}", hunter_lab.TOOL_NAME, arguments))))

    try:
        threads = [threading.Thread(target=run, args=(k * 17,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(found) == 8 * len(calls)
    refused = [result.content for _, result in found if not result.ok]
    assert refused == []
    first = {call: result.content for call, result in reversed(found)}
    assert all(result.content == first[call] for call, result in found)  # every thread, the same bits
    assert all(first[call] == {hunter_lab.RESULT_KEY: value} for call, value in alone.items())  # a run of its own's
