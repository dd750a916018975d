"""The scorecard's decisions on hand-made runs: right, wrong, answered and supported, for every lesson.

Each run is written with the authored client and goes through the real loop (the harness
computes every result), then the lesson's judge, then `scorecard.scores` and `scorecard.tabulate`
with the facts `pipeline.run_facts` gives of each run, as in a build.
"""

import math
from functools import cache
from statistics import NormalDist

import pandas as pd
import pytest


from replaylab import pipeline
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.authored import client as authored_client
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.tools import ANSWER
from replaylab.lessons import markdown, registry
from replaylab.lessons.hunter import judge as hunter_judge
from replaylab.lessons.projectile import judge as projectile_judge
from replaylab.lessons.review import judge as review_judge
from replaylab.lessons.scorecard import SCORECARD_COLUMNS, instance_interval, scorecard, scorecard_table, scores, tabulate, wilson

JUDGES = {"projectile": projectile_judge, "hunter": hunter_judge, "review": review_judge}
TOLERANCE = 1e-6
SE, VV = "symplectic Euler", "velocity Verlet"

NO_ANSWER = "no answer"
OUTSIDE = "the best angle of the build's scan lies outside its bracket"
NOT_FOUND = "none found, but the claim's domain has a counterexample"
DOES_NOT_BREAK = "its counterexample does not break the claim"
MISSES_PIECE_2 = "piece 2: misses a check that fails"


@cache
def scans(lesson):
    """The build's answer of each instance of a lesson, computed once (the hunter's take about half a second)."""
    return registry.lesson(lesson).answers()


# ---------------------------------------------------------------------------------------------
# Hand-made runs: each message is (text, [(tool, arguments)]); a final message is added, with the
# final text, and with a call of the answer tool (the final text as its explanation) unless the
# answer is None.


def honest(texts):
    return texts


def boast(texts):
    return ["I found the answer; the claim is false"] * len(texts)


def emptied(texts):
    return [""] * len(texts)


def transcript(lesson, variant_name, batches, final, answer, words=honest):
    texts = words([text for text, _ in batches] + [final])
    messages = [
        ModelMessage(text, tuple(ToolCall(f"c{i}-{j}", name, dict(args)) for j, (name, args) in enumerate(calls)))
        for i, (text, (_, calls)) in enumerate(zip(texts, batches))
    ]
    answer_call = () if answer is None else (ToolCall("answer", ANSWER, {**answer, "explanation": texts[-1]}),)
    messages.append(ModelMessage(texts[-1], answer_call))
    v = registry.lesson(lesson).variant(variant_name)
    return loop.run(authored_client(messages), v.system, v.task, v.allowlist(), v.max_steps)


def made(lesson, run, variant_name, batches, final, answer, model="hand-made", group="hand", words=honest):
    provenance = recording_io.provenance("authored", model, "test")
    return recording_io.Recording(lesson, run, variant_name, group, provenance,
                                  transcript(lesson, variant_name, batches, final, answer, words))


def score(lesson, verdicts, facts=None):
    """(scores, scorecard rows) of judged runs, as the render job makes them."""
    found = scores(verdicts, scans(lesson), JUDGES[lesson].score, facts)
    rows, _ = tabulate(found, facts)
    return found, rows


def decide(lesson, runs):
    verdicts = JUDGES[lesson].judge(runs, TOLERANCE)
    facts = {run.run: pipeline.run_facts(run, registry.lesson(lesson)) for run in runs}
    return (verdicts, *score(lesson, verdicts, facts))


def by_run(found):
    return {s["run"]: s for s in found}


def row_of(rows, model, task=None):
    (row,) = [r for r in rows if r["model"] == model and (task is None or r["task"] == task)]
    return row


# Projectile: range_with_drag at 25 m/s


def angles(*pairs):
    return [("range_with_drag", {"speed": 25, "angle": a, "dt": dt}) for a, dt in pairs]


def bracket(low, high):
    return {"low": low, "high": high}


PROJECTILE = {
    "right": ([("Both sides of the best angle at the finest step.", angles((40, 0.001), (41, 0.001), (42, 0.001)))],
              "The best angle lies between 40 and 41 degrees.", bracket(40, 41)),
    # its data fall across the bracket: 41 beats 42, and nothing below 41 was measured
    "across": ([("Two angles.", angles((41, 0.001), (42, 0.001)))], "Between 41 and 42 degrees.", bracket(41, 42)),
    "far": ([("Low angles, coarse step.", angles((30, 0.05), (31, 0.05)))], "Between 30 and 31 degrees.", bracket(30, 31)),
    "one-angle": ([("One angle is enough.", angles((40, 0.001)))], "It is between 40 and 41 degrees.", bracket(40, 41)),
    "silent": ([("Both sides of the best angle at the finest step.", angles((40, 0.001), (41, 0.001)))],
               "The best angle lies between 40 and 41 degrees.", None),
}


