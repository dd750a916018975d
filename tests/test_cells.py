"""Every CSV the build writes opens in a spreadsheet as text: a cell a spreadsheet would run as a
formula carries a leading apostrophe, and the tables read back give the data as written."""

import csv
import gzip
import io
import json

from hypothesis import given
from hypothesis import strategies as st

from replaylab import comparison, pipeline
from replaylab.lessons.cells import from_cell, to_cell
from replaylab.lessons.markdown import text
from replaylab.lessons.scorecard import read_runs_table, runs_table, runs_table_bytes

HOSTILE = ['=HYPERLINK("http://127.0.0.1/x","click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1",
           "'=already marked"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_cells(text):
    """The cells of a CSV text that a spreadsheet would take for a formula (numbers aside)."""
    found = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                try:
                    float(cell)
                except ValueError:
                    found.append(cell)
    return found


@given(st.text(max_size=30))
def test_a_cell_comes_back_as_it_was_written(value):
    assert from_cell(to_cell(value)) == value
    assert not (to_cell(value).startswith(FORMULA_STARTS) and value not in ("",) and not _number(value))


def _number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_numbers_stay_numbers_and_formulas_become_text():
    assert [to_cell(v) for v in ("-0.5", "+3", "1e-6", "-inf", 7, None, True)] == ["-0.5", "+3", "1e-6", "-inf", 7, None, True]
    assert [to_cell(v) for v in HOSTILE] == ["'" + v for v in HOSTILE]
    assert formula_cells(pipeline.csv_text([{"explanation": v, "n": -1} for v in HOSTILE])) == []


def test_a_hostile_model_name_and_explanation_reach_no_table_as_a_formula(tmp_path):
    model, words = '=HYPERLINK("http://127.0.0.1/x","click")', "@SUM(1+1)*cmd|' /C calc'!A0\r\n=2+2, \"quoted\""
    found = [{"run": f"r{i}", "model": name, "task": "velocity-verlet claim", "instance": "hunter-000",
              "difficulty": "medium", "answered": True, "right": i % 2 == 0, "supported": True,
              "wrong": None if i % 2 == 0 else "-far off", "answer": {"explanation": words, "outcome": "none"},
              "calls": 2, "budget_used": 2}
             for i, name in enumerate([model, "plain"] * 3)]
    table = tmp_path / "hunter" / "runs.csv.gz"
    table.parent.mkdir(parents=True)
    table.write_bytes(runs_table_bytes(runs_table(found)))
    back = read_runs_table(table)
    assert set(back["model"]) == {model, "plain"} and set(back["answer_explanation"]) == {words}
    assert set(back["wrong"].dropna()) - {""} == {"-far off"}
    settings = {"name": "hostile", "provider": "scripted", "models": [model, "plain"], "runs": 3,
                "max_tokens_per_run": None, "max_seconds_per_run": None, "prices": {}, "detect": 0.2}
    comparison.write(settings, ["hunter"], [table], [], tmp_path)
    written = sorted(tmp_path.glob("*.csv"))
    assert len(written) >= 8
    for path in written:
        assert formula_cells(path.read_text()) == [], path.name
    for path in (table, tmp_path / "runs.csv.gz"):  # the lesson's per-run table, the campaign's
        assert formula_cells(gzip.decompress(path.read_bytes()).decode()) == [], path
    assert set(read_runs_table(tmp_path / "runs.csv.gz")["answer_explanation"]) == {words}
    assert json.loads((tmp_path / "scorecard.json").read_text())["scorecard"][0]["model"] == model  # the JSON keeps it
    assert text(model) in (tmp_path / "index.md").read_text()  # the page shows the name as written, escaped as text
