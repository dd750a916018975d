"""The toy exercise: one call out of bounds."""

from replaylab.agents.messages import ToolCall
from replaylab.lessons.toy import lab


def exercises():
    result = lab.all_tools().dispatch(ToolCall("1", lab.TOOL, {"x": 11}))
    return {"refused": result.content["error"]}
