"""The catalogue of pieces the review family draws its pairs from, and the checks run on them.

Every piece claims the same thing (symplectic Euler, order 1, bounded energy): the claim an agent
reads never differs, only the code does. A piece is a catalogue entry: the correct symplectic
Euler, one fault (`faulty.build_faulty`'s numbers: a wrong clock, hidden state, a wrong
constant-force response, a wrong order, unbounded energy), a mechanism that breaks two checks, or
two faults put together. `fails` is what the entry is made to fail: the DESIGN, never an answer
(answers.py runs the checks; a test holds every entry's design to them). `subtle` marks an entry
whose measured value lies close to a tolerance (`NEAR`): a fault just beyond it, or a near miss
just within it, which passes every check.

The checks are pure per (piece, check): `check` caches each by the piece itself (the entry, never
its number in a pair), so the build's answers, the tools and the judge run each once per process.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache, partial

from typing import Any

from replaylab.physics.integrators import Stepper, symplectic_euler
from replaylab.verification import checks
from replaylab.verification.faulty import build_faulty, build_mislabelled_symplectic

CORRECT = "symplectic-euler"
# How close to its tolerance a measured value must lie for an entry to be `subtle` (tested on every
# entry): the exact checks within a factor of 10 on either side; the fitted order's distance from
# the claimed 1 within 0.1 of its margin (0.4); the energy growth within 0.2 of its limit (1.5).
NEAR = {"exact_factor": 10.0, "order_distance": 0.1, "energy_growth": 0.2}
# No measured value of any entry lies closer to its tolerance than this (tested): no platform's
# round-off can flip a pass flag, so no instance sits within round-off of the edge.
MARGIN = {"exact_factor": 1.5, "order_distance": 0.03, "energy_growth": 0.05}


@dataclass(frozen=True)
class Piece:
    """One entry of the catalogue: a builder of fresh steppers and what the entry is made to fail."""

    key: str
    what: str  # the fault(s) in words: the pages of the seed and the tests, never an agent
    build: Callable[[], Stepper]
    fails: tuple[str, ...] = ()
    subtle: bool = False

    @property
    def candidate(self) -> checks.Candidate:
        """The piece as the contract's checks take it: it claims order 1 and bounded energy, as every piece does."""
        return checks.Candidate(self.what, self.build)


def _symplectic_euler() -> Stepper:
    return symplectic_euler


def _faulty(key: str, what: str, fails: list[str], subtle: bool = False, **faults: Any) -> Piece:
    return Piece(key, what, partial(build_faulty, **faults), tuple(fails), subtle)


CLOCK, PURITY, LIMITS, ORDER, ENERGY = checks.CHECK_NAMES

