"""The hunter family: claims about an integrator's energy drift over a domain of runs.

Only the seeds' own claims so far: one about symplectic Euler, one about velocity Verlet.
"""

from replaylab.lessons import Instance
from replaylab.lessons.hunter import lab

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
PARAMETERS = {"method": "the integrator the claim is about", "limit": "the claim's limit on |E/E0 - 1|"}


def instances():
    return [Instance(f"hunter-seed-{name}", "medium", {"method": claim.fixed["method"], "limit": claim.limit}, seed=True)
            for name, claim in lab.CLAIMS.items()]


def variants(instance):
    name = instance.id.removeprefix("hunter-seed-")
    return {name: lab.VARIANTS[name]}
