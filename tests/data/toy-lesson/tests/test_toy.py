"""The toy lesson's own test."""

from replaylab.lessons import registry


def test_the_tool_squares():
    assert registry.lesson("toy").all_tools().tools["square"].function(x=3) == {"value": 9}
