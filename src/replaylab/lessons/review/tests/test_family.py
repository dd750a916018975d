"""The review family: the catalogue of faulty pieces held to the build's own checks, the draw, the
answers, and the judge, the careful and the trivial program on instances other than the seed's."""

import json
import math
from functools import cache

import pytest

from replaylab.agents import loop, recording
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.agents.replay import ReplayMismatch, replay
from replaylab.agents.tools import ANSWER
from replaylab.cli.tasks import listed_instances
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.lessons.review import agent, family, lab, pieces
from replaylab.physics import oscillator
from replaylab.verification import checks
from replaylab.verification.checks import CHECK_NAMES

LESSON = registry.lesson("review")
CLOCK, PURITY, LIMITS, ORDER, ENERGY = CHECK_NAMES
EXACT_CHECKS = (CLOCK, PURITY, LIMITS)

# Every entry's measured value of each check it fails, or nearly fails (4 significant digits, as
# this build computed them); every other check passes. A change to a builder shows here first.
MEASURED = {
    "symplectic-euler": {},
    "explicit-euler": {ENERGY: 9.137e49},
    "clock-doubled": {CLOCK: 0.125},
    "clock-halved": {CLOCK: 0.0625},
    "clock-fast": {CLOCK: 1.25e-7},
    "clock-slow": {CLOCK: 2.5e-7},
    "memory": {PURITY: 2e-7},
    "memory-weak": {PURITY: 2e-9},
    "force-stronger": {LIMITS: 2.06e-5},
    "force-weaker": {LIMITS: 1.962e-3},
    "rest-offset": {ORDER: 0.1211},
    "rest-offset-mild": {ORDER: 0.3678},
    "verlet": {ORDER: 2.0},
    "pumped": {ENERGY: 15.83},
    "pumped-strong": {ENERGY: 1.603e25},
    "damped": {ENERGY: 5.353},
    "runge-kutta-4": {ORDER: 4.0, ENERGY: 20.1},
    "friction": {LIMITS: 0.02063, ENERGY: 3.122},
    "memory-strong": {PURITY: 6e-4, ENERGY: 3.47},
    "euler-clock": {CLOCK: 0.125, ENERGY: 9.137e49},
    "verlet-memory": {PURITY: 9.016e-8, ORDER: 2.0},
    "stronger-offset": {LIMITS: 2.06e-5, ORDER: 0.1211},
    "fast-pumped": {CLOCK: 1.25e-7, ENERGY: 15.83},
    "memory-stronger": {PURITY: 2e-7, LIMITS: 2.06e-5},
    "halved-offset": {CLOCK: 0.0625, ORDER: 0.1211},
    "clock-subtle": {CLOCK: 2e-12},
    "memory-subtle": {PURITY: 3e-12},
    "force-subtle": {LIMITS: 2.062e-12},
    "offset-subtle": {ORDER: 0.5562},
    "damped-subtle": {ENERGY: 1.61},
    "pumped-subtle": {ENERGY: 1.614},
    # near misses: the value lies just within the tolerance, and the check passes
    "clock-within": {CLOCK: 5e-13},
    "memory-within": {PURITY: 4.999e-13},
    "offset-within": {ORDER: 0.6635},
    "damped-within": {ENERGY: 1.319},
    "pumped-within": {ENERGY: 1.371},
}


def results(piece):
    return {name: pieces.check(name, piece) for name in CHECK_NAMES}


def distance(name, result):
    """How far a check's value lies from its tolerance, in the unit `pieces.NEAR` and `MARGIN` use."""
    if name in EXACT_CHECKS:
        return abs(math.log(result.measured / result.tolerance)) if result.measured > 0 else math.inf
    if name == ORDER:
        return abs(abs(result.measured - 1) - result.tolerance)
    return abs(result.measured - result.tolerance)


def near(name, result, bounds):
    key = {ORDER: "order_distance", ENERGY: "energy_growth"}.get(name, "exact_factor")
    limit = math.log(bounds[key]) if name in EXACT_CHECKS else bounds[key]
    return distance(name, result) <= limit


# ---------------------------------------------------------------------------------------------
# The catalogue, held to the build's checks


def test_the_table_covers_the_catalogue():
    assert list(MEASURED) == list(pieces.CATALOGUE)


