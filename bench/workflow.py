"""Benchmark of the workflow (not a test): its goals, as ratios measured in one run, and the times.

    .venv/bin/python bench/workflow.py [--rounds 3] [--many 10000] [--huge 100000] [--huge-rounds 1] [--most 0]

Every measurement runs in a fresh temporary copy of the project, with the committed configuration,
and the things compared are measured in turn, round after round, so that a slower moment of this
shared machine weighs on both alike (the median of each is compared):

- the reference build from clean, `snakemake --cores 1` and `--cores 2`, against `replaylab build`
  (every result in one Python process: the floor);
- a no-op (everything up to date) against Snakemake's own no-op of a one-rule Snakefile;
- the replay stage on the `--many` generated runs in one process against its floor, the same
  recordings read and parsed and their calls recomputed through the lesson's tool function, in
  one process (bench/floor.py);
- `--many` generated hunter runs and the references, from clean, `--cores 2` against `--cores 1`
  (and the wall time per run at `--cores 2`, all of it: Snakemake's start, reading every recording,
  replaying, judging, the per-run table and the pages);
- `--huge` generated runs the same way (`--huge-rounds` rounds), with the peak memory of the
  largest job (its benchmark file's max_rss);
- with `--most`, that many runs once at `--cores 2`, with the size of results/.

Peak memory is the largest sum of the resident memory of the measured process and all its
children, sampled every 50 ms. The tables are printed and written to bench/results.md (its own
section; the other benchmarks' sections are kept) and to docs/performance.md.
"""

import argparse
import csv
import datetime
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
from helpers.workflow import copy_project as copy_workflow  # noqa: E402

from floor import replay_against_floor  # noqa: E402
from sections import replace_section  # noqa: E402

PYTHON = sys.executable
SNAKEMAKE = [PYTHON, "-m", "snakemake"]
HEADING = "## The workflow"
ONE_RULE = 'rule one:\n    output:\n        "one.txt",\n    shell:\n        "touch {output}"\n'


def copy_project(target):
    """A fresh copy of the project, as the workflow tests make it, with the committed configuration."""
    copy = copy_workflow(target)
    shutil.copy2(ROOT / "config" / "config.yaml", copy / "config" / "config.yaml")
    return copy


def measure(command, cwd):
    """(seconds, peak MiB of the process tree) of one command, which must succeed."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "SNAKEMAKE_PROFILE")}
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


def in_turn(rounds, cases):
    """{name: [(seconds, MiB)]} of each case (prepare(path) -> folder, command), measured in turn,
    round after round, each time in a fresh temporary folder."""
    found = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (prepare, command) in cases.items():
            with tempfile.TemporaryDirectory() as folder:
                found[name].append(measure(command, prepare(Path(folder) / "project")))
    return found


def built(path):
    copy = copy_project(path)
    measure([*SNAKEMAKE, "--cores", "2"], copy)
    return copy


def one_rule_built(path):
    """A folder with a one-rule Snakefile, its output made: Snakemake's own no-op is then the floor."""
    path.mkdir(parents=True)
    (path / "Snakefile").write_text(ONE_RULE)
    measure([*SNAKEMAKE, "--cores", "1"], path)
    return path


def generated(lesson, count, folder):
    """`count` scripted runs of a lesson in `folder`/<lesson>, written once (two processes, half
    the seeds each) and copied into each measured copy."""
    target = Path(folder) / lesson
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


def largest_job(copy):
    """(max_rss in MiB, the job) of the job of a build whose benchmark file says it used the most memory."""
    found = []
    for path in (copy / "benchmarks").rglob("*.tsv"):
        with open(path, newline="") as stream:
            for record in csv.DictReader(stream, delimiter="\t"):
                if record.get("max_rss") not in (None, "", "NA", "-"):
                    found.append((float(record["max_rss"]), str(path.relative_to(copy / "benchmarks").with_suffix(""))))
    return max(found) if found else (0.0, "none")