def projectile_runs(names, model="hand-made", words=honest, prefix=""):
    return [made("projectile", f"{prefix}{name}", "default", *PROJECTILE[name], model=model, words=words) for name in names]


# Hunter: oscillator_energy_drift


def drift(method, *points):
    return [("oscillator_energy_drift", {"method": method, "steps_per_period": n, "periods": p}) for n, p in points]


def counterexample(method, steps, periods):
    return {"outcome": "counterexample", "method": method, "steps_per_period": steps, "periods": periods}


NONE_FOUND = {"outcome": "none found"}

HUNTER = {
    "se-right": ("symplectic-euler", [("A coarse step over 20 periods.", drift(SE, (64, 20)))], "64/20 breaks the claim.",
                 counterexample(SE, 64, 20)),
    "se-fine": ("symplectic-euler", [("Fine steps only.", drift(SE, (200, 20), (150, 20)))], "No counterexample.", NONE_FOUND),
    "vv-worst": ("velocity-verlet", [("From fine to coarse.", drift(VV, (32, 50), (16, 50)))], "No counterexample; 16/50 is the worst.",
                 NONE_FOUND),
    "vv-stops": ("velocity-verlet", [("Not too coarse.", drift(VV, (200, 50), (100, 50), (32, 50)))], "No counterexample.", NONE_FOUND),
    "vv-false": ("velocity-verlet", [("The coarsest step.", drift(VV, (16, 50)))], "16/50 breaks the claim.", counterexample(VV, 16, 50)),
}


def hunter_runs(names, model="hand-made", words=honest):
    return [made("hunter", name, HUNTER[name][0], *HUNTER[name][1:], model=model, words=words) for name in names]


# Review: each reviewer's run is scored on its own answer; a group of three is decided together


def checks(*pairs):
    return [(f"check_{name}", {"candidate": piece}) for name, piece in pairs]


def reproduce(*pairs):
    return [("reproduce_check", {"check": number, "candidate": piece}) for number, piece in pairs]


def failed(piece_1, piece_2):
    return {"piece_1_failed": list(piece_1), "piece_2_failed": list(piece_2)}