@pytest.mark.parametrize("key", list(pieces.CATALOGUE))
def test_each_entry_fails_what_it_is_made_to_fail_and_nothing_else(key):
    piece = pieces.CATALOGUE[key]
    found = results(piece)
    assert [name for name, r in found.items() if not r.passed] == list(piece.fails) == pieces.failures(piece)
    for name, value in MEASURED[key].items():
        assert math.isclose(found[name].measured, value, rel_tol=1e-3), (name, found[name].measured)
    # the checks the table does not name pass, with nothing close to their tolerance
    for name, result in found.items():
        if name not in MEASURED[key]:
            assert result.passed and not near(name, result, pieces.NEAR), name


@pytest.mark.parametrize("key", list(pieces.CATALOGUE))
def test_subtle_means_close_to_a_tolerance_and_no_value_sits_on_the_edge(key):
    """The edge-case rule: an entry is subtle exactly when a value lies near its tolerance, and none
    lies within round-off's reach of it."""
    piece = pieces.CATALOGUE[key]
    found = results(piece)
    assert piece.subtle == any(near(name, r, pieces.NEAR) for name, r in found.items())
    for name, result in found.items():
        assert not near(name, result, pieces.MARGIN), (name, result.measured)
        assert math.isfinite(result.measured) or not result.passed


def test_every_entry_measures_differently_so_the_pieces_of_a_pair_always_differ():
    measured = {key: tuple(r.measured for r in results(piece).values()) for key, piece in pieces.CATALOGUE.items()}
    assert len(set(measured.values())) == len(measured)


def test_the_seed_entries_are_the_seed_pieces_bit_for_bit():
    for number, piece in lab.SEED_PIECES.items():
        for name in CHECK_NAMES:
            ours, seed = pieces.check(name, piece), checks.run_check(name, lab.PIECES[number])
            assert (ours.measured, ours.passed) == (seed.measured, seed.passed)
        assert pieces.error(piece, 100) == checks.oscillator_error(lab.PIECES[number], 100)


# ---------------------------------------------------------------------------------------------
# The faults against closed forms and the literature


def test_the_faults_match_their_closed_forms():
    catalogue = pieces.CATALOGUE
    # a clock that advances by dt (1 + d) misses t + dt by 0.125 |d| on the check's step of 0.125 s
    for key, d in (("clock-doubled", 1.0), ("clock-halved", -0.5), ("clock-fast", 1e-6), ("clock-slow", -2e-6),
                   ("clock-subtle", 1.6e-11), ("clock-within", 4e-12)):
        assert math.isclose(pieces.check(CLOCK, catalogue[key]).measured, 0.125 * abs(d), rel_tol=1e-3), key
    # a force that keeps m of its change: the step from x = 1 after x = 0.5 differs by m (4 - 2) dt in v
    for key, m in (("memory", 1e-6), ("memory-weak", 1e-8), ("memory-strong", 0.003), ("memory-subtle", 1.5e-11)):
        assert math.isclose(pieces.check(PURITY, catalogue[key]).measured, 0.2 * m, rel_tol=1e-3), key
    # a force (1 + s) times too strong: the position's error beyond the allowance, s g (T^2 + T dt) / 2,
    # or, for a weaker force, the velocity's, |s| g T (T = 2 s, dt = 0.1 s)
    g = checks.LIMITS_GRAVITY
    for key, s in (("force-stronger", 1e-6), ("force-subtle", 1e-13)):
        assert math.isclose(pieces.check(LIMITS, catalogue[key]).measured, s * g * (4 + 0.2) / 2, rel_tol=1e-3), key
    assert math.isclose(pieces.check(LIMITS, catalogue["force-weaker"]).measured, 1e-4 * g * 2, rel_tol=1e-6)


def test_explicit_euler_energy_grows_by_one_plus_omega_dt_squared_per_step():
    """Explicit Euler multiplies the oscillator's energy by 1 + (omega dt)^2 each step, exactly: the
    ratio of the last window's largest error (sample 3200) to the first's (sample 159)."""
    w2 = (oscillator.OMEGA * oscillator.PERIOD / 32) ** 2
    expected = ((1 + w2) ** 3200 - 1) / ((1 + w2) ** 159 - 1)
    assert math.isclose(pieces.check(ENERGY, pieces.CATALOGUE["explicit-euler"]).measured, expected, rel_tol=1e-9)


