"""Independent scans of the projectile simulation; they depend on the code only, never on a run."""

import numpy as np

from replaylab.lessons.projectile import lab
from replaylab.physics import projectile

EVIDENCE_ANGLES = np.arange(30, 51, 1)  # degrees
EVIDENCE_DT = 0.002  # s


def evidence_scan():
    """Range at 25 m/s for angles 30..50 (step 1) at dt 0.002, as rows."""
    ranges = projectile.ranges_with_drag(lab.SPEED, EVIDENCE_ANGLES, EVIDENCE_DT)
    return {
        "speed": lab.SPEED,
        "dt": EVIDENCE_DT,
        "rows": [{"angle": int(a), "range_m": float(r)} for a, r in zip(EVIDENCE_ANGLES, ranges)],
    }


def scans():
    return {"evidence": evidence_scan()}
