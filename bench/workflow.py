"""Benchmark of the workflow (not a test): wall time and peak memory, median of repeated runs.

    .venv/bin/python bench/workflow.py [--repeat 3] [--sizes 10,100,1000] [--lesson hunter]

Each measurement runs in a fresh temporary copy of the project. Peak memory is the largest sum of
the resident memory of the measured process and all its children, sampled every 50 ms. The
results are printed and written to bench/results.md.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_workflow import copy_project as copy_workflow  # noqa: E402
PYTHON = sys.executable
SNAKEMAKE = [PYTHON, "-m", "snakemake"]


def copy_project(target):
    """A fresh copy of the project, as the workflow tests make it, with the committed configuration."""
    return copy_workflow(target, batch_size=50)


def measure(command, cwd):
    """(seconds, peak MiB of the process tree) of one command, which must succeed."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["MPLBACKEND"] = "Agg"
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample():
        nonlocal peak
        parent = psutil.Process(process.pid)
        while not done.is_set():
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{stderr[-3000:]}")
    return seconds, peak / 2**20


def median_of(repeat, prepare, command):
    """Median time and memory of `repeat` runs, each in a copy made by `prepare()`."""
    times, peaks = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            copy = prepare(Path(folder) / "project")
            seconds, peak = measure(command(copy), copy)
            times.append(seconds)
            peaks.append(peak)
    return statistics.median(times), statistics.median(peaks), times


def fresh(path):
    return copy_project(path)


def built(path):
    copy = copy_project(path)
    measure([*SNAKEMAKE, "--cores", "2"], copy)
    return copy


def with_runs(lesson, count):
    def prepare(path):
        copy = copy_project(path)
        subprocess.run(
            [PYTHON, "-m", "replaylab", "generate", lesson, "--count", str(count), "--out", "generated"],
            cwd=copy, check=True, capture_output=True,
        )
        return copy

    return prepare


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--lesson", default="hunter")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    args = parser.parse_args()
    rows = []

    def record(what, result, runs=None):
        seconds, peak, times = result
        per_run = f"{1000 * seconds / runs:.0f} ms" if runs else ""
        rows.append((what, seconds, peak, per_run, times))
        print(f"{what:<60} {seconds:7.2f} s  {peak:7.0f} MiB  {per_run}", flush=True)

    floor = median_of(args.repeat, fresh, lambda c: [PYTHON, "-c", "from replaylab.pipeline import build; build(progress=lambda text: None)"])
    record("floor: every result in one Python process, no Snakemake", floor)
    record("full run from clean, --cores 1", median_of(args.repeat, fresh, lambda c: [*SNAKEMAKE, "--cores", "1"]))
    full2 = median_of(args.repeat, fresh, lambda c: [*SNAKEMAKE, "--cores", "2"])
    record("full run from clean, --cores 2", full2)
    record("no-op run (everything up to date), --cores 1", median_of(args.repeat, built, lambda c: [*SNAKEMAKE, "--cores", "1"]))
    record("dry run from clean (-n)", median_of(args.repeat, fresh, lambda c: [*SNAKEMAKE, "-n"]))
    record("one lesson from clean (projectile, --cores 1)", median_of(args.repeat, fresh, lambda c: [*SNAKEMAKE, "--cores", "1", "projectile"]))
    record("one replay (`replaylab replay recordings/hunter/open.json`)", median_of(args.repeat, fresh, lambda c: [PYTHON, "-m", "replaylab", "replay", "recordings/hunter/open.json"]))
    for size in [int(s) for s in args.sizes.split(",") if s]:
        command = lambda c: [*SNAKEMAKE, "--cores", "2", args.lesson, "--config", "run_folders=[generated]"]
        record(f"{size} scripted runs of {args.lesson} + its references, from clean, --cores 2",
               median_of(args.repeat, with_runs(args.lesson, size), command), runs=size)

    ratio = [r for r in rows if r[0].startswith("full run from clean, --cores 1")][0][1] / floor[0]
    ratio2 = full2[0] / floor[0]
    lines = [
        "# Benchmark of the workflow",
        "",
        f"Measured {datetime.date.today().isoformat()} by `bench/workflow.py` on {platform.node()} "
        f"({os.cpu_count()} cores, Python {platform.python_version()}), median of {args.repeat} runs, "
        "each in a fresh copy of the project. Memory: peak resident memory of the whole process tree.",
        "",
        "| what | time | peak memory | per run | the runs |",
        "|---|---|---|---|---|",
    ]
    for what, seconds, peak, per_run, times in rows:
        lines.append(f"| {what} | {seconds:.2f} s | {peak:.0f} MiB | {per_run} | {', '.join(f'{t:.2f}' for t in times)} |")
    lines += [
        "",
        f"Full run from clean against the one-process floor: {ratio:.2f} times with `--cores 1`, "
        f"{ratio2:.2f} times with `--cores 2`.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines[-3:]))


if __name__ == "__main__":
    main()
