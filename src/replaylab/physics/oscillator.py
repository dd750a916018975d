"""The course's harmonic oscillator: m = 0.5 kg, k = 2 N/m, released from rest at x = 1 m.

Its force and energy use only power-of-two scalings, so they are exact; the period is the double
nearest pi. Functions work on Python floats and numpy arrays alike.
"""

import math

import numpy as np
import numpy.typing as npt

from replaylab.physics.integrators import Value

MASS = 0.5  # kg
STIFFNESS = 2.0  # N/m
OMEGA = math.sqrt(STIFFNESS / MASS)  # 2 rad/s
PERIOD = 2 * math.pi / OMEGA  # s, equal to math.pi
X0 = 1.0  # m
V0 = 0.0  # m/s


def acceleration(t: Value, x: Value, v: Value) -> Value:
    """Spring force divided by the mass; time and velocity do not enter."""
    return (0 + (-STIFFNESS) * x) / MASS


def energy(x: Value, v: Value) -> Value:
    """Kinetic plus potential energy, J."""
    return (MASS / 2) * (v * v) + (STIFFNESS / 2) * (x * x)


INITIAL_ENERGY = energy(X0, V0)


def exact_state(tau: Value) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Position and velocity of the exact solution at the times `tau` (numpy array)."""
    phase = OMEGA * tau
    x = X0 * np.cos(phase) + (V0 / OMEGA) * np.sin(phase)
    v = -X0 * OMEGA * np.sin(phase) + V0 * np.cos(phase)
    return x, v
