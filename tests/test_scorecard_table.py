"""The scorecard's own functions on hand-made tables and runs (issue 16: the mutation run found the
per-run table and the group-by reached by no test of their own): the limit that stopped a run,
the tokens of each run, its answer's columns, the table's bytes and its reading back, and the
group-by with its counted mistakes and its answered and supported runs."""

import gzip

import numpy as np
import pandas as pd
import pytest

from replaylab.lessons import scorecard as sc


def run(group, usage=None, stopped=None):
    """What a batch's verdicts say of a run (pipeline.run_facts)."""
    return {"group": group} | ({"usage": usage} if usage is not None else {}) | ({"stopped_by": stopped} if stopped else {})


RUNS = {
    "a1": run("alpha", usage={"input_tokens": 10, "output_tokens": 3}),
    "a2": run("alpha", usage={"input_tokens": 5}),
    "b1": run("beta", stopped={"limit": "max_seconds", "allowed": 2.5}),
    "c1": run("gamma"),
}


def entry(model, task="t", calls=3, ran=2, answer=None, supported=None, instance="i1"):
    return {"model": model, "task": task, "instance": instance, "difficulty": "easy", "calls": calls, "ran": ran,
            "answer": answer, "supported": supported}


ANSWERS = {"i1": {"truth": 1}, "i2": {"truth": 2}}  # the build's answer of each instance


def test_scores_say_what_is_wrong_and_a_stopped_run_is_wrong_whatever_it_computed():
    verdicts = {"a1": entry("m1", calls=4, ran=3, answer={"low": 40, "high": 41}, supported=True), "b1": entry("m2"),
                "c1": entry("m3", answer={"low": 1, "high": 2}, supported=False, instance="i2")}
    asked = []

    def decide(found, truth):
        asked.append((found["model"], truth))
        return None if found["model"] != "m3" else "far off"

    found = sc.scores(verdicts, ANSWERS, decide, RUNS)
    assert found == [
        {"run": "a1", "model": "m1", "task": "t", "instance": "i1", "difficulty": "easy", "answered": True, "right": True,
         "supported": True, "wrong": None, "answer": {"low": 40, "high": 41}, "calls": 4, "budget_used": 3},
        {"run": "b1", "model": "m2", "task": "t", "instance": "i1", "difficulty": "easy", "answered": False, "right": False,
         "supported": None, "wrong": "stopped by its limit max_seconds (2.5)", "answer": None, "calls": 3, "budget_used": 2},
        {"run": "c1", "model": "m3", "task": "t", "instance": "i2", "difficulty": "easy", "answered": True, "right": False,
         "supported": False, "wrong": "far off", "answer": {"low": 1, "high": 2}, "calls": 3, "budget_used": 2},
    ]
    # each run is decided against its own instance's answer; the stopped run is not asked about
    assert asked == [("m1", ANSWERS["i1"]), ("m3", ANSWERS["i2"])]
    assert [s["right"] for s in sc.scores({"b1": entry("m2")}, ANSWERS, lambda e, s: None)] == [True]  # no runs: no limit known


def read_back(table, folder):
    """The table written as the build writes runs.csv.gz, and read back from that file."""
    path = folder / "runs.csv.gz"
    path.write_bytes(sc.runs_table_bytes(table))
    return sc.read_runs_table(path)


def score(name, model, right=True, wrong=None, calls=2, ran=2, answer=None, supported=None):
    """A score as `scores` makes it."""
    return {"run": name, "model": model, "task": "t", "answered": answer is not None, "right": right,
            "supported": supported, "wrong": wrong, "answer": answer, "calls": calls, "budget_used": ran}


def test_the_runs_table_gives_each_run_its_reported_tokens_and_leaves_them_empty_when_none_were():
    found = [
        score("a1", "m1", answer={"low": 40, "high": 41}, supported=True),
        score("a2", "m1", right=False, wrong="far off", calls=1, ran=1, answer={"low": 30, "high": 31}, supported=False),
        score("c1", "m2", right=False, wrong="no answer", calls=1, ran=1),
    ]
    table = sc.runs_table(found, RUNS)
    assert list(table.columns) == list(sc.COLUMNS) + ["answer_low", "answer_high"]
    assert str(table["input_tokens"].dtype) == "Int64" and str(table["output_tokens"].dtype) == "Int64"
    assert table.loc[0, "input_tokens"] == 10 and table.loc[0, "output_tokens"] == 3
    assert table.loc[1, "input_tokens"] == 5 and table.loc[1, "output_tokens"] is pd.NA  # a kind not reported stays empty
    assert table.loc[2, "input_tokens"] is pd.NA and table.loc[2, "output_tokens"] is pd.NA
    assert list(table["recording"]) == ["a1", "a2", "c1"]
    assert str(table["supported"].dtype) == "boolean" and table["supported"].tolist() == [True, False, pd.NA]
    assert table["answered"].tolist() == [True, True, False]
    assert table["answer_low"].tolist()[:2] == ["40", "30"] and pd.isna(table.loc[2, "answer_low"])  # as text, whole numbers whole
    assert list(sc.runs_table([]).columns) == list(sc.COLUMNS)


