"""Comparisons an evaluation team can sign: copies of a run are one piece of evidence, equal totals
are no difference, opposite effects are shown, and a run's digest names what it did, not who it was."""

import copy
import json
import math

import pytest

from helpers import RECORDINGS, in_process
from replaylab import comparison, pipeline
from replaylab import statistics as s
from replaylab.agents import recording as recording_io
from replaylab.lessons.scorecard import runs_table, runs_table_bytes

Counts = s.Counts


# ---------------------------------------------------------------------------------------------
# What a run did, as a digest


def transcript_data(name="velocity-verlet"):
    return recording_io.to_data(recording_io.load(RECORDINGS / "hunter" / f"{name}.json"))


def test_a_runs_digest_ignores_its_name_ids_and_provenance_and_sees_what_it_did():
    data = transcript_data()
    other = copy.deepcopy(data)
    other["run"], other["group"] = "another-name", "another-group"
    other["provenance"] = {**other["provenance"], "recorded": "2030-01-01T00:00:00Z", "model": "someone-else"}
    for step in other["steps"]:
        for call in step["tool_calls"]:
            call["id"] = "call_" + call["id"]
        for result in step["results"]:
            result["call_id"] = "call_" + result["call_id"]
    assert pipeline.behaviour(other) == pipeline.behaviour(data)
    changed = copy.deepcopy(data)
    first = next(call for step in changed["steps"] for call in step["tool_calls"] if isinstance(call["arguments"], dict))
    key = next(iter(first["arguments"]))
    first["arguments"][key] = json.dumps(first["arguments"][key])  # the same number, sent as text
    assert pipeline.behaviour(changed) != pipeline.behaviour(data)
    worded = copy.deepcopy(data)
    worded["steps"][0]["text"] += " "
    assert pipeline.behaviour(worded) != pipeline.behaviour(data)
    assert pipeline.behaviour(transcript_data("symplectic-euler")) != pipeline.behaviour(data)


# ---------------------------------------------------------------------------------------------
# Ten identical runs are one piece of evidence


def campaign(folder, runs_of_model):
    """A campaign's comparison written from {model: [(digest, right)]} of one hunter task."""
    found, facts = [], {}
    for model, runs in runs_of_model.items():
        for i, (digest, right) in enumerate(runs):
            name = f"{model}__velocity-verlet__{i + 1:03d}"
            found.append({"run": name, "model": model, "task": "velocity-verlet claim", "instance": "hunter-000",
                          "difficulty": "medium", "answered": True, "right": right, "supported": right,
                          "wrong": None if right else "no counterexample", "answer": {"outcome": "none"},
                          "calls": 3, "budget_used": 3})
            facts[name] = {"behaviour": digest}
    table = folder / "hunter" / "runs.csv.gz"
    table.parent.mkdir(parents=True)
    table.write_bytes(runs_table_bytes(runs_table(found, facts)))
    settings = {"name": "copies", "provider": "scripted", "models": list(runs_of_model), "runs": 10,
                "max_tokens_per_run": None, "max_seconds_per_run": None, "prices": {}, "detect": 0.2}
    comparison.write(settings, ["hunter"], [table], [], folder)
    return json.loads((folder / "scorecard.json").read_text()), (folder / "index.md").read_text()


def test_ten_identical_runs_are_one_piece_of_evidence(tmp_path):
    # two deterministic models at temperature 0: ten copies each of one run, one right, one wrong
    data, page = campaign(tmp_path, {"steady": [("a" * 20, True)] * 10, "stubborn": [("b" * 20, False)] * 10})
    pair = data["pairs"][0]
    assert (pair["right_a"], pair["runs_a"], pair["right_b"], pair["runs_b"]) == (1, 1, 0, 1)
    assert pair["p_value"] == 1.0 and not pair["significant"]  # 10 of 10 against 0 of 10 would give p < 0.001
    rows = {r["model"]: r for r in data["scorecard"]}
    assert (rows["steady"]["runs"], rows["steady"]["right"], rows["steady"]["distinct_runs"]) == (10, 10, 1)
    summary = page.split("## Summary\n\n")[1].split("\n")[0]
    assert "Of the 20 runs, **2 are distinct**" in summary and "beyond chance" not in summary.replace("not beyond chance", "")
    with_noise = campaign(tmp_path / "noise", {"steady": [(f"{i:020d}", True) for i in range(10)],
                                                "stubborn": [(f"{i + 50:020d}", False) for i in range(10)]})[0]
    assert with_noise["pairs"][0]["runs_a"] == 10 and with_noise["pairs"][0]["significant"]  # ten different runs do count


# ---------------------------------------------------------------------------------------------
# Equal totals, opposite effects


def tiny_leftover():
    """Counts over three tasks, equal totals, whose Mantel-Haenszel weighted difference summed in
    floating point (normalised weights, one task after another) is round-off, not exactly 0."""
    for a in range(1, 9):
        for b in range(1, 9):
            for c in range(1, 9):
                rates = [(a, b), (b, c), (c, a)]
                weights = [n * n / (n + n) for n in (9, 9, 9)]
                total = 0.0
                for w, (x, y) in zip(weights, rates):
                    total += w / sum(weights) * (x / 9 - y / 9)
                if total != 0:
                    return [Counts("m1", f"t{i}", x, 9) for i, (x, _) in enumerate(rates)], \
                           [Counts("m2", f"t{i}", y, 9) for i, (_, y) in enumerate(rates)]
    raise AssertionError("no counts leave round-off")


