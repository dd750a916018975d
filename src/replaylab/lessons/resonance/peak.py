"""Where measured amplitudes put a peak: the rule of `supported` (the judge), which the scripted
programs apply to their own data too.

Of amplitudes measured at several frequencies (one number of periods), the largest must lie at
neither the lowest nor the highest frequency measured; the peak is then the top of the parabola
through it and the nearest frequency measured on each side.
"""

from typing import Any

from replaylab.lessons import counted


def parabola_top(x0: float, y0: float, x1: float, y1: float, x2: float, y2: float) -> float:
    """The abscissa of the top of the parabola through three points (x0 < x1 < x2, y1 the largest);
    x1 when the three lie on a line (no curvature)."""
    left, right = (x1 - x0) * (y1 - y2), (x1 - x2) * (y1 - y0)
    denominator = left - right
    if denominator == 0:
        return x1
    return x1 - 0.5 * ((x1 - x0) * left - (x1 - x2) * right) / denominator


def located(amplitudes: dict[float, float]) -> dict[str, Any]:
    """{"found": True, "best", "below", "above", "top"} of amplitudes ({frequency: amplitude}), or
    {"found": False, "reason"}."""
    if len(amplitudes) < 3:
        return {"found": False, "reason": f"{counted(len(amplitudes), 'frequency', 'frequencies')} measured, fewer than three"}
    points = sorted(amplitudes.items())
    best = max(range(len(points)), key=lambda i: points[i][1])
    if best in (0, len(points) - 1):
        end = "lowest" if best == 0 else "highest"
        return {"found": False, "reason": f"the largest amplitude is at the {end} frequency measured, {points[best][0]:g} rad/s"}
    (x0, y0), (x1, y1), (x2, y2) = points[best - 1 : best + 2]
    return {"found": True, "best": x1, "below": x0, "above": x2, "top": parabola_top(x0, y0, x1, y1, x2, y2)}
