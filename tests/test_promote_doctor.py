"""`replaylab promote` (the only way into recordings/) and `replaylab doctor`."""

import dataclasses
import json
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from helpers import RECORDINGS, ROOT, environment, in_process
from helpers.model_server import FakeProvider
from replaylab.agents import loop, recording
from replaylab.agents.clients import authored
from replaylab.agents.clients.recorded import RecordedMessagesClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.replay import ReplayMismatch
from replaylab.lessons import registry
from replaylab.promote import describe_changes, promote, verdict


def test_promote_shows_the_change_then_moves(tmp_path):
    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, recordings)
    out = in_process("record", "hunter", "--variant", "velocity-verlet", "--provider", "scripted", "--run", "velocity-verlet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    new = tmp_path / "results" / "live" / "hunter" / "velocity-verlet.json"
    before = (recordings / "hunter" / "velocity-verlet.json").read_text()

    dry = in_process("promote", str(new), "--recordings", str(recordings), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "produced by: written by a person (no language model) -> hunter baseline, coarse-first" in dry.stdout
    assert "messages: 4 -> 3" in dry.stdout
    assert ("verdict: answer none found: right (the build's scan of the whole domain finds at most 0.0385531 (16 steps per "
            "period, 50 periods) against the limit 0.04); supported: none of the hunt's 8 counted experiments broke the claim") in dry.stdout
    assert "  now: message 3, call 1: answer(outcome='none found') -> accepted: none found; the run has ended" in dry.stdout
    assert (recordings / "hunter" / "velocity-verlet.json").read_text() == before

    recorded = new.read_bytes()
    done = in_process("promote", str(new), "--recordings", str(recordings))
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == f"moved {new} -> {recordings / 'hunter' / 'velocity-verlet.json'}"
    assert (recordings / "hunter" / "velocity-verlet.json").read_bytes() == recorded
    assert not new.exists()  # one copy: the run now lives in recordings/ only


def test_promote_refuses_a_run_that_does_not_replay(tmp_path):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["steps"][0]["results"][0]["content"]["max_energy_drift"] = 0.5
    forged = tmp_path / "symplectic-euler.json"
    forged.write_text(json.dumps(data))
    recordings = tmp_path / "recordings"
    out = in_process("promote", str(forged), "--recordings", str(recordings))
    assert out.returncode == 3 and "max_energy_drift was 0.5 when recorded" in out.stderr
    assert not recordings.exists()


def test_doctor_reports_without_showing_the_key():
    key = "sk-test-DOCTORKEY0123456789abcdef"
    with FakeProvider([]) as provider:
        out = in_process("doctor", "--json", env=environment(OPENAI_API_KEY=key, OPENAI_BASE_URL=provider.base_url))
    assert out.returncode == 0, out.stdout + out.stderr
    assert key not in out.stdout + out.stderr
    checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["OPENAI_API_KEY"]["detail"] == "set (value not shown)"
    host = provider.base_url.split("//")[1].split("/")[0]
    assert checks[f"OPENAI_BASE_URL {host}"]["ok"] is True
    assert checks["recording recordings/projectile/reference.json"]["ok"] is True


def test_doctor_shows_the_servers_host_never_a_key_in_its_url():
    for url in ("http://user:URLSECRET1@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api-key=URLSECRET1"):
        out = in_process("doctor", "--json", env=environment(OPENAI_BASE_URL=url))
        assert "URLSECRET1" not in out.stdout + out.stderr and "Traceback" not in out.stderr
        checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
        assert checks["OPENAI_BASE_URL 127.0.0.1:9"]["ok"] is False


def test_doctor_fails_on_a_recording_that_does_not_replay(tmp_path):
    (tmp_path / "hunter").mkdir()
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["task"] = "a different task"
    (tmp_path / "hunter" / "symplectic-euler.json").write_text(json.dumps(data))
    out = in_process("doctor", "--recordings", str(tmp_path))
    assert out.returncode == 1
    assert "FAIL recording" in out.stdout and "the task has changed" in out.stdout


# ---------------------------------------------------------------------------------------------
# What promote shows and does, in this process (each line exact)


@pytest.mark.parametrize(
    "run, expected",
    [
        ("projectile/reference", "answer 40 to 41 degrees: right (the build's converged scan puts the best angle at 40.50 degrees); "
                                 "supported: at dt 0.001 s its longest throw is at 41 degrees, between shorter ones at 40 and 45, "
                                 "and the parabola through them tops at 40.54 degrees, inside its answer"),
        ("hunter/symplectic-euler", "answer counterexample symplectic Euler, 64 steps per period, 20 periods: right (the build ran "
                                    "it again: 0.0515672 against the limit 0.05, inside the claim's domain); supported: the hunt ran "
                                    "its counterexample and saw it break the claim (0.0515672)"),
        ("hunter/velocity-verlet", "answer none found: right (the build's scan of the whole domain finds at most 0.0385531 (16 steps "
                                   "per period, 50 periods) against the limit 0.04); supported: none of the hunt's 8 counted "
                                   "experiments broke the claim"),
        ("review/physics", "answer piece 1 fails none; piece 2 fails bounded-energy: right (the build's own checks fail on piece 1: "
                           "none of the remit; on piece 2: bounded-energy); supported: it ran every check of its remit on both "
                           "pieces and named exactly the ones that failed [its checks: piece 1 limits passed; piece 2 limits "
                           "passed; piece 1 bounded-energy passed; piece 2 bounded-energy failed]"),
        ("pendulum/reference", "answer 22 to 23 degrees: right (the exact crossing is at 22.8138 degrees); supported: its "
                               "own periods at dt 0.01 s put the crossing between 22 and 23 degrees, which lies in its answer"),
    ],
)
def test_the_verdict_line_of_each_lesson(run, expected):
    assert verdict(recording.load(RECORDINGS / f"{run}.json")) == expected


def authored_run(lesson, variant_name, messages, run="mine", model=authored.MODEL, kind="authored"):
    v = registry.lesson(lesson).variant(variant_name)
    transcript = loop.run(RecordedMessagesClient(messages, model), v.system, v.task, v.allowlist(), v.max_steps)
    return recording.Recording(lesson, run, variant_name, "live", recording.provenance(kind, model, "how"), transcript)


def drift(i, steps, periods=20, method="symplectic Euler"):
    return ToolCall(str(i), "oscillator_energy_drift", {"method": method, "steps_per_period": steps, "periods": periods})


def answer(i, **fields):
    return ToolCall(str(i), "answer", fields)


def test_the_verdict_lines_of_runs_without_an_answer_or_without_support():
    """No answer is not right, whatever the run did; an answer is shown as submitted with both
    judgements, each with what the build found."""
    none = authored_run("projectile", "default", [ModelMessage("I give up.")])
    assert verdict(none) == "no answer: the run ended without an accepted call of answer: not right"
    one = authored_run("projectile", "default", [ModelMessage("", (ToolCall("1", "range_with_drag", {"speed": 25, "angle": 40, "dt": 0.01}),)),
                                                 ModelMessage("", (answer(2, low=40, high=41),))])
    assert verdict(one) == ("answer 40 to 41 degrees: right (the build's converged scan puts the best angle at 40.50 degrees); not "
                            "supported: its data do not locate the maximum: its longest throw at dt 0.01 s is at 40 degrees, and it "
                            "measured no shorter throw below that angle at dt 0.01 s")
    wide = authored_run("projectile", "default", [ModelMessage("", (ToolCall("1", "range_with_drag", {"speed": 25, "angle": 40, "dt": 0.01}),
                                                                     ToolCall("2", "range_with_drag", {"speed": 25, "angle": 45, "dt": 0.01}))),
                                                  ModelMessage("", (answer(3, low=44, high=45),))])
    assert verdict(wide) == ("answer 44 to 45 degrees: wrong, the best angle of the build's scan lies outside its bracket (the build's "
                             "converged scan puts the best angle at 40.50 degrees); not supported: its data do not locate the "
                             "maximum: its longest throw at dt 0.01 s is at 40 degrees, and it measured no shorter throw below "
                             "that angle at dt 0.01 s")
    across = authored_run("projectile", "default", [ModelMessage("", tuple(ToolCall(str(i), "range_with_drag", {"speed": 25, "angle": a, "dt": 0.001})
                                                                           for i, a in enumerate((39, 40, 41, 42), start=1))),
                                                    ModelMessage("", (answer(5, low=41, high=42),))])
    assert verdict(across) == ("answer 41 to 42 degrees: wrong, the best angle of the build's scan lies outside its bracket (the build's "
                               "converged scan puts the best angle at 40.50 degrees); not supported: at dt 0.001 s its longest throw is "
                               "at 41 degrees, between shorter ones at 40 and 42, and the parabola through them tops at 40.54 degrees, "
                               "outside its answer")
    hunt = authored_run("hunter", "symplectic-euler", [ModelMessage("", (answer(1, outcome="none found"),))])
    assert verdict(hunt) == ("answer none found: wrong, none found, but the claim's domain has a counterexample (the build's scan of the "
                             "whole domain finds at most 0.244321 (16 steps per period, 50 periods) against the limit 0.05); not "
                             "supported: the hunt ran no experiment inside the claim's domain")
    guessed = authored_run("hunter", "symplectic-euler", [ModelMessage("", (answer(1, outcome="counterexample", method="symplectic Euler",
                                                                                   steps_per_period=16, periods=50),))])
    assert verdict(guessed) == ("answer counterexample symplectic Euler, 16 steps per period, 50 periods: right (the build ran it again: "
                                "0.244321 against the limit 0.05, inside the claim's domain); not supported: the hunt did not run its "
                                "counterexample among its counted experiments")
    review = authored_run("review", "physics", [ModelMessage("no check")])
    assert verdict(review) == "no answer: the run ended without an accepted call of answer: not right [its checks: none]"


def test_describe_changes_shows_every_changed_call_and_the_verdict():
    old = authored_run("hunter", "symplectic-euler", [ModelMessage("", (drift(1, 200), drift(2, 64))), ModelMessage("done")])
    new = authored_run("hunter", "symplectic-euler", [ModelMessage("", (drift(1, 200), drift(2, 100), drift(3, 32))), ModelMessage("", (drift(4, 16),)),
                                                      ModelMessage("", (answer(5, outcome="counterexample", method="symplectic Euler", steps_per_period=32, periods=20),))],
                       model="gpt-test", kind="provider-api")
    assert describe_changes(new, old) == [
        "run hunter/mine: Recorded run (gpt-test)",
        "  produced by: written by a person (no language model) -> gpt-test",
        "  messages: 2 -> 3",
        "  was: message 1, call 2: oscillator_energy_drift(method='symplectic Euler', steps_per_period=64, periods=20) -> max_energy_drift 0.0515672",
        "  now: message 1, call 2: oscillator_energy_drift(method='symplectic Euler', steps_per_period=100, periods=20) -> max_energy_drift 0.0324349",
        "  was: (none)",
        "  now: message 1, call 3: oscillator_energy_drift(method='symplectic Euler', steps_per_period=32, periods=20) -> max_energy_drift 0.108862",
        "  was: (none)",
        "  now: message 2, call 1: oscillator_energy_drift(method='symplectic Euler', steps_per_period=16, periods=20) -> max_energy_drift 0.244321",
        "  was: (none)",
        "  now: message 3, call 1: answer(outcome='counterexample', method='symplectic Euler', steps_per_period=32, periods=20) -> accepted: counterexample symplectic Euler, 32 steps per period, 20 periods; the run has ended",
        "  verdict: no answer: the run ended without an accepted call of answer: not right -> answer counterexample symplectic Euler, "
        "32 steps per period, 20 periods: right (the build ran it again: 0.108862 against the limit 0.05, inside the claim's domain); "
        "supported: the hunt ran its counterexample and saw it break the claim (0.108862)",
    ]
    same = dataclasses.replace(old, transcript=dataclasses.replace(old.transcript, steps=old.transcript.steps[:1] + (old.transcript.steps[1],)))
    assert describe_changes(same, old)[1:] == ["  messages: 2 -> 2", "  calls and results: unchanged",
                                               "  verdict: no answer: the run ended without an accepted call of answer: not right"]
    assert describe_changes(new, None)[:3] == ["run hunter/mine: Recorded run (gpt-test)", "new recording (nothing to replace)",
                                               "  3 messages, 5 calls"]
    assert describe_changes(new, None)[3:] == [f"  verdict: {verdict(new)}"] and verdict(new).startswith("answer counterexample")
    assert describe_changes(new, None, "it is cut")[1] == "replaces a recording that does not load: it is cut"
    one_call = authored_run("hunter", "symplectic-euler", [ModelMessage("", (drift(1, 64),)), ModelMessage("done")])
    assert describe_changes(one_call, None)[2] == "  2 messages, 1 call"
    assert describe_changes(authored_run("hunter", "symplectic-euler", [ModelMessage("done")]), None)[2] == "  1 message, 0 calls"
    fewer = describe_changes(old, new)
    assert fewer[-5:-1] == [
        "  was: message 2, call 1: oscillator_energy_drift(method='symplectic Euler', steps_per_period=16, periods=20) -> max_energy_drift 0.244321",
        "  now: (none)",
        "  was: message 3, call 1: answer(outcome='counterexample', method='symplectic Euler', steps_per_period=32, periods=20) -> accepted: counterexample symplectic Euler, 32 steps per period, 20 periods; the run has ended",
        "  now: (none)",
    ]
    refused = authored_run("hunter", "symplectic-euler", [ModelMessage("", (drift(1, 200), drift(2, 2))), ModelMessage("done")])
    assert "  now: message 1, call 2: oscillator_energy_drift(method='symplectic Euler', steps_per_period=2, periods=20) -> refused: steps_per_period must be between 4 and 200, got 2" in describe_changes(refused, old)


def test_promote_in_this_process_moves_the_run_and_says_so(tmp_path):
    source = tmp_path / "live" / "symplectic-euler.json"
    source.parent.mkdir()
    source.write_bytes((RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes())
    target = tmp_path / "recordings" / "hunter" / "symplectic-euler.json"
    lines = promote(source, tmp_path / "recordings", dry_run=True)
    assert lines[-1] == f"dry run: {target} left as it was, and {source} where it is"
    assert lines[:2] == ["run hunter/symplectic-euler: Authored example, not a recorded model run (written by a person (no language model))",
                         "new recording (nothing to replace)"]
    assert not target.exists() and source.exists()
    assert promote(source, tmp_path / "recordings")[-1] == f"moved {source} -> {target}"
    assert target.read_bytes() == (RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes() and not source.exists()
    with pytest.raises(recording.RecordingError, match=f"^{target}: is the recording {target} itself: nothing to promote$"):
        promote(target, tmp_path / "recordings")


def test_promote_moves_into_recordings_of_the_working_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine.json").write_bytes((RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes().replace(
        b'"run": "symplectic-euler"', b'"run": "mine"'))
    assert promote("mine.json")[-1] == "moved mine.json -> recordings/hunter/mine.json"
    assert Path("recordings/hunter/mine.json").is_file()


def test_promote_says_when_it_could_not_remove_the_source(tmp_path, monkeypatch):
    source = tmp_path / "symplectic-euler.json"
    source.write_bytes((RECORDINGS / "hunter" / "symplectic-euler.json").read_bytes())

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(source), "unlink", refuse)
    lines = promote(source, tmp_path / "recordings")
    target = tmp_path / "recordings" / "hunter" / "symplectic-euler.json"
    assert lines[-1] == f"copied {source} -> {target}; {source} could not be removed (Permission denied): remove it by hand"
    assert target.is_file() and source.is_file()


def test_promote_replays_within_the_tolerance_it_is_given(tmp_path):
    data = (RECORDINGS / "hunter" / "symplectic-euler.json").read_text()
    value = json.loads(data)["steps"][0]["results"][0]["content"]["max_energy_drift"]
    source = tmp_path / "symplectic-euler.json"
    source.write_text(data.replace(repr(value), repr(value * (1 + 1e-7)), 1))  # off by 1e-7, relative
    with pytest.raises(ReplayMismatch, match=f"^{source}: message 1, call 1, tool oscillator_energy_drift: max_energy_drift was") as refused:
        promote(source, tmp_path / "recordings", dry_run=True, tolerance=1e-9)
    assert (refused.value.difference.message, refused.value.difference.key) == (1, "max_energy_drift")  # kept for the caller
    assert promote(source, tmp_path / "recordings", dry_run=True)[-1].startswith("dry run: ")  # within 1e-6
    exact = tmp_path / "exact" / "symplectic-euler.json"
    exact.parent.mkdir()
    exact.write_text(data)
    assert promote(exact, tmp_path / "recordings", dry_run=True, tolerance=0)[-1].startswith("dry run: ")


class ModelsServer:
    """GET /v1/models on 127.0.0.1: the list of `models` for the right key, 401 otherwise."""

    def __init__(self, key, models):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.asked.append(self.path)
                right = self.headers.get("Authorization") == f"Bearer {key}"
                body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]} if right
                                  else {"error": {"message": f"Incorrect API key provided: {self.headers.get('Authorization')}"}})
                self.send_response(200 if right else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

        self.asked = []
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def close(self):
        self.http.shutdown()
        self.http.server_close()


def doctor_in(folder, key, url):
    out = in_process("doctor", "--json", cwd=folder, env=environment(OPENAI_API_KEY=key, OPENAI_BASE_URL=url,
                                                              PYTHONPATH=str(ROOT / "src")))
    assert "Traceback" not in out.stderr and key not in out.stdout + out.stderr
    return out, {c["what"]: c for c in json.loads(out.stdout)["checks"]}


def project_with_campaign(tmp_path, models):
    """A folder with the workflow's schema and a configuration whose campaign asks openai for `models`."""
    shutil.copytree(ROOT / "workflow" / "schemas", tmp_path / "workflow" / "schemas")
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["campaign"].update(provider="openai", models=models, prices={})
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    shutil.copytree(RECORDINGS, tmp_path / "recordings")
    return tmp_path


def test_doctor_checks_the_key_with_a_models_request_and_the_campaigns_models(tmp_path):
    key = "sk-test-DOCTORMODELS0123456789"
    server = ModelsServer(key, ["model-a", "model-b"])
    try:
        folder = project_with_campaign(tmp_path, ["model-a", "model-z"])
        out, checks = doctor_in(folder, key, server.base_url)
        wrong, wrong_checks = doctor_in(folder, "sk-test-WRONGKEY0123456789", server.base_url)
    finally:
        server.close()
    host = server.base_url.split("//")[1].split("/")[0]
    assert set(server.asked) == {"/v1/models"}  # the models request, nothing that costs
    assert checks[f"OPENAI_API_KEY at {host}"] == {"what": f"OPENAI_API_KEY at {host}", "ok": True,
                                                    "detail": "accepted by the server (2 models)"}
    assert checks["campaign model model-a"]["ok"] is True
    assert checks["campaign model model-z"]["ok"] is False
    assert checks["config/config.yaml"]["ok"] is True
    assert out.returncode == 1  # a model of the campaign the server does not have
    assert wrong.returncode == 1
    assert wrong_checks[f"OPENAI_API_KEY at {host}"]["ok"] is False
    assert wrong_checks[f"OPENAI_API_KEY at {host}"]["detail"] == (
        "refused by the server (HTTP 401): the key is wrong, or has no access")
    assert "campaign model model-a" not in wrong_checks


def test_doctor_checks_the_campaign_configuration(tmp_path):
    folder = project_with_campaign(tmp_path, ["model-a"])
    config = yaml.safe_load((folder / "config" / "config.yaml").read_text())
    config["campaign"]["runs"] = 0
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    out = in_process("doctor", "--json", cwd=folder, env=environment(PYTHONPATH=str(ROOT / "src")))
    checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
    assert out.returncode == 1
    assert checks["config/config.yaml"] == {"what": "config/config.yaml", "ok": False,
                                            "detail": "config/config.yaml: $.campaign.runs: 0 is less than the minimum of 1"}
