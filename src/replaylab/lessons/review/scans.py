"""Independent error scan of the seed's two pieces; it depends on the code only, never on a review.
(Every instance's answer, the checks each of its pieces fails, is answers.py's.)"""

from typing import Any

from replaylab.lessons.review import lab, pieces
from replaylab.verification.checks import ERROR_PERIODS, oscillator_errors

ERROR_STEPS = (20, 40, 80, 160, 320, 640)


def error_scan() -> dict[str, Any]:
    """Error against the exact oscillator over two periods, for both pieces."""
    return {
        "periods": ERROR_PERIODS,
        "rows": [
            {"candidate": piece, "steps_per_period": n, "error": float(e)}
            for piece, candidate in lab.PIECES.items()
            for n, e in zip(ERROR_STEPS, oscillator_errors(candidate, ERROR_STEPS))
        ],
    }


def failures() -> dict[str, list[str]]:
    """{piece: the checks (in contract order) it fails when the build runs every check itself} of the
    seed's pair: what a reviewer's right answer on the seed instance names, within its remit."""
    return {str(number): pieces.failures(piece) for number, piece in lab.SEED_PIECES.items()}


def scans() -> dict[str, Any]:
    return {"error": error_scan(), "failures": failures()}
