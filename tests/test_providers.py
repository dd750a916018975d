"""The provider registry, model names in file names, retries, per-run limits, and the comparison's
statistics: against the stand-in model server on 127.0.0.1 (tests/model_server.py) where a
provider answers, through the real command line and the official SDK."""

import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.pages import with_run_pages
from helpers import ROOT, cli, environment, in_process
from helpers.model_server import ModelServer
from replaylab.build import build
from replaylab.agents import clients, recording
from replaylab.agents.names import file_safe, model_of

KEY = "sk-test-PROVIDERS0123456789abcdef"


def record(tmp_path, server, *arguments, lesson="projectile", model="good"):
    """`replaylab record LESSON --provider openai` against the stand-in, in tmp_path."""
    return in_process(
        "record", lesson, "--provider", "openai", "--model", model, *arguments,
        cwd=tmp_path, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url),
    )


# ---------------------------------------------------------------------------------------------
# The registry


def test_the_registry_holds_the_provider_modules():
    found = clients.providers()
    assert list(found) == ["authored", "inspect_ai", "interactive", "mcp", "openai", "scripted"]
    assert {name: p.kind for name, p in found.items()} == {
        "authored": "authored", "inspect_ai": "provider-api", "interactive": "interactive", "mcp": "mcp",
        "openai": "provider-api", "scripted": "scripted"}
    assert clients.names(lambda p: p.imported) == ["inspect_ai"]
    assert clients.names(lambda p: p.unattended) == ["openai", "scripted"]
    assert found["openai"].key == "OPENAI_API_KEY" and found["scripted"].key is None


def test_the_command_line_offers_the_registered_providers():
    out = in_process("record", "projectile", "--provider", "nosuch")
    assert out.returncode == 2
    assert "invalid choice: 'nosuch' (choose from 'authored', 'openai', 'scripted')" in out.stderr


ECHO = '''"""A provider added by a test: one module, nothing else changed."""

from replaylab.agents.clients import Provider, record_command, register
from replaylab.agents.clients.recorded import RecordedMessagesClient
from replaylab.agents.messages import ModelMessage


def make_client(options):
    return RecordedMessagesClient([ModelMessage("nothing to do")], options.model or "echo-1")


register(Provider("echo", "provider-api", make_client, lambda options: "echoes", lambda r: record_command(r, "echo"),
                  key="ECHO_KEY", unattended=True))
'''


def test_a_new_provider_module_is_known_everywhere(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "replaylab", src / "replaylab", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "replaylab" / "agents" / "clients" / "echo.py").write_text(ECHO)
    env = environment(PYTHONPATH=str(src))
    assert "{authored,echo,openai,scripted}" in cli("record", "--help", cwd=tmp_path, env=env).stdout
    out = cli("record", "projectile", "--provider", "echo", "--model", "e-2", "--run", "e1", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    run = recording.load(tmp_path / "results" / "live" / "projectile" / "e1.json")
    assert (run.provenance["provider"], run.provenance["model"], run.label) == ("echo", "e-2", "Recorded run")
    # this process has no echo provider: the generic command, with the recorded provider
    assert clients.rerecord_command(run) == (
        "replaylab record projectile --variant default --provider echo --model e-2 --run e1-again --group live")
    doctor = {c["what"]: c for c in json.loads(cli("doctor", "--json", "--recordings", ROOT / "recordings", cwd=tmp_path, env=env).stdout)["checks"]}
    assert doctor["provider echo"]["detail"] == "Recorded run; records campaigns, key in ECHO_KEY"
    assert doctor["ECHO_KEY"]["detail"].startswith("not set")


# ---------------------------------------------------------------------------------------------
# Model names in file names


@given(st.text(max_size=40))
def test_a_model_name_made_safe_for_a_file_name_reads_back(model):
    safe = file_safe(model)
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in safe)
    assert "__" not in safe
    assert model_of(safe) == model


def test_model_names_in_file_names():
    assert file_safe("org/model:tag") == "org_2fmodel_3atag"
    assert file_safe("gpt-4.1-mini") == "gpt-4.1-mini"
    assert file_safe("a_b") == "a_5fb"
    with pytest.raises(ValueError):
        model_of("a_zz")


# ---------------------------------------------------------------------------------------------
# Retries and failures, against the stand-in


def test_retry_after_is_honoured(tmp_path):
    """Every second request is answered 429 with Retry-After: 0.8 s; the SDK's own first backoff
    would be at most 0.5 s, so each retry waiting 0.8 s shows that Retry-After decided it."""
    with ModelServer(KEY, careful=["good"], rate_limit_every=2, retry_after=0.8) as server:
        out = record(tmp_path, server, "--run", "r1", "--max-retries", "2", lesson="hunter")  # its first variant
        log = list(server.log)
    assert out.returncode == 0, out.stderr
    limited = [i for i, entry in enumerate(log) if entry[2] == 429]
    assert limited and limited[-1] < len(log) - 1
    for i in limited:
        waited = log[i + 1][0] - log[i][0]
        assert 0.8 <= waited < 2.0, waited
    run = recording.load(tmp_path / "results" / "live" / "hunter" / "r1.json")
    assert run.transcript.finished and len(run.provenance["request_ids"]) == len(log) - len(limited)


