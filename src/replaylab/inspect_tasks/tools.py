"""A variant's allowlist as Inspect tools, and replaylab's results as Inspect's tool messages.

Each tool's JSON schema is the allowlist's, verbatim (`ToolParams` from the spec). Inspect never
runs these tools: the solver sends every call through replaylab's allowlist itself, so that a
call out of bounds is refused with the allowlist's reason, not checked first by Inspect's own
validator, in its words.
"""

from typing import Any

from inspect_ai.model import ChatMessageTool
from inspect_ai.tool import ToolCallError, ToolDef, ToolParams

from replaylab.inspect_tasks.convert import result_text


def _not_run():
    """A function of its own for each tool: Inspect keeps a tool's name on its function, so tools
    that shared one would all take the last one's name."""

    async def not_run(**arguments: Any) -> str:
        raise RuntimeError("replaylab's tools run only through replaylab's allowlist (the solver dispatches every call)")

    return not_run


def tool_defs(allowlist):
    """The allowlist's tools, with their names, descriptions and parameters as the allowlist gives them."""
    return [
        ToolDef(_not_run(), name=spec["name"], description=spec["description"],
                parameters=ToolParams.model_validate(spec["parameters"]))
        for spec in allowlist.specs()
    ]


def tool_message(result):
    """A replaylab ToolResult as Inspect's tool message: the content is our JSON; a refusal is also
    the message's error, with the allowlist's reason (what the model reads of it is the provider's
    way of showing a tool's error)."""
    error = None if result.ok else ToolCallError("unknown", result.content["error"])
    function = result.name if isinstance(result.name, str) else str(result.name)
    return ChatMessageTool(content=result_text(result), tool_call_id=result.call_id, function=function, error=error)