def test_an_answers_list_of_names_is_one_cell(tmp_path):
    found = [score("r1", "m", answer={"piece_1_failed": [], "piece_2_failed": ["limits", "bounded-energy"]}, supported=True),
             score("r2", "m", right=False, wrong="no answer")]
    table = sc.runs_table(found)
    assert list(table.columns)[len(sc.COLUMNS):] == ["answer_piece_1_failed", "answer_piece_2_failed"]
    assert table.loc[0, "answer_piece_1_failed"] == "" and table.loc[0, "answer_piece_2_failed"] == "limits;bounded-energy"
    back = read_back(table, tmp_path)
    assert back["answer_piece_2_failed"].tolist() == ["limits;bounded-energy", ""]
    assert str(back["answer_piece_2_failed"].dtype) == "string"


def test_the_runs_table_reads_back_as_it_was_written_and_its_bytes_are_the_same_each_time(tmp_path):
    found = [
        score("a1", "m1", answer={"low": 40, "high": 41}, supported=True),
        score("c1", "m2", right=False, wrong="NA", calls=1, ran=1),
    ]
    table = sc.runs_table(found, RUNS)
    data = sc.runs_table_bytes(table)
    assert data == sc.runs_table_bytes(sc.runs_table(found, RUNS))
    assert data[4:8] == b"\0\0\0\0"  # no time in the gzip header
    text = gzip.decompress(data).decode()
    assert text.splitlines()[0] == ",".join(sc.COLUMNS + ("answer_low", "answer_high")) and "\r" not in text
    back = read_back(table, tmp_path)
    assert back["wrong"].tolist() == ["", "NA"]  # a mistake called "NA" stays text, an empty one stays empty
    assert str(back["wrong"].dtype) == "string"
    assert back["input_tokens"].tolist() == [10, pd.NA] and str(back["input_tokens"].dtype) == "Int64"
    assert back["output_tokens"].tolist() == [3, pd.NA] and str(back["output_tokens"].dtype) == "Int64"
    assert back["supported"].tolist() == [True, pd.NA] and str(back["supported"].dtype) == "boolean"
    assert back["answered"].tolist() == [True, False] and back["right"].tolist() == [True, False]
    assert back["recording"].tolist() == ["a1", "c1"]


def test_an_answers_whole_numbers_stay_whole_in_the_file(tmp_path):
    """The answer as submitted: 40 degrees is "40" in runs.csv.gz, also when another run gave no answer."""
    found = [score("a1", "m1", answer={"low": 40, "high": 41}, supported=True), score("c1", "m2", right=False, wrong="no answer")]
    back = read_back(sc.runs_table(found, RUNS), tmp_path)
    assert back["answer_low"].tolist() == ["40", ""] and back["answer_high"].tolist() == ["41", ""]


def test_names_made_of_digits_read_back_as_the_same_text(tmp_path):
    found = [{**score("001", "7", calls=2, ran=1), "task": "1e3"}]
    back = read_back(sc.runs_table(found, {"001": run("001")}), tmp_path)
    assert list(back["run"]) == ["001"] and list(back["model"]) == ["7"] and list(back["task"]) == ["1e3"]
    assert list(back["recording"]) == ["001"]  # the recording's name too, not the number 1
    assert sc.scorecard(back)[0]["model"] == "7"


def test_tabulate_gives_the_scorecard_of_the_runs_table_of_the_runs_facts():
    found = [
        score("a1", "m1", answer={"low": 40, "high": 41}, supported=True),
        score("c1", "m2", right=False, wrong="far off", calls=1, ran=1, answer={"low": 1, "high": 2}, supported=True),
    ]
    rows, table = sc.tabulate(found, RUNS)
    assert list(table["recording"]) == ["a1", "c1"] and table.loc[0, "input_tokens"] == 10
    assert [(r["model"], r["runs"], r["answered"], r["right"], r["supported"], r["supported_wrong"], r["mistakes"]) for r in rows] == [
        ("m1", 1, 1, 1, 1, 0, []), ("m2", 1, 1, 0, 1, 1, [{"what": "far off", "runs": 1}])]


def test_python_values_of_pandas_cells():
    assert sc._python(None) is None and sc._python(pd.NA) is None and sc._python(float("nan")) is None
    assert sc._python(np.float64("nan")) is None
    value = sc._python(np.int64(7))
    assert value == 7 and type(value) is int
    assert type(sc._python(np.float64(2.5))) is float
    assert sc._python(2.5) == 2.5 and sc._python("x") == "x"


