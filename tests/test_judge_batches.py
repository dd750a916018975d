"""The lesson contract: a lesson's judge is called once per replay batch (whole groups), so every
lesson, the ones added later included, must give the same verdicts however its runs are batched.

Each lesson of the registry: its reference recordings and a few generated runs, replayed and
judged by the real replay stage as one batch and as the workflow splits them into four.
"""

import json

import pytest

from helpers import ROOT
from replaylab import pipeline
from replaylab.agents import recording as recording_io
from replaylab.batches import batches
from replaylab.generate import generate
from replaylab.lessons import registry

TOLERANCE = 1e-6
GENERATED = 6  # runs (groups, in a lesson judged per group) of each lesson, besides its references


def judged(lesson, paths, folder):
    """The verdicts of the replay stage on `paths` as one batch: {"runs": ..., "verdicts": ..., "groups": ...},
    without where each transcript lies in the batch's file (which depends on the batch, and only on it)."""
    out = folder / "judged.json"
    pipeline.replay_batch(pipeline.Replay(lesson, [str(p) for p in paths], str(folder / "transcripts.jsonl"), str(out), TOLERANCE))
    found = json.loads(out.read_text(encoding="utf-8"))
    for facts in found["runs"].values():
        assert facts.pop("transcript")[1] > 0
    return found


@pytest.mark.parametrize("lesson", registry.names())
def test_verdicts_do_not_depend_on_how_the_runs_are_batched(lesson, tmp_path):
    paths = sorted((ROOT / "recordings" / lesson).glob("*.json")) + generate(lesson, GENERATED, tmp_path / "generated")
    runs = {p.stem: p for p in paths}
    per_group = registry.lesson(lesson).judged == "group"
    keys = {p.stem: recording_io.load(p).group for p in paths} if per_group else None
    split = batches(runs, len(runs) // 4, keys)
    assert len(split) > 1, split  # the split must really split

    whole = judged(lesson, [runs[name] for name in sorted(runs)], tmp_path / "whole")  # in name order, as in a batch
    merged = {"runs": {}, "verdicts": {}, "groups": {}}
    for name, part in split.items():
        found = judged(lesson, part, tmp_path / name)
        assert not set(found["verdicts"]) & set(merged["verdicts"])
        assert not set(found["groups"]) & set(merged["groups"])  # a group is decided in one batch
        for key in merged:
            merged[key].update(found[key])
    assert merged == whole
    assert len(whole["runs"]) == len(paths) and set(whole["verdicts"]) == set(runs)
    assert bool(whole["groups"]) == per_group  # only a lesson that decides per group has group decisions
