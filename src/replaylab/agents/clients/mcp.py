"""The `mcp` provider (`replaylab mcp`): an MCP client is the agent, and the lesson's server
(replaylab/mcp_server.py) records its calls. No client of replaylab makes these runs: this module
only tells the rest of replaylab how they are labelled and recorded again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replaylab.agents.clients import Provider, command, register

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording


def rerecord(recording: Recording) -> str:
    p = recording.provenance
    model = ["--model", p["model"]] if p.get("model_declared") else []
    return command("replaylab", "mcp", recording.lesson, "--variant", recording.variant, "--run", recording.run, *model)


register(Provider("mcp", "mcp", None, None, rerecord))
