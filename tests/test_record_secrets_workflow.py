"""Recording through the Snakemake `record` target with the openai provider, against a real HTTP
server on 127.0.0.1, in a temporary copy of the project: the key reaches the server and nothing else.

The model repeats the key in its text, call ids, argument names and values. After the run, no file
of the copy (results, logs, benchmarks, Snakemake's metadata and logs) and neither of Snakemake's
output streams holds it; a server that refuses the key and echoes it back changes nothing.
"""

import json

import pytest

from helpers.pages import with_run_pages
from helpers.model_server import FakeProvider, completion
from replaylab.agents import recording as recording_io
from helpers import environment
from helpers.workflow import prepared_copy, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.slow]  # the record target, run by Snakemake in copies of its own

KEY = "sk-test-WORKFLOWKEY0123456789abcdef"
SE, VV = "symplectic Euler", "velocity Verlet"


def args_text(**arguments):
    return json.dumps(arguments)


def one_variant():
    """The answers for one recording process: a message with tool calls, then the final message."""
    calls = [
        (f"id-{KEY}", "oscillator_energy_drift", json.dumps({"method": KEY, KEY: 1, "steps_per_period": 64, "periods": 20})),
        ("c2", "oscillator_energy_drift", args_text(method=SE, steps_per_period=64, periods=20)),
        ("c3", "oscillator_energy_drift", args_text(method=VV, steps_per_period=16, periods=50)),
    ]
    return [
        (200, completion(f"Trying coarse steps; by the way my key is {KEY}.", calls), {}, 0),
        (200, completion(f"Done. The key was {KEY} and 64/20 breaks the claim."), {}, 0),
    ]


def record(copy, provider):
    """`snakemake --cores 1 record` with the openai provider, the key and the server in the environment."""
    return snakemake(
        copy, "--cores", "1", "record", "--config", "provider=openai", "model=fake-model", "record_lesson=hunter",
        check=False, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=provider.base_url),
    )


def files_holding_the_key(copy):
    found = []
    for path in sorted(copy.rglob("*")):
        if KEY in str(path.relative_to(copy)):
            found.append(str(path))
        elif path.is_file() and not path.is_symlink() and KEY.encode() in path.read_bytes():
            found.append(str(path.relative_to(copy)))
    return found


def test_recording_through_the_workflow_keeps_the_key_out_of_every_file(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project")
    with FakeProvider(one_variant() + one_variant()) as provider:
        result = record(copy, provider)
        requests = list(provider.requests)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    # the two variants were recorded by two processes, each with its own two requests
    assert len(requests) == 4
    assert all(r["path"] == "/v1/chat/completions" for r in requests)
    assert [r["headers"]["authorization"] for r in requests] == [f"Bearer {KEY}"] * 4  # the key was really sent
    assert output.count("Recording results/live/hunter/new-") == 2  # the record_run jobs
    # ...and the key the model repeated was never sent back to the server
    assert not any(KEY in json.dumps(r["body"]) for r in requests)

    live = copy / "results" / "live" / "hunter"
    assert sorted(p.name for p in live.glob("*.json")) == ["new-symplectic-euler.json", "new-velocity-verlet.json"]
    for name in ("symplectic-euler", "velocity-verlet"):
        run = recording_io.load(live / f"new-{name}.json")
        assert run.label == "Recorded run" and run.provenance["kind"] == "provider-api"
        assert run.provenance["model"] == "fake-model" and run.variant == name
        first = run.transcript.steps[0]
        assert [r.ok for r in first.results] == [False, True, True]  # the leaky call was refused, the others ran
        assert run.transcript.finished
    page = with_run_pages(live / "new")
    assert "**Recorded run**" in page
    assert "- Messages produced by: fake-model" in page
    assert (copy / "logs" / "live" / "hunter" / "new-symplectic-euler.record.log").is_file()
    assert list((copy / ".snakemake").rglob("*")), "Snakemake kept no metadata: nothing was checked there"
    assert (copy / "benchmarks" / "live" / "hunter" / "new-velocity-verlet.record.tsv").is_file()

    assert files_holding_the_key(copy) == []
    assert KEY not in result.stdout and KEY not in result.stderr


def test_a_refused_key_fails_the_record_target_with_one_line_and_leaks_nowhere(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project")
    body = {"error": {"message": "Incorrect API key provided: {AUTH}", "type": "invalid_request_error", "code": "invalid_api_key"}}
    with FakeProvider([(401, body, {}, 0)] * 2) as provider:
        result = record(copy, provider)
        requests = list(provider.requests)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert requests and requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert "Error in rule record_run" in output
    (log,) = [p.read_text(encoding="utf-8") for p in (copy / "logs" / "live" / "hunter").glob("*.record.log")]
    line = f"the provider at {provider.base_url.split('//')[1].split('/')[0]} refused the key in OPENAI_API_KEY (401): "
    # one line, in the job's log and (through tee) in Snakemake's output, with the server's reason
    assert log.startswith(line) and len(log.strip().splitlines()) == 1, log
    assert "Incorrect API key provided" in log and "Traceback" not in log
    assert log.strip() in output
    assert not list((copy / "results" / "live").glob("hunter/*.json"))  # nothing half-written was kept
    assert files_holding_the_key(copy) == []
    assert KEY not in result.stdout and KEY not in result.stderr
