"""What the MCP tests share: the README's client configuration, as a user fills it in."""

import json

from helpers import ROOT


def readme_server(tmp_path):
    """The desktop snippet of the README with its one placeholder filled in, as a user does:
    /path/to/replaylab becomes a folder whose .venv is this project's."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("To make a desktop MCP client the agent", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".venv").symlink_to(ROOT / ".venv")
    config = json.loads(block.replace("/path/to/replaylab", str(clone)))
    return clone, config
