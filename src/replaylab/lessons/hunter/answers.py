"""The build's answer of each hunter instance: the largest drift its scan finds over the claim's whole
domain, and whether the claim holds there.

The scan reads every experiment of the domain (every steps-per-period and periods value) off one
simulation per method (drift_table: the same bits as a run of its own), computed once per process:
about half a second for the four methods, then a table look-up per claim. It does not rely on the
drift growing with the step and the run's length (the careful program does; tested).
"""

from collections.abc import Iterable
from typing import Any

from replaylab.lessons import Instance
from replaylab.lessons.hunter import drift_table, lab, scans


def truth_of(claim: lab.Claim) -> dict[str, Any]:
    """The build's answer to a claim: its worst case over the whole domain, whether the claim holds there
    (a worst case equal to the limit breaks nothing: "within 4 %" holds at 4 %), and how many of the
    domain's experiments break it."""
    worst = scans.worst_case(claim)
    broken, size = drift_table.breaking(claim.fixed["method"], claim.ranges, claim.limit)
    return {"worst": worst, "limit": claim.limit, "holds": claim.holds_on(worst["value"]), "breaking": broken,
            "experiments": size}


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    return {instance.id: truth_of(lab.claim_of(instance)) for instance in instances}
