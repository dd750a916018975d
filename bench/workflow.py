"""Benchmark of the workflow (not a test): wall time and peak memory, median of repeated runs.

    .venv/bin/python bench/workflow.py [--repeat 3] [--rounds 5] [--sizes 10,100,1000] [--lesson hunter]
                                       [--many 10000] [--most 100000]

Each measurement runs in a fresh temporary copy of the project, with the committed configuration.
Peak memory is the largest sum of the resident memory of the measured process and all its
children (the worker processes too), sampled every 50 ms. `--many` generated runs of the lesson
are built at --cores 1 and --cores 2 (median of `--repeat`), `--most` once at --cores 2, with the
size of results/ and of its largest file. The results are printed and written to bench/results.md
(its own section, at the top; the other benchmarks' sections are kept).
"""

import argparse
import datetime
import importlib.util
import os
import platform
import shutil
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

from sections import replace_section  # noqa: E402

PYTHON = sys.executable
SNAKEMAKE = [PYTHON, "-m", "snakemake"]


def copy_project(target):
    """A fresh copy of the project, as the workflow tests make it, with the committed configuration."""
    copy = copy_workflow(target)
    shutil.copy2(ROOT / "config" / "config.yaml", copy / "config" / "config.yaml")
    return copy


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


def summary(found):
    """(median seconds, median MiB, every time) of [(seconds, MiB)]."""
    return statistics.median(t for t, _ in found), statistics.median(m for _, m in found), [t for t, _ in found]


def once(prepare, command):
    """(seconds, MiB) of `command` in a temporary copy made by `prepare(path)`."""
    with tempfile.TemporaryDirectory() as folder:
        copy = prepare(Path(folder) / "project")
        return measure(command, copy)


def median_of(repeat, prepare, command):
    return summary([once(prepare, command) for _ in range(repeat)])


def built(path):
    copy = copy_project(path)
    measure([*SNAKEMAKE, "--cores", "2"], copy)
    return copy


def with_runs(lesson, count):
    def prepare(path):
        copy = copy_project(path)
        (copy / "generated" / lesson).mkdir(parents=True)
        if count:
            subprocess.run(
                [PYTHON, "-m", "replaylab", "generate", lesson, "--count", str(count), "--out", "generated"],
                cwd=copy, check=True, capture_output=True,
            )
        return copy

    return prepare


def generated(lesson, count, folder):
    """`count` scripted runs of a lesson in `folder`/<lesson>, written once (two processes, half
    the seeds each) and copied into each measured copy."""
    target = Path(folder) / lesson
    if not target.is_dir():
        half = count // 2
        writers = [
            subprocess.Popen([PYTHON, "-m", "replaylab", "generate", lesson, "--count", str(n), "--first-seed", str(first),
                              "--out", str(folder)], stdout=subprocess.DEVNULL)
            for first, n in ((0, half), (half, count - half))
        ]
        if any(w.wait() for w in writers):
            raise SystemExit(f"replaylab generate {lesson} failed")
    return target


def with_generated(source):
    def prepare(path):
        copy = copy_project(path)
        shutil.copytree(source, copy / "generated" / source.name)
        return copy

    return prepare


def folder_size(folder):
    """(bytes, files, the largest file and its bytes) of a folder."""
    total, files, largest = 0, 0, (None, 0)
    for path in Path(folder).rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            total, files = total + size, files + 1
            if size > largest[1]:
                largest = (path, size)
    return total, files, largest


FLOOR = [PYTHON, "-c", "from replaylab.build import build; build(progress=lambda text: None)"]


def side_by_side(rounds):
    """The floor and the full runs, measured in turn within each round, so that a slower moment of
    the machine weighs on all three alike: {name: (median seconds, median MiB, times)}."""
    commands = {"floor": FLOOR, "cores1": [*SNAKEMAKE, "--cores", "1"], "cores2": [*SNAKEMAKE, "--cores", "2"]}
    runs = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            runs[name].append(once(copy_project, command))
    return {name: summary(found) for name, found in runs.items()}


