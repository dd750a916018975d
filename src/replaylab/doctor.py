"""`replaylab doctor`: what this machine has, and whether the recordings still replay.

It says whether a key is set, never its value, and contacts a base URL only when one is configured.
"""

import platform
import sys
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path

from replaylab.agents import environment
from replaylab.agents.clients.openai_settings import BASE_URL_VARIABLE, KEY_VARIABLE

PACKAGES = ("replaylab", "numpy", "matplotlib", "jsonschema", "PyYAML", "openai", "snakemake", "pygments", "markdown-it-py")
OPTIONAL = {  # package: the extra of pyproject.toml that installs it
    "snakemake-executor-plugin-slurm": "cluster",
    "snakemake-executor-plugin-cluster-generic": "cluster",
    "snakefmt": "test",
    "websocket-client": "test",
}


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _answers(url, timeout=3.0):
    """Whether an OpenAI-compatible server answers at URL (any HTTP status counts as an answer)."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=timeout):
            return True, "answers"
    except urllib.error.HTTPError as error:
        return True, f"answers (HTTP {error.code})"
    except (urllib.error.URLError, OSError) as error:
        return False, f"does not answer: {getattr(error, 'reason', error)}"


def _recordings(folder):
    from replaylab.agents.replay import ReplayMismatch, replay
    from replaylab.lessons import registry
    from replaylab.pipeline import check_recording

    checks = []
    for path in sorted(Path(folder).glob("*/*.json")):
        try:
            run = check_recording(path, path.parent.name)
            replay(run, registry.lesson(run.lesson).variant(run.variant))
            checks.append((f"recording {path}", True, "loads and replays"))
        except (ValueError, ReplayMismatch) as error:
            checks.append((f"recording {path}", False, str(error)))
    if not checks:
        checks.append((f"recordings in {folder}", False, "none found"))
    return checks


def diagnose(recordings="recordings"):
    """(what, ok, detail) rows; ok is None for facts that are neither good nor bad."""
    rows = [("python", sys.version_info >= (3, 11), f"{platform.python_version()} ({sys.executable})")]
    for name in PACKAGES:
        version = _version(name)
        rows.append((name, version is not None, version or "not installed"))
    for name, extra in OPTIONAL.items():
        version = _version(name)
        rows.append((name, None, version or f'not installed (optional: pip install -e ".[{extra}]")'))
    rows.append((KEY_VARIABLE, None, "set (value not shown)" if environment.is_set(KEY_VARIABLE) else "not set: scripted and authored recording still work"))
    base_url = environment.setting(BASE_URL_VARIABLE)
    if base_url:
        ok, detail = _answers(base_url)
        rows.append((f"{BASE_URL_VARIABLE} {base_url}", ok, detail))
    else:
        rows.append((BASE_URL_VARIABLE, None, "not set: OpenAI's default"))
    return rows + _recordings(recordings)