def test_equal_totals_are_no_difference():
    first, second = tiny_leftover()
    across = s.compare_across_tasks(first, second, detect=0.2)
    assert across.difference == 0.0 and math.copysign(1, across.difference) == 1
    result = s.compare_models(first + second, detect=0.2)
    rows = [{"runs": c.runs} for c in first + second]
    text = comparison.summary(result, rows, 0.2)
    assert "m1 and m2 were right equally often (no difference; 95 % interval" in text
    assert "by 0 points" not in text and "-0" not in text and "+0 points" not in text
    assert comparison.points(0.0) == "0 points" and comparison.points(-0.003) == "-0.3 points"
    assert comparison.interval_text(-0.001, 0.3) == "0 to +30"


def test_opposite_effects_are_shown_beside_the_combined_difference():
    # +60 points on two tasks, -40 on the third: combined about +27, but it changes direction
    a = [Counts("a", "t1", 8, 10), Counts("a", "t2", 8, 10), Counts("a", "t3", 3, 10)]
    b = [Counts("b", "t1", 2, 10), Counts("b", "t2", 2, 10), Counts("b", "t3", 7, 10)]
    across = s.compare_across_tasks(a, b)
    assert across.heterogeneity_p < 0.01 and (across.ahead_a, across.ahead_b) == (["t1", "t2"], ["t3"])
    from statsmodels.stats.contingency_tables import StratifiedTable
    import numpy as np

    tables = [np.array([[x.right, x.runs - x.right], [y.right, y.runs - y.right]], float) for x, y in zip(a, b)]
    assert across.heterogeneity_p == pytest.approx(StratifiedTable(tables).test_equal_odds(adjust=True).pvalue)
    result = s.compare_models(a + b, detect=0.2)
    text = comparison.summary(result, [{"runs": 10}] * 6, 0.2)
    assert "The difference between a and b **varies across tasks**, in direction (Breslow-Day p" in text
    assert "a ahead on `t1`, `t2`, b ahead on `t3`" in text
    same = s.compare_across_tasks([Counts("a", "t1", 8, 10), Counts("a", "t2", 7, 10)],
                                  [Counts("b", "t1", 2, 10), Counts("b", "t2", 3, 10)])
    assert same.heterogeneity_p > 0.05
    assert "varies" not in comparison.heterogeneity_text(same)


def test_not_separated_is_not_tied_and_tied_needs_the_equivalence_test():
    few = s.compare_models([Counts("a", "t", 3, 6), Counts("b", "t", 3, 6)], detect=0.2)
    assert not few.pairs[0].significant and not few.pairs[0].equivalent
    text = comparison.summary(few, [{"runs": 6}] * 2, 0.2)
    assert "**not separated**, which is not evidence that they are equal" in text and "Tied" not in text
    many = s.compare_models([Counts("a", "t", 500, 1000), Counts("b", "t", 505, 1000)], detect=0.2)
    assert many.pairs[0].equivalent  # the 90 % interval, about -4 to +3 points, inside ±20
    text = comparison.summary(many, [{"runs": 1000}] * 2, 0.2)
    assert "Tied within ±20 points on the one task (equivalence test" in text
    low, high = s.newcombe(Counts("a", "t", 500, 1000), Counts("b", "t", 505, 1000), alpha=0.1)
    assert -0.2 < low < high < 0.2


# ---------------------------------------------------------------------------------------------
# A difference to detect that no campaign could reach


def test_a_tiny_difference_to_detect_is_refused_before_any_work(tmp_path):
    given = tmp_path / "campaign.yaml"
    given.write_text("campaign:\n  detect: 0.001\n")
    result = in_process("campaign", "--config", given, "--dry-run")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "$.campaign.detect" in lines[0] and "0.01" in lines[0]


def test_the_runs_needed_for_a_small_difference_are_the_closed_forms():
    # bisection from the normal count: 0.01 (the smallest the configuration takes) to within a run; far below it
    # (1e-6: 3.9e12 runs, where one run moves the power by 1e-13, statsmodels' rounding) to within 1e-5
    for difference, within in ((0.01, 2), (1e-6, 1e-5 * 3.9e12)):
        h = 2 * math.asin(math.sqrt(0.5 + difference / 2)) - 2 * math.asin(math.sqrt(0.5 - difference / 2))
        closed = 2 * ((s.norm.ppf(0.975) + s.norm.ppf(0.8)) / h) ** 2
        assert abs(s.runs_needed(0.5, difference) - closed) <= within


def test_the_progress_line_reads_counts_a_recording_does_not_hold_as_zero(tmp_path):
    # a provider's negative or absurd counts are recorded as null: the progress line adds them as 0, never crashes
    from replaylab.campaign_command import Watch

    data = transcript_data()
    for usage, expected in (({"input_tokens": None, "output_tokens": None}, (0, 0)),
                            ({"input_tokens": 120, "output_tokens": None}, (120, 0)),
                            ({"input_tokens": 7, "output_tokens": 9}, (7, 9)), (None, (0, 0))):
        data["provenance"] = {**data["provenance"], "usage": usage}
        path = tmp_path / "run.json"
        path.write_text(json.dumps(data))
        model, given, made = Watch._tokens(path)
        assert model == data["provenance"]["model"] and (given, made) == expected


def test_a_typo_in_a_scripted_programs_name_is_refused_not_sent_to_openai():
    result = in_process("campaign", "--model", "scripted-careful,scripted-bogus", "--lesson", "hunter", "--dry-run")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--model scripted-bogus: not a scripted program; they are: scripted-careful" in lines[0]
    assert "--provider openai" in lines[0]
    chosen = in_process("campaign", "--model", "scripted-bogus", "--provider", "openai", "--lesson", "hunter", "--dry-run")
    assert "scripted-bogus" in chosen.stdout and "not a scripted program" not in chosen.stderr