def test_the_velocity_term_damps_or_pumps_by_the_maps_determinant():
    """Symplectic Euler conserves phase-space area (determinant 1); the lookahead term c makes the
    one-step map's determinant 1 - c (omega dt)^2: below 1 drains the energy, above 1 pumps it."""
    dt = 0.05
    for key, c in (("damped", 0.01), ("pumped", -0.01), ("pumped-strong", -0.5), (pieces.CORRECT, 0.0)):
        step = pieces.CATALOGUE[key].build()
        _, x1, v1 = step(0.0, 1.0, 0.0, dt, oscillator.acceleration)
        _, x2, v2 = step(0.0, 0.0, 1.0, dt, oscillator.acceleration)
        assert math.isclose(x1 * v2 - x2 * v1, 1 - c * (oscillator.OMEGA * dt) ** 2, rel_tol=1e-12), key


def test_a_rest_offset_moves_the_equilibrium():
    step = pieces.CATALOGUE["rest-offset"].build()
    assert step(0.0, -0.05, 0.0, 0.1, oscillator.acceleration)[1:] == (-0.05, 0.0)


def test_the_orders_of_the_higher_methods_are_those_of_the_literature():
    """Velocity Verlet is of second order, classical Runge-Kutta of fourth (Hairer, Lubich & Wanner)."""
    assert abs(pieces.check(ORDER, pieces.CATALOGUE["verlet"]).measured - 2) < 0.05
    assert abs(pieces.check(ORDER, pieces.CATALOGUE["runge-kutta-4"]).measured - 4) < 0.05


def test_the_memory_fault_is_hidden_state_and_nothing_else():
    """The same call on a fresh stepper and on one that stepped before: only the second differs."""
    fresh, used = pieces.CATALOGUE["memory"].build(), pieces.CATALOGUE["memory"].build()
    used(0.0, 0.5, 0.0, 0.1, oscillator.acceleration)
    assert fresh(0.0, 1.0, 0.0, 0.1, oscillator.acceleration) == pieces.CATALOGUE[pieces.CORRECT].build()(
        0.0, 1.0, 0.0, 0.1, oscillator.acceleration)
    assert used(0.0, 1.0, 0.0, 0.1, oscillator.acceleration) != fresh(0.0, 1.0, 0.0, 0.1, oscillator.acceleration)


# ---------------------------------------------------------------------------------------------
# The draw


def test_the_draw_is_deterministic_with_the_seed_first():
    first = family.instances()
    family._drawn.cache_clear()
    again = family.instances()
    assert [(i.id, i.difficulty, i.parameters, i.hidden, i.seed) for i in first] == \
           [(i.id, i.difficulty, i.parameters, i.hidden, i.seed) for i in again]
    assert first[0].id == "review-seed" and first[0].seed and not any(i.seed for i in first[1:])
    assert [i.id for i in first[1:]] == [f"review-{n:03d}" for n in range(1, 61)]
    assert list(LESSON.instances) == [i.id for i in first]


def test_the_levels_and_the_pairs():
    drawn = list(LESSON.instances.values())[1:]
    assert {level: sum(i.difficulty == level for i in drawn) for level in DIFFICULTIES} == family.COUNTS
    pairs = [frozenset(i.hidden["pieces"]) for i in drawn]
    assert len(set(pairs)) == len(pairs)  # never the same pair twice, nor its mirror
    assert frozenset(family.SEED_PAIR) not in pairs
    assert all(len(pair) == 2 for pair in pairs)  # two distinct pieces
    assert all(i.parameters == {"mass_kg": 0.5, "stiffness_n_m": 2.0} for i in LESSON.instances.values())
    assert set(family.PARAMETERS) == {"mass_kg", "stiffness_n_m"}


def test_the_difficulty_follows_the_build_s_own_checks():
    """The stated rule, from the checks' results alone: easy, one piece passes everything with no value
    near a tolerance and one check fails in all, far from it; hard, a value near a tolerance or four
    failures; medium, the rest. No instance has no failure at all."""
    answers = LESSON.answers()
    for instance in LESSON.instances.values():
        both = family.pieces_of(instance).values()
        failed = sum(len(f) for f in answers[instance.id]["failures"].values())
        close = any(near(name, r, pieces.NEAR) for piece in both for name, r in results(piece).items())
        clean = any(not pieces.failures(p) and not any(near(n, r, pieces.NEAR) for n, r in results(p).items()) for p in both)
        expected = "hard" if close or failed >= 4 else "easy" if failed == 1 and clean else "medium"
        assert failed >= 1 and instance.difficulty == expected, instance.id


