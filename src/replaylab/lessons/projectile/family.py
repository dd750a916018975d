"""The projectile family: which launch angle throws a ball with quadratic air drag the furthest, to
within a whole degree, for one ball, launch speed and launch height.

The seed's own question: the tennis ball at 25 m/s from the ground (`projectile-seed`, its texts
unchanged). The drawn instances, `projectile-001` ... `projectile-072`, come from
`random.Random(SEED)` (`.random()` only), each candidate drawn as:

- the ball: one of balls.BALLS (tennis, baseball, golf, table-tennis, cricket ball, softball: their
  regulation mass and diameter, a typical drag coefficient; the drag constant 0.5 rho Cd A computed),
  each with chance 1/6;
- the launch speed: a whole number of m/s from 15 to 45 (the tool accepts 1 to 50);
- the launch height: the ground (0 m) with chance 1/4, else 0.5 to 10 m in steps of 0.5 m.

A candidate is skipped when it equals the seed's question or an earlier one, when its level (below)
already holds 24 instances, or at the edge case below.

Difficulty: the drag number k v^2 / (m g) (balls.Setup.drag_number), the drag at launch over the
weight, i.e. (launch speed / terminal speed)^2. It says how far the flight is from the vacuum
parabola, hence how far drag pulls the best angle below the vacuum tool's best angle (the agent's
natural first guess, 45 degrees from the ground) and how lopsided the range curve is: `easy` below
0.5 (the best angle 0.8 to 3.3 degrees below the vacuum one), `medium` 0.5 to 2 (2.4 to 8.1 degrees
below), `hard` 2 and above (drag-dominated: 6.3 to 26 degrees below; a table-tennis ball thrown from
a height flies furthest below 20 degrees). The agent can compute the number from the task's own
parameters, so it reveals nothing of the answer.

The edge case: the build's answer is the best angle of its converged quarter-degree scan
(answers.py); a top of the range curve within an eighth of a degree of a whole degree would make
that best angle the whole degree, and both brackets around it right (the seed's rule). No drawn
instance is such: a candidate whose top (as dt goes to zero: exact.best_angles, Runge-Kutta, within
0.001 degree) lies within MARGIN = 0.15 degree of a whole degree is skipped (about 3 in 10), and
each drawn task text says so ("exactly one bracket is right"). Then the build's best angle is a
quarter or a half past a whole degree, within 0.13 degree of the top, and the careful program's
parabola through whole degrees at dt 0.001 s (0.004 to 0.016 degree below the top on this family)
brackets it on the right side. The draw takes about 0.15 s of CPU, once per process (`drawn` is
cached).
"""

from functools import cache
from random import Random
from typing import Any

from replaylab.lessons import Instance, Variant
from replaylab.lessons.projectile import exact, lab
from replaylab.lessons.projectile.balls import BALLS, Setup

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {
    "ball": "the ball the simulator throws (its regulation mass and diameter, a typical drag coefficient)",
    "ball_mass_kg": "the ball's mass, kg",
    "ball_diameter_m": "the ball's diameter, m",
    "drag_coefficient": "the ball's drag coefficient Cd, constant (quadratic drag 0.5 rho Cd A v^2, air density 1.2 kg/m^3)",
    "launch_speed_m_s": "the launch speed the question asks about, m/s",
    "launch_height_m": "the height above level ground the ball is launched from, m (0: from the ground)",
}
PER_LEVEL = 24  # drawn instances of each difficulty
SPEEDS = (15, 45)  # m/s, whole numbers, both included
HEIGHTS = (0.5, 10.0, 0.5)  # m: the smallest non-zero height, the largest, the step
GROUND_CHANCE = 0.25  # the chance of a launch from the ground
LEVELS = ((0.5, "easy"), (2.0, "medium"), (float("inf"), "hard"))  # the drag number below which each level lies
MARGIN = 0.15  # degrees: a candidate whose best angle lies closer than this to a whole degree is skipped
BATCH = 48  # candidates whose best angles are found together


def difficulty(setup: Setup) -> str:
    """The level of a setup, from its drag number k v^2 / (m g)."""
    return next(level for limit, level in LEVELS if setup.drag_number < limit)


def parameters(setup: Setup) -> dict[str, Any]:
    ball = setup.ball
    return {"ball": ball.name, "ball_mass_kg": ball.mass_kg, "ball_diameter_m": ball.diameter_m,
            "drag_coefficient": ball.drag_coefficient, "launch_speed_m_s": setup.speed, "launch_height_m": setup.height}


def draw(rng: Random) -> Setup:
    """One candidate setup, from three `.random()` draws and a fourth for a height above the ground."""
    ball = BALLS[int(rng.random() * len(BALLS))]
    low, high = SPEEDS
    speed = low + int(rng.random() * (high - low + 1))
    height = 0.0
    if rng.random() >= GROUND_CHANCE:
        smallest, largest, step = HEIGHTS
        height = smallest + step * int(rng.random() * round((largest - smallest) / step + 1))
    return Setup(ball, speed, height)


def near_a_whole_degree(top: float) -> bool:
    """Whether a best angle (degrees) lies within MARGIN of a whole degree."""
    return abs(top - round(top)) < MARGIN


@cache
def drawn() -> tuple[tuple[Setup, str], ...]:
    """The drawn setups with their levels, in draw order (cached: every process that opens a session
    or replays a run asks for them). Candidates are drawn BATCH at a time and their best angles found
    together (exact.best_angles, a few hundredths of a second), then taken in draw order."""
    rng = Random(SEED)
    found: list[tuple[Setup, str]] = []
    counts = {level: 0 for _, level in LEVELS}
    while min(counts.values()) < PER_LEVEL:
        batch = [draw(rng) for _ in range(BATCH)]
        for setup, top in zip(batch, exact.best_angles(batch)):
            level = difficulty(setup)
            if (setup == lab.SEED_SETUP or setup in (s for s, _ in found) or counts[level] >= PER_LEVEL
                    or near_a_whole_degree(top)):
                continue
            counts[level] += 1
            found.append((setup, level))
    return tuple(found)


def seeds() -> list[Instance]:
    """The seeds' own question, without a draw."""
    return [Instance(lab.SEED_ID, difficulty(lab.SEED_SETUP), parameters(lab.SEED_SETUP), seed=True)]


def instances() -> list[Instance]:
    return seeds() + [Instance(f"projectile-{number:03d}", level, parameters(setup))
                      for number, (setup, level) in enumerate(drawn(), start=1)]


def variants(instance: Instance) -> dict[str, Variant]:
    return lab.variants(lab.setup_of(instance), MARGIN)
