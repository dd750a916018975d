"""`replaylab doctor`: what this machine has, and whether the recordings still replay.

It says whether a key is set, never its value. With a key set, it asks the provider's server
(its configured base URL, or its default) for its list of models, a request that costs nothing:
the key is accepted or refused, and the campaign's models are among the server's or not. Each
request is bounded in total time (a server that trickles its answer is cut at its timeout) and
follows no redirect: the key goes to the configured host only, and a redirect is a failed check
naming both hosts. It checks the project's configuration (config/config.yaml) as a run of the
workflow would (replaylab.settings), from whatever folder it was started in.
"""

import importlib
import json
import platform
import sys
import urllib.parse
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from replaylab import project
from replaylab.agents import clients, environment
from replaylab.agents.recording import LABELS, printable
from replaylab.agents.secrets import clean_text

if TYPE_CHECKING:
    from replaylab import http_deadlines
    from replaylab.agents.secrets import Secret
    from replaylab.settings import Settings

CONFIG = project.CONFIG
_Row = tuple[str, bool | None, str]  # (what, ok: None for a fact neither good nor bad, detail)

MAX_ANSWER = 5_000_000  # bytes of a list of models read at most

PACKAGES = ("replaylab", "numpy", "matplotlib", "jsonschema", "PyYAML", "openai", "snakemake", "pygments", "markdown-it-py")
OPTIONAL = {  # package: the extra of pyproject.toml that installs it
    "snakemake-executor-plugin-slurm": "cluster",
    "snakemake-executor-plugin-cluster-generic": "cluster",
    "snakefmt": "test",
    "websocket-client": "test",
}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _get(url: str, key: "Secret | None", timeout: float) -> "http_deadlines.Answer | str":
    """GET URL/models (with the key, when given) within `timeout` seconds as a whole, no redirect
    followed: the server's answer, or why there is none (one line, cleaned of the key)."""
    from replaylab import http_deadlines

    headers = {"Authorization": f"Bearer {key.reveal()}"} if key is not None else {}
    try:
        return http_deadlines.fetch(url.rstrip("/") + "/models", headers, timeout, MAX_ANSWER)
    except ValueError:  # its message would show the URL, which may hold a key
        return "not a URL that can be opened"
    except http_deadlines.Unanswered as error:
        return clean_text(printable(str(error))[:200], (key,))


def _redirected(url: str, answer: "http_deadlines.Answer") -> str | None:
    """The one line of an answer that redirects elsewhere (which is not followed), else None."""
    if not 300 <= answer.status < 400:
        return None
    location = answer.headers.get("location")
    to = _server(urllib.parse.urljoin(url, location)) if location else "nowhere (no Location)"
    return f"redirected to {to} (HTTP {answer.status}): not followed, the key goes to {_server(url)} only"


def _answers(url: str, timeout: float = 3.0) -> tuple[bool, str]:
    """Whether an OpenAI-compatible server answers at URL (any HTTP status but a redirect counts as an answer)."""
    answer = _get(url, None, timeout)
    if isinstance(answer, str):
        return False, f"does not answer: {answer}"
    redirected = _redirected(url, answer)
    if redirected:
        return False, redirected
    return True, "answers" if answer.status < 400 else f"answers (HTTP {answer.status})"


def _models(url: str, key: "Secret", timeout: float = 5.0) -> tuple[bool | None, str, set[str] | None]:
    """(ok, detail, the server's model ids or None) of GET URL/models with the key: the key's check."""
    answer = _get(url, key, timeout)
    if isinstance(answer, str):
        return False, f"not checked: the server does not answer: {answer}", None
    redirected = _redirected(url, answer)
    if redirected:
        return False, f"not checked: {redirected}", None
    if answer.status in (401, 403):
        return False, f"refused by the server (HTTP {answer.status}): the key is wrong, or has no access", None
    if answer.status >= 400:
        return None, f"not checked: the server answered HTTP {answer.status} to GET /models", None
    try:
        data = json.loads(answer.body)
    except (ValueError, RecursionError):
        data = None
    found = data.get("data") if isinstance(data, dict) else None
    if not isinstance(found, list):
        return None, "not checked: the server's answer to GET /models is not a list of models", None
    ids = {m["id"] for m in found if isinstance(m, dict) and isinstance(m.get("id"), str)}
    return True, f"accepted by the server ({len(ids)} models)", ids


