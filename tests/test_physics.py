"""Physics details the reference numbers do not pin down alone: scans equal the one-point tools
bit for bit, landing rules, errors, and the review's details."""

import math

import numpy as np
import pytest

from replaylab.lessons.review.lab import PIECES
from replaylab.physics import oscillator, projectile
from replaylab.physics.drift import max_energy_drift, max_energy_drifts, max_energy_drifts_at
from replaylab.physics.integrators import STEPPERS
from replaylab.verification import checks


def test_angle_scan_equals_one_point_tool_bit_for_bit():
    angles = np.arange(1, 90, 3.5)
    for dt in (0.001, 0.013, 0.05):
        scan = projectile.ranges_with_drag(17, angles, dt)
        assert [float(r) for r in scan] == [projectile.range_with_drag(17, float(a), dt) for a in angles]


@pytest.mark.parametrize("method", list(STEPPERS))
def test_drift_scan_equals_one_point_tool_bit_for_bit(method):
    counts = [4, 7, 16, 33, 64, 200]
    assert [float(d) for d in max_energy_drifts(method, counts, 7)] == [max_energy_drift(method, n, 7) for n in counts]


@pytest.mark.parametrize("method", list(STEPPERS))
def test_drift_read_off_at_several_lengths_equals_one_point_tool(method):
    counts, periods = [4, 16, 33, 200], [1, 7, 20]
    found = max_energy_drifts_at(method, counts, periods)
    assert found.shape == (3, 4)
    assert [[float(d) for d in row] for row in found] == [[max_energy_drift(method, n, p) for n in counts] for p in periods]


def test_drift_scan_refuses_a_run_whose_energy_stops_being_finite_before_its_end():
    # explicit Euler at 4 steps per period gains energy every step: its energy overflows within
    # 1000 periods, as the one-point tool finds; stepped on past its 50 periods beside a longer run
    # (its energy then overflows), it is read off where it ended
    with pytest.raises(ValueError, match="not finite"):
        max_energy_drift("explicit Euler", 4, 1000)
    with pytest.raises(ValueError, match="not finite"):
        max_energy_drifts_at("explicit Euler", [4, 200], [1000])
    found = max_energy_drifts_at("explicit Euler", [4, 200], [50])
    assert [float(d) for d in found[0]] == [max_energy_drift("explicit Euler", n, 50) for n in (4, 200)]


@pytest.mark.parametrize("piece", [1, 2])
def test_error_scan_equals_one_point_tool_bit_for_bit(piece):
    counts = [20, 33, 80, 640]
    scan = checks.oscillator_errors(PIECES[piece], counts)
    assert [float(e) for e in scan] == [checks.oscillator_error(PIECES[piece], n) for n in counts]


def test_dt_must_be_positive():
    with pytest.raises(ValueError):
        projectile.range_with_drag(25, 40, 0.0)
    with pytest.raises(ValueError):
        projectile.ranges_with_drag(25, [40], -1.0)


def test_a_flight_that_never_lands_is_a_runtime_error(monkeypatch):
    monkeypatch.setattr(projectile, "MAX_STEPS", 10)
    with pytest.raises(RuntimeError, match="not landed after 10 steps of 0.001 s"):
        projectile.range_with_drag(25, 40, 0.001)
    with pytest.raises(RuntimeError, match="not landed after 10 steps"):
        projectile.ranges_with_drag(25, [40], 0.001)


def test_vacuum_range_doubles_the_angle_in_degrees():
    assert projectile.range_without_drag(25, 45) == 625 * math.sin(90 * (math.pi / 180)) / projectile.G


def test_period_is_pi_and_energy_starts_at_one():
    assert oscillator.PERIOD == math.pi
    assert oscillator.INITIAL_ENERGY == 1.0


def test_limits_details_match_the_specification():
    one = checks.check_limits(PIECES[1]).details
    two = checks.check_limits(PIECES[2]).details
    assert one["uniform"] == 8.881784197001252e-16
    assert one["velocity"] == 7.105427357601002e-15 == 2.0**-47
    assert one["allowance"] == 0.9810000000000001
    assert math.isclose(one["position"], 0.9810000000000016, rel_tol=1e-15)
    assert math.isclose(two["position"], 0.9809999999999981, rel_tol=1e-15)
    assert two["excess"] == 0.0


def test_energy_bands_match_the_specification():
    early, late = checks.energy_bands(PIECES[1])
    assert math.isclose(early, 0.1083065798526679, rel_tol=1e-9)
    assert math.isclose(late, 0.10865074049952517, rel_tol=1e-9)
    early, late = checks.energy_bands(PIECES[2])
    assert math.isclose(early, 408.41818038113513, rel_tol=1e-9)
    assert math.isclose(late, 3.7317879372758463e52, rel_tol=1e-9)


def test_convergence_errors_match_the_specification():
    errors = checks.check_convergence_order(PIECES[2]).details["errors"]
    expected = [1.1928444938373608, 0.48332855088359183, 0.21815068090362835, 0.10372300799656566, 0.050585008443182165]
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(errors, expected))


def test_order_is_nan_when_an_error_is_zero_or_not_finite():
    assert math.isnan(checks.fitted_order([1.0, 0.0, 1.0, 1.0, 1.0]))
    assert math.isnan(checks.fitted_order([1.0, math.inf, 1.0, 1.0, 1.0]))


def test_a_stepper_that_blows_up_fails_every_check_as_not_measured():
    def build():
        return lambda t, x, v, dt, accel: (t + dt, x * np.inf, v * np.nan)

    broken = checks.Candidate("broken", build)
    assert checks.check_clock(broken).passed  # its clock is right; everything it computes is not
    for name in checks.CHECK_NAMES[1:]:
        result = checks.run_check(name, broken)
        assert not result.passed, name
        assert result.measured == math.inf, name


def test_a_stateful_stepper_fails_purity():
    def build():
        memory = [0.0]

        def step(t, x, v, dt, accel):
            memory[0] += 1e-6
            return t + dt, x + v * dt + memory[0], v + accel(t, x, v) * dt

        return step

    assert not checks.check_purity(checks.Candidate("stateful", build)).passed
    assert checks.check_purity(PIECES[1]).passed


def test_a_wrong_clock_fails_the_clock_check():
    broken = checks.Candidate("slow clock", lambda: (lambda t, x, v, dt, accel: (t + 0.5 * dt, x, v)))
    result = checks.check_clock(broken)
    assert not result.passed and result.measured == 0.0625


def test_second_order_claim_gets_no_allowance():
    claimed_second_order = checks.Candidate("symplectic Euler", PIECES[1].build, order=2)
    result = checks.check_limits(claimed_second_order)
    assert result.details["allowance"] == 0.0 and not result.passed
