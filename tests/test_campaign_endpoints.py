"""A campaign whose models are entries of their own: each on its own stand-in server (its own port,
key and settings), recorded, replayed, judged and compared by a real Snakemake run in a copy of the
project; and the strict reader's bounds on what a recording says of the settings and the server."""

import copy as copying
import gzip
import json
import subprocess

import pytest
import yaml

from helpers import RECORDINGS, environment
from helpers.model_server import ModelServer
from helpers.workflow import copy_project, first_error_line, prepared_copy
from helpers.workflow import snakemake as run_snakemake
from replaylab.agents import recording

KEY_A = "sk-test-ENDPOINTA-0123456789abcdef"
KEY_B = "sk-test-ENDPOINTB-fedcba9876543210"
SETTINGS_A = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 300, "seed": 7, "presence_penalty": 0.1}
SETTINGS_B = {"temperature": 1.3}


def set_campaign(copy, **section):
    path = copy / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["campaign"].update(section)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def holding(folder, text):
    """Files under `folder` (hidden ones and .snakemake/ too) holding `text`: `grep -r`, and the
    gzipped tables decompressed."""
    found = subprocess.run(["grep", "-r", "-l", "-F", text, str(folder)], capture_output=True, text=True)
    assert found.returncode in (0, 1), found.stderr
    names = found.stdout.split()
    names += [str(p) for p in folder.rglob("*.gz") if text.encode() in gzip.decompress(p.read_bytes())]
    return names


@pytest.mark.slow  # a campaign recorded and compared by Snakemake
def test_two_models_on_two_servers_each_with_its_key_and_settings(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    with ModelServer(KEY_A, careful=["model-a"], served_as={"model-a": "model-a-2026-01-01"}, fingerprint="fp_a1") as a, \
            ModelServer(KEY_B) as b:
        set_campaign(copy, lessons=["projectile"], runs=4, max_connections=2, request_timeout=5, models=[
            {"name": "model-a", "provider": "openai", "base_url": a.base_url, "key_env": "KEY_OF_A", "settings": SETTINGS_A},
            {"name": "model-b", "provider": "openai", "base_url_env": "URL_OF_B", "key_env": "KEY_OF_B", "settings": SETTINGS_B},
        ])
        env = environment(KEY_OF_A=KEY_A, KEY_OF_B=KEY_B, URL_OF_B=b.base_url)
        result = run_snakemake(copy, "--cores", 4, "campaign", env=env, check=False, timeout=600)
        ports = a.server.server_address[1], b.server.server_address[1]
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]

    # each server saw only its model, with its key (a wrong key is answered 401), and the settings
    assert dict(a.started) == {"model-a": 4} and dict(b.started) == {"model-b": 4}
    assert a.statuses[401] == b.statuses[401] == 0
    assert {json.dumps(SETTINGS_A, sort_keys=True)} == set(a.sent) and {json.dumps(SETTINGS_B, sort_keys=True)} == set(b.sent)
    assert sum(a.sent.values()) == a.statuses[200] and sum(b.sent.values()) == b.statuses[200]
    assert a.max_in_flight <= 2 and b.max_in_flight <= 2  # max_connections per endpoint

    # each recording names its server, the settings sent, and what the server said it answered as
    folder = copy / "results" / "campaigns" / "baseline"
    runs = [recording.load(p) for p in sorted((folder / "recordings" / "projectile").glob("*.json"))]
    assert len(runs) == 8
    for run in runs:
        p = run.provenance
        if p["model"] == "model-a":
            assert p["server"] == f"127.0.0.1:{ports[0]}" and p["settings"] == SETTINGS_A
            assert p["served_models"] == ["model-a-2026-01-01"] and p["system_fingerprints"] == ["fp_a1"]
        else:
            assert p["server"] == f"127.0.0.1:{ports[1]}" and p["settings"] == SETTINGS_B
            assert p["served_models"] == ["model-b"] and "system_fingerprints" not in p

    # replayed, judged and compared: the careful model right every time
    rows = {r["model"]: r for r in json.loads((folder / "scorecard.json").read_text())["scorecard"]}
    assert set(rows) == {"model-a", "model-b"} and rows["model-a"]["right"] == 4 == rows["model-a"]["runs"]
    assert len(list((folder / "projectile" / "judged").glob("*.json"))) >= 1
    assert "model-a" in (folder / "index.md").read_text()

    # neither key anywhere: results, logs, benchmarks, .snakemake, the output
    for key in (KEY_A, KEY_B):
        assert holding(copy, key) == []
        assert key not in output


