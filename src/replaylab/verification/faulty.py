"""A faulty piece of code: claims to be symplectic Euler but moves the particle with the OLD velocity.

Arithmetically it is explicit Euler. One lesson imports it, as the piece its reviewers must reject.
"""


def build_mislabelled_symplectic():
    """A fresh stepper of the faulty piece (fresh per check, as the contract asks)."""

    def step(t, x, v, dt, accel):
        a = accel(t, x, v)
        x_new = x + v * dt  # the bug: the old velocity, not the updated one
        return t + dt, x_new, v + a * dt

    return step
