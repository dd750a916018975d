"""Independent drift scans of the oscillator; they depend on the code only, never on a hunt."""

from replaylab.lessons.hunter import lab
from replaylab.physics.drift import max_energy_drifts

DRIFT_STEPS = (16, 20, 24, 32, 48, 64, 100, 150, 200)
DRIFT_PERIODS = 50
DRIFT_METHODS = ("symplectic Euler", "velocity Verlet")
BOUNDARY_METHOD = "symplectic Euler"
BOUNDARY_STEPS = range(16, 201)
BOUNDARY_PERIODS = 20
BOUNDARY_LIMIT = 0.05


def drift_scan():
    """Largest drift over 50 periods against steps per period, for the two claims' methods."""
    return {
        "periods": DRIFT_PERIODS,
        "rows": [
            {"method": method, "steps_per_period": n, "max_energy_drift": float(d)}
            for method in DRIFT_METHODS
            for n, d in zip(DRIFT_STEPS, max_energy_drifts(method, DRIFT_STEPS, DRIFT_PERIODS))
        ],
    }


def false_claim_boundary():
    """The smallest steps per period (16..200) at which symplectic Euler stays within 5 % over 20 periods."""
    drifts = max_energy_drifts(BOUNDARY_METHOD, list(BOUNDARY_STEPS), BOUNDARY_PERIODS)
    holding = [n for n, d in zip(BOUNDARY_STEPS, drifts) if d <= BOUNDARY_LIMIT]
    first = holding[0] if holding else None
    before = dict(zip(BOUNDARY_STEPS, drifts))
    result = {"method": BOUNDARY_METHOD, "periods": BOUNDARY_PERIODS, "limit": BOUNDARY_LIMIT, "smallest": first}
    if first is not None:
        result["drift_at_smallest"] = {"value": float(before[first]), "shown": f"{before[first]:.4f}"}
        if first - 1 in before:
            result["drift_below"] = {
                "steps_per_period": first - 1,
                "value": float(before[first - 1]),
                "shown": f"{before[first - 1]:.4f}",
            }
    return result


def worst_case(claim):
    """The largest value over a claim's domain (the drift never shrinks with more periods, so the
    longest runs over every steps-per-period value of the domain cover it)."""
    (low_n, high_n), (_, high_p) = claim.ranges["steps_per_period"], claim.ranges["periods"]
    counts = list(range(low_n, high_n + 1))
    drifts = max_energy_drifts(claim.fixed["method"], counts, high_p)
    best = max(range(len(counts)), key=lambda i: (drifts[i], -i))
    return {"method": claim.fixed["method"], "steps_per_period": counts[best], "periods": high_p, "value": float(drifts[best])}


def scans():
    return {
        "drift": drift_scan(),
        "false_claim_boundary": false_claim_boundary(),
        "worst_case": {name: worst_case(claim) for name, claim in lab.CLAIMS.items()},
    }