def huge_builds(source, rounds, command):
    """{cores: [(seconds, peak MiB of the process tree, max_rss MiB of the largest job, that job)]}
    of builds of the generated runs in `source` at --cores 1 and 2, in turn, each in a fresh copy."""
    found = {1: [], 2: []}
    for _ in range(rounds):
        for cores in (1, 2):
            with tempfile.TemporaryDirectory() as folder:
                copy = with_generated(source)(Path(folder) / "project")
                seconds, peak = measure(command(cores), copy)
                found[cores].append((seconds, peak, *largest_job(copy)))
    return found


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


def median(found):
    """The median time of measurements (seconds first)."""
    return statistics.median(item[0] for item in found)


def row(what, found, per_run=""):
    times = [t for t, _ in found]
    peak = statistics.median(m for _, m in found)
    return f"| {what} | {median(found):.2f} s | {peak:.0f} MiB | {per_run} | {', '.join(f'{t:.2f}' for t in times)} |"


def timed_row(what, times, runs):
    """A row of times measured inside a process (no memory sampled), with the time per run."""
    middle = statistics.median(times)
    return f"| {what} | {middle:.2f} s | | {1000 * middle / runs:.3f} ms | {', '.join(f'{t:.2f}' for t in times)} |"


def goal(what, value, target, met):
    return f"| {what} | {value} | {target} | {'met' if met else 'not met'} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each comparison (the no-op: twice as many)")
    parser.add_argument("--lesson", default="hunter")
    parser.add_argument("--many", type=int, default=10000, help="generated runs built at --cores 1 and 2 (0: none)")
    parser.add_argument("--huge", type=int, default=100000, help="generated runs built at --cores 1 and 2, with the largest job's memory (0: none)")
    parser.add_argument("--huge-rounds", type=int, default=1, help="rounds of the --huge builds")
    parser.add_argument("--most", type=int, default=0, help="generated runs built once at --cores 2 (0: none)")
    parser.add_argument("--note", default="", help="a sentence about the machine, for the report")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    parser.add_argument("--docs", default=str(ROOT / "docs" / "performance.md"))
    args = parser.parse_args()
    started = datetime.datetime.now()
    load = os.getloadavg()[0]
    rows, goals, notes = [], [], []

    full = in_turn(args.rounds, {
        "floor": (copy_project, FLOOR),
        "cores1": (copy_project, [*SNAKEMAKE, "--cores", "1"]),
        "cores2": (copy_project, [*SNAKEMAKE, "--cores", "2"]),
    })
    rows += [row("`replaylab build`: every result in one Python process, no Snakemake (the floor)", full["floor"]),
             row("`snakemake --cores 1` from clean", full["cores1"]),
             row("`snakemake --cores 2` from clean", full["cores2"])]
    ratio = median(full["cores2"]) / median(full["floor"])
    goals.append(goal("reference build from clean (`--cores 2`) against `replaylab build`", f"{ratio:.2f} times",
                      "at most 2.5 times", ratio <= 2.5))
    notes.append(f"With `--cores 1` the reference build takes {median(full['cores1']) / median(full['floor']):.2f} times the floor.")

    noop = {"ours": [], "one rule": []}
    with tempfile.TemporaryDirectory() as folder:  # one build, one one-rule folder; their no-ops in turn
        folders = {"ours": built(Path(folder) / "project"), "one rule": one_rule_built(Path(folder) / "one-rule")}
        for _ in range(2 * args.rounds):
            for name, where in folders.items():
                noop[name].append(measure([*SNAKEMAKE, "--cores", "1"], where))
    rows += [row("no-op (everything up to date), `--cores 1`", noop["ours"]),
             row("Snakemake's own no-op of a one-rule Snakefile", noop["one rule"])]
    ratio = median(noop["ours"]) / median(noop["one rule"])
    goals.append(goal("no-op against Snakemake's own no-op of a one-rule Snakefile", f"{ratio:.2f} times",
                      "at most 1.3 times", ratio <= 1.3))
    dry = in_turn(args.rounds, {"dry": (copy_project, [*SNAKEMAKE, "-n"])})
    rows.append(row("dry run from clean (`-n`: every recording validated)", dry["dry"]))

    command = lambda cores: [*SNAKEMAKE, "--cores", str(cores), args.lesson, "--config", "run_folders=[generated]"]  # noqa: E731
    with tempfile.TemporaryDirectory() as store:
        if args.many:
            source = generated(args.lesson, args.many, Path(store) / "many")
            floor, ratio = replay_against_floor(args.lesson, source, args.rounds)
            rows += [timed_row(f"{args.many} generated {args.lesson} runs read, parsed and their calls recomputed, one process "
                               "(the replay's floor)", floor["floor"], args.many),
                     timed_row("the same runs replayed and judged, their transcripts and verdicts written (`replay_batch`), "
                               "one process", floor["replay"], args.many)]
            goals.append(goal(f"replay and judging of {args.many} runs in one process against its floor", f"{ratio:.2f} times",
                              "at most 3 times", ratio <= 3))
            many = in_turn(args.rounds, {cores: (with_generated(source), command(cores)) for cores in (1, 2)})
            for cores in (1, 2):
                rows.append(row(f"{args.many} generated runs of {args.lesson} and its references, from clean, `--cores {cores}`",
                                many[cores], f"{1000 * median(many[cores]) / args.many:.2f} ms"))
            speedup = median(many[1]) / median(many[2])
            per_run = 1000 * median(many[2]) / args.many
            goals.append(goal(f"{args.many} generated {args.lesson} runs: `--cores 2` against `--cores 1`",
                              f"{speedup:.2f} times as fast", "at least 1.6 times", speedup >= 1.6))
            goals.append(goal(f"{args.many} generated {args.lesson} runs at `--cores 2`, per run (all of the time)",
                              f"{per_run:.2f} ms", "under 3 ms", per_run < 3))
            shutil.rmtree(source.parent)
        if args.huge:
            source = generated(args.lesson, args.huge, Path(store) / "huge")
            huge = huge_builds(source, args.huge_rounds, command)
            for cores in (1, 2):
                rows.append(row(f"{args.huge} generated runs of {args.lesson} and its references, from clean, `--cores {cores}`",
                                [(t, m) for t, m, _, _ in huge[cores]], f"{1000 * median(huge[cores]) / args.huge:.2f} ms"))
            speedup = median(huge[1]) / median(huge[2])
            job_peak, job = max((m, j) for found in huge.values() for _, _, m, j in found)
            goals.append(goal(f"{args.huge} generated {args.lesson} runs: `--cores 2` against `--cores 1`",
                              f"{speedup:.2f} times as fast", "at least 1.6 times", speedup >= 1.6))
            goals.append(goal(f"{args.huge} generated {args.lesson} runs: peak memory of any job", f"{job_peak:.0f} MiB (`{job}`)",
                              "under 1 GiB", job_peak < 1024))
            shutil.rmtree(source.parent)
        if args.most:
            source = generated(args.lesson, args.most, Path(store) / "most")
            with tempfile.TemporaryDirectory() as folder:
                copy = with_generated(source)(Path(folder) / "project")
                seconds, peak = measure(command(2), copy)
                total, files, (largest, largest_size) = folder_size(copy / "results")
                batches = sum(1 for _ in (copy / "results" / args.lesson / "transcripts").iterdir())
            rows.append(row(f"{args.most} generated runs of {args.lesson} and its references, from clean, `--cores 2` (once)",
                            [(seconds, peak)], f"{1000 * seconds / args.most:.2f} ms"))
            notes.append(f"{args.most} runs: results/ holds {total / 2**20:.0f} MiB in {files} files; the largest is "
                         f"`{largest.relative_to(copy)}`, {largest_size / 2**20:.1f} MiB; the transcripts lie in {batches} "
                         "batch folders.")

    lines = [
        HEADING,
        "",
        f"Measured {started:%Y-%m-%d %H:%M} by `bench/workflow.py` on {platform.node()} ({os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load:.1f} at the start{'; ' + args.note if args.note else ''}), "
        f"median of {args.rounds} rounds (the no-op {2 * args.rounds}), each measurement in a fresh copy of the project, "
        "the compared commands in turn within each round.",
        "",
        "| goal | measured | target | |",
        "|---|---|---|---|",
        *goals,
        "",
        "| what | time | peak memory | per run | the runs |",
        "|---|---|---|---|---|",
        *rows,
        "",
        *[note + "\n" for note in notes],
    ]
    for path in (args.out, args.docs):
        replace_section(path, HEADING, lines)
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