def table(rows, supported=None):
    """A per-run table of rows (model, task, wrong, calls, ran, tokens); every run answered, and its
    experiments support its answer when `supported` is None, else as `supported` says (None: no answer)."""
    supported = supported or [True] * len(rows)
    return pd.DataFrame(
        [{"run": f"r{i}", "model": m, "task": t, "answered": s is not None, "right": w is None, "supported": s, "wrong": w,
          "calls": c, "budget_used": b, "input_tokens": tok} for i, ((m, t, w, c, b, tok), s) in enumerate(zip(rows, supported))]
    ).astype({"supported": "boolean"})


def test_the_mistakes_of_the_wrong_runs_most_frequent_first_ties_in_order_of_appearance():
    found = sc._mistakes(table([
        ("m", "t", "zeta", 1, 1, 0), ("m", "t", None, 1, 1, 0), ("m", "t", "alpha", 1, 1, 0),
        ("m", "t", "beta", 1, 1, 0), ("m", "t", "beta", 1, 1, 0), ("n", "t", "alpha", 1, 1, 0),
    ]), ["model", "task"])
    assert found == {
        ("m", "t"): [{"what": "beta", "runs": 2}, {"what": "zeta", "runs": 1}, {"what": "alpha", "runs": 1}],
        ("n", "t"): [{"what": "alpha", "runs": 1}],
    }
    assert sc._mistakes(table([("m", "t", None, 1, 1, 0)]), ["model"]) == {}


def test_the_scorecard_groups_by_its_keys_with_means_and_mistakes():
    rows = table([
        ("m1", "t1", None, 2, 1, 100), ("m1", "t1", "far", 4, 3, 300), ("m1", "t2", None, 1, 1, 10),
        ("m0", "t1", "far", 5, 5, 50),
    ])
    card = sc.scorecard(rows, means=("input_tokens",))
    assert [(r["model"], r["task"]) for r in card] == [("m0", "t1"), ("m1", "t1"), ("m1", "t2")]
    first, second, third = card
    assert (second["runs"], second["right"], second["rate"]) == (2, 1, 0.5)
    assert (second["low"], second["high"]) == sc.wilson(1, 2)
    assert second["conclusive"] is False
    assert second["mean_calls"] == 3.0 and second["mean_budget_used"] == 2.0 and second["mean_input_tokens"] == 200.0
    assert type(second["runs"]) is int and type(second["right"]) is int and type(second["mean_calls"]) is float
    assert second["mistakes"] == [{"what": "far", "runs": 1}]
    assert first["mistakes"] == [{"what": "far", "runs": 1}] and (first["right"], first["rate"]) == (0, 0.0)
    assert third["mistakes"] == [] and third["rate"] == 1.0
    by_model = sc.scorecard(rows, keys=("model",))
    assert [(r["model"], r["runs"], r["right"]) for r in by_model] == [("m0", 1, 0), ("m1", 3, 2)]
    assert "task" not in by_model[0] and "mean_input_tokens" not in by_model[0]
    assert sc.scorecard(rows.iloc[0:0]) == []


def test_a_row_is_conclusive_when_its_interval_is_at_most_half_wide():
    def card(right, runs):
        (row,) = sc.scorecard(table([("m", "t", None if i < right else "no", 1, 1, 0) for i in range(runs)]))
        return row

    narrow = card(0, 6)  # Wilson (0, 0.390...)
    assert narrow["high"] - narrow["low"] <= sc.TOO_WIDE and narrow["conclusive"] is True
    wide = card(1, 3)
    assert wide["high"] - wide["low"] > sc.TOO_WIDE and wide["conclusive"] is False
    assert card(5, 5)["conclusive"] is True and card(5, 5)["rate"] == 1.0


def test_the_flat_scorecard_rows_of_the_csv_file():
    card = sc.scorecard(table([("m", "t", "far", 2, 1, 0), ("m", "t", "far", 2, 1, 0), ("m", "t", "near", 2, 1, 0),
                               ("m", "t", None, 4, 4, 0)], supported=[True, None, False, False]))
    (flat,) = sc.scorecard_table(card)
    low, high = sc.wilson(1, 4)
    assert flat == {"model": "m", "task": "t", "runs": 4, "answered": 3, "right": 1, "rate": 0.25, "low": low,
                    "high": high, "conclusive": False, "instances": None, "instance_low": None, "instance_high": None, "supported": 1, "right_unsupported": 1, "supported_wrong": 1,
                    "mean_calls": 2.5, "mean_budget_used": 1.75, "mistakes": "far (2); near (1)"}


@pytest.mark.parametrize("right,runs", [(0, 1), (0, 7), (3, 3), (1, 1)])
def test_wilson_ends_are_exact(right, runs):
    low, high = sc.wilson(right, runs)
    assert (low == 0.0) == (right == 0) and (high == 1.0) == (right == runs)
    assert 0.0 <= low < high <= 1.0
    assert sc.wilson(0, 0) == (0.0, 1.0)
