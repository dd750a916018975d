"""The replay against its floor (issue 39), each in a fresh Python process of its own, timed after
its imports: the floor reads and parses every recording of a folder (json.loads) and recomputes
each of its tool calls through the lesson's own tool function (the drift tables computed on first
use, as the replay computes them); the replay is the replay stage itself (`replay_batch`: read,
check, replay, judge, write the transcripts and the verdicts) on the same recordings, as one batch.
"""

import statistics
import subprocess
import sys

FLOOR = """
import json, sys, time
from pathlib import Path
from replaylab.lessons import registry
paths = sorted(Path(sys.argv[2]).glob("*.json"))
tools = registry.lesson(sys.argv[1]).all_tools().tools
start = time.perf_counter()
calls = 0
for path in paths:
    data = json.loads(path.read_text(encoding="utf-8"))
    for step in data["steps"]:
        for call in step["tool_calls"]:
            tool = tools.get(call["name"]) if isinstance(call["name"], str) else None
            if tool is not None and isinstance(call["arguments"], dict):
                try:
                    tool.function(**call["arguments"])
                    calls += 1
                except (TypeError, ValueError, RuntimeError):
                    pass
print(time.perf_counter() - start, calls)
"""

REPLAY = """
import sys, tempfile, time
from pathlib import Path
from replaylab import pipeline
paths = sorted(Path(sys.argv[2]).glob("*.json"))
with tempfile.TemporaryDirectory() as folder:
    start = time.perf_counter()
    pipeline.replay_batch(pipeline.Replay(sys.argv[1], paths, Path(folder) / "batch0of1.jsonl",
                                          Path(folder) / "batch0of1.json", 1e-6))
    print(time.perf_counter() - start, len(paths))
"""


def seconds(code, lesson, folder):
    """The seconds a fresh process reports for `code` on the recordings of `folder`."""
    done = subprocess.run([sys.executable, "-c", code, lesson, str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the replay's floor failed:\n{done.stderr[-3000:]}")
    return float(done.stdout.split()[0])


def replay_against_floor(lesson, folder, rounds):
    """({"floor": [seconds], "replay": [seconds]}, the median ratio): both in turn, round after round."""
    found = {"floor": [], "replay": []}
    for _ in range(rounds):
        found["floor"].append(seconds(FLOOR, lesson, folder))
        found["replay"].append(seconds(REPLAY, lesson, folder))
    return found, statistics.median(found["replay"]) / statistics.median(found["floor"])
