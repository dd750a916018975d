"""The pendulum family: from which amplitude on does the true period exceed the small-angle period
by more than a threshold.

Only the seeds' own question so far: 1 %, to within a degree.
"""

from replaylab.lessons import Instance
from replaylab.lessons.pendulum import lab, physics

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {"threshold_percent": "the excess T/T0 - 1 the question asks about, per cent"}


def instances():
    return [Instance("pendulum-seed", "medium", {"threshold_percent": 100 * physics.EXCESS}, seed=True)]


def variants(instance):
    return dict(lab.VARIANTS)