ENTRIES = (
    Piece(CORRECT, "symplectic Euler", _symplectic_euler),
    # one obvious fault: one check fails, far beyond its tolerance
    Piece("explicit-euler", "explicit Euler as symplectic", build_mislabelled_symplectic, (ENERGY,)),
    _faulty("clock-doubled", "the clock advances by 2 dt", [CLOCK], clock=1.0),
    _faulty("clock-halved", "the clock advances by dt / 2", [CLOCK], clock=-0.5),
    _faulty("clock-fast", "the clock advances by dt (1 + 1e-6)", [CLOCK], clock=1e-6),
    _faulty("clock-slow", "the clock advances by dt (1 - 2e-6)", [CLOCK], clock=-2e-6),
    _faulty("memory", "the force keeps 1e-6 of its change since the previous call (hidden state)", [PURITY], memory=1e-6),
    _faulty("memory-weak", "the force keeps 1e-8 of its change since the previous call (hidden state)", [PURITY], memory=1e-8),
    _faulty("force-stronger", "the force is 1e-6 too strong", [LIMITS], force_scale=1e-6),
    _faulty("force-weaker", "the force is 1e-4 too weak", [LIMITS], force_scale=-1e-4),
    _faulty("rest-offset", "the force is evaluated 0.05 m off", [ORDER], rest_offset_m=0.05),
    _faulty("rest-offset-mild", "the force is evaluated 0.015 m off", [ORDER], rest_offset_m=0.015),
    _faulty("verlet", "velocity Verlet as symplectic Euler (second order)", [ORDER], base="velocity Verlet"),
    _faulty("pumped", "a velocity term pumps energy in (lookahead -0.01)", [ENERGY], lookahead=-0.01),
    _faulty("pumped-strong", "a velocity term pumps energy in (lookahead -0.5)", [ENERGY], lookahead=-0.5),
    _faulty("damped", "a velocity term drains energy (lookahead 0.01)", [ENERGY], lookahead=0.01),
    # one mechanism that breaks two checks
    _faulty("runge-kutta-4", "Runge-Kutta 4 as symplectic Euler (fourth order, energy drains)", [ORDER, ENERGY],
            base="Runge-Kutta 4"),
    _faulty("friction", "a drag of 1e-3 per second", [LIMITS, ENERGY], friction_per_s=1e-3),
    _faulty("memory-strong", "the force keeps 0.003 of its change since the previous call", [PURITY, ENERGY], memory=0.003),
    # two faults put together
    _faulty("euler-clock", "explicit Euler, and the clock advances by 2 dt", [CLOCK, ENERGY], base="explicit Euler", clock=1.0),
    _faulty("verlet-memory", "velocity Verlet with a force that keeps 1e-6 of its change", [PURITY, ORDER],
            base="velocity Verlet", memory=1e-6),
    _faulty("stronger-offset", "the force is 1e-6 too strong and evaluated 0.05 m off", [LIMITS, ORDER],
            force_scale=1e-6, rest_offset_m=0.05),
    _faulty("fast-pumped", "the clock runs 1e-6 fast and a velocity term pumps energy in", [CLOCK, ENERGY],
            clock=1e-6, lookahead=-0.01),
    _faulty("memory-stronger", "the force keeps 1e-6 of its change and is 1e-6 too strong", [PURITY, LIMITS],
            memory=1e-6, force_scale=1e-6),
    _faulty("halved-offset", "the clock advances by dt / 2 and the force is evaluated 0.05 m off", [CLOCK, ORDER],
            clock=-0.5, rest_offset_m=0.05),
    # subtle: one check fails just beyond its tolerance
    _faulty("clock-subtle", "the clock advances by dt (1 + 1.6e-11)", [CLOCK], True, clock=1.6e-11),
    _faulty("memory-subtle", "the force keeps 1.5e-11 of its change since the previous call", [PURITY], True, memory=1.5e-11),
    _faulty("force-subtle", "the force is 1e-13 too strong", [LIMITS], True, force_scale=1e-13),
    _faulty("offset-subtle", "the force is evaluated 0.0075 m off", [ORDER], True, rest_offset_m=0.0075),
    _faulty("damped-subtle", "a velocity term drains energy (lookahead 0.0008)", [ENERGY], True, lookahead=0.0008),
    _faulty("pumped-subtle", "a velocity term pumps energy in (lookahead -0.0005)", [ENERGY], True, lookahead=-0.0005),
    # subtle: a near miss, just within a tolerance; it passes every check
    _faulty("clock-within", "the clock advances by dt (1 + 4e-12)", [], True, clock=4e-12),
    _faulty("memory-within", "the force keeps 2.5e-12 of its change since the previous call", [], True, memory=2.5e-12),
    _faulty("offset-within", "the force is evaluated 0.005 m off", [], True, rest_offset_m=0.005),
    _faulty("damped-within", "a velocity term drains energy (lookahead 0.0005)", [], True, lookahead=0.0005),
    _faulty("pumped-within", "a velocity term pumps energy in (lookahead -0.0003)", [], True, lookahead=-0.0003),
)
CATALOGUE = {piece.key: piece for piece in ENTRIES}


def check(name: str, piece: Piece, exact: float = checks.EXACT) -> checks.CheckResult:
    """One check's result on one piece: pure, so each (check, piece, exact) runs once per process,
    whether `exact` is given or not."""
    return _check(name, piece, exact)


@cache
def _check(name: str, piece: Piece, exact: float) -> checks.CheckResult:
    return checks.run_check(name, piece.candidate, exact)


@lru_cache(maxsize=4096)
def error(piece: Piece, steps_per_period: int) -> float:
    """The largest distance to the exact oscillator over two periods (the evidence reviewer's tool)."""
    return checks.oscillator_error(piece.candidate, steps_per_period)


def failures(piece: Piece) -> list[str]:
    """The checks (contract order) a piece fails when the build runs every check itself."""
    return [name for name in checks.CHECK_NAMES if not check(name, piece).passed]
