"""The live client through the real `openai` SDK over HTTP, against a server on 127.0.0.1.

A fake key is used; the tests check that it reaches none of the sinks: the recording, the
transcript, stdout, stderr, exception texts and tracebacks, and log records at DEBUG level.
"""

import json
import socket
import logging
import traceback

import pytest

from helpers import environment, in_process
from helpers.model_server import FakeProvider, completion
from replaylab.agents import loop
from replaylab.agents import recording as recording_io
from replaylab.agents.clients import ProviderError
from replaylab.agents.clients import Options
from replaylab.agents.clients.openai import OpenAIClient, make_client
from replaylab.agents.secrets import Secret
from replaylab.lessons import registry
from replaylab.lessons.projectile.judge import agent_conclusion

KEY = "sk-test-FAKEKEY0123456789abcdefXYZ"


def args_text(**arguments):
    return json.dumps(arguments)


def run_projectile(client):
    v = registry.lesson("projectile").variant("default")
    return loop.run(client, v.system, v.task, v.allowlist(), v.max_steps)


def client_for(provider, **options):
    return OpenAIClient("fake-model", Secret(KEY), base_url=provider.base_url, **options)


def assert_no_key(*texts):
    for text in texts:
        assert KEY not in text


def test_a_whole_run_is_recorded_replayed_and_judged(tmp_path):
    answers = [
        (200, completion("Two angles at the finest step.", [
            ("c1", "range_with_drag", args_text(speed=25, angle=40, dt=0.001)),
            ("c2", "range_with_drag", args_text(speed=25, angle=41, dt=0.001)),
            ("c3", "range_with_drag", args_text(speed=25, angle=45, dt=0.001)),
        ]), {}, 0),
        (200, completion("The best angle is between 40 and 41 degrees."), {}, 0),
    ]
    with FakeProvider(answers) as provider:
        out = in_process(
            "record", "projectile", "--provider", "openai", "--model", "fake-model", "--run", "live1",
            cwd=tmp_path, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=provider.base_url),
        )
        requests = provider.requests
    assert out.returncode == 0, out.stderr
    assert_no_key(out.stdout, out.stderr)
    assert "range_with_drag(speed=25, angle=40, dt=0.001) -> range_m 35.7315" in out.stdout
    # the second request carries the task, the message with its calls, then the three results
    second = requests[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert json.loads(second[3]["content"]) == {"range_m": 35.73150324969589}
    assert requests[0]["body"]["tools"][0]["function"]["parameters"]["additionalProperties"] is False
    path = tmp_path / "results" / "live" / "projectile" / "live1.json"
    text = path.read_text()
    assert_no_key(text)
    run = recording_io.load(path)
    assert run.provenance["kind"] == "provider-api" and run.label == "Recorded run"
    assert run.provenance["usage"] == {"input_tokens": 200, "output_tokens": 40}
    assert run.provenance["request_ids"] == ["req-1", "req-2"]
    replay = in_process("replay", path)
    assert replay.returncode == 0, replay.stderr
    assert agent_conclusion(run.transcript)["inside"] is True


def test_usage_is_not_invented_when_the_server_does_not_report_it():
    with FakeProvider([(200, completion("done", usage=False), {}, 0)]) as provider:
        client = client_for(provider)
        run_projectile(client)
    assert "usage" not in client.provenance_extra()


def test_a_401_that_echoes_the_key_leaks_nowhere(caplog, capsys):
    caplog.set_level(logging.DEBUG)
    body = {"error": {"message": "Incorrect API key provided: {AUTH}", "type": "invalid_request_error", "code": "invalid_api_key"}}
    with FakeProvider([(401, body, {}, 0)]) as provider:
        client = client_for(provider, max_retries=0)
        with pytest.raises(ProviderError) as caught:
            run_projectile(client)
        assert provider.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the key was really sent
    error = caught.value
    formatted = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    captured = capsys.readouterr()
    log_text = "\n".join(r.getMessage() for r in caplog.records)
    assert_no_key(str(error), repr(error), formatted, captured.out, captured.err, log_text)
    assert "401" in str(error) and "OPENAI_API_KEY" in str(error)
    assert "Incorrect API key provided" in str(error)
    assert "Bearer [redacted]" in str(error)  # the server's echo of the key arrived, cleaned


def test_a_refused_key_names_its_own_variable_and_the_server(monkeypatch):
    # a model whose key is in key_env: the message names that variable, and the server's host and port
    monkeypatch.setenv("KEY_OF_A", KEY)
    body = {"error": {"message": "no", "type": "invalid_request_error", "code": "invalid_api_key"}}
    with FakeProvider([(401, body, {}, 0)]) as provider:
        client = make_client(Options("projectile", "default", "fake-model", base_url=provider.base_url,
                                     key_variable="KEY_OF_A", max_retries=0))
        with pytest.raises(ProviderError) as caught:
            run_projectile(client)
        port = provider.base_url.split(":")[2].split("/")[0]
    assert f"the provider at 127.0.0.1:{port} refused the key in KEY_OF_A (401)" in str(caught.value)
    assert "OPENAI_API_KEY" not in str(caught.value)


def test_a_server_that_is_not_there_is_named_by_its_host_and_port():
    with socket.socket() as taken:  # a port of this machine that nothing listens on
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    client = OpenAIClient("fake-model", Secret(KEY), base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5)
    with pytest.raises(ProviderError) as caught:
        run_projectile(client)
    assert f"could not reach the provider at 127.0.0.1:{port}" in str(caught.value)


def test_a_429_is_retried_then_succeeds():
    answers = [
        (429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"retry-after-ms": "20"}, 0),
        (200, completion("nothing to do"), {}, 0),
    ]
    with FakeProvider(answers) as provider:
        transcript = run_projectile(client_for(provider, max_retries=2))
        assert len(provider.requests) == 2
    assert transcript.finished and transcript.steps[0].message.text == "nothing to do"


