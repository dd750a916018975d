"""A run the provider answered is kept, and bounded in time: `replaylab record` against real HTTP
servers on 127.0.0.1 that answer with what a recording cannot hold as it comes (usage that is not a
count, more calls than a message holds, half characters, a 9 MiB text), or that trickle their
answer a byte at a time, or never end it. Each run is on disk, says what was changed and why in
its notes, and replays."""

import json
import socket
import threading
import time

import pytest
import yaml

from helpers import cli, environment, in_process
from helpers.model_server import FakeProvider, ModelServer, completion
from helpers.workflow import prepared_copy, snakemake
from replaylab.agents import recording as recording_io
from replaylab.lessons.markdown import provenance_lines

KEY = "sk-test-FAKEKEY-answers"


def record(tmp_path, base_url, run, *options, process=False):
    """`replaylab record projectile --provider openai` against `base_url`: in this process, or with
    `process`, a real one (the tests whose run must end the process in time)."""
    out = (cli if process else in_process)(
        "record", "projectile", "--provider", "openai", "--model", "fake-model", "--run", run, *options,
        cwd=tmp_path, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=base_url))
    return out, tmp_path / "results" / "live" / "projectile" / f"{run}.json"


def record_answers(tmp_path, answers, run="r"):
    with FakeProvider(answers) as provider:
        out, path = record(tmp_path, provider.base_url, run)
        asked = len(provider.requests)
    return out, path, asked


def replays(path):
    out = in_process("replay", path)
    assert out.returncode == 0, out.stderr
    return out


def notes(path):
    return {n["where"]: n["what"] for n in recording_io.load(path).notes}


@pytest.mark.parametrize("reported", [-1, 10**30, 2.5])
def test_usage_that_is_not_a_count_is_recorded_as_null_with_a_note(tmp_path, reported):
    answer = completion("done")
    answer["usage"]["prompt_tokens"] = reported
    out, path, _ = record_answers(tmp_path, [(200, answer, {}, 0)])
    assert out.returncode == 0, out.stderr
    run = recording_io.load(path)
    assert run.provenance["usage"] == {"input_tokens": None, "output_tokens": 20}
    what = notes(path)["$.provenance.usage.input_tokens"]
    assert "not a count of tokens" in what and "recorded as null" in what
    shown = provenance_lines({"label": run.label, "provenance": {**run.provenance, "how": "recorded"}})
    assert shown[-1] == (
        "- Provider-reported usage: input_tokens unknown (not a count as reported), output_tokens 20")
    replays(path)
    if reported == 10**30:
        assert "a number of 31 digits" in what


def test_a_message_of_1001_calls_is_cut_to_the_recordings_limit(tmp_path):
    calls = [(f"c{i}", "range_with_drag", json.dumps({"speed": 25, "angle": 40, "dt": 0.01})) for i in range(1001)]
    out, path, asked = record_answers(tmp_path, [(200, completion("many", calls), {}, 0), (200, completion("done"), {}, 0)])
    assert out.returncode == 0, out.stderr
    assert asked == 2  # the provider was asked once for each message, never again
    run = recording_io.load(path)
    assert len(run.transcript.steps[0].message.tool_calls) == recording_io.MAX_CALLS
    assert "held 1001 tool calls" in notes(path)["$.steps[0].tool_calls"]
    replays(path)


def test_half_characters_in_text_id_name_and_arguments_are_replaced_with_notes(tmp_path):
    # raw lone surrogates in the strings of the answer (escaped in its JSON, as a server sends them)
    calls = [("c\ud800", "range_with_drag", '{"speed": 25, "angle": 40, "dt": 0.01, "x": "\udfff"'),
             ("c2", "range\ud83d", json.dumps({"speed": 25, "angle": 40, "dt": 0.01}))]
    answers = [(200, completion("hi \ud83d there", calls), {}, 0), (200, completion("done \ud800"), {}, 0)]
    out, path, asked = record_answers(tmp_path, answers)
    assert out.returncode == 0, out.stderr
    assert asked == 2
    found = notes(path)
    assert set(found) == {"$.steps[0].text", "$.steps[0].tool_calls[0].id", "$.steps[0].tool_calls[0].arguments",
                          "$.steps[0].tool_calls[1].name", "$.steps[1].text"}
    run = recording_io.load(path)
    assert run.transcript.steps[0].message.text == "hi \ufffd there"
    replays(path)


def test_an_answer_too_large_for_a_recording_ends_the_run_recorded_with_a_note(tmp_path):
    first = completion("", [("c1", "range_with_drag", json.dumps({"speed": 25, "angle": 40, "dt": 0.01}))])
    answers = [(200, first, {}, 0), (200, completion("x" * 9_000_000), {}, 0)]
    out, path, asked = record_answers(tmp_path, answers)
    assert out.returncode == 0, out.stderr
    assert asked == 2
    assert out.stdout.splitlines()[-1].startswith(
        "wrote results/live/projectile/r.json (1 messages, not finished: message 2 was not recorded, and the run ended")
    run = recording_io.load(path)
    assert len(run.transcript.steps) == 1 and not run.transcript.finished
    assert run.ended.startswith("message 2 was not recorded, and the run ended before it: the recording would hold")
    assert "$.steps[1]" in notes(path)
    assert "not finished: message 2 was not recorded" in replays(path).stdout


