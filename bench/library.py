"""Benchmark of the library's hot spots (not a test): median of repeated timings on this machine.

    .venv/bin/python bench/library.py [--pytest]

`--pytest` also times one full `pytest` run (a subprocess).
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from replaylab.lessons.review.lab import PIECES
from replaylab.physics import projectile
from replaylab.verification import checks


def median_seconds(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    rows = [
        ("range_with_drag(25, 40, 0.001)", median_seconds(lambda: projectile.range_with_drag(25, 40, 0.001), 21)),
        (
            "conclusion scan: 21 angles 38..43 step 0.25 at dt 0.001 (numpy)",
            median_seconds(lambda: projectile.ranges_with_drag(25, np.arange(38, 43 + 1e-9, 0.25), 0.001), 7),
        ),
    ]
    for name in checks.CHECK_NAMES:
        for piece, candidate in PIECES.items():
            rows.append((f"check {name}, piece {piece}", median_seconds(lambda: checks.run_check(name, candidate), 7)))
    if "--pytest" in sys.argv:
        root = Path(__file__).resolve().parents[1]
        run = lambda: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, check=True, capture_output=True)
        rows.append(("full pytest run", median_seconds(run, 1)))
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:10.2f} ms")


if __name__ == "__main__":
    main()
