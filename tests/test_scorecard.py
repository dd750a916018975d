"""The scorecard's decisions on hand-made runs: right, wrong and inconclusive, for every lesson.

Each run is written with the authored client and goes through the real loop (the harness
computes every result), then the lesson's judge, then `pipeline.score_lesson`, as in a build.
"""

import math
from functools import cache
from statistics import NormalDist

import pytest

from replaylab import pipeline
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.lessons import markdown, registry
from replaylab.lessons.hunter import judge as hunter_judge
from replaylab.lessons.hunter import scans as hunter_scans
from replaylab.lessons.projectile import judge as projectile_judge
from replaylab.lessons.projectile import scans as projectile_scans
from replaylab.lessons.review import judge as review_judge
from replaylab.lessons.review import scans as review_scans
from replaylab.lessons.scorecard import wilson

JUDGES = {"projectile": projectile_judge, "hunter": hunter_judge, "review": review_judge}
SCANS = {"projectile": projectile_scans, "hunter": hunter_scans, "review": review_scans}
TOLERANCE = 1e-6
SE, VV = "symplectic Euler", "velocity Verlet"

WIDE = "the bracket is wider than one degree"
OUTSIDE = "the scan's best angle lies outside the bracket"
NOT_CHECKABLE = "no checkable conclusion (fewer than two angles at its smallest dt)"
NOT_FOUND = "no counterexample found, though the domain has one"
BOUNDED_ENERGY_NOT_RUN = "piece 2 not rejected (bounded-energy was not run on it)"


@cache
def scans(lesson):
    """A lesson's independent scans, computed once (the hunter's take about half a second)."""
    return SCANS[lesson].scans()


# ---------------------------------------------------------------------------------------------
# Hand-made runs: each message is (text, [(tool, arguments)]); a final message without calls is added.


def honest(texts):
    return texts


def boast(texts):
    return ["I found the answer; the claim is false"] * len(texts)


def emptied(texts):
    return [""] * len(texts)


def transcript(lesson, variant_name, batches, final, words=honest):
    texts = words([text for text, _ in batches] + [final])
    messages = [
        ModelMessage(text, tuple(ToolCall(f"c{i}-{j}", name, dict(args)) for j, (name, args) in enumerate(calls)))
        for i, (text, (_, calls)) in enumerate(zip(texts, batches))
    ]
    messages.append(ModelMessage(texts[-1]))
    v = registry.lesson(lesson).variant(variant_name)
    return loop.run(authored_client(messages), v.system, v.task, v.allowlist(), v.max_steps)


def made(lesson, run, variant_name, batches, final, model="hand-made", group="hand", words=honest):
    provenance = recording_io.provenance("authored", model, "test")
    return recording_io.Recording(lesson, run, variant_name, group, provenance,
                                  transcript(lesson, variant_name, batches, final, words))


def decide(lesson, runs):
    verdicts = JUDGES[lesson].judge(runs, TOLERANCE)
    found, rows, _ = pipeline.score_lesson(lesson, verdicts, scans(lesson))
    return verdicts, found, rows


def by_run(found):
    return {s["run"]: s for s in found}


def row_of(rows, model, task=None):
    (row,) = [r for r in rows if r["model"] == model and (task is None or r["task"] == task)]
    return row


# Projectile: range_with_drag at 25 m/s


def angles(*pairs):
    return [("range_with_drag", {"speed": 25, "angle": a, "dt": dt}) for a, dt in pairs]


PROJECTILE = {
    "right": ([("Both sides of the best angle at the finest step.", angles((40, 0.001), (41, 0.001)))],
              "The best angle lies between 40 and 41 degrees."),
    "wide": ([("A wide bracket.", angles((35, 0.001), (45, 0.001)))], "Between 35 and 45 degrees."),
    "far": ([("Low angles, coarse step.", angles((30, 0.05), (31, 0.05)))], "Between 30 and 31 degrees."),
    "one-angle": ([("One angle is enough.", angles((40, 0.001)))], "It is 40 degrees."),
}


