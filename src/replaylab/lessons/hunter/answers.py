"""The build's answer of each hunter instance: the largest drift its scan finds over the claim's domain."""

from replaylab.lessons.hunter import lab, scans


def truth_of(claim):
    """The build's answer to a claim: its worst case over the whole domain, and whether the claim holds
    there (a worst case equal to the limit breaks nothing: "within 4 %" holds at 4 %)."""
    worst = scans.worst_case(claim)
    return {"worst": worst, "limit": claim.limit, "holds": claim.holds_on(worst["value"])}


def answers(instances):
    return {instance.id: truth_of(lab.CLAIMS[instance.id.removeprefix("hunter-seed-")]) for instance in instances}
