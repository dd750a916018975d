"""Benchmark of a campaign against the stand-in model server (not a test): how much of the
throughput `max_connections` allows its recording reaches.

    .venv/bin/python bench/campaign.py [--runs 17] [--connections 8] [--latency 0.2]

The campaign: 2 models x RUNS runs of every variant of projectile, hunter and review (6 variants:
204 runs with RUNS 17) through the openai provider, against the stand-in server of the tests
(tests/helpers/model_server.py, LATENCY seconds per request, no faults), `snakemake --cores 8
campaign` from clean in a fresh copy of the project. Its recording part runs from the first
recording job's start to the last one's end (their logs); at most CONNECTIONS requests are in
flight, each taking LATENCY, so the most it can answer is CONNECTIONS / LATENCY requests a second.
The table is printed and written to bench/results.md (its own section) and docs/performance.md.
"""

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from helpers.model_server import ModelServer  # noqa: E402
from helpers.workflow import copy_project, job_times  # noqa: E402

from sections import replace_section  # noqa: E402

KEY = "sk-bench-NOTAKEY0123456789"
MODELS = ["model-a", "model-b"]
LESSONS = ["projectile", "hunter", "review"]
HEADING = "## A campaign against the stand-in model server"


def campaign_copy(folder, runs, connections):
    copy = copy_project(Path(folder) / "project", batch_size=2000)
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(provider="openai", models=MODELS, lessons=LESSONS, runs=runs,
                              max_connections=connections, max_retries=2, request_timeout=30)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return copy


def once(runs, connections, latency):
    with tempfile.TemporaryDirectory() as folder, ModelServer(KEY, latency=latency, careful=[MODELS[0]]) as server:
        copy = campaign_copy(folder, runs, connections)
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SNAKEMAKE_PROFILE")}
        env.update(MPLBACKEND="Agg", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "8", "campaign"], cwd=copy, env=env,
                              capture_output=True, text=True)
        whole = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"snakemake campaign failed:\n{done.stderr[-3000:]}")
        logs = sorted((copy / "logs" / "campaigns" / "baseline").glob("*/record/*.log"))
        times = [job_times(log) for log in logs]
        recorded = sum(1 for _ in (copy / "results" / "campaigns" / "baseline" / "recordings").glob("*/*.json"))
        return {"whole": whole, "recording": max(end for _, end in times) - min(begin for begin, _ in times),
                "jobs": len(logs), "requests": server.requests, "in_flight": server.max_in_flight, "runs": recorded}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=17, help="runs per model and variant")
    parser.add_argument("--connections", type=int, default=8, help="max_connections")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    parser.add_argument("--docs", default=str(ROOT / "docs" / "performance.md"))
    args = parser.parse_args()
    started, load = datetime.datetime.now(), os.getloadavg()[0]
    found = once(args.runs, args.connections, args.latency)
    most = args.connections / args.latency
    reached = found["requests"] / found["recording"] / most
    lines = [
        HEADING,
        "",
        f"Measured {started:%Y-%m-%d %H:%M} by `bench/campaign.py` on {platform.node()} ({os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load:.1f} at the start): {len(MODELS)} models x {args.runs} "
        f"runs of every variant of {', '.join(LESSONS)} ({found['runs']} runs) through the openai provider against the "
        f"stand-in server of the tests, {args.latency:g} s a request, max_connections {args.connections}, "
        "`snakemake --cores 8 campaign` from clean, once.",
        "",
        "| goal | measured | target | |",
        "|---|---|---|---|",
        f"| the recording part's throughput against the most max_connections allows ({most:g} requests a second) "
        f"| {100 * reached:.1f} % | at least 70 % | {'met' if reached >= 0.7 else 'not met'} |",
        "",
        "| campaign from clean | its recording part | recording jobs | requests | requests a second | most in flight |",
        "|---|---|---|---|---|---|",
        f"| {found['whole']:.1f} s | {found['recording']:.1f} s | {found['jobs']} | {found['requests']} | "
        f"{found['requests'] / found['recording']:.1f} | {found['in_flight']} |",
        "",
        "The rest of the campaign is Snakemake's start and what follows the last recording: the replay of its "
        "block, the renders and the comparison (the other blocks replay while the next ones record).",
        "",
    ]
    for path in (args.out, args.docs):
        replace_section(path, HEADING, lines)
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
