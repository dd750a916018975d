"""Runs grouped into replay jobs (replaylab.batches): stable batches, about `size` runs each."""

import pytest

from replaylab.batches import batch_count, batch_of, batches


def runs(count, prefix="r"):
    return {f"{prefix}{i:04d}": f"folder/{prefix}{i:04d}.json" for i in range(count)}


@pytest.mark.parametrize("count, size, expected", [(0, 50, 1), (1, 50, 1), (50, 50, 1), (51, 50, 2), (100, 50, 2),
                                                   (101, 50, 4), (122, 50, 4), (1000, 50, 32), (3, 1, 4)])
def test_the_count_is_the_smallest_power_of_two_that_holds_the_runs(count, size, expected):
    assert batch_count(count, size) == expected


def test_a_batch_size_below_one_is_refused():
    with pytest.raises(ValueError, match="at least one run, not 0"):
        batch_count(5, 0)


def test_every_run_is_in_exactly_one_batch_named_by_its_count():
    found = batches(runs(122), 50)
    assert set(found) <= {f"batch{i}of4" for i in range(4)}
    files = [f for members in found.values() for f in members]
    assert sorted(files) == sorted(runs(122).values())
    assert all(members == sorted(members) for members in found.values())
    assert list(found) == sorted(found)
    assert 15 <= min(map(len, found.values())) and max(map(len, found.values())) <= 50


def test_a_run_keeps_its_batch_when_another_run_changes_or_joins():
    before = batches(runs(60), 50)
    grown = {**runs(60), "new-run": "folder/new-run.json"}
    after = batches(grown, 50)
    moved = [f for batch, members in before.items() for f in members if f not in after[batch]]
    assert moved == []  # only the new run's batch changed
    assert [b for b in after if after[b] != before.get(b)] == [batch_of("new-run", 2)]


def test_the_batch_depends_on_the_name_only():
    assert batch_of("open", 8) == batch_of("open", 8)
    assert {batch_of(f"run{i}", 8) for i in range(200)} == {f"batch{i}of8" for i in range(8)}
    assert batches({}, 50) == {}