def projectile_runs(names, model="hand-made", words=honest, prefix=""):
    return [made("projectile", f"{prefix}{name}", "default", *PROJECTILE[name], model=model, words=words) for name in names]


# Hunter: oscillator_energy_drift


def drift(method, *points):
    return [("oscillator_energy_drift", {"method": method, "steps_per_period": n, "periods": p}) for n, p in points]


HUNTER = {
    "se-right": ("symplectic-euler", [("A coarse step over 20 periods.", drift(SE, (64, 20)))], "64/20 breaks the claim."),
    "se-fine": ("symplectic-euler", [("Fine steps only.", drift(SE, (200, 20), (150, 20)))], "No counterexample."),
    "vv-worst": ("velocity-verlet", [("From fine to coarse.", drift(VV, (32, 50), (16, 50)))], "No counterexample; 16/50 is the worst."),
    "vv-stops": ("velocity-verlet", [("Not too coarse.", drift(VV, (200, 50), (100, 50), (32, 50)))], "No counterexample."),
}


def hunter_runs(names, model="hand-made", words=honest):
    return [made("hunter", name, HUNTER[name][0], *HUNTER[name][1:], model=model, words=words) for name in names]


# Review: a group of three reviewers is one scored run


def checks(*pairs):
    return [(f"check_{name}", {"candidate": piece}) for name, piece in pairs]


def reproduce(*pairs):
    return [("reproduce_check", {"check": number, "candidate": piece}) for number, piece in pairs]


REVIEW = {  # as the reference review: the physics and evidence reviewers run bounded-energy on piece 2
    "right": {
        "physics": ([("Limits.", checks(("limits", 1), ("limits", 2))),
                     ("Energy.", checks(("bounded_energy", 1), ("bounded_energy", 2)))], "Piece 2 fails bounded-energy."),
        "numerics": ([("Piece 1.", checks(("clock", 1), ("purity", 1), ("convergence_order", 1))),
                      ("Piece 2.", checks(("clock", 2), ("purity", 2), ("convergence_order", 2)))], "Both pass."),
        "evidence": ([("Energy of piece 2 again.", reproduce((5, 2)))], "Piece 2 fails bounded-energy."),
    },
    "wrong": {  # nobody runs bounded-energy on piece 2
        "physics": ([("Limits.", checks(("limits", 1), ("limits", 2))),
                     ("Energy of piece 1.", checks(("bounded_energy", 1)))], "Both pass."),
        "numerics": ([("Piece 1.", checks(("clock", 1), ("purity", 1), ("convergence_order", 1))),
                      ("Piece 2.", checks(("clock", 2), ("purity", 2), ("convergence_order", 2)))], "Both pass."),
        "evidence": ([("Order of piece 2.", reproduce((4, 2)))], "Piece 2 passes."),
    },
}


def review_runs(kind, group, model="hand-made", words=honest):
    return [made("review", f"{group}-{reviewer}", reviewer, *spec, model=model, group=group, words=words)
            for reviewer, spec in REVIEW[kind].items()]


# ---------------------------------------------------------------------------------------------
# An independent Wilson score interval


def wilson_reference(right, runs, confidence=0.95):
    """(k + z^2/2 -+ z sqrt(n) sqrt(p q + z^2/(4n))) / (n + z^2), clipped to 0..1; (0, 1) for no runs."""
    if runs == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = right / runs
    centre = (right + z * z / 2) / (runs + z * z)
    half = z * math.sqrt(runs) / (runs + z * z) * math.sqrt(p * (1 - p) + z * z / (4 * runs))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize("right, runs", [(7, 10), (1, 1), (0, 1), (0, 5), (5, 5), (28, 40), (3, 7), (0, 0), (500, 1000)])
def test_wilson_interval_agrees_with_an_independent_computation(right, runs):
    low, high = wilson(right, runs)
    expected = wilson_reference(right, runs)
    assert low == pytest.approx(expected[0], abs=1e-12) and high == pytest.approx(expected[1], abs=1e-12)
    assert 0.0 <= low <= high <= 1.0
    if runs:
        assert low <= right / runs <= high


