"""The lesson's driven oscillator: x'' + 2γ x' + ω0² x = F cos(ωt), simulated with classical
Runge-Kutta, and its steady amplitude in closed form.

The simulation (the tool). From rest (x = v = 0) at t = 0, classical fourth-order Runge-Kutta with
N = STEPS steps of h = T/N per drive period T = 2π/ω; the force at step n of a period and at the
half step after it is F cos(2π n/N) and F cos(2π (n + 1/2)/N), the same every period. The N steps of
one period are therefore the same affine map y -> Φ y + c of the state y = (x, v) every period:
the simulation builds Φ and c by running those N steps (on (1, 0) and (0, 1) without the force, and
on (0, 0) with it), applies the map `periods` times, and then runs the N steps of one more period
step by step. It returns the amplitude of that last period's displacement as its first Fourier
harmonic: A = √(a² + b²) with a = (2/N) Σ x_n cos(2π n/N) and b = (2/N) Σ x_n sin(2π n/N), n = 0 to
N − 1. What the oscillator does at the start (the free oscillation e^{-γt}, which beats with the
drive) is still in that period when `periods` is too small for γ: the amplitude then differs from
the steady one.

Exact (the build's answer). The steady amplitude is A(ω) = F / √((ω0² − ω²)² + (2γω)²); it is
largest at ω_r = √(ω0² − 2γ²) (for 2γ² < ω0²), where it is F / (2γ √(ω0² − γ²)).

The limit of the simulation (the scans and the family's draw). Runge-Kutta's step is linear in the
state and the force: y_{n+1} = S y_n + G e^{iωnh} with the force written as the real part of
F e^{iωt}, so the steady state it settles to is y_n = Re(Y e^{iωnh}) with Y = (e^{iωh} I − S)^{-1}
G, and its amplitude is |Y_x| exactly (the harmonic of N samples of a sinusoid of one period). Its
largest value lies within a few millionths of ω_r at N = 64, and converges to it at order 4.
"""

import cmath
import math
from collections.abc import Callable
from typing import TypeVar

STEPS = 64  # Runge-Kutta steps per drive period
MAX_PERIODS = 1000  # drive periods the tool may simulate before the measured one
GOLDEN = (math.sqrt(5) - 1) / 2
Number = TypeVar("Number", float, complex)  # the simulation steps floats, its steady state complex numbers


def _step(x: Number, v: Number, f0: Number, fm: Number, f1: Number, h: float, stiffness: float,
          friction: float) -> tuple[Number, Number]:
    """One classical Runge-Kutta step of x'' = f − friction·x' − stiffness·x, with the force f0 at the
    start, fm at the half step and f1 at the end (real or complex: the same arithmetic)."""
    k1x, k1v = v, f0 - friction * v - stiffness * x
    x2, v2 = x + h / 2 * k1x, v + h / 2 * k1v
    k2x, k2v = v2, fm - friction * v2 - stiffness * x2
    x3, v3 = x + h / 2 * k2x, v + h / 2 * k2v
    k3x, k3v = v3, fm - friction * v3 - stiffness * x3
    x4, v4 = x + h * k3x, v + h * k3v
    k4x, k4v = v4, f1 - friction * v4 - stiffness * x4
    return x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x), v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)


def _check(frequency: float, natural: float, damping: float) -> None:
    if not (frequency > 0 and natural > 0 and damping > 0):
        raise ValueError(f"the frequencies and the damping must be positive, got {frequency!r}, {natural!r}, {damping!r}")


def steady_amplitude(frequency: float, periods: int, natural: float, damping: float, force: float,
                     steps: int = STEPS) -> float:
    """The simulated amplitude (m) of the period after `periods` drive periods from rest, at the
    drive's angular frequency `frequency` (rad/s), for ω0 = `natural` (rad/s), γ = `damping` (1/s)
    and F = `force` (m/s²)."""
    _check(frequency, natural, damping)
    h = 2 * math.pi / frequency / steps
    stiffness, friction = natural * natural, 2 * damping
    start = [force * math.cos(2 * math.pi * n / steps) for n in range(steps)]
    middle = [force * math.cos(2 * math.pi * (n + 0.5) / steps) for n in range(steps)]
    end = start[1:] + start[:1]

    def period(x: float, v: float, forced: bool, samples: list[float] | None = None) -> tuple[float, float]:
        for n in range(steps):
            if samples is not None:
                samples.append(x)
            if forced:
                x, v = _step(x, v, start[n], middle[n], end[n], h, stiffness, friction)
            else:
                x, v = _step(x, v, 0.0, 0.0, 0.0, h, stiffness, friction)
        return x, v

    (p11, p21), (p12, p22), (cx, cv) = period(1.0, 0.0, False), period(0.0, 1.0, False), period(0.0, 0.0, True)
    x, v = 0.0, 0.0
    for _ in range(periods):
        x, v = p11 * x + p12 * v + cx, p21 * x + p22 * v + cv
    samples: list[float] = []
    period(x, v, True, samples)
    a = 2 / steps * sum(s * math.cos(2 * math.pi * n / steps) for n, s in enumerate(samples))
    b = 2 / steps * sum(s * math.sin(2 * math.pi * n / steps) for n, s in enumerate(samples))
    return math.hypot(a, b)


