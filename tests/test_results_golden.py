"""The numbers in results/<lesson>/results.json equal the reference numbers, and each file validates
against its schema.

Maps every key of the project's copy of golden-reference.json to the label under which the build
stores it. CI runs this against the results of its full Snakemake run (REPLAYLAB_RESULTS=results);
elsewhere it reads the results that `replaylab.build.build` writes in a temporary folder (once per
test run: `reference_results`, tests/conftest.py).
"""

import json
import math
import os
import re
from pathlib import Path

import pytest

from helpers import GOLDEN
from replaylab.lessons import registry
from replaylab.results import load


@pytest.fixture(scope="module")
def folder(request):
    given = os.environ.get("REPLAYLAB_RESULTS")
    if given:
        return Path(given)
    return request.getfixturevalue("reference_results")  # build(recordings=RECORDINGS, ...), once per test run


@pytest.fixture(scope="module")
def results(folder):
    return {lesson: json.loads((folder / lesson / "results.json").read_text()) for lesson in registry.names()}


@pytest.mark.parametrize("lesson", registry.names())
def test_results_validate_against_their_schema(folder, lesson):
    assert load(folder / lesson / "results.json")["lesson"] == lesson


def calls(lesson_results):
    """(tool name, arguments, content) of every call of every run, as recomputed by the build."""
    for run in lesson_results["runs"].values():
        for step in run["transcript"]["steps"]:
            for call, result in zip(step["tool_calls"], step["results"]):
                if result["ok"]:
                    yield call["name"], call["arguments"], result["content"]


def find_call(lesson_results, name, **arguments):
    for tool, args, content in calls(lesson_results):
        if tool == name and args == arguments:
            return next(iter(content.values()))
    raise KeyError(f"{name}{arguments}")


def value_of(key, results):
    p, h, r = results["projectile"], results["hunter"], results["review"]
    if m := re.fullmatch(r"range_with_drag\(speed=(\d+),angle=(\d+),dt=([\d.]+)\)", key):
        if float(m[3]) == 0.05:
            return p["exercises"]["step_bounds"]["coarse_m"]["value"]
        return find_call(p, "range_with_drag", speed=int(m[1]), angle=int(m[2]), dt=float(m[3]))
    if m := re.fullmatch(r"range_without_drag\(speed=(\d+),angle=(\d+)\)", key):
        return find_call(p, "range_without_drag", speed=int(m[1]), angle=int(m[2]))
    if key.startswith("range_with_drag rough ball"):
        return p["verdicts"]["reference"]["rough_ball"]["recomputed"]
    if m := re.fullmatch(r"agent_conclusion\.(\w+)", key):
        name = {"best_range": "best_range_m", "range_at_45": "reference_range_m"}.get(m[1], m[1])
        return p["verdicts"]["reference"]["experiments"][name]["value"]  # the seeds' check of what the agent's experiments show
    if key == "flight_time_without_drag(25,60)":
        return p["exercises"]["new_tool"][1]["value"]["value"]
    if m := re.fullmatch(r"max_energy_drift\((.+),(\d+),(\d+)\)", key):
        method, n, periods = m[1], int(m[2]), int(m[3])
        boundary = h["scans"]["false_claim_boundary"]
        if periods == boundary["periods"] and n == boundary["smallest"]:
            return boundary["drift_at_smallest"]["value"]
        if periods == boundary["periods"] and n == boundary["drift_below"]["steps_per_period"]:
            return boundary["drift_below"]["value"]
        if (n, periods) == (32, 5):
            return h["exercises"]["boundary"]["attempts"][0]["value"]["value"]
        return find_call(h, "oscillator_energy_drift", method=method, steps_per_period=n, periods=periods)
    if key == "smallest SE steps_per_period holding 5% at 20 periods":
        return h["scans"]["false_claim_boundary"]["smallest"]
    if m := re.fullmatch(r"check (\S+) piece (\d) (measured|passed)", key):
        row = next(x for x in r["exercises"]["every_check"] if x["check"] == m[1] and x["candidate"] == int(m[2]))
        return row["measured"]["value"] if m[3] == "measured" else (1.0 if row["passed"] else 0.0)
    if m := re.fullmatch(r"oscillator_error\(candidate=(\d),steps_per_period=(\d+)\)", key):
        return find_call(r, "oscillator_error", candidate=int(m[1]), steps_per_period=int(m[2]))
    raise KeyError(key)


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_results_hold_the_reference_number(key, results):
    expected, actual = GOLDEN[key], value_of(key, results)
    if abs(expected) < 1e-12:
        assert abs(actual - expected) <= 1e-13
    elif isinstance(expected, int) or key.endswith("passed") or key.endswith("best_angle"):
        assert actual == expected
    else:
        assert math.isclose(actual, expected, rel_tol=1e-9), f"{key}: {actual!r} != {expected!r}"
