"""Faulty pieces of code: steppers that claim to be symplectic Euler and are not, or not quite.

`build_mislabelled_symplectic` moves the particle with the OLD velocity: arithmetically it is
explicit Euler. `build_faulty` composes the faults of a lesson's catalogue of faulty pieces on one
of the course's steppers, each fault a number (0 leaves it out), so that a piece may carry one fault, two,
or one just beyond (or just within) a check's tolerance. One lesson imports this module, as the
pieces its reviewers must judge.
"""

from typing import Any

from replaylab.physics.integrators import (
    Acceleration, Stepper, Value, explicit_euler, runge_kutta_4, symplectic_euler, velocity_verlet,
)

BASES: dict[str, Stepper] = {
    "symplectic Euler": symplectic_euler,
    "explicit Euler": explicit_euler,
    "velocity Verlet": velocity_verlet,
    "Runge-Kutta 4": runge_kutta_4,
}


def build_mislabelled_symplectic() -> Stepper:
    """A fresh stepper of the faulty piece (fresh per check, as the contract asks)."""

    def step(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
        a = accel(t, x, v)
        x_new = x + v * dt  # the bug: the old velocity, not the updated one
        return t + dt, x_new, v + a * dt

    return step


def build_faulty(base: str = "symplectic Euler", clock: float = 0.0, force_scale: float = 0.0, rest_offset_m: float = 0.0,
                 lookahead: float = 0.0, memory: float = 0.0, friction_per_s: float = 0.0) -> Stepper:
    """A fresh stepper: `base` (one of BASES) with the faults whose numbers are not 0, each made to
    break one check of the contract:

    - clock: the time advances by dt (1 + clock) (clock);
    - force_scale: the force is 1 + force_scale times too strong, a wrong constant-force response (limits);
    - rest_offset_m: the force is evaluated at x + rest_offset_m, so the error stops shrinking with
      dt (convergence-order);
    - lookahead: the force gets lookahead (a(x + v dt) - a(x)), a velocity term that drains (> 0)
      or pumps (< 0) the oscillator's energy and vanishes under a constant force (bounded-energy);
    - memory: the force gets memory (a - a_before), a_before kept from the previous evaluation:
      hidden state (purity; a large one drains energy too);
    - friction_per_s: the force gets -friction_per_s v, a drag that spoils uniform motion and
      drains energy (limits, bounded-energy).

    Every fault but the clock's acts through the acceleration the base stepper sees, so that it can
    be put on any base; a fault left at 0 takes no part in the arithmetic at all.
    """
    method = BASES[base]
    before: list[Any] = []  # the memory fault's hidden state: the acceleration of the previous evaluation

    def step(t: Value, x: Value, v: Value, dt: Value, accel: Acceleration) -> tuple[Value, Value, Value]:
        def force(t_: Value, x_: Value, v_: Value) -> Value:
            a = accel(t_, x_ + rest_offset_m, v_) if rest_offset_m else accel(t_, x_, v_)
            if lookahead:
                a = a + lookahead * (accel(t_, x_ + v_ * dt, v_) - accel(t_, x_, v_))
            if memory:
                previous = before[-1] if before else a
                before[:] = [a]
                a = a + memory * (a - previous)
            if friction_per_s:
                a = a - friction_per_s * v_
            if force_scale:
                a = a * (1 + force_scale)
            return a

        t_new, x_new, v_new = method(t, x, v, dt, force)
        return (t + dt * (1 + clock) if clock else t_new), x_new, v_new

    return step