def _configuration(folder: str | Path | None) -> tuple[list[_Row], "Settings | None"]:
    """The project's configuration, checked as a run checks it: (rows, Settings or None)."""
    from replaylab import settings

    if folder is None or not (Path(folder) / CONFIG).is_file() or settings.schema_of(folder) is None:
        return [(str(CONFIG), None, "not here (run doctor in the project's folder to check it)")], None
    try:
        found = settings.load(folder)
    except settings.InputError as error:  # its one line
        return [(str(CONFIG), False, printable(str(error)))], None
    return [(str(CONFIG), True, "valid (the workflow's schema and checks)")], found


def _server(url: str) -> str:
    """The host (and port) of a server's URL, never its user part, path or query: they may hold a
    key (as the OpenAI client shows its server)."""
    try:
        parts = urllib.parse.urlsplit(url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    except ValueError:
        return "(not a URL)"


def _recordings(folder: str | Path, shown: str | Path) -> list[_Row]:
    """A row per recording of `folder`, each named from `shown` (the folder as the user knows it)."""
    from replaylab.agents.replay import ReplayMismatch, replay
    from replaylab.inputs import check_recording
    from replaylab.lessons import registry

    checks: list[_Row] = []
    for path in sorted(Path(folder).glob("*/*.json")):
        name = Path(shown) / path.relative_to(folder)
        try:
            run = check_recording(path, path.parent.name)
            replay(run, registry.lesson(run.lesson).variant_of(run))
            checks.append((f"recording {name}", True, "loads and replays"))
        except (ValueError, ReplayMismatch) as error:
            checks.append((f"recording {name}", False, str(error)))
    if not checks:
        checks.append((f"recordings in {shown}", False, "none found"))
    return checks


def diagnose(recordings: str | Path | None = None, project: str | Path | None = None) -> list[_Row]:
    """(what, ok, detail) rows; ok is None for facts that are neither good nor bad. `project`: the
    project's folder (its configuration is checked; by default, the current folder's);
    `recordings`: a folder of recordings as the user gave it (by default the project's
    recordings/)."""
    project = Path(project) if project is not None else Path.cwd()
    rows: list[_Row] = [("python", sys.version_info >= (3, 11), f"{platform.python_version()} ({sys.executable})")]
    for name in PACKAGES:
        version = _version(name)
        rows.append((name, version is not None, version or "not installed"))
    for name, extra in OPTIONAL.items():
        version = _version(name)
        rows.append((name, None, version or f'not installed (optional: pip install -e ".[{extra}]")'))
    folder, shown = (recordings, recordings) if recordings else (project / "recordings", "recordings")
    return rows + _providers(project) + _recordings(folder, shown)


def _providers(project: str | Path | None) -> list[_Row]:
    """Each registered provider, whether what it reads from the environment is set, whether its
    key is accepted, and whether the campaign's models are the server's."""
    found = clients.providers()
    keyless = [name for name, p in found.items() if p.key is None and (p.unattended or p.takes_file)]
    rows, configured = _configuration(project)
    campaign = configured.campaign.models if configured else ()
    for name, p in found.items():
        uses = ["imports runs (replaylab import-inspect)" if p.imported else "records campaigns" if p.unattended
                else "records runs" if p.takes_file else "records sessions"]
        uses.append(f"key in {p.key}" if p.key else "no key")
        rows.append((f"provider {name}", None, f"{LABELS[p.kind]}; " + ", ".join(uses)))
        if p.key:
            rows.append((p.key, None, "set (value not shown)" if environment.is_set(p.key)
                         else f"not set: {', '.join(keyless)} recording still work"))
        url = environment.setting(p.server) if p.server else None
        if p.server:
            if url:
                ok, detail = _answers(url)
                rows.append((f"{p.server} {_server(url)}", ok, detail))
            else:
                rows.append((p.server, None, f"not set: the {name} provider's default server"))
        url = url or getattr(importlib.import_module(f"replaylab.agents.clients.{name}"), "DEFAULT_BASE_URL", None)
        if p.key and environment.is_set(p.key) and url:
            ok, detail, ids = _models(url, environment.secret(p.key))
            rows.append((f"{p.key} at {_server(url)}", ok, detail))
            if ids is not None:
                # the campaign's models of this provider asked of this server (not of one of their own)
                for model in (m for m in campaign if m.provider == name and not m.base_url and m.base_url_env in (None, p.server)):
                    known = model.name in ids
                    rows.append((f"campaign model {printable(model.name)[:200]}", known,
                                 "one of the server's models" if known else "not one of the server's models (GET /models)"))
    return rows