def cluster_plugin_installed():
    return importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of floor, --cores 1, --cores 2")
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--lesson", default="hunter")
    parser.add_argument("--many", type=int, default=10000, help="generated runs built at --cores 1 and 2 (0: none)")
    parser.add_argument("--most", type=int, default=100000, help="generated runs built once at --cores 2 (0: none)")
    parser.add_argument("--note", default="", help="a sentence about the machine, for the report")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    args = parser.parse_args()
    rows = []

    def record(what, result, per_run=""):
        seconds, peak, times = result
        rows.append((what, seconds, peak, per_run, times))
        print(f"{what:<72} {seconds:7.2f} s  {peak:7.0f} MiB  {per_run}", flush=True)

    full = side_by_side(args.rounds)
    ratios = {name: full[name][0] / full["floor"][0] for name in ("cores1", "cores2")}
    record("floor: every result in one Python process, no Snakemake", full["floor"])
    record("full run from clean, --cores 1", full["cores1"])
    record("full run from clean, --cores 2", full["cores2"])
    record("no-op run (everything up to date), --cores 1", median_of(args.repeat, built, [*SNAKEMAKE, "--cores", "1"]))
    record("dry run from clean (-n)", median_of(args.repeat, copy_project, [*SNAKEMAKE, "-n"]))
    record("one lesson from clean (projectile, --cores 1)", median_of(args.repeat, copy_project, [*SNAKEMAKE, "--cores", "1", "projectile"]))
    record("one replay (`replaylab replay recordings/hunter/velocity-verlet.json`)", median_of(args.repeat, copy_project, [PYTHON, "-m", "replaylab", "replay", "recordings/hunter/velocity-verlet.json"]))
    command = [*SNAKEMAKE, "--cores", "2", args.lesson, "--config", "run_folders=[generated]"]
    alone = median_of(args.repeat, with_runs(args.lesson, 0), command)
    record(f"{args.lesson} alone (its reference runs), from clean, --cores 2", alone)
    for size in [int(s) for s in args.sizes.split(",") if s]:
        result = median_of(args.repeat, with_runs(args.lesson, size), command)
        added = f"{1000 * (result[0] - alone[0]) / size:.1f} ms"
        record(f"{size} scripted runs of {args.lesson} + its references, from clean, --cores 2", result, added)

    many_lines, most_lines = [], []
    command = lambda cores: [*SNAKEMAKE, "--cores", str(cores), args.lesson, "--config", "run_folders=[generated]"]  # noqa: E731
    with tempfile.TemporaryDirectory() as store:
        if args.many:
            source = generated(args.lesson, args.many, Path(store) / "many")
            results = {}
            for cores in (1, 2):
                results[cores] = median_of(args.repeat, with_generated(source), command(cores))
                per_run = f"{1000 * results[cores][0] / args.many:.2f} ms"
                record(f"{args.many} generated runs of {args.lesson} + its references, from clean, --cores {cores}", results[cores], per_run)
            many_lines = [
                f"{args.many} runs: --cores 2 is {results[1][0] / results[2][0]:.2f} times as fast as --cores 1 "
                f"({1000 * results[2][0] / args.many:.2f} ms of wall time per run at --cores 2, all of it: starting "
                "Snakemake, checking every recording, replaying, judging, the per-run table and the pages).",
                "",
            ]
            shutil.rmtree(source.parent)
        if args.most:
            source = generated(args.lesson, args.most, Path(store) / "most")
            with tempfile.TemporaryDirectory() as folder:
                copy = with_generated(source)(Path(folder) / "project")
                seconds, peak = measure(command(2), copy)
                total, files, (largest, largest_size) = folder_size(copy / "results")
                transcripts = sum(1 for _ in (copy / "results" / args.lesson / "transcripts").iterdir())
            record(f"{args.most} generated runs of {args.lesson} + its references, from clean, --cores 2 (one round)",
                   (seconds, peak, [seconds]), f"{1000 * seconds / args.most:.2f} ms")
            most_lines = [
                f"{args.most} runs: results/ holds {total / 2**20:.0f} MiB in {files} files; the largest is "
                f"`{largest.relative_to(copy)}`, {largest_size / 2**20:.1f} MiB; the transcripts lie in {transcripts} "
                f"batch folders (about {args.most // max(1, transcripts)} files each).",
                "",
            ]

    lines = [
        "# Benchmark of the workflow",
        "",
        f"Measured {datetime.date.today().isoformat()} by `bench/workflow.py` on {platform.node()} "
        f"({os.cpu_count()} cores, Python {platform.python_version()}), median of {args.repeat} runs "
        f"({args.rounds} for the first three rows), each in a fresh copy of the project. Memory: peak resident memory of the whole process tree. "
        + (f"{args.note} " if args.note else "")
        + "The SLURM executor plugin was "
        + ("installed" if cluster_plugin_installed() else "not installed (as after `make`)")
        + ". The floor and the full runs were measured in turn, round after round, so that the machine's "
        "slower moments weigh on them alike.",
        "",
        "| what | time | peak memory | added per run | the runs |",
        "|---|---|---|---|---|",
    ]
    for what, seconds, peak, per_run, times in rows:
        lines.append(f"| {what} | {seconds:.2f} s | {peak:.0f} MiB | {per_run} | {', '.join(f'{t:.2f}' for t in times)} |")
    notes = [
        f"Full run from clean against the one-process floor (ratio of the medians): "
        f"{ratios['cores1']:.2f} times with `--cores 1`, {ratios['cores2']:.2f} times with `--cores 2`. "
        f"Added per run: the time above that of {args.lesson} alone, divided by the number of runs; "
        "for the generated runs, per run: all of the time divided by the number of runs.",
        "",
        *many_lines,
        *most_lines,
    ]
    replace_section(args.out, lines[0], lines + [""] + notes)
    print("\n" + "\n".join(notes), flush=True)


if __name__ == "__main__":
    main()
