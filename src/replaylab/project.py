"""Where the project is: the folder of the workflow's Snakefile and config/config.yaml, whose paths
(config/, recordings/, results/) the commands that read the configuration are relative to, wherever
they are started from.

`REPLAYLAB_PROJECT` names it (a clone, or a folder of your own that uses the workflow); else it is
the nearest folder at or above the current one that holds both. None when there is none.
"""

import os
from pathlib import Path

CONFIG = Path("config") / "config.yaml"
SNAKEFILE = Path("Snakefile")
VARIABLE = "REPLAYLAB_PROJECT"


def is_project(folder: Path) -> bool:
    return (folder / SNAKEFILE).is_file() and (folder / CONFIG).is_file()


def find(start: str | Path | None = None) -> Path | None:
    """The project's folder (absolute), or None."""
    named = os.environ.get(VARIABLE)
    if named:
        return Path(named).resolve() if is_project(Path(named)) else None
    here = Path(start or os.getcwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_project(folder)), None)
