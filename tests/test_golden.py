"""Every value of the reference file, recomputed by the library (relative 1e-9; exact for counts,
angles and pass flags; absolute 1e-13 for values that are pure round-off)."""

import math
import re

import pytest

from helpers import GOLDEN
from replaylab.lessons.projectile import lab as projectile_lab
from replaylab.lessons.projectile.judge import agent_conclusion
from replaylab.lessons.hunter.scans import false_claim_boundary
from replaylab.lessons.review.lab import PIECES
from replaylab.agents import recording
from replaylab.physics import projectile
from replaylab.physics.drift import max_energy_drift
from replaylab.verification import checks

from helpers import RECORDINGS

ROUND_OFF = 1e-13


def close(actual, expected):
    if abs(expected) < 1e-12:
        return abs(actual - expected) <= ROUND_OFF
    return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=0)


def compute(key):
    """The library's value for one key of the reference file."""
    if m := re.fullmatch(r"range_with_drag\(speed=(\d+),angle=(\d+),dt=([\d.]+)\)", key):
        return projectile.range_with_drag(int(m[1]), int(m[2]), float(m[3]))
    if m := re.fullmatch(r"range_without_drag\(speed=(\d+),angle=(\d+)\)", key):
        return projectile.range_without_drag(int(m[1]), int(m[2]))
    if key == "range_with_drag rough ball drag*1.01 (25,35,0.01)":
        return projectile.range_with_drag(25, 35, 0.01, drag=1.01 * projectile.DRAG)
    if m := re.fullmatch(r"flight_time_without_drag\((\d+),(\d+)\)", key):
        return projectile.flight_time_without_drag(int(m[1]), int(m[2]))
    if m := re.fullmatch(r"agent_conclusion\.(\w+)", key):
        run = recording.load(RECORDINGS / "projectile" / "reference.json")
        conclusion = agent_conclusion(run.transcript)
        name = {"best_range": "best_range_m", "range_at_45": "reference_range_m"}.get(m[1], m[1])
        return conclusion[name]["value"]
    if m := re.fullmatch(r"max_energy_drift\((.+),(\d+),(\d+)\)", key):
        return max_energy_drift(m[1], int(m[2]), int(m[3]))
    if key == "smallest SE steps_per_period holding 5% at 20 periods":
        return false_claim_boundary()["smallest"]
    if m := re.fullmatch(r"check (\S+) piece (\d) (measured|passed)", key):
        result = checks.run_check(m[1], PIECES[int(m[2])])
        return result.measured if m[3] == "measured" else (1.0 if result.passed else 0.0)
    if m := re.fullmatch(r"oscillator_error\(candidate=(\d),steps_per_period=(\d+)\)", key):
        return checks.oscillator_error(PIECES[int(m[1])], int(m[2]))
    raise KeyError(key)


EXACT_KEYS = [k for k in GOLDEN if k.endswith("passed") or k.startswith("smallest") or k == "agent_conclusion.best_angle"]


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_reference_value(key):
    expected = GOLDEN[key]
    actual = compute(key)
    if key in EXACT_KEYS:
        assert actual == expected
    else:
        assert close(actual, expected), f"{key}: {actual!r} != {expected!r}"


def test_every_reference_key_is_computed():
    assert len(GOLDEN) == 60
    for key in GOLDEN:
        compute(key)  # raises KeyError for a key the mapping forgot


def test_drag_constant_is_computed_not_rounded():
    assert projectile.DRAG == 0.0010576957066473437
    assert projectile.AREA == 0.003525652355491146
    assert projectile.G == 9.80665


def test_rounded_drag_or_gravity_would_fail_the_reference():
    reference = GOLDEN["range_with_drag(speed=25,angle=35,dt=0.01)"]
    assert not close(projectile.range_with_drag(25, 35, 0.01, drag=0.00106), reference)


def test_projectile_question_speed_is_the_reference_speed():
    assert projectile_lab.SPEED == 25
