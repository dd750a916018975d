"""The lesson's tennis ball: quadratic drag, explicit Euler, landing by linear interpolation.

Every operation is written in the order of the specification (physics.md section 1), because the
reference numbers are reproduced bit for bit. The same formulas serve one launch (Python floats)
and a scan of many launches (numpy arrays), so a scan point equals the one-point tool exactly.
"""

import math

import numpy as np

G = 9.80665  # standard gravity, m/s^2 (not 9.81)
MASS = 0.058  # kg
DIAMETER = 0.067  # m
AIR_DENSITY = 1.2  # kg/m^3
DRAG_COEFFICIENT = 0.5
AREA = math.pi * (DIAMETER / 2) ** 2  # m^2
DRAG = 0.5 * AIR_DENSITY * DRAG_COEFFICIENT * AREA  # kg/m, computed, never the rounded 0.00106
LAUNCH_HEIGHT = 0.0  # m
MAX_STEPS = 1_000_000
DEGREE = math.pi / 180  # the constant that math.radians and numpy.radians multiply by


def _launch(speed, angle):
    theta = angle * DEGREE
    return speed * math.cos(theta), speed * math.sin(theta)


def _acceleration(vx, vy, drag, sqrt):
    """Sum the drag and weight forces onto zero and divide by the mass, in the spec's order."""
    s = sqrt(vx * vx + vy * vy)
    q = (-drag) * s
    weight_y = MASS * (-G)
    return (0 + q * vx) / MASS, (weight_y + q * vy) / MASS


def _check_dt(dt):
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt!r}")


def range_with_drag(speed, angle, dt, drag=DRAG):
    """Horizontal distance in metres at which the ball lands (launched from the ground)."""
    _check_dt(dt)
    vx, vy = _launch(speed, angle)
    x, y = 0.0, LAUNCH_HEIGHT
    for _ in range(MAX_STEPS):
        ax, ay = _acceleration(vx, vy, drag, math.sqrt)
        x_new, y_new = x + vx * dt, y + vy * dt
        vx, vy = vx + ax * dt, vy + ay * dt
        if y_new < 0:
            return _interpolate_landing(x, y, x_new, y_new)
        x, y = x_new, y_new
    raise RuntimeError(f"not landed after {MAX_STEPS} steps of {dt:g} s")


def _interpolate_landing(x_prev, y_prev, x_new, y_new):
    f = y_prev / (y_prev - y_new)
    return x_prev + f * (x_new - x_prev)


def ranges_with_drag(speed, angles, dt, drag=DRAG):
    """`range_with_drag` for many angles at once, stepping all flights together with numpy.

    Bit-identical to the one-point function: the same operations, element by element.
    """
    _check_dt(dt)
    angles = [float(a) for a in angles]
    launches = [_launch(speed, a) for a in angles]
    vx = np.array([v[0] for v in launches])
    vy = np.array([v[1] for v in launches])
    x = np.zeros(len(angles))
    y = np.full(len(angles), LAUNCH_HEIGHT)
    result = np.full(len(angles), np.nan)
    flying = np.ones(len(angles), dtype=bool)
    for _ in range(MAX_STEPS):
        ax, ay = _acceleration(vx, vy, drag, np.sqrt)
        x_new, y_new = x + vx * dt, y + vy * dt
        vx, vy = vx + ax * dt, vy + ay * dt
        landed = flying & (y_new < 0)
        if landed.any():
            result[landed] = _interpolate_landing(x[landed], y[landed], x_new[landed], y_new[landed])
            flying &= ~landed
            if not flying.any():
                return result
        x, y = x_new, y_new
    raise RuntimeError(f"not landed after {MAX_STEPS} steps of {dt:g} s")


def range_without_drag(speed, angle):
    """Exact range in vacuum: speed^2 sin(2 angle) / g, the angle doubled in degrees first."""
    return float(speed * speed * math.sin((2 * angle) * DEGREE) / G)


def flight_time_without_drag(speed, angle):
    """Exact time of flight in vacuum: 2 speed sin(angle) / g."""
    return float(2 * speed * math.sin(angle * DEGREE) / G)
