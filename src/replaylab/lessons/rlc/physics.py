"""The lesson's circuit: a series RLC circuit whose capacitor, charged to V0, discharges through the
coil and the resistor from t = 0, simulated with the trapezoidal rule, and its exact solution.

Units: time in ms, voltage in V, current in mA, L in mH, C in µF, R in Ω. The state y = (v, i)
(the capacitor's voltage and the current out of it) obeys y' = A y with

    v' = −i/C,   i' = (1000 v − R i)/L,   v(0) = V0, i(0) = 0,

so that v'' + (R/L) v' + ω0² v = 0 with ω0² = 1000/(L C) (rad/ms)², and the damping ratio is
ζ = (R/2)·√(C/(1000 L)) (the same as (R/2)√(C/L) in SI units).

The simulation (the tool). The trapezoidal rule, as circuit simulators integrate: each step of dt is
the linear map M = (I − dt A/2)^{-1} (I + dt A/2). To reach a time t it takes n = ⌊t/dt⌋ steps of dt,
applied as the matrix power M^n by repeated squaring (the same map; round-off aside), then one step
of the remainder t − n·dt when there is one. Its eigenvalues are μ = (1 + r dt/2)/(1 − r dt/2) of the
circuit's rates r: complex, and of modulus below 1, exactly when the circuit is underdamped, at
every dt. An overdamped circuit's rates are real, r2 < r1 < 0 with r1·r2 = ω0²: once dt > 2/|r2| its
fast mode's μ2 is negative, and the voltage rings from one step to the next ("trapezoidal ringing");
once dt > 2/ω0 = T0/π, |μ2| > μ1 (exactly when r1·r2·dt²/4 > 1), the ringing outlasts the slow decay
and the voltage goes below zero sooner or later: a coarse step makes an overdamped circuit look
underdamped.

Exact (the build's answer). ζ < 1: underdamped, v(t) = V0 e^{−ζω0 t}(cos ω_d t + (ζω0/ω_d) sin ω_d t)
with ω_d = ω0√(1 − ζ²), which first goes below zero after t = (π − atan(ω_d/(ζω0)))/ω_d and is
lowest at t = π/ω_d, at −V0·exp(−πζ/√(1 − ζ²)). ζ > 1: overdamped, v(t) = V0 (r2 e^{r1 t} − r1
e^{r2 t})/(r2 − r1) with r = −ω0(ζ ∓ √(ζ² − 1)), positive at every t.
"""

import math

Matrix = tuple[float, float, float, float]  # (m11, m12, m21, m22)
MAX_TIME = 200.0  # ms: the tool's longest time
SMALLEST_DT = 1e-6  # ms


def _check(resistance: float, inductance: float, capacitance: float) -> None:
    if not (resistance > 0 and inductance > 0 and capacitance > 0):
        raise ValueError(f"R, L and C must be positive, got {resistance!r}, {inductance!r}, {capacitance!r}")


def natural_frequency(inductance: float, capacitance: float) -> float:
    """ω0 = √(1000/(L C)), rad/ms (L in mH, C in µF)."""
    return math.sqrt(1000 / (inductance * capacitance))


def natural_period(inductance: float, capacitance: float) -> float:
    """2π/ω0 = 2π√(LC), ms."""
    return 2 * math.pi / natural_frequency(inductance, capacitance)


def damping_ratio(resistance: float, inductance: float, capacitance: float) -> float:
    """ζ = (R/2)·√(C/(1000 L)): below 1 underdamped, above 1 overdamped."""
    _check(resistance, inductance, capacitance)
    return resistance / 2 * math.sqrt(capacitance / (1000 * inductance))


def _product(a: Matrix, b: Matrix) -> Matrix:
    return (a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3])


def _power(m: Matrix, n: int) -> Matrix:
    found: Matrix = (1.0, 0.0, 0.0, 1.0)
    while n:
        if n & 1:
            found = _product(found, m)
        m = _product(m, m)
        n >>= 1
    return found


def step_map(dt: float, resistance: float, inductance: float, capacitance: float) -> Matrix:
    """M = (I − dt A/2)^{-1}(I + dt A/2) of one trapezoidal step of dt (ms)."""
    a12, a21, a22 = -1 / capacitance, 1000 / inductance, -resistance / inductance
    h = dt / 2
    # I − hA = [[1, −h a12], [−h a21, 1 − h a22]]; its inverse over its determinant
    det = (1 - h * a22) - h * a12 * h * a21
    inverse = ((1 - h * a22) / det, h * a12 / det, h * a21 / det, 1 / det)
    return _product(inverse, (1.0, h * a12, h * a21, 1 + h * a22))


def voltage(time: float, dt: float, resistance: float, inductance: float, capacitance: float, initial: float) -> float:
    """The capacitor's voltage (V) at `time` (ms) of the trapezoidal rule with steps of `dt` (ms)."""
    _check(resistance, inductance, capacitance)
    if not (dt > 0 and time >= 0):
        raise ValueError(f"dt must be positive and the time not negative, got {dt!r} and {time!r}")
    steps = math.floor(time / dt)
    rest = time - steps * dt
    m = _power(step_map(dt, resistance, inductance, capacitance), steps)
    if rest > 0:
        m = _product(step_map(rest, resistance, inductance, capacitance), m)
    return m[0] * initial  # the state starts at (initial, 0)


def exact_voltage(time: float, resistance: float, inductance: float, capacitance: float, initial: float) -> float:
    """v(t) of the exact solution (V)."""
    zeta = damping_ratio(resistance, inductance, capacitance)
    omega = natural_frequency(inductance, capacitance)
    if zeta < 1:
        damped = omega * math.sqrt(1 - zeta * zeta)
        decay = zeta * omega
        return initial * math.exp(-decay * time) * (math.cos(damped * time) + decay / damped * math.sin(damped * time))
    if zeta == 1:
        return initial * math.exp(-omega * time) * (1 + omega * time)
    slow, fast = rates(zeta, omega)
    return initial * (fast * math.exp(slow * time) - slow * math.exp(fast * time)) / (fast - slow)


def rates(zeta: float, omega: float) -> tuple[float, float]:
    """(r1, r2), the slow and the fast decay rate of an overdamped circuit (1/ms, negative),
    r1 = −ω0(ζ − √(ζ² − 1)) written as −ω0/(ζ + √(ζ² − 1)) so that no digits cancel."""
    root = math.sqrt(zeta * zeta - 1)
    return -omega / (zeta + root), -omega * (zeta + root)


def undershoot(zeta: float) -> float:
    """How far below zero an underdamped circuit's voltage goes, relative to V0: exp(−πζ/√(1 − ζ²))."""
    return math.exp(-math.pi * zeta / math.sqrt(1 - zeta * zeta))


def ringing_dt(zeta: float, omega: float) -> float:
    """The step (ms) above which the trapezoidal rule makes an overdamped circuit ring: −2/r2."""
    return -2 / rates(zeta, omega)[1]


def below_zero_dt(omega: float) -> float:
    """The step (ms) above which the ringing outlasts the slow decay, so that an overdamped circuit's
    trapezoidal voltage goes below zero sooner or later: 2/ω0."""
    return 2 / omega
