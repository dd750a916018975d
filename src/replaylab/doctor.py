"""`replaylab doctor`: what this machine has, and whether the recordings still replay.

It says whether a key is set, never its value, and contacts a base URL only when one is configured.
"""

import platform
import sys
import urllib.error
import urllib.parse
import urllib.request
from importlib import metadata
from pathlib import Path

from replaylab.agents import clients, environment
from replaylab.agents.recording import LABELS

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
    except ValueError:  # its message would show the URL, which may hold a key
        return False, "not a URL that can be opened"


def _server(url):
    """The host (and port) of a server's URL, never its user part, path or query: they may hold a
    key (as the OpenAI client shows its server)."""
    try:
        parts = urllib.parse.urlsplit(url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    except ValueError:
        return "(not a URL)"


def _recordings(folder):
    from replaylab.agents.replay import ReplayMismatch, replay
    from replaylab.inputs import check_recording
    from replaylab.lessons import registry

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
    return rows + _providers() + _recordings(recordings)


def _providers():
    """Each registered provider, and whether what it reads from the environment is set."""
    found = clients.providers()
    keyless = [name for name, p in found.items() if p.key is None and (p.unattended or p.takes_file)]
    rows = []
    for name, p in found.items():
        uses = ["imports runs (replaylab import-inspect)" if p.imported else "records campaigns" if p.unattended
                else "records runs" if p.takes_file else "records sessions"]
        uses.append(f"key in {p.key}" if p.key else "no key")
        rows.append((f"provider {name}", None, f"{LABELS[p.kind]}; " + ", ".join(uses)))
        if p.key:
            rows.append((p.key, None, "set (value not shown)" if environment.is_set(p.key)
                         else f"not set: {', '.join(keyless)} recording still work"))
        if p.server:
            url = environment.setting(p.server)
            if url:
                ok, detail = _answers(url)
                rows.append((f"{p.server} {_server(url)}", ok, detail))
            else:
                rows.append((p.server, None, f"not set: the {name} provider's default server"))
    return rows
