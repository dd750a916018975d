"""Benchmark of the library's hot spots (not a test): median of repeated timings on this machine.

    .venv/bin/python bench/library.py [--pytest]

`--pytest` also times one full `pytest` run (a subprocess). The last row is what the HTML pages
add to a full build: every page of a build of the reference recordings (built once, in a
temporary folder) converted from its Markdown to self-contained HTML, figures embedded, in a fresh
process (the first import of markdown-it-py counted, as in a build).
"""

import statistics
import subprocess
import sys
import tempfile
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


HTML_PAGES = """
import sys, time
from pathlib import Path
start = time.perf_counter()
from replaylab.html_page import html_page
for page in sorted(Path(sys.argv[1]).rglob("index.md")):
    html_page(page.read_text(encoding="utf-8"), page.parent)
print(time.perf_counter() - start)
"""


def html_seconds(repeat=5):
    """(seconds, pages): the median time to convert every page of a full build to HTML."""
    from replaylab.build import build

    with tempfile.TemporaryDirectory() as folder:
        build(results=Path(folder) / "results", progress=lambda text: None)
        pages = len(list(Path(folder).rglob("index.md")))
        run = [sys.executable, "-c", HTML_PAGES, folder]
        times = [float(subprocess.run(run, check=True, capture_output=True, text=True).stdout) for _ in range(repeat)]
    return statistics.median(times), pages


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
    seconds, pages = html_seconds()
    rows.append((f"HTML of every page of a full build ({pages} pages, one process)", seconds))
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:10.2f} ms")


if __name__ == "__main__":
    main()
