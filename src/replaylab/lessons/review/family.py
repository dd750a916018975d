"""The review family: two pieces of code, each with the faults of a catalogue or none, reviewed by
three reviewers.

Only the seeds' own pair so far: symplectic Euler, and explicit Euler labelled as symplectic.
"""

from replaylab.lessons import Instance
from replaylab.lessons.review import lab

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {}


def instances():
    return [Instance("review-seed", "medium", {}, seed=True)]


def variants(instance):
    return dict(lab.VARIANTS)
