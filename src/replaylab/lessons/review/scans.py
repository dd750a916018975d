"""Independent error scan of both pieces; it depends on the code only, never on a review."""

from replaylab.lessons.review import lab
from replaylab.verification.checks import CHECK_NAMES, ERROR_PERIODS, oscillator_errors, run_check

ERROR_STEPS = (20, 40, 80, 160, 320, 640)


def error_scan():
    """Error against the exact oscillator over two periods, for both pieces."""
    return {
        "periods": ERROR_PERIODS,
        "rows": [
            {"candidate": piece, "steps_per_period": n, "error": float(e)}
            for piece, candidate in lab.PIECES.items()
            for n, e in zip(ERROR_STEPS, oscillator_errors(candidate, ERROR_STEPS))
        ],
    }


def failures():
    """{piece: the checks (in contract order) it fails when the build runs every check itself}: what a
    reviewer's right answer names, within its remit."""
    return {str(piece): [name for name in CHECK_NAMES if not run_check(name, candidate).passed] for piece, candidate in lab.PIECES.items()}


def scans():
    return {"error": error_scan(), "failures": failures()}
