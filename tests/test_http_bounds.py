"""Issue 38, items 3, 10 and 14, against real servers on 127.0.0.1 through the real commands:
a count of tokens that is not one never lifts `max_tokens_per_run`; no redirect is followed with
the key (`record`, `doctor`); a retry's wait (Retry-After) never holds a run past
`max_seconds_per_run`; a server that trickles its answer holds `doctor` no longer than its
timeouts."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helpers import cli, environment, in_process
from helpers.model_server import FakeProvider, completion
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients.openai import OpenAIClient
from replaylab.agents.secrets import Secret
from replaylab.lessons import registry

KEY = "sk-test-FAKEKEY-bounds0123456789"
CALL = ("range_with_drag", json.dumps({"speed": 25, "angle": 40, "dt": 0.01}))


def record(tmp_path, base_url, *options, process=False):
    """`replaylab record projectile --provider openai --run r` against `base_url`: (its
    CompletedProcess, the recording's path)."""
    out = (cli if process else in_process)(
        "record", "projectile", "--provider", "openai", "--model", "fake-model", "--run", "r", *options,
        cwd=tmp_path, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=base_url))
    return out, tmp_path / "results" / "live" / "projectile" / "r.json"


def notes(path):
    return {n["where"]: n["what"] for n in recording_io.load(path).notes}


def host_of(url):
    return url.split("//")[1].split("/")[0]


# ---------------------------------------------------------------------------------------------
# Item 3: counts that are not counts


def calling(usage):
    """12 answers, each one call (the run goes on to its message limit unless a limit ends it),
    each reporting `usage`."""
    answers = []
    for i in range(12):
        body = completion("", [(f"c{i}", *CALL)])
        body["usage"] = dict(usage)
        answers.append((200, body, {}, 0))
    return answers


@pytest.mark.parametrize("reported", [-1, 1e30, None, "12", 12.0, True])
def test_a_prompt_count_that_is_not_one_is_counted_as_the_requests_size_and_the_limit_stops_the_run(tmp_path, reported):
    # before: the prompt side dropped out of the count, and only 20 tokens a message were counted:
    # the run went on to its 12th message against a limit of 10,000
    with FakeProvider(calling({"prompt_tokens": reported, "completion_tokens": 20, "total_tokens": 20})) as provider:
        out, path = record(tmp_path, provider.base_url, "--max-tokens-per-run", "10000")
        sent = [r["body"] for r in provider.requests]
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "wrote results/live/projectile/r.json (3 messages, stopped by max_tokens_per_run)"
    run = recording_io.load(path)
    assert len(sent) == 3 and len(run.transcript.steps) == 3
    sizes = [len(json.dumps({"messages": body["messages"], "tools": body["tools"]})) for body in sent]
    # each prompt counted as its request's size in bytes: at least 4,000 each, against 20 reported tokens
    assert run.transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": 10000, "used": sum(sizes) + 3 * 20}
    assert run.provenance["usage"] == {"input_tokens": None, "output_tokens": 60}
    found = notes(path)
    assert found["$.provenance.usage"] == (f"prompt_tokens of answer 1 counted towards max_tokens_per_run as {sizes[0]}, "
                                           "the most the provider may bill for it (the request's size in bytes; at most "
                                           "one token per byte)")
    assert "not a count of tokens" in found["$.provenance.usage.input_tokens"]
    assert in_process("replay", path).returncode == 0


@pytest.mark.parametrize("usage", [{"prompt_tokens": 100, "completion_tokens": -1}, None])
def test_a_completion_count_with_no_bound_stops_a_limited_run_at_once_with_a_note(tmp_path, usage):
    answers = calling(usage or {})
    if usage is None:  # a server that reports no usage at all
        for _, body, _, _ in answers:
            del body["usage"]
    with FakeProvider(answers) as provider:
        out, path = record(tmp_path, provider.base_url, "--max-tokens-per-run", "150000")
        asked = len(provider.requests)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "wrote results/live/projectile/r.json (1 messages, stopped by max_tokens_per_run)"
    assert asked == 1
    run = recording_io.load(path)
    assert run.transcript.stopped_by["limit"] == "max_tokens_per_run"
    assert [n["what"] for n in run.notes if n["where"] == "$.provenance.usage"][-1] == (
        "completion_tokens of answer 1 has no bound (the request set no max_completion_tokens nor max_tokens): "
        "the run stops there (max_tokens_per_run)")


