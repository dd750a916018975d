"""What a page prints of names it did not make (issue 25, item 13): each escaped once, never twice;
an invisible character shown, never hidden; and a command to record a run again that would run."""

import dataclasses

from helpers import RECORDINGS
from replaylab.agents import recording
from replaylab.agents.replay import rerecord_command
from replaylab.lessons import markdown

ROW = {"model": "[link](http://x) <img src=x> a_b", "task": "default", "runs": 2, "answered": 2, "right": 1, "rate": 0.5,
       "low": 0.1, "high": 0.9, "conclusive": False, "supported": 1, "right_unsupported": 0, "supported_wrong": 0,
       "mean_calls": 3.0, "mean_budget_used": 3.0, "mistakes": []}


def test_a_model_name_is_escaped_once_in_the_scorecard():
    results = {"scorecard": [ROW], "score_unit": ["run", "runs"], "right_answer": "x."}
    section = markdown.scorecard_section(results)
    assert "| \\[link\\](http://x) &lt;img src=x&gt; a_b |" in section
    assert "\\\\[" not in section and "&amp;lt;" not in section


def test_format_characters_are_shown_and_refused_in_printed_fields():
    assert markdown.visible("gpt\u200b-4") == "gpt\\u200b-4" and markdown.text("a\ufeffb") == "a\\\\ufeffb"
    assert recording.printable("x\u2060y\u00adz") == "x\\u2060y\\xadz"
    for name in ("gpt\u200b-4", "a\u202eb", "soft\u00adhyphen"):
        refused = recording.CONTROL.search(name)
        assert refused, name
    assert recording.CONTROL.search("gpt-4o mini / Ünïcödé") is None


def session_run(tmp_path, folder):
    """A session's recording with a declared model, stored in `folder`."""
    run = recording.load(RECORDINGS / "projectile" / "reference.json")
    provenance = {**run.provenance, "kind": "interactive", "provider": "interactive", "model": "my model", "model_declared": True}
    return dataclasses.replace(run, run="typed", provenance=provenance, source=f"{folder}/projectile/typed.json")


def test_the_command_to_record_a_session_again_keeps_its_model_and_takes_a_free_name(tmp_path):
    live = rerecord_command(session_run(tmp_path, "results/live"))
    assert live == "replaylab session projectile --variant default --run typed-again --model 'my model'"
    kept = rerecord_command(session_run(tmp_path, "recordings"))
    assert kept == "replaylab session projectile --variant default --run typed --model 'my model'"