def test_instances_are_cheap():
    import time

    family._drawn.cache_clear()
    start = time.process_time()
    family.instances()
    assert time.process_time() - start < 0.5


# ---------------------------------------------------------------------------------------------
# What an agent reads


def test_nothing_an_agent_reads_tells_the_pieces_apart():
    """Every instance's prompts, tool descriptions and bounds and answer tool are the seed's, word
    for word; the listing of `replaylab tasks` holds no fault and no answer."""
    def texts(variant):
        return (variant.system, variant.task, variant.system_for("mcp"), json.dumps([t.spec() for t in variant.allowlist().tools.values()]))

    for instance in LESSON.instances.values():
        for name, variant in LESSON.instance_variants(instance.id).items():
            assert texts(variant) == texts(lab.VARIANTS[name])
    listed = json.dumps(listed_instances(LESSON))
    for piece in pieces.ENTRIES:
        assert f'"{piece.key}"' not in listed and piece.what not in listed
    assert "hidden" not in listed and "failures" not in listed
    assert not any(check in listed for check in CHECK_NAMES)


def test_the_seed_instance_keeps_the_seed_s_variants():
    assert LESSON.instance_variants("review-seed") == lab.VARIANTS
    assert LESSON.answers(["review-seed"])["review-seed"] == {"failures": {"1": [], "2": [ENERGY]}}


def test_the_tools_of_two_instances_never_share_a_result():
    """The tools' caches are keyed by the piece itself: piece 1 of one instance, then of another,
    in the same process, each gives its own piece's result."""
    first, second = (LESSON.instances[i] for i in ("review-033", "review-035"))
    assert (family.pieces_of(first)[1].key, family.pieces_of(second)[1].key) == (pieces.CORRECT, "clock-fast")
    seen = []
    for instance in (first, second, first):
        tool = LESSON.variant("numerics", instance.id).allowlist().tools["check_clock"]
        seen.append(tool.function(candidate=1)["measured"])
    assert seen == [0.0, pieces.check(CLOCK, pieces.CATALOGUE["clock-fast"]).measured, 0.0] and seen[1] > 0


# ---------------------------------------------------------------------------------------------
# Runs through the harness on drawn instances


def program_of(calls, answer):
    """A program: its calls (four per message), then the answer."""

    def program(conversation):
        done = len(exchanges(conversation))
        if done < len(calls):
            batch = calls[done : done + 4]
            return ModelMessage("Checking.", tuple(ToolCall(str(done + i), n, a) for i, (n, a) in enumerate(batch, 1)))
        return ModelMessage("Done.", (ToolCall("a", ANSWER, answer),))

    return program


def run_on(instance, reviewer, program, run="r"):
    variant = LESSON.variant(reviewer, instance)
    transcript = loop.run(ScriptedClient(program, "test program"), variant.system, variant.task, variant.allowlist(),
                          variant.max_steps)
    return recording.Recording("review", run, reviewer, "g", recording.provenance("scripted", "test program", "a test"),
                               transcript, instance=instance)


def every_check(reviewer):
    if reviewer == "evidence":
        return [(lab.REPRODUCE_TOOL, {"check": n, "candidate": p}) for p in (1, 2) for n in range(1, 6)]
    return [(lab.check_tool_name(c), {"candidate": p}) for p in (1, 2) for c in lab.remit(reviewer)]


def remit_answer(truth, reviewer):
    return {lab.failed_field(p): [c for c in truth["failures"][str(p)] if c in lab.remit(reviewer)] for p in (1, 2)}


def judged(run):
    verdict = LESSON.judge([run], 1e-6)[run.run]
    return verdict, LESSON.score(verdict, LESSON.answers([run.instance])[run.instance])