def exact_amplitude(frequency: float, natural: float, damping: float, force: float) -> float:
    """F / √((ω0² − ω²)² + (2γω)²): the steady amplitude of the oscillator (m)."""
    return force / math.sqrt((natural**2 - frequency**2) ** 2 + (2 * damping * frequency) ** 2)


def resonance(natural: float, damping: float) -> float:
    """ω_r = √(ω0² − 2γ²) (rad/s): the drive frequency of the largest steady amplitude."""
    if not 2 * damping**2 < natural**2:
        raise ValueError(f"no resonance peak: 2γ² = {2 * damping**2:g} is not below ω0² = {natural**2:g}")
    return math.sqrt(natural**2 - 2 * damping**2)


def discrete_amplitude(frequency: float, natural: float, damping: float, force: float, steps: int = STEPS) -> float:
    """The amplitude the simulation settles to (after infinitely many periods): |Y_x| of the steady
    state of Runge-Kutta's linear map."""
    _check(frequency, natural, damping)
    h = 2 * math.pi / frequency / steps
    stiffness, friction = natural * natural, 2 * damping
    s11, s21 = _step(1.0, 0.0, 0.0, 0.0, 0.0, h, stiffness, friction)
    s12, s22 = _step(0.0, 1.0, 0.0, 0.0, 0.0, h, stiffness, friction)
    turn = cmath.exp(1j * frequency * h)
    gx, gv = _step(0j, 0j, complex(force), force * cmath.exp(0.5j * frequency * h), force * turn, h, stiffness, friction)
    a11, a12, a21, a22 = turn - s11, -s12, -s21, turn - s22
    return abs((gx * a22 - a12 * gv) / (a11 * a22 - a12 * a21))


def largest(amplitude: Callable[[float], float], low: float, high: float, within: float = 1e-12) -> float:
    """The frequency of the largest value of a single-peaked function between low and high, by
    golden-section search until the bracket is `within` (relative) wide."""
    c, d = high - GOLDEN * (high - low), low + GOLDEN * (high - low)
    fc, fd = amplitude(c), amplitude(d)
    while high - low > within * high:
        if fc > fd:
            high, d, fd = d, c, fc
            c = high - GOLDEN * (high - low)
            fc = amplitude(c)
        else:
            low, c, fc = c, d, fd
            d = low + GOLDEN * (high - low)
            fd = amplitude(d)
        if c >= d:  # the two inner points met: the bracket is as narrow as doubles allow
            break
    return (low + high) / 2


def discrete_resonance(natural: float, damping: float, steps: int = STEPS) -> float:
    """The drive frequency of the largest amplitude the simulation settles to (rad/s), near ω_r."""
    peak = resonance(natural, damping)
    width = max(4 * damping, 1e-3 * peak)
    return largest(lambda w: discrete_amplitude(w, natural, damping, 1.0, steps), max(peak - width, peak / 2), peak + width)


def periods_needed(natural: float, damping: float, tolerance: float) -> float:
    """The drive periods after which the free oscillation's envelope e^{-γt} has fallen to Δ, the
    relative drop of the steady amplitude from its peak to the nearer of ω_r ± tolerance: below Δ,
    the start no longer moves where the amplitudes put the peak by more than the tolerance."""
    peak = resonance(natural, damping)
    top = exact_amplitude(peak, natural, damping, 1.0)
    drop = 1 - max(exact_amplitude(peak + s * tolerance, natural, damping, 1.0) for s in (-1, 1)) / top
    return peak * math.log(1 / drop) / (2 * math.pi * damping)