def test_the_campaigns_progress_line_reads_any_count_a_file_holds_without_a_crash(tmp_path):
    # issue 38, item 2: the recorder writes null for a count that is not one; a file edited by hand
    # may hold anything, and the line that `replaylab campaign` prints adds it as 0, never crashes
    from replaylab.campaign_command import Watch

    path = tmp_path / "run.json"
    for given, expected in ((-5, 0), (1e30, 0), ("12", 0), (True, 0), (None, 0), ([1], 0), (7, 7)):
        path.write_text(json.dumps({"provenance": {"model": "m", "usage": {"input_tokens": given, "output_tokens": 3}}}))
        assert Watch._tokens(path) == ("m", expected, 3)


def test_without_a_limit_a_server_without_usage_gets_no_note_and_runs_on(tmp_path):
    answers = [(200, completion("", [("c1", *CALL)], usage=False), {}, 0), (200, completion("done", usage=False), {}, 0)]
    with FakeProvider(answers) as provider:
        out, path = record(tmp_path, provider.base_url)
    assert out.returncode == 0, out.stderr
    run = recording_io.load(path)
    assert len(run.transcript.steps) == 2 and run.transcript.finished
    assert run.notes == () and "usage" not in run.provenance


def test_a_completion_count_is_bounded_by_the_requests_max_tokens():
    # a model's settings with max_tokens (a campaign's): an unreadable completion count is that many
    body = completion("", [("c1", *CALL)])
    body["usage"] = {"prompt_tokens": 100, "completion_tokens": "20"}
    v = registry.lesson("projectile").variant("default")
    with FakeProvider([(200, body, {}, 0)] * 12) as provider:
        client = OpenAIClient("fake-model", Secret(KEY), base_url=provider.base_url, settings={"max_tokens": 300})
        transcript = loop.run(client, v.system, v.task, v.allowlist(), v.max_steps, limits=loop.Limits(max_tokens=1000))
        assert provider.requests[0]["body"]["max_tokens"] == 300
    assert transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": 1000, "used": 1200}  # 3 x (100 + 300)
    assert len(transcript.steps) == 3


# ---------------------------------------------------------------------------------------------
# Item 10: redirects


class Counting:
    """A server on 127.0.0.1 that counts its requests, and those that carry an Authorization header."""

    def __init__(self):
        self.requests = self.with_key = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                server.requests += 1
                server.with_key += "Authorization" in self.headers
                data = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = answer

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def close(self):
        self.http.shutdown()
        self.http.server_close()


class Redirecting(Counting):
    """Answers every request with `status` to the same path at `target`."""

    def __init__(self, target, status):
        super().__init__()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                outer.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(status)
                self.send_header("Location", target.rsplit("/v1", 1)[0] + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = answer

        self.http.RequestHandlerClass = Handler


@pytest.mark.parametrize("status", [302, 307, 308])
def test_record_follows_no_redirect_and_says_so_in_one_line(tmp_path, status):
    elsewhere = Counting()
    redirecting = Redirecting(elsewhere.base_url, status)
    try:
        out, path = record(tmp_path, redirecting.base_url, "--max-retries", "0")
    finally:
        redirecting.close()
        elsewhere.close()
    assert elsewhere.requests == 0 and elsewhere.with_key == 0  # before: the run was played by the other server
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"replaylab: the provider at {host_of(redirecting.base_url)} redirected the request to {host_of(elsewhere.base_url)} "
        f"(HTTP {status}): not followed, the key is sent to the configured server only; give the server's own URL "
        "(OPENAI_BASE_URL or --base-url)"]
    assert not path.exists()