@pytest.mark.parametrize("instance", ["review-014", "review-046", "review-059", "review-032"])
def test_the_build_s_answer_is_right_and_supported_and_a_changed_one_is_wrong(instance):
    truth = LESSON.answers([instance])[instance]
    for reviewer in lab.REVIEWERS:
        right = remit_answer(truth, reviewer)
        verdict, wrong = judged(run_on(instance, reviewer, program_of(every_check(reviewer), right)))
        assert wrong is None and verdict["supported"] is True and verdict["instance"] == instance, reviewer
        # the same answer without running the checks: right, not supported
        verdict, wrong = judged(run_on(instance, reviewer, program_of([], right)))
        assert wrong is None and verdict["supported"] is False
        # one check of the remit flipped on piece 2: wrong, and not what its own checks showed
        check = lab.remit(reviewer)[0]
        flipped = dict(right, piece_2_failed=sorted(set(right["piece_2_failed"]) ^ {check}, key=CHECK_NAMES.index))
        verdict, wrong = judged(run_on(instance, reviewer, program_of(every_check(reviewer), flipped)))
        assert wrong is not None and wrong.startswith("piece 2") and verdict["supported"] is False


def test_a_hard_instance_s_near_miss_named_as_failed_is_wrong():
    """review-032: piece 1 is a clock just within its tolerance; naming it is wrong."""
    assert family.pieces_of(LESSON.instances["review-032"])[1].key == "clock-within"
    run = run_on("review-032", "numerics", program_of(every_check("numerics"), {"piece_1_failed": [CLOCK], "piece_2_failed": [PURITY]}))
    verdict, wrong = judged(run)
    assert wrong == "piece 1: names a check that passes" and verdict["supported"] is False
    assert LESSON.verdict_line(run).startswith("answer piece 1 fails clock; piece 2 fails purity: wrong, piece 1: names a check that passes")


def test_a_drawn_instance_s_run_replays_against_its_own_pieces_only():
    run = run_on("review-035", "numerics", program_of(every_check("numerics"), {"piece_1_failed": [CLOCK], "piece_2_failed": []}))
    replay(run, LESSON.variant_of(run))
    with pytest.raises(ReplayMismatch):
        replay(run, LESSON.variant("numerics", "review-033"))  # another instance: piece 1's clock differs


def test_a_group_of_runs_of_two_instances_is_decided_per_instance():
    runs = [run_on("review-035", "numerics", program_of(every_check("numerics"), {"piece_1_failed": [CLOCK], "piece_2_failed": []}), "a"),
            run_on("review-023", "physics", program_of(every_check("physics"), {"piece_1_failed": [], "piece_2_failed": [LIMITS]}), "b")]
    (decision,) = LESSON.decide(runs, LESSON.judge(runs, 1e-6)).values()
    assert decision["instances"] == ["review-035", "review-023"]
    assert [(r["instance"], r["candidate"], r["rejected"], r["failed"]) for r in decision["resolution"]] == [
        ("review-035", 1, True, [CLOCK]), ("review-035", 2, False, []),
        ("review-023", 1, False, []), ("review-023", 2, True, [LIMITS])]
    assert decision["resolution"][0]["name"] == "piece 1 of instance review-035"  # drawn pieces: by number only


# ---------------------------------------------------------------------------------------------
# The careful and the trivial program over the whole family


def scripted(plan, instance, reviewer):
    name, program = LESSON.scripted(reviewer, 0, instance, plan=plan)
    variant = LESSON.variant(reviewer, instance)
    transcript = loop.run(ScriptedClient(program, name), variant.system, variant.task, variant.allowlist(), variant.max_steps)
    run = recording.Recording("review", f"{plan}--{instance}--{reviewer}", reviewer, "baseline",
                              recording.provenance("scripted", name, "a test"), transcript, instance=instance)
    return LESSON.score(LESSON.judge([run], 1e-6)[run.run], family_answers()[instance])


@cache
def family_answers():
    """The build's answers of the whole family, computed once for the tests below."""
    return LESSON.answers()


def test_the_careful_program_is_right_on_every_instance():
    wrong = [(i, r, w) for i in LESSON.instances for r in lab.REVIEWERS if (w := scripted(agent.CAREFUL, i, r)) is not None]
    assert wrong == []


def test_the_trivial_program_is_right_only_where_a_remit_fails_on_neither_piece():
    right = {(i, r) for i in LESSON.instances for r in lab.REVIEWERS if scripted(agent.TRIVIAL, i, r) is None}
    expected = {(i, r) for i, truth in family_answers().items() for r in lab.REVIEWERS
                if not any(c in lab.remit(r) for f in truth["failures"].values() for c in f)}
    assert right == expected
    assert not any(r == "evidence" for _, r in right)  # every instance fails some check
    assert len(right) / (3 * len(LESSON.instances)) < 0.25
