"""Independent drift scans of the oscillator; they depend on the code only, never on a hunt.

One simulation per method covers every experiment the tool allows (drift_table): the seeds' domain
(16..200 steps per period) read off at 20 and 50 periods gives the drift figure and the boundary of
the symplectic Euler claim, and the whole domain of any claim gives its worst case.
"""

from functools import cache
from typing import Any

from replaylab.lessons.hunter import drift_table, lab

DOMAIN_STEPS = tuple(range(16, 201))
DRIFT_STEPS = (16, 20, 24, 32, 48, 64, 100, 150, 200)
DRIFT_PERIODS = 50
DRIFT_METHODS = ("symplectic Euler", "velocity Verlet")
BOUNDARY_METHOD = "symplectic Euler"
BOUNDARY_PERIODS = 20
BOUNDARY_LIMIT = 0.05
READ_AT = (BOUNDARY_PERIODS, DRIFT_PERIODS)


@cache
def domain_scan(method: str) -> dict[int, dict[int, float]]:
    """{periods: {steps per period: largest drift}} over the domain, at 20 and 50 periods."""
    return {p: {n: drift_table.drift(method, n, p) for n in DOMAIN_STEPS} for p in READ_AT}


def drift_scan() -> dict[str, Any]:
    """Largest drift over 50 periods against steps per period, for the two claims' methods."""
    return {
        "periods": DRIFT_PERIODS,
        "rows": [
            {"method": method, "steps_per_period": n, "max_energy_drift": domain_scan(method)[DRIFT_PERIODS][n]}
            for method in DRIFT_METHODS
            for n in DRIFT_STEPS
        ],
    }


def false_claim_boundary() -> dict[str, Any]:
    """The smallest steps per period (16..200) at which symplectic Euler stays within 5 % over 20 periods."""
    drifts = domain_scan(BOUNDARY_METHOD)[BOUNDARY_PERIODS]
    holding = [n for n, d in drifts.items() if d <= BOUNDARY_LIMIT]
    first = holding[0] if holding else None
    result: dict[str, Any] = {"method": BOUNDARY_METHOD, "periods": BOUNDARY_PERIODS, "limit": BOUNDARY_LIMIT, "smallest": first}
    if first is not None:
        result["drift_at_smallest"] = {"value": drifts[first], "shown": f"{drifts[first]:.4f}"}
        if first - 1 in drifts:
            result["drift_below"] = {
                "steps_per_period": first - 1,
                "value": drifts[first - 1],
                "shown": f"{drifts[first - 1]:.4f}",
            }
    return result


def worst_case(claim: lab.Claim) -> dict[str, Any]:
    """The largest value over a claim's domain, from every one of its experiments (drift_table: one
    simulation per method; ties go to the longest run, then to the fewest steps per period)."""
    return drift_table.worst(claim.fixed["method"], claim.ranges)


def scans() -> dict[str, Any]:
    return {
        "drift": drift_scan(),
        "false_claim_boundary": false_claim_boundary(),
        "worst_case": {name: worst_case(claim) for name, claim in lab.CLAIMS.items()},
    }
