"""The four steppers of the course, as functions (t, x, v, dt, accel) -> (t, x, v).

`accel(t, x, v)` gives the acceleration. The operation order follows docs/physics.md section 2.2.
They work element-wise on floats or numpy arrays, so one formula serves a single run and a scan.
"""

from collections.abc import Callable
from typing import Any

# A float or a numpy array of floats, element-wise alike: Any, because a run mixes them (a float
# clock and dt with array positions, say) and each caller knows which it passes.
Value = Any
Acceleration = Callable[[Value, Value, Value], Value]  # accel(t, x, v)
Stepper = Callable[[Value, Value, Value, Value, Acceleration], tuple[Value, Value, Value]]  # (t, x, v, dt, accel)


def explicit_euler(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
    """The old velocity moves the particle, the old acceleration changes the velocity."""
    a = accel(t, x, v)
    return t + dt, x + v * dt, v + a * dt


def symplectic_euler(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
    """The velocity is updated first and the new velocity moves the particle."""
    v_new = v + accel(t, x, v) * dt
    return t + dt, x + v_new * dt, v_new


def velocity_verlet(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
    """Two force evaluations per step; the second at the Euler-predicted velocity."""
    a0 = accel(t, x, v)
    t_new = t + dt
    x_new = (x + v * dt) + (0.5 * a0) * (dt * dt)
    a1 = accel(t_new, x_new, v + a0 * dt)
    return t_new, x_new, v + (0.5 * (a0 + a1)) * dt


def runge_kutta_4(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
    """Classical fourth-order Runge-Kutta for x' = v, v' = a."""
    h = 0.5 * dt
    w = dt / 6
    k1x = v
    k1v = accel(t, x, v)
    k2x = v + h * k1v
    k2v = accel(t + h, x + h * k1x, k2x)
    k3x = v + h * k2v
    k3v = accel(t + h, x + h * k2x, k3x)
    k4x = v + dt * k3v
    k4v = accel(t + dt, x + dt * k3x, k4x)
    x_new = x + w * (((k1x + 2 * k2x) + 2 * k3x) + k4x)
    v_new = v + w * (((k1v + 2 * k2v) + 2 * k3v) + k4v)
    return t + dt, x_new, v_new


# The names exactly as the tools accept them, in the course's order.
STEPPERS: dict[str, Stepper] = {
    "explicit Euler": explicit_euler,
    "symplectic Euler": symplectic_euler,
    "velocity Verlet": velocity_verlet,
    "Runge-Kutta 4": runge_kutta_4,
}
