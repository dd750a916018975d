"""The balls of the projectile family, and what a run's tools simulate (`Setup`).

Masses and diameters are the regulation values of each sport (the middle of the allowed range where
the rules give one); drag coefficients are typical published values for a ball that does not spin,
in the range of speeds of the family (15 to 45 m/s). The simulation keeps the coefficient constant
(quadratic drag), as the seed's tennis ball does. The drag constant 0.5 rho Cd A is computed from
them in the seed's order of operations, never rounded: the tennis ball's equals
`physics.projectile.DRAG` bit for bit.
"""

import math
from dataclasses import dataclass

from replaylab.physics import projectile


@dataclass(frozen=True)
class Ball:
    name: str  # as the task text names it ("a baseball")
    mass_kg: float
    diameter_m: float
    drag_coefficient: float

    @property
    def drag(self) -> float:
        """The drag constant 0.5 rho Cd A (kg/m), in the order of physics.projectile.DRAG."""
        area = math.pi * (self.diameter_m / 2) ** 2
        return 0.5 * projectile.AIR_DENSITY * self.drag_coefficient * area

    def words(self) -> str:
        """The ball in the words of the seed's intro, "tennis ball (58 g, 6.7 cm)", with its Cd."""
        return (f"{self.name} ({grams(self.mass_kg)} g, {centimetres(self.diameter_m)} cm, drag coefficient "
                f"{self.drag_coefficient:g})")


def grams(kg: float) -> str:
    return f"{round(kg * 1000, 2):g}"


def centimetres(m: float) -> str:
    return f"{round(m * 100, 3):g}"


TENNIS = Ball("tennis ball", projectile.MASS, projectile.DIAMETER, projectile.DRAG_COEFFICIENT)  # the seed's ball
BALLS = (
    TENNIS,
    # Official Baseball Rules 3.01: 5 to 5 1/4 oz (142-149 g), 9 to 9 1/4 in round (7.3-7.5 cm across);
    # Cd about 0.35 at these speeds (R. K. Adair, The Physics of Baseball, 3rd ed., 2002).
    Ball("baseball", 0.145, 0.074, 0.35),
    # Rules of Golf, equipment standards: at most 45.93 g, at least 42.67 mm across; a dimpled ball's
    # Cd about 0.25 (P. W. Bearman and J. K. Harvey, Aeronautical Quarterly 27, 1976).
    Ball("golf ball", 0.04593, 0.04267, 0.25),
    # ITTF Laws 2.3: 2.7 g, 40 mm; a smooth sphere below the drag crisis, Cd 0.47 (the standard value,
    # S. F. Hoerner, Fluid-Dynamic Drag, 1965).
    Ball("table-tennis ball", 0.0027, 0.040, 0.47),
    # Laws of Cricket, Law 4: 155.9 to 163 g, 22.4 to 22.9 cm round (7.1-7.3 cm across); Cd about 0.4
    # (R. D. Mehta, Aerodynamics of sports balls, Annual Review of Fluid Mechanics 17, 1985).
    Ball("cricket ball", 0.16, 0.072, 0.4),
    # WBSC / USA Softball 12-inch ball: 6.25 to 7 oz (177-198 g), 11.88 to 12.13 in round (9.6-9.8 cm
    # across); Cd about 0.4, as for a baseball's seams at lower speed (Mehta 1985).
    Ball("softball", 0.19, 0.097, 0.4),
)
BY_NAME = {ball.name: ball for ball in BALLS}


@dataclass(frozen=True)
class Setup:
    """What one instance's tools simulate: its ball, launched at `speed` from `height` above the ground."""

    ball: Ball
    speed: int
    height: float

    @property
    def drag(self) -> float:
        return self.ball.drag

    @property
    def mass(self) -> float:
        return self.ball.mass_kg

    @property
    def drag_number(self) -> float:
        """k v^2 / (m g): the drag at launch over the weight (the (speed / terminal speed)^2), what the
        family's difficulty is read from."""
        return self.drag * self.speed * self.speed / (self.mass * projectile.G)
