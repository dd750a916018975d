"""A campaign's plan is bounded before it is made: a plan of more runs than campaign.MOST_RUNS is
one line naming the field, at once and in little memory (the real command, a dry run)."""

import sys

from helpers import processes
from helpers.workflow import copy_project
from replaylab.campaign import MOST_RUNS


def test_a_plan_of_more_runs_than_a_campaign_plans_is_one_line_at_once(tmp_path):
    copy = copy_project(tmp_path / "project")
    code = ("import re, sys; from replaylab.cli import main; code = main(sys.argv[1:]); "  # VmHWM: this process's peak, in KiB
            "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1], file=sys.stderr); sys.exit(code)")
    out = processes.run([sys.executable, "-c", code, "campaign", "--provider", "scripted", "--model",
                         "scripted-careful,scripted-mixed", "--lesson", "hunter", "--instances", "all", "--runs", "100000",
                         "--name", "big", "--dry-run"], 60, cwd=copy)
    assert out.returncode == 2, out.stderr
    line, peak_kib = out.stderr.strip().splitlines()
    runs = 2 * 100000 * 74
    assert line == (f"replaylab: config/config.yaml + the options: $.campaign.runs: 100000 runs of each of 2 models make "
                    f"{runs:,} runs, more than a campaign plans ({MOST_RUNS:,}): fewer runs, models or instances, or "
                    "campaigns of their own")
    assert int(peak_kib) < 200 * 1024  # KiB: nothing was planned (the 14.8 million runs would take GiBs)
    assert out.stdout == "" and not (copy / "results" / "campaigns").exists()