# ---------------------------------------------------------------------------------------------
# Servers that take their time


class SlowServer:
    """A raw HTTP server on 127.0.0.1: it reads a request, then sends an answer's status line and
    headers, then its body one byte every `pause` seconds (`forever`: a body that never ends)."""

    def __init__(self, pause=0.3, forever=False):
        self.pause, self.forever = pause, forever
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requests = 0
        self.first = None  # time.monotonic() of the first request
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def serve(self):
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection):
        with connection:
            connection.recv(65536)
            self.requests += 1
            self.first = self.first or time.monotonic()
            body = json.dumps(completion("done")).encode()
            length = 10**9 if self.forever else len(body)
            try:
                connection.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode())
                sent = 0
                while not self.stop.is_set() and (self.forever or sent < len(body)):
                    connection.sendall(body[sent:sent + 1] or b" ")
                    sent += 1
                    time.sleep(self.pause)
            except OSError:
                return

    def close(self):
        self.stop.set()
        self.listener.close()


@pytest.mark.slow  # 5 s of run limit, in a process of its own
@pytest.mark.parametrize("forever", [False, True])
def test_a_trickling_answer_is_bounded_by_the_runs_time_and_the_run_is_recorded(tmp_path, forever):
    server = SlowServer(forever=forever)
    try:
        out, path = record(tmp_path, server.base_url, "slow", "--timeout", "3", "--max-seconds-per-run", "5", process=True)
        took = time.monotonic() - server.first  # from the first request on: the process's start is not the run's
    finally:
        server.close()
    # 5 s of run, then the recording written and the process gone (this machine is shared: a wide margin;
    # before, the trickle held the run for 2 minutes, the endless answer for ever)
    assert took < 20, (took, out.stderr)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "wrote results/live/projectile/slow.json (0 messages, stopped by max_seconds_per_run)"
    run = recording_io.load(path)
    assert run.transcript.stopped_by["limit"] == "max_seconds_per_run" and run.transcript.stopped_by["used"] < 6
    replays(path)


@pytest.mark.slow  # two requests of 2 s, in a process of its own
def test_the_request_timeout_bounds_the_whole_request_not_each_read(tmp_path):
    server = SlowServer(pause=0.5)
    host = server.base_url.split("//")[1].split("/")[0]
    try:
        out, _ = record(tmp_path, server.base_url, "slow", "--timeout", "2", "--max-retries", "1", process=True)
        took = time.monotonic() - server.first
    finally:
        server.close()
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [f"replaylab: the provider at {host} did not answer within 2 s (after retries)"]
    assert server.requests == 2  # the first request and its one retry, each cut at 2 s
    assert took < 20, took  # two requests of 2 s and the backoff between them, where each read alone took 0.5 s


# ---------------------------------------------------------------------------------------------
# In a campaign


class HugeAnswers(ModelServer):
    """The lessons' stand-in model, whose model "huge" answers each request with a 9 MB text."""

    def send(self, handler, number, status, answer, model, headers=None, seed=None):
        if model == "huge" and status == 200:
            answer["choices"][0]["message"]["content"] = "x" * 9_000_000
        return super().send(handler, number, status, answer, model, headers, seed)


@pytest.mark.workflow
@pytest.mark.slow  # a Snakemake campaign of its own
def test_a_campaign_keeps_a_run_whose_answer_no_recording_holds_and_never_pays_for_it_again(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(provider="openai", models=["huge", "fine"], lessons=["projectile"], runs=2, prices={})
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    with HugeAnswers(KEY) as server:
        env = environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
        first = snakemake(copy, "--cores", 2, "campaign", env=env, check=False, timeout=900)
        asked = server.requests
        again = snakemake(copy, "--cores", 2, "campaign", env=env, check=False, timeout=900)
        asked_again = server.requests - asked
    assert first.returncode == 0, first.stderr[-3000:]
    assert again.returncode == 0, again.stderr[-3000:]
    assert asked_again == 0  # every run is on disk: nothing is sent twice
    huge = sorted((copy / "results" / "campaigns" / "baseline" / "recordings" / "projectile").glob("huge__*.json"))
    assert len(huge) == 2
    for recorded in huge:
        run = recording_io.load(recorded)
        assert run.transcript.steps == () and not run.transcript.finished
        assert run.ended.startswith("message 1 was not recorded, and the run ended before it: the recording would hold")
        replays(recorded)
    # its page says what the recorder kept otherwise than it came, as the recording's notes say
    pages = sorted((copy / "results" / "campaigns" / "baseline" / "projectile" / "runs").glob("huge__*.md"))
    assert pages
    for page in pages:
        shown = page.read_text()
        assert "- Kept otherwise than it came, as the recorder noted (1 note):" in shown
        assert "  - at \\$.steps\\[0\\]: message 1 was not recorded, and the run ended before it" in shown