def test_a_hung_request_and_a_dropped_connection_are_retried(tmp_path):
    with ModelServer(KEY, careful=["good"], hang_every=3, hang_seconds=3, drop_every=5) as server:
        out = record(tmp_path, server, "--run", "r2", "--timeout", "0.5", "--max-retries", "3")
        statuses = dict(server.statuses)
    assert out.returncode == 0, out.stderr
    assert statuses["hang"] >= 1 and statuses["dropped"] >= 1
    run = recording.load(tmp_path / "results" / "live" / "projectile" / "r2.json")
    assert run.transcript.finished and len(run.provenance["request_ids"]) == statuses[200]


def test_a_run_that_still_fails_says_why_in_one_line_and_writes_nothing(tmp_path):
    with ModelServer(KEY, failing=["good"]) as server:
        out = record(tmp_path, server, "--run", "r3", "--max-retries", "1")
        assert server.statuses[500] == 2  # the request and its one retry
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == ["replaylab: the provider answered 500: Error code: 500 - The server had an error"]
    assert not (tmp_path / "results" / "live" / "projectile" / "r3.json").exists()
    assert KEY not in out.stdout + out.stderr


def test_provenance_names_provider_server_usage_requests_and_time(tmp_path):
    with ModelServer(KEY, careful=["org/model:tag"]) as server:
        out = record(tmp_path, server, "--run", "p1", model="org/model:tag")
        usage, port = dict(server.usage), server.server.server_address[1]
    assert out.returncode == 0, out.stderr
    p = recording.load(tmp_path / "results" / "live" / "projectile" / "p1.json").provenance
    assert (p["provider"], p["model"], p["server"]) == ("openai", "org/model:tag", f"127.0.0.1:{port}")
    assert p["usage"] == usage and len(p["request_ids"]) >= 2
    assert p["recorded"].endswith("Z") and "T" in p["recorded"]


def test_a_recorded_run_is_never_overwritten(tmp_path):
    with ModelServer(KEY, careful=["good"]) as server:
        assert record(tmp_path, server, "--run", "once").returncode == 0
        requests = server.requests
        again = record(tmp_path, server, "--run", "once")
        assert server.requests == requests  # refused before anything was sent
    assert again.returncode == 2
    assert again.stderr.startswith("replaylab: results/live/projectile/once.json: a recording is already there, and a recorded run is never overwritten")


# ---------------------------------------------------------------------------------------------
# Per-run limits


def test_a_run_stopped_by_its_token_limit_replays_and_is_not_right(tmp_path):
    folder = tmp_path / "runs"
    with ModelServer(KEY, careful=["good"]) as server:
        out = record(tmp_path, server, "--run", "capped", "--max-tokens-per-run", "1500",
                     "--out", str(folder / "projectile" / "capped.json"))
        full = record(tmp_path, server, "--run", "full", "--out", str(folder / "projectile" / "full.json"))
    assert out.returncode == 0 and full.returncode == 0, out.stderr + full.stderr
    assert "stopped by max_tokens_per_run" in out.stdout
    capped = recording.load(folder / "projectile" / "capped.json")
    used = capped.provenance["usage"]["input_tokens"] + capped.provenance["usage"]["output_tokens"]
    assert capped.transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": 1500, "used": used}
    assert used >= 1500 and not capped.transcript.finished
    assert len(capped.transcript.steps) < len(recording.load(folder / "projectile" / "full.json").transcript.steps)
    replayed = in_process("replay", folder / "projectile" / "capped.json")
    assert replayed.returncode == 0, replayed.stderr
    build(["projectile"], folder, tmp_path / "results", progress=lambda text: None)
    scores = {s["run"]: s for s in json.loads((tmp_path / "results" / "projectile" / "results.json").read_text())["scores"]}
    assert scores["full"]["right"]
    assert scores["capped"]["wrong"] == "stopped by its limit max_tokens_per_run (1500)"
    page = with_run_pages(tmp_path / "results" / "projectile")
    assert "stopped by its limit max_tokens_per_run (1500; the run used" in page


def test_a_run_stopped_by_its_time_limit(tmp_path):
    with ModelServer(KEY, careful=["good"], latency=0.3) as server:
        out = record(tmp_path, server, "--run", "slow", "--max-seconds-per-run", "0.5")
    assert out.returncode == 0, out.stderr
    run = recording.load(tmp_path / "results" / "live" / "projectile" / "slow.json")
    assert run.transcript.stopped_by["limit"] == "max_seconds_per_run" and run.transcript.stopped_by["used"] >= 0.5
    # Every answer takes at least 0.3 s, so the second has always reached 0.5 s; on a slow machine
    # the first may reach it already. The run stops at the first answer past the limit, no later.
    assert 1 <= len(run.transcript.steps) <= 2 and not run.transcript.finished
