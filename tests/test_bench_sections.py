"""bench/results.md holds several benchmarks' sections: each benchmark replaces its own only."""

import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from sections import replace_section  # noqa: E402


def test_a_benchmark_replaces_its_own_section_and_keeps_the_others(tmp_path):
    results = tmp_path / "results.md"
    results.write_text("# Workflow\n\nold numbers\n\n## Campaign\n\ncampaign numbers\n\n## Fuzzing\n\nfuzz numbers\n")
    replace_section(results, "# Workflow", ["# Workflow", "", "new numbers", ""])
    assert results.read_text() == "# Workflow\n\nnew numbers\n\n## Campaign\n\ncampaign numbers\n\n## Fuzzing\n\nfuzz numbers\n"
    replace_section(results, "## Campaign", ["## Campaign", "", "campaign again"])
    assert results.read_text() == "# Workflow\n\nnew numbers\n\n## Campaign\n\ncampaign again\n\n## Fuzzing\n\nfuzz numbers\n"


def test_a_section_not_there_yet_is_added_at_the_end(tmp_path):
    results = tmp_path / "results.md"
    replace_section(results, "## Campaign", ["## Campaign", "", "first"])
    assert results.read_text() == "## Campaign\n\nfirst\n"
    replace_section(results, "## Mutation", ["## Mutation", "", "second"])
    assert results.read_text() == "## Campaign\n\nfirst\n\n## Mutation\n\nsecond\n"