@pytest.mark.slow  # a campaign recorded and compared by Snakemake
def test_a_campaign_may_mix_providers(tmp_path, prepared):
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    with ModelServer(KEY_A) as a:
        set_campaign(copy, lessons=["projectile"], runs=2, max_connections=2, models=[
            {"name": "scripted-careful"}, {"name": "model-a", "provider": "openai", "base_url": a.base_url, "key_env": "KEY_OF_A"}])
        result = run_snakemake(copy, "--cores", 4, "campaign", env=environment(KEY_OF_A=KEY_A), check=False, timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    folder = copy / "results" / "campaigns" / "baseline"
    providers = {recording.load(p).provenance["provider"] for p in (folder / "recordings" / "projectile").glob("*.json")}
    assert providers == {"scripted", "openai"} and dict(a.started) == {"model-a": 2}
    page = (folder / "index.md").read_text()
    assert ("Models: scripted-careful (**Scripted baseline (a program, not a language model)**), model-a (**Recorded run**), "
            "through the provider `scripted, openai`") in page
    assert holding(copy, KEY_A) == []


def test_a_model_entry_that_cannot_work_stops_a_dry_run_with_one_line(tmp_path):
    copy = copy_project(tmp_path / "project", batch_size=50)
    set_campaign(copy, models=[{"name": "scripted-careful", "settings": {"temperature": 0.5}}])
    result = run_snakemake(copy, "-n", "campaign", check=False)
    assert result.returncode == 1
    assert first_error_line(result) == (
        "config/config.yaml: $.campaign.models[0].settings: the scripted provider has no server: it takes no settings")
    set_campaign(copy, models=[{"name": "m", "provider": "openai", "settings": {"messages": []}}])
    result = run_snakemake(copy, "-n", "campaign", check=False)
    assert first_error_line(result) == ("config/config.yaml: $.campaign.models[0].settings.messages: replaylab sets "
                                        "this field of every request itself; it cannot be a setting")
    set_campaign(copy, models=[{"name": "m", "provider": "openai", "settings": {"temperature": 3}}])
    result = run_snakemake(copy, "-n", "campaign", check=False)
    assert first_error_line(result) == "config/config.yaml: $.campaign.models[0].settings.temperature: 3 is greater than the maximum of 2"
    set_campaign(copy, models=[{"name": "m", "provider": "openai", "base_url": "http://me:sk-123@127.0.0.1:9/v1"}])
    result = run_snakemake(copy, "-n", "campaign", check=False)
    assert first_error_line(result) == ("config/config.yaml: $.campaign.models[0].base_url: holds a user part (a key?): "
                                        "a URL is written in the results; give the key's variable in key_env")
    assert not (copy / "results").exists()


def test_an_unset_key_stops_snakemake_campaign_before_any_job_and_a_dry_run_names_it(tmp_path):
    copy = copy_project(tmp_path / "project", batch_size=50)
    with ModelServer(KEY_A) as server:
        set_campaign(copy, lessons=["projectile"], runs=2, models=[
            {"name": "model-a", "provider": "openai", "base_url": server.base_url, "key_env": "KEY_OF_A"}])
        result = run_snakemake(copy, "--cores", 2, "campaign", env=environment(), check=False)
        dry = run_snakemake(copy, "-n", "campaign", env=environment(), check=False)
        assert server.requests == 0
    assert result.returncode == 1
    line = "campaign baseline: KEY_OF_A is not set: it holds the key of model-a; nothing was sent"
    assert line in result.stderr.splitlines() and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert not (copy / "results" / "campaigns").exists() and not (copy / "logs").exists()
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert line in dry.stderr.splitlines() and "campaign_record" in dry.stdout


def a_recording():
    path = next(iter(sorted((RECORDINGS / "projectile").glob("*.json"))))
    return json.loads(path.read_text())


@pytest.mark.parametrize("field,value,problem", [
    ("settings", {f"k{i}": 1 for i in range(51)}, "$.provenance.settings: "),
    ("settings", {"Temperature": 1}, "$.provenance.settings: "),
    ("settings", {"stop": "x" * 1001}, "$.provenance.settings.stop: "),
    ("served_models", ["gpt\x1b[0m"], "$.provenance.served_models[0]: 'gpt\\x1b[0m' holds the control character"),
    ("served_models", ["m"] * 2, "$.provenance.served_models: "),
    ("served_models", [f"m{i}" for i in range(21)], "$.provenance.served_models: 21 items, more than 20"),
    ("system_fingerprints", ["f" * 201], "$.provenance.system_fingerprints[0]: "),
])
def test_the_reader_bounds_what_a_recording_says_of_settings_and_server(field, value, problem):
    data = a_recording()
    good = copying.deepcopy(data)
    good["provenance"].update(settings=SETTINGS_A, served_models=["model-a-2026"], system_fingerprints=["fp_1"])
    recording.validate(good, "good.json")  # the fields as a campaign writes them
    data["provenance"][field] = value
    with pytest.raises(recording.RecordingError) as refused:
        recording.validate(data, "bad.json")
    assert str(refused.value).startswith(f"bad.json: {problem}"), str(refused.value)
