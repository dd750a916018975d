"""Independent scans of the projectile simulation; they depend on the code only, never on a run."""

from typing import Any

import numpy as np

from replaylab.lessons.projectile import lab
from replaylab.physics import projectile

EVIDENCE_ANGLES = np.arange(30, 51, 1)  # degrees
EVIDENCE_DT = 0.002  # s
# The build's own answer: the best angle of a quarter-degree scan, the time step halved from the
# tool's smallest until the best angle no longer changes (what a right answer must bracket).
BEST_ANGLES = np.arange(30, 50 + 1e-9, 0.25)  # degrees, all exact in binary
BEST_DTS = (0.001, 0.0005, 0.00025, 0.000125)  # s


def evidence_scan() -> dict[str, Any]:
    """Range at 25 m/s for angles 30..50 (step 1) at dt 0.002, as rows."""
    ranges = projectile.ranges_with_drag(lab.SPEED, EVIDENCE_ANGLES, EVIDENCE_DT)
    return {
        "speed": lab.SPEED,
        "dt": EVIDENCE_DT,
        "rows": [{"angle": int(a), "range_m": float(r)} for a, r in zip(EVIDENCE_ANGLES, ranges)],
    }


def best_angle_scan() -> dict[str, Any]:
    """The best angle at 25 m/s on a quarter-degree grid, at each dt of BEST_DTS until two in a row
    agree (converged); its value is the angle a right answer's bracket must hold. ValueError if no
    two agree (the code changed so that the scan no longer converges)."""
    rows: list[dict[str, Any]] = []
    for dt in BEST_DTS:
        ranges = projectile.ranges_with_drag(lab.SPEED, BEST_ANGLES, dt)
        best = int(np.argmax(ranges))
        rows.append({"dt": dt, "angle": float(BEST_ANGLES[best]), "range_m": float(ranges[best])})
        if len(rows) > 1 and rows[-1]["angle"] == rows[-2]["angle"]:
            angle = rows[-1]["angle"]
            return {"speed": lab.SPEED, "grid_step": 0.25, "low": float(BEST_ANGLES[0]), "high": float(BEST_ANGLES[-1]),
                    "rows": rows, "angle": {"value": angle, "shown": f"{angle:.2f}"}}
    raise ValueError(f"the best-angle scan does not converge down to dt {BEST_DTS[-1]:g} s")


def scans() -> dict[str, Any]:
    return {"evidence": evidence_scan(), "best_angle": best_angle_scan()}