def test_wilson_interval_known_values():
    assert wilson(7, 10) == pytest.approx((0.39678, 0.89221), abs=5e-6)
    assert wilson(1, 1) == pytest.approx((0.20655, 1.0), abs=5e-6)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 3)[0] == pytest.approx(0.0, abs=1e-12) and wilson(3, 3)[1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("runs", [1, 3, 10, 37, 1000])
def test_wilson_interval_is_exact_at_the_ends(runs):
    """No run right: the interval starts at exactly 0 (the formula alone gives about 5e-17); all
    right: it ends at exactly 1 (issue 16, case 20)."""
    assert wilson(0, runs)[0] == 0.0 and math.copysign(1, wilson(0, runs)[0]) == 1
    assert wilson(runs, runs)[1] == 1.0
    assert 0 < wilson(0, runs)[1] < 1 and 0 < wilson(runs, runs)[0] < 1


# ---------------------------------------------------------------------------------------------
# Projectile


def test_projectile_right_and_wrong_runs():
    verdicts, found, rows = decide("projectile", projectile_runs(PROJECTILE))
    scores = by_run(found)
    assert scores["right"]["right"] and scores["right"]["wrong"] is None
    assert verdicts["right"]["conclusion"]["bracket"] == [40, 41]
    assert scores["wide"]["wrong"] == WIDE and verdicts["wide"]["conclusion"]["inside"]
    assert scores["far"]["wrong"] == OUTSIDE
    far = verdicts["far"]["conclusion"]
    assert far["bracket"] == [30, 31] and far["smallest_dt"] == 0.05 and not 30 <= far["best_angle"]["value"] <= 31
    # not checkable is counted wrong, with its reason
    assert not verdicts["one-angle"]["conclusion"]["checkable"]
    assert not scores["one-angle"]["right"] and scores["one-angle"]["wrong"] == NOT_CHECKABLE
    (row,) = rows
    assert (row["model"], row["task"], row["runs"], row["right"], row["rate"]) == ("hand-made", "default", 4, 1, 0.25)
    assert (row["low"], row["high"]) == pytest.approx(wilson_reference(1, 4))
    assert row["conclusive"] is False
    assert sorted((m["what"], m["runs"]) for m in row["mistakes"]) == sorted([(WIDE, 1), (OUTSIDE, 1), (NOT_CHECKABLE, 1)])
    assert row["mean_calls"] == (2 + 2 + 2 + 1) / 4 and row["mean_budget_used"] == row["mean_calls"]


def test_scores_are_per_model():
    runs = projectile_runs(["right"], model="model A", prefix="a-") + projectile_runs(["right"], model="model A", prefix="a2-")
    runs += projectile_runs(["far", "one-angle"], model="model B")
    _, found, rows = decide("projectile", runs)
    assert {s["run"]: s["model"] for s in found} == {"a-right": "model A", "a2-right": "model A", "far": "model B", "one-angle": "model B"}
    a, b = row_of(rows, "model A"), row_of(rows, "model B")
    assert (a["runs"], a["right"], a["rate"], a["mistakes"]) == (2, 2, 1.0, [])
    assert (b["runs"], b["right"], b["rate"]) == (2, 0, 0.0)
    assert b["low"] == pytest.approx(0.0, abs=1e-12) and b["high"] == pytest.approx(wilson_reference(0, 2)[1])
    assert [r["model"] for r in rows] == ["model A", "model B"]


@cache
def judged(name, model):
    """The judge's entry for one hand-made projectile run (judged once: a run's entry depends on
    its transcript and model only, so many runs of the same kind share it)."""
    (run,) = projectile_runs([name], model=model)
    return projectile_judge.judge([run], TOLERANCE)[name]


def many(kinds, model):
    """{run: entry} of many judged runs of `model`, one per kind in `kinds`."""
    return {f"{model}-{i:02d}": judged(kind, model) for i, kind in enumerate(kinds)}


def test_many_runs_are_conclusive_and_mistakes_are_counted_by_reason():
    verdicts = many(["right"] * 28 + ["wide"] * 8 + ["one-angle"] * 4, "many") | many(["right", "wide", "one-angle"], "few")
    found, rows, _ = pipeline.score_lesson("projectile", verdicts, scans("projectile"))
    assert len(found) == 43
    lots, few = row_of(rows, "many"), row_of(rows, "few")
    assert (lots["runs"], lots["right"], lots["rate"]) == (40, 28, 0.7)
    assert (lots["low"], lots["high"]) == pytest.approx(wilson_reference(28, 40))
    assert lots["low"] == pytest.approx(0.5457, abs=1e-4) and lots["high"] == pytest.approx(0.8193, abs=1e-4)
    assert lots["conclusive"] is True
    assert lots["mistakes"] == [{"what": WIDE, "runs": 8}, {"what": NOT_CHECKABLE, "runs": 4}]
    assert lots["mean_calls"] == pytest.approx((28 * 2 + 8 * 2 + 4 * 1) / 40)
    assert (few["runs"], few["right"], few["conclusive"]) == (3, 1, False)


# ---------------------------------------------------------------------------------------------
# Hunter


def test_hunter_right_and_wrong_runs():
    verdicts, found, rows = decide("hunter", hunter_runs(HUNTER))
    scores = by_run(found)
    false_right = verdicts["se-right"]["verdict"]
    assert false_right["outcome"] == "counterexample"
    assert (false_right["witness"]["steps_per_period"], false_right["witness"]["periods"]) == (64, 20)
    assert scores["se-right"]["right"]
    assert verdicts["se-fine"]["verdict"]["outcome"] == "inconclusive"
    assert scores["se-fine"]["wrong"] == NOT_FOUND
    worst = scans("hunter")["worst_case"]["velocity-verlet"]
    assert (worst["steps_per_period"], worst["periods"]) == (16, 50)
    reached = verdicts["vv-worst"]["verdict"]
    assert reached["outcome"] == "inconclusive" and reached["closest"]["value"]["value"] == worst["value"]
    assert scores["vv-worst"]["right"] and scores["vv-worst"]["wrong"] is None
    stopped = verdicts["vv-stops"]["verdict"]["closest"]
    assert (stopped["steps_per_period"], stopped["periods"]) == (32, 50) and stopped["value"]["value"] < worst["value"]
    assert scores["vv-stops"]["wrong"] == f"did not reach the domain's worst case ({worst['value']:.6g} at 16/50)"
    assert scores["vv-stops"]["wrong"] == "did not reach the domain's worst case (0.0385531 at 16/50)"
    # one row per claim: the tasks are scored apart
    false_row, open_row = row_of(rows, "hand-made", "symplectic-euler claim"), row_of(rows, "hand-made", "velocity-verlet claim")
    assert (false_row["runs"], false_row["right"], false_row["mistakes"]) == (2, 1, [{"what": NOT_FOUND, "runs": 1}])
    assert (open_row["runs"], open_row["right"], open_row["rate"]) == (2, 1, 0.5)
    assert open_row["mean_calls"] == (2 + 3) / 2 and false_row["mean_calls"] == (1 + 2) / 2


def test_hunter_refused_calls_count_as_calls_not_as_budget_used():
    batches = [("Outside the domain, then inside.", drift(SE, (8, 20), (64, 20)) + [("run_python", {"code": "1"})])]
    (run,) = [made("hunter", "mixed", "symplectic-euler", batches, "done")]
    verdicts, found, rows = decide("hunter", [run])
    assert verdicts["mixed"]["calls"] == 3 and verdicts["mixed"]["ran"] == 2  # 8/20 runs, but outside the claim
    assert verdicts["mixed"]["verdict"]["tested"] == 1
    assert found[0]["right"] and (found[0]["calls"], found[0]["budget_used"]) == (3, 2)
    assert (rows[0]["mean_calls"], rows[0]["mean_budget_used"]) == (3, 2)


# ---------------------------------------------------------------------------------------------
# Review


def test_review_right_and_wrong_groups():
    runs = review_runs("right", "g-right", model="reviewers") + review_runs("wrong", "g-wrong", model="reviewers")
    verdicts, found, rows = decide("review", runs)
    scores = by_run(found)
    assert set(scores) == {"g-right", "g-wrong"}  # a group of three reviewers is one scored run
    one, two = verdicts["g-right"]["resolution"]
    assert two["rejected"] and two["failed"] == ["bounded-energy"] and not one["rejected"]
    assert two["flagged_by"] == ["evidence", "physics"]
    assert scores["g-right"]["right"]
    assert not verdicts["g-wrong"]["resolution"][1]["rejected"]
    assert "bounded-energy" in verdicts["g-wrong"]["resolution"][1]["not_covered"]
    assert scores["g-wrong"]["wrong"] == BOUNDED_ENERGY_NOT_RUN
    (row,) = rows
    assert (row["model"], row["task"], row["runs"], row["right"]) == ("reviewers", "review", 2, 1)
    assert row["mistakes"] == [{"what": BOUNDED_ENERGY_NOT_RUN, "runs": 1}]
    assert row["mean_calls"] == ((4 + 6 + 1) + (3 + 6 + 1)) / 2
    assert row["conclusive"] is False


# ---------------------------------------------------------------------------------------------
# A run's words never change its score


def all_runs(words):
    return {
        "projectile": projectile_runs(PROJECTILE, words=words),
        "hunter": hunter_runs(HUNTER, words=words),
        "review": review_runs("right", "g-right", words=words) + review_runs("wrong", "g-wrong", words=words),
    }


@pytest.mark.parametrize("words", [boast, emptied], ids=["boast", "emptied"])
def test_words_never_change_a_score(words):
    plain, changed = all_runs(honest), all_runs(words)
    for lesson in JUDGES:
        first = [s.message.text for s in changed[lesson][0].transcript.steps]
        assert first != [s.message.text for s in plain[lesson][0].transcript.steps]  # the words did change
        assert set(first) == set(words(["x"]))
        verdicts, found, rows = decide(lesson, plain[lesson])
        verdicts_changed, found_changed, rows_changed = decide(lesson, changed[lesson])
        assert found_changed == found, lesson
        assert rows_changed == rows, lesson
        assert verdicts_changed == verdicts, lesson
        assert any(not s["right"] for s in found) and any(s["right"] for s in found), lesson


# ---------------------------------------------------------------------------------------------
# No runs, and the page's scorecard section


def test_no_runs_give_an_empty_scorecard():
    for lesson in JUDGES:
        found, rows, table = pipeline.score_lesson(lesson, {}, scans(lesson))
        assert (found, rows, len(table)) == ([], [], 0)
    section = markdown.scorecard_section({"scorecard": [], "right_answer": projectile_judge.RIGHT_ANSWER, "score_unit": ["run", "runs"]})
    assert "*(no runs)*" in section and "Too few runs" not in section


def section_for(rows):
    return markdown.scorecard_section({"scorecard": rows, "right_answer": projectile_judge.RIGHT_ANSWER, "score_unit": ["run", "runs"]})


def test_page_says_too_few_runs_only_when_a_row_is_not_conclusive():
    many_runs = many(["right" if i % 4 else "wide" for i in range(40)], "many")
    _, many_rows, _ = pipeline.score_lesson("projectile", many_runs, scans("projectile"))
    assert [r["conclusive"] for r in many_rows] == [True]
    section = section_for(many_rows)
    assert "## Scorecard" in section and "Too few runs to conclude anything" not in section
    assert "| many |" in section and "30 (75 %)" in section

    _, mixed_rows, _ = pipeline.score_lesson("projectile", many_runs | many(["right", "far"], "few"), scans("projectile"))
    assert [(r["model"], r["conclusive"]) for r in mixed_rows] == [("few", False), ("many", True)]
    section = section_for(mixed_rows)
    assert section.count("Too few runs to conclude anything") == 1
    low, high = wilson_reference(1, 2)
    assert (f"**Too few runs to conclude anything** about few (`default`): with 2 runs, the share of right "
            f"answers could be anywhere from {100 * low:.0f} % to {100 * high:.0f} %.") in section
    assert "about many" not in section