@pytest.mark.parametrize("arguments", [
    "{speed: 25, angle: 40",  # not JSON
    '{"speed": 25, "angle": 40, "dt": 0.01, "angle": 45}',  # a key twice: not read as the last one
])
def test_tool_call_arguments_that_are_not_one_json_object_are_refused_not_a_crash(arguments):
    answers = [
        (200, completion("", [("c1", "range_with_drag", arguments)]), {}, 0),
        (200, completion("stop"), {}, 0),
    ]
    with FakeProvider(answers) as provider:
        transcript = run_projectile(client_for(provider))
    result = transcript.steps[0].results[0]
    assert not result.ok and result.content["error"] == "the arguments must be an object, got str"
    assert transcript.steps[0].message.tool_calls[0].arguments == arguments


def test_a_timeout_is_one_clear_error():
    with FakeProvider([(200, completion("late"), {}, 1.5)]) as provider:
        client = client_for(provider, timeout=0.3, max_retries=0)
        with pytest.raises(ProviderError, match="did not answer within 0.3 s"):
            run_projectile(client)


def test_a_model_that_repeats_the_key_everywhere(tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    answers = [
        (200, completion(f"my key is {KEY}", [
            (f"id-{KEY}", f"range_with_drag{KEY}", json.dumps({KEY: 1, "speed": KEY, "angle": [KEY, {"k": KEY}]})),
            ("c2", "range_with_drag", args_text(speed=25, angle=40, dt=0.01)),
        ]), {}, 0),
        (200, completion(f"again {KEY}"), {}, 0),
    ]
    with FakeProvider(answers) as provider:
        client = client_for(provider)
        transcript = run_projectile(client)
        # the key the model repeated is not sent back to the provider either
        assert KEY not in json.dumps(provider.requests[1]["body"])
    run = recording_io.Recording("projectile", "leaky", "default", "live", recording_io.provenance("provider-api", "fake-model", "test"), transcript)
    path = tmp_path / "leaky.json"
    recording_io.save(run, path, client.secrets)
    captured = capsys.readouterr()
    assert_no_key(repr(transcript), path.read_text(), captured.out, captured.err, "\n".join(r.getMessage() for r in caplog.records))
    assert transcript.steps[0].results[1].ok  # the honest call still ran


def test_missing_key_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="^OPENAI_API_KEY is not set"):
        make_client(Options("projectile", "default", "fake-model"))


def test_missing_key_through_the_command_line(tmp_path):
    out = in_process("record", "hunter", "--provider", "openai", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("replaylab: OPENAI_API_KEY is not set")
    assert not (tmp_path / "results").exists()
