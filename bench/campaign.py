"""Benchmark of a campaign against the stand-in model server (not a test): serial against concurrent.

    .venv/bin/python bench/campaign.py [--runs 12] [--latency 0.2] [--repeat 1]

The same campaign, 2 models x RUNS runs of projectile through the openai provider against the
stand-in server of the tests (tests/model_server.py, LATENCY seconds per request, no faults), runs
from clean in a fresh copy of the project with max_connections 1 (serial) and with max_connections
8, both at --cores 8. Reported: the wall time of `snakemake campaign`, of its recording part (from
the first recording job's start to the last one's end, read from their logs), the rest
(the whole less that: Snakemake's start, and what follows the last run: the replay of its block of
indices, the render, the comparison; the other blocks replay while runs record), the requests, the most in
flight at once, and the overhead per run above the server's latency (each recording job's time
from its log, less its requests times the latency). The results are printed and
written into bench/results.md, section "Campaign".
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from helpers.model_server import ModelServer  # noqa: E402
from test_workflow import copy_project  # noqa: E402

from sections import replace_section  # noqa: E402

from replaylab.agents import recording  # noqa: E402
from replaylab.workers import read_done_line  # noqa: E402

KEY = "sk-bench-NOTAKEY0123456789"
MODELS = ["model-a", "model-b"]
HEADING = "## Campaign against the stand-in model server"


def campaign_copy(folder, runs, connections):
    copy = copy_project(Path(folder) / "project", batch_size=50)
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(provider="openai", models=MODELS, lessons=["projectile"], runs=runs,
                              max_connections=connections, max_retries=2, request_timeout=30)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return copy


def timed(command, copy, env):
    start = time.perf_counter()
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return seconds


def once(runs, connections, latency):
    with tempfile.TemporaryDirectory() as folder, ModelServer(KEY, latency=latency, careful=[MODELS[0]]) as server:
        copy = campaign_copy(folder, runs, connections)
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
        env.update(MPLBACKEND="Agg", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
        command = [sys.executable, "-m", "snakemake", "--cores", "8", "campaign"]
        whole = timed(command, copy, env)
        requests, in_flight = server.requests, server.max_in_flight
        campaign = copy / "results" / "campaigns" / "baseline"
        overheads, starts, ends = [], [], []
        for path in sorted((campaign / "recordings" / "projectile").glob("*.json")):
            steps = len(recording.load(path).provenance["request_ids"])
            log = copy / "logs" / "campaigns" / "baseline" / "record" / "projectile" / f"{path.stem}.log"
            _, job, began, ended = read_done_line(log)
            overheads.append(job - steps * latency)
            starts.append(began)
            ends.append(ended)
        recording_part = max(ends) - min(starts)
    return {"whole": whole, "rest": whole - recording_part, "recording": recording_part, "requests": requests, "in_flight": in_flight,
            "overhead": statistics.mean(overheads), "runs": len(overheads)}


def median(found, key):
    return statistics.median(f[key] for f in found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per model")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    args = parser.parse_args()
    measured = {}
    for connections in (1, 8):
        found = [once(args.runs, connections, args.latency) for _ in range(args.repeat)]
        measured[connections] = found
        print(f"max_connections {connections}: campaign {median(found, 'whole'):.1f} s, recording "
              f"{median(found, 'recording'):.1f} s, overhead per run {median(found, 'overhead'):.2f} s", flush=True)
    serial, concurrent = measured[1], measured[8]
    rows = [
        "| max_connections (--cores 8) | campaign from clean | its recording part | the rest | requests | most in flight | overhead per run | the runs (campaign) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for connections, found in measured.items():
        rows.append(
            f"| {connections} | {median(found, 'whole'):.1f} s | {median(found, 'recording'):.1f} s | "
            f"{median(found, 'rest'):.1f} s | {found[0]['requests']} | {found[0]['in_flight']} | "
            f"{median(found, 'overhead'):.2f} s | {', '.join('%.1f' % f['whole'] for f in found)} |"
        )
    runs = serial[0]["runs"]
    lines = [
        HEADING,
        "",
        f"Measured {datetime.date.today().isoformat()} by `bench/campaign.py` on {platform.node()} "
        f"({os.cpu_count()} cores, Python {platform.python_version()}), median of {args.repeat}: "
        f"{len(MODELS)} models x {args.runs} runs of projectile ({runs} recordings) through the openai provider "
        f"against the stand-in server of the tests, {args.latency:g} s per request, each from clean in a fresh copy.",
        "",
        *rows,
        "",
        f"Serial against 8 connections: {median(serial, 'whole') / median(concurrent, 'whole'):.1f} times faster "
        f"for the whole campaign, {median(serial, 'recording') / median(concurrent, 'recording'):.1f} times for its "
        "recording part. Overhead per run: a recording job's time less its requests times the server's latency "
        "(forking the recording process from the campaign's fork server, the harness and the SDK's work on each request, writing the run, Snakemake's own work on the job; with 8 at once, also waiting for one of the 2 processors), mean over the runs.",
        "",
    ]
    replace_section(args.out, HEADING, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
