"""The projectile family: the question of the best launch angle, asked of one ball at one speed.

Only the seeds' own question so far: a tennis ball at 25 m/s from the ground.
"""

from replaylab.lessons import Instance
from replaylab.lessons.projectile import lab

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {"launch_speed_m_s": "the launch speed the question asks about, m/s"}


def instances():
    return [Instance("projectile-seed", "medium", {"launch_speed_m_s": lab.SPEED}, seed=True)]


def variants(instance):
    return dict(lab.VARIANTS)