def test_doctor_sends_the_key_to_no_host_a_redirect_names(tmp_path):
    elsewhere = Counting()
    redirecting = Redirecting(elsewhere.base_url, 302)
    try:
        out = in_process("doctor", "--json", "--recordings", tmp_path, cwd=tmp_path,
                         env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=redirecting.base_url))
    finally:
        redirecting.close()
        elsewhere.close()
    assert elsewhere.with_key == 0 and elsewhere.requests == 0  # before: the key went there
    assert redirecting.requests == 2  # the server's check, then the key's
    assert out.returncode == 1 and KEY not in out.stdout + out.stderr
    checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
    here, there = host_of(redirecting.base_url), host_of(elsewhere.base_url)
    assert checks[f"OPENAI_BASE_URL {here}"] == {
        "what": f"OPENAI_BASE_URL {here}", "ok": False,
        "detail": f"redirected to {there} (HTTP 302): not followed, the key goes to {here} only"}
    assert checks[f"OPENAI_API_KEY at {here}"]["detail"] == (
        f"not checked: redirected to {there} (HTTP 302): not followed, the key goes to {here} only")


# ---------------------------------------------------------------------------------------------
# Item 14 and 10: time


@pytest.mark.slow  # a process of its own
def test_a_retry_after_past_the_runs_deadline_is_not_waited_for(tmp_path):
    rate_limited = (429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, {"Retry-After": "60"}, 0)
    with FakeProvider([rate_limited] * 5) as provider:
        started = time.monotonic()
        out, path = record(tmp_path, provider.base_url, "--max-seconds-per-run", "5", process=True)
        took = time.monotonic() - started
        asked = len(provider.requests)
    # the process's own start and end (about 2 s on this shared machine) on top of the run's 5 s at most;
    # before: 61.8 s, the whole Retry-After
    assert took < 5 + 10, (took, out.stderr)
    assert asked == 1
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "wrote results/live/projectile/r.json (0 messages, stopped by max_seconds_per_run)"
    run = recording_io.load(path)
    assert run.transcript.stopped_by["limit"] == "max_seconds_per_run" and run.transcript.stopped_by["used"] < 5
    stop = notes(path)["$.stopped_by"]
    assert stop.startswith("request 1: the provider asked for a retry after 60 s (Retry-After); a retry after 60 s would "
                           "pass the run's deadline (") and stop.endswith("s left): not waited for, the run ended at once")
    assert in_process("replay", path).returncode == 0


def test_a_retry_after_within_the_runs_time_is_waited_for():
    answers = [(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, {"Retry-After": "1"}, 0),
               (200, completion("done"), {}, 0)]
    v = registry.lesson("projectile").variant("default")
    with FakeProvider(answers) as provider:
        client = OpenAIClient("fake-model", Secret(KEY), base_url=provider.base_url)
        started = time.monotonic()
        transcript = loop.run(client, v.system, v.task, v.allowlist(), v.max_steps, limits=loop.Limits(max_seconds=30))
        took = time.monotonic() - started
        assert len(provider.requests) == 2
    assert transcript.finished and took >= 1  # the server's second is waited for, within the run's time
    assert client.notes == []


class Trickling:
    """A raw server on 127.0.0.1 that reads a request and answers its status line one byte every
    0.2 s, for ever; it counts the connections it held and for how long (until the client left)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.held = []  # seconds each connection was held
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def serve(self):
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection):
        started = time.monotonic()
        with connection:
            connection.recv(65536)
            try:
                while not self.stop.is_set():
                    connection.sendall(b"H")
                    time.sleep(0.2)
            except OSError:
                self.held.append(time.monotonic() - started)

    def close(self):
        self.stop.set()
        self.listener.close()


@pytest.mark.slow  # 3 s and 5 s of timeouts, in a process of its own
def test_doctor_is_bounded_in_time_by_a_server_that_trickles(tmp_path):
    server = Trickling()
    try:
        started = time.monotonic()
        out = cli("doctor", "--json", "--recordings", tmp_path, cwd=tmp_path,
                  env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url))
        took = time.monotonic() - started
        time.sleep(0.5)  # the server's last write after the client left
    finally:
        server.close()
    # 3 s for the server's check and 5 s for the key's, each as a whole, and the process's start (before: for ever)
    assert took < 3 + 5 + 10, took
    assert len(server.held) == 2 and all(held < 7 for held in server.held), server.held
    assert out.returncode == 1 and KEY not in out.stdout + out.stderr
    checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
    here = host_of(server.base_url)
    assert checks[f"OPENAI_BASE_URL {here}"]["detail"] == "does not answer: no whole answer within 3 s"
    assert checks[f"OPENAI_API_KEY at {here}"]["detail"] == (
        "not checked: the server does not answer: no whole answer within 5 s")