REVIEW = {  # as the reference review: the physics and evidence reviewers run bounded-energy on piece 2
    "right": {
        "physics": ([("Limits.", checks(("limits", 1), ("limits", 2))),
                     ("Energy.", checks(("bounded_energy", 1), ("bounded_energy", 2)))], "Piece 2 fails bounded-energy.",
                    failed([], ["bounded-energy"])),
        "numerics": ([("Piece 1.", checks(("clock", 1), ("purity", 1), ("convergence_order", 1))),
                      ("Piece 2.", checks(("clock", 2), ("purity", 2), ("convergence_order", 2)))], "Both pass.", failed([], [])),
        "evidence": ([("Energy of piece 2 again.", reproduce((5, 2)))], "Piece 2 fails bounded-energy.", failed([], ["bounded-energy"])),
    },
    "wrong": {  # nobody runs bounded-energy on piece 2, and the physics and evidence reviewers answer that both pass
        "physics": ([("Limits.", checks(("limits", 1), ("limits", 2))),
                     ("Energy of piece 1.", checks(("bounded_energy", 1)))], "Both pass.", failed([], [])),
        "numerics": ([("Piece 1.", checks(("clock", 1), ("purity", 1), ("convergence_order", 1))),
                      ("Piece 2.", checks(("clock", 2), ("purity", 2), ("convergence_order", 2)))], "Both pass.", failed([], [])),
        "evidence": ([("Order of piece 2.", reproduce((4, 2)))], "Piece 2 passes.", failed([], [])),
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
    right = scores["right"]
    assert (right["answered"], right["right"], right["supported"], right["wrong"]) == (True, True, True, None)
    assert right["answer"] == {"low": 40, "high": 41} and verdicts["right"]["experiments"]["bracket"] == [40, 41]
    assert verdicts["right"]["located"]["top"]["shown"] == "40.54"
    # wrong, and not supported: its data fall across the bracket, or sit at its coarse edge
    assert scores["across"]["wrong"] == OUTSIDE and scores["across"]["supported"] is False
    assert not verdicts["across"]["located"]["located"]
    assert scores["far"]["wrong"] == OUTSIDE and scores["far"]["supported"] is False
    far = verdicts["far"]["experiments"]
    assert far["bracket"] == [30, 31] and far["smallest_dt"] == 0.05 and not 30 <= far["best_angle"]["value"] <= 31
    # a right answer its experiments do not support: one angle shows no bracket
    assert not verdicts["one-angle"]["experiments"]["checkable"]
    assert scores["one-angle"]["right"] and scores["one-angle"]["supported"] is False
    # experiments that cover the truth, and no answer: not right, nothing to support
    silent = scores["silent"]
    assert (silent["answered"], silent["right"], silent["supported"], silent["wrong"], silent["answer"]) == (False, False, None, NO_ANSWER, None)
    assert verdicts["silent"]["experiments"]["bracket"] == [40, 41]
    (row,) = rows
    assert (row["model"], row["task"], row["runs"], row["answered"], row["right"], row["rate"]) == ("hand-made", "default", 5, 4, 2, 0.4)
    assert (row["supported"], row["right_unsupported"], row["supported_wrong"]) == (1, 1, 0)
    assert (row["low"], row["high"]) == pytest.approx(wilson_reference(2, 5))
    assert row["conclusive"] is False
    # every hand-made run is of the seed instance: one instance, so no interval over instances
    assert (row["instances"], row["instance_low"], row["instance_high"]) == (1, None, None)
    assert sorted((m["what"], m["runs"]) for m in row["mistakes"]) == sorted([(OUTSIDE, 2), (NO_ANSWER, 1)])
    assert row["mean_calls"] == (3 + 2 + 2 + 1 + 2) / 5 and row["mean_budget_used"] == row["mean_calls"]  # the answer is no call


def test_scores_are_per_model():
    runs = projectile_runs(["right"], model="model A", prefix="a-") + projectile_runs(["right"], model="model A", prefix="a2-")
    runs += projectile_runs(["far", "silent"], model="model B")
    _, found, rows = decide("projectile", runs)
    assert {s["run"]: s["model"] for s in found} == {"a-right": "model A", "a2-right": "model A", "far": "model B", "silent": "model B"}
    a, b = row_of(rows, "model A"), row_of(rows, "model B")
    assert (a["runs"], a["right"], a["rate"], a["mistakes"]) == (2, 2, 1.0, [])
    assert (b["runs"], b["answered"], b["right"], b["rate"]) == (2, 1, 0, 0.0)
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
    verdicts = many(["right"] * 28 + ["across"] * 8 + ["silent"] * 4, "many") | many(["right", "across", "one-angle"], "few")
    found, rows = score("projectile", verdicts)
    assert len(found) == 43
    lots, few = row_of(rows, "many"), row_of(rows, "few")
    assert (lots["runs"], lots["answered"], lots["right"], lots["rate"]) == (40, 36, 28, 0.7)
    assert (lots["supported"], lots["right_unsupported"], lots["supported_wrong"]) == (28, 0, 0)
    assert (lots["low"], lots["high"]) == pytest.approx(wilson_reference(28, 40))
    assert lots["low"] == pytest.approx(0.5457, abs=1e-4) and lots["high"] == pytest.approx(0.8193, abs=1e-4)
    assert lots["conclusive"] is True
    assert lots["mistakes"] == [{"what": OUTSIDE, "runs": 8}, {"what": NO_ANSWER, "runs": 4}]
    assert lots["mean_calls"] == pytest.approx((28 * 3 + 8 * 2 + 4 * 2) / 40)
    assert (few["runs"], few["right"], few["right_unsupported"], few["conclusive"]) == (3, 2, 1, False)
    assert few["mean_calls"] == pytest.approx((3 + 2 + 1) / 3)


# ---------------------------------------------------------------------------------------------
# Hunter


def test_hunter_right_and_wrong_runs():
    verdicts, found, rows = decide("hunter", hunter_runs(HUNTER))
    scores = by_run(found)
    false_right = verdicts["se-right"]["experiments"]
    assert false_right["outcome"] == "counterexample"
    assert (false_right["witness"]["steps_per_period"], false_right["witness"]["periods"]) == (64, 20)
    assert scores["se-right"]["right"] and scores["se-right"]["supported"]
    assert verdicts["se-right"]["answer_check"]["breaks"] and verdicts["se-right"]["answer_check"]["in_domain"]
    # none found on a false claim: wrong, though its own experiments found nothing (supported)
    assert verdicts["se-fine"]["experiments"]["outcome"] == "inconclusive"
    assert scores["se-fine"]["wrong"] == NOT_FOUND and scores["se-fine"]["supported"] is True
    worst = scans("hunter")["hunter-seed-velocity-verlet"]["worst"]
    assert (worst["steps_per_period"], worst["periods"]) == (16, 50)
    reached = verdicts["vv-worst"]["experiments"]
    assert reached["outcome"] == "inconclusive" and reached["closest"]["value"]["value"] == worst["value"]
    assert scores["vv-worst"]["right"] and scores["vv-worst"]["wrong"] is None
    # none found on a true claim is right without the worst case
    stopped = verdicts["vv-stops"]["experiments"]["closest"]
    assert (stopped["steps_per_period"], stopped["periods"]) == (32, 50) and stopped["value"]["value"] < worst["value"]
    assert scores["vv-stops"]["right"] and scores["vv-stops"]["wrong"] is None and scores["vv-stops"]["supported"]
    # the worst case of a true claim, answered as a counterexample: the build runs it again, and it holds
    check = verdicts["vv-false"]["answer_check"]
    assert check["in_domain"] and not check["breaks"] and check["value"]["value"] == worst["value"]
    assert scores["vv-false"]["wrong"] == DOES_NOT_BREAK and scores["vv-false"]["supported"] is False
    # one row per claim: the tasks are scored apart
    false_row, open_row = row_of(rows, "hand-made", "symplectic-euler claim"), row_of(rows, "hand-made", "velocity-verlet claim")
    assert (false_row["runs"], false_row["right"], false_row["mistakes"]) == (2, 1, [{"what": NOT_FOUND, "runs": 1}])
    assert (false_row["supported"], false_row["supported_wrong"]) == (2, 1)
    assert (open_row["runs"], open_row["right"], open_row["mistakes"]) == (3, 2, [{"what": DOES_NOT_BREAK, "runs": 1}])
    assert (open_row["supported"], open_row["right_unsupported"], open_row["supported_wrong"]) == (2, 0, 0)
    assert (false_row["instances"], open_row["instances"]) == (1, 1)  # each claim is an instance of its own
    assert open_row["mean_calls"] == (2 + 3 + 1) / 3 and false_row["mean_calls"] == (1 + 2) / 2


def test_hunter_refused_calls_count_as_calls_not_as_budget_used():
    batches = [("Outside the domain, then inside.", drift(SE, (8, 20), (64, 20)) + [("run_python", {"code": "1"})])]
    (run,) = [made("hunter", "mixed", "symplectic-euler", batches, "done", counterexample(SE, 64, 20))]
    verdicts, found, rows = decide("hunter", [run])
    assert verdicts["mixed"]["calls"] == 3 and verdicts["mixed"]["ran"] == 2  # 8/20 runs, but outside the claim; the answer is no call
    assert verdicts["mixed"]["experiments"]["tested"] == 1
    assert found[0]["right"] and (found[0]["calls"], found[0]["budget_used"]) == (3, 2)
    assert (rows[0]["mean_calls"], rows[0]["mean_budget_used"]) == (3, 2)


# ---------------------------------------------------------------------------------------------
# Review


def test_review_each_reviewer_is_scored_and_each_group_decided():
    runs = review_runs("right", "g-right", model="reviewers") + review_runs("wrong", "g-wrong", model="reviewers")
    verdicts, found, rows = decide("review", runs)
    scores = by_run(found)
    assert set(scores) == {f"{group}-{reviewer}" for group in ("g-right", "g-wrong") for reviewer in ("physics", "numerics", "evidence")}
    assert {s["run"]: (s["right"], s["supported"]) for s in found} == {
        "g-right-physics": (True, True), "g-right-numerics": (True, True),
        "g-right-evidence": (True, False),  # right, but it ran one check of its five
        "g-wrong-physics": (False, False), "g-wrong-numerics": (True, True), "g-wrong-evidence": (False, False),
    }
    assert scores["g-wrong-physics"]["wrong"] == MISSES_PIECE_2 and scores["g-wrong-evidence"]["wrong"] == MISSES_PIECE_2
    assert scores["g-right-physics"]["task"] == "physics reviewer"
    # the groups' decisions, as the seeds show them: any recomputed failure rejects a piece
    groups = registry.lesson("review").decide(runs, verdicts)
    assert sorted(groups) == ["g-right [reviewers]", "g-wrong [reviewers]"]
    one, two = groups["g-right [reviewers]"]["resolution"]
    assert two["rejected"] and two["failed"] == ["bounded-energy"] and not one["rejected"]
    assert two["flagged_by"] == ["evidence", "physics"]
    wrong = groups["g-wrong [reviewers]"]
    assert wrong["reviewers"] == {"evidence": ["g-wrong-evidence"], "numerics": ["g-wrong-numerics"], "physics": ["g-wrong-physics"]}
    assert not wrong["resolution"][1]["rejected"] and "bounded-energy" in wrong["resolution"][1]["not_covered"]
    by_task = {r["task"]: r for r in rows}
    assert sorted(by_task) == ["evidence reviewer", "numerics reviewer", "physics reviewer"]
    assert [(r["runs"], r["right"], r["supported"]) for r in rows] == [(2, 1, 0), (2, 2, 2), (2, 1, 1)]
    assert by_task["physics reviewer"]["mistakes"] == [{"what": MISSES_PIECE_2, "runs": 1}]
    assert by_task["evidence reviewer"]["right_unsupported"] == 1
    assert by_task["physics reviewer"]["mean_calls"] == (4 + 3) / 2 and by_task["numerics reviewer"]["mean_calls"] == 6
    assert all(r["conclusive"] is False for r in rows)


# ---------------------------------------------------------------------------------------------
# A run's words never change its score


def all_runs(words):
    return {
        "projectile": projectile_runs(PROJECTILE, words=words),
        "hunter": hunter_runs(HUNTER, words=words),
        "review": review_runs("right", "g-right", words=words) + review_runs("wrong", "g-wrong", words=words),
    }


def without_explanation(verdicts):
    return {run: {k: v for k, v in verdict.items() if k != "explanation"} for run, verdict in verdicts.items()}


@pytest.mark.parametrize("words", [boast, emptied], ids=["boast", "emptied"])
def test_words_never_change_a_score(words):
    """Neither the messages' texts nor the answer's explanation: the explanation is kept, shown,
    and changes nothing else."""
    plain, changed = all_runs(honest), all_runs(words)
    for lesson in JUDGES:
        first = [s.message.text for s in changed[lesson][0].transcript.steps]
        assert first != [s.message.text for s in plain[lesson][0].transcript.steps]  # the words did change
        assert set(first) == set(words(["x"]))
        verdicts, found, rows = decide(lesson, plain[lesson])
        verdicts_changed, found_changed, rows_changed = decide(lesson, changed[lesson])
        assert found_changed == found, lesson
        assert rows_changed == rows, lesson
        answered = [run for run, verdict in verdicts.items() if verdict["answer"] is not None]
        assert answered and all(verdicts_changed[run]["explanation"] == words(["x"])[0] != verdicts[run]["explanation"] for run in answered)
        assert without_explanation(verdicts_changed) == without_explanation(verdicts), lesson
        assert any(not s["right"] for s in found) and any(s["right"] for s in found), lesson


# ---------------------------------------------------------------------------------------------
# No runs, and the page's scorecard section


def test_no_runs_give_an_empty_scorecard():
    for lesson in JUDGES:
        found = scores({}, scans(lesson), JUDGES[lesson].score)
        rows, table = tabulate(found, {})
        assert (found, rows, len(table)) == ([], [], 0)
        assert list(table.columns)[:8] == ["run", "model", "task", "instance", "difficulty", "answered", "right", "supported"]
    section = markdown.scorecard_section({"scorecard": [], "right_answer": projectile_judge.RIGHT_ANSWER, "score_unit": ["run", "runs"]})
    assert "*(no runs)*" in section and "Too few runs" not in section


def section_for(rows):
    return markdown.scorecard_section({"scorecard": rows, "right_answer": projectile_judge.RIGHT_ANSWER, "score_unit": ["run", "runs"]})


def test_page_says_too_few_runs_only_when_a_row_is_not_conclusive():
    many_runs = many(["right" if i % 4 else "across" for i in range(40)], "many")
    _, many_rows = score("projectile", many_runs)
    assert [r["conclusive"] for r in many_rows] == [True]
    section = section_for(many_rows)
    assert "## Scorecard" in section and "Too few runs to conclude anything" not in section
    assert "| many |" in section and "30 (75 %)" in section
    assert "| answered |" in section and "| supported, wrong |" in section

    _, mixed_rows = score("projectile", many_runs | many(["right", "far"], "few"))
    assert [(r["model"], r["conclusive"]) for r in mixed_rows] == [("few", False), ("many", True)]
    section = section_for(mixed_rows)
    assert section.count("Too few runs to conclude anything") == 1
    low, high = wilson_reference(1, 2)
    assert (f"**Too few runs to conclude anything** about few (`default`): with 2 runs, the share of right "
            f"answers could be anywhere from {100 * low:.0f} % to {100 * high:.0f} %.") in section
    assert "about many" not in section


# ---------------------------------------------------------------------------------------------
# Instances: each row says how many its runs took, and the interval clustered by them


def instance_table(outcomes):
    """A per-run table from {instance: [right, ...]} (one model, one task)."""
    rows = [{"run": f"{instance}-{j}", "model": "m", "task": "t", "instance": instance, "difficulty": "medium",
             "answered": True, "right": ok, "supported": ok, "wrong": None if ok else "off", "calls": 1, "budget_used": 1}
            for instance, runs in outcomes.items() for j, ok in enumerate(runs)]
    return pd.DataFrame(rows).astype({"supported": "boolean"})


def test_the_scorecards_columns_keep_wilsons_and_add_the_instances():
    (row,) = scorecard(instance_table({"a": [True, False], "b": [True, True], "c": [False]}))
    flat = scorecard_table([row])[0]
    assert list(flat) == list(SCORECARD_COLUMNS)
    assert list(SCORECARD_COLUMNS)[:12] == ["model", "task", "runs", "answered", "right", "rate", "low", "high", "conclusive",
                                            "supported", "right_unsupported", "supported_wrong"]  # as before
    assert ["instances", "instance_low", "instance_high"] == list(SCORECARD_COLUMNS)[12:15]
    assert (flat["runs"], flat["right"], flat["instances"]) == (5, 3, 3)
    assert (flat["low"], flat["high"]) == pytest.approx(wilson_reference(3, 5))
    assert flat["instance_low"] <= flat["low"] and flat["instance_high"] >= flat["high"]


def test_the_scorecards_interval_is_the_statistics_modules():
    """The render job's copy of the formula (no statsmodels) equals replaylab.statistics'."""
    import random

    from replaylab import statistics

    generator = random.Random(35)
    for _ in range(300):
        runs = [generator.randint(1, 6) for _ in range(generator.randint(2, 12))]
        rights = [generator.randint(0, n) for n in runs]
        found = statistics.clustered(rights, runs)
        assert instance_interval(rights, runs) == pytest.approx((found["low"], found["high"]), abs=1e-12)
    assert instance_interval([3], [5]) == (None, None)


def test_ten_identical_runs_of_one_instance_count_as_one_instance_in_the_scorecard():
    (one,) = scorecard(instance_table({"projectile-017": [True] * 10}))
    assert (one["runs"], one["right"], one["instances"], one["instance_low"], one["instance_high"]) == (10, 10, 1, None, None)
    assert one["low"] == pytest.approx(wilson_reference(10, 10)[0])  # the runs' own interval stays, as narrow as 10 runs
    (ten,) = scorecard(instance_table({f"projectile-{i:03d}": [True] for i in range(10)}))
    assert (ten["low"], ten["high"]) == (one["low"], one["high"]) and ten["instances"] == 10
    t9 = 2.262157162798205  # Student's t, 0.975 quantile, 9 degrees of freedom
    assert (ten["instance_low"], ten["instance_high"]) == (pytest.approx(10 / (10 + t9 * t9)), 1.0)
    assert ten["instance_low"] < one["low"]  # ten instances: an interval over instances, wider than the runs' own
    # 14 of 20 runs right: ten instances run twice alike, against twenty instances run once
    (twice,) = scorecard(instance_table({f"i{i}": [i < 7] * 2 for i in range(10)}))
    (once,) = scorecard(instance_table({f"i{i}": [i < 14] for i in range(20)}))
    assert (twice["instances"], once["instances"]) == (10, 20)
    assert (twice["low"], twice["high"]) == (once["low"], once["high"])  # runs alone cannot tell them apart
    assert twice["instance_high"] - twice["instance_low"] > 1.3 * (once["instance_high"] - once["instance_low"])
    assert twice["instance_low"] < once["instance_low"] and twice["instance_high"] > once["instance_high"]


def test_a_table_without_instances_has_none():
    table = instance_table({"a": [True, False]}).drop(columns=["instance", "difficulty"])
    (row,) = scorecard(table)
    assert (row["instances"], row["instance_low"], row["instance_high"]) == (None, None, None)
