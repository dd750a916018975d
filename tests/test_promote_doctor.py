"""`replaylab promote` (the only way into recordings/) and `replaylab doctor`."""

import json
import shutil

from helpers import RECORDINGS, cli, environment
from helpers.openai_server import FakeProvider


def test_promote_shows_the_change_then_copies(tmp_path):
    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, recordings)
    out = cli("record", "hunter", "--variant", "velocity-verlet", "--provider", "scripted", "--run", "velocity-verlet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    new = tmp_path / "results" / "live" / "hunter" / "velocity-verlet.json"
    before = (recordings / "hunter" / "velocity-verlet.json").read_text()

    dry = cli("promote", str(new), "--recordings", str(recordings), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "produced by: written by a person (no language model) -> hunter baseline, coarse-first" in dry.stdout
    assert "messages: 4 -> 3" in dry.stdout
    assert "verdict: inconclusive (8 tested, closest 16/50)" in dry.stdout
    assert (recordings / "hunter" / "velocity-verlet.json").read_text() == before

    done = cli("promote", str(new), "--recordings", str(recordings))
    assert done.returncode == 0 and "copied" in done.stdout
    assert (recordings / "hunter" / "velocity-verlet.json").read_text() == new.read_text()


def test_promote_refuses_a_run_that_does_not_replay(tmp_path):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["steps"][0]["results"][0]["content"]["max_energy_drift"] = 0.5
    forged = tmp_path / "symplectic-euler.json"
    forged.write_text(json.dumps(data))
    recordings = tmp_path / "recordings"
    out = cli("promote", str(forged), "--recordings", str(recordings))
    assert out.returncode == 3 and "max_energy_drift was 0.5 when recorded" in out.stderr
    assert not recordings.exists()


def test_doctor_reports_without_showing_the_key():
    key = "sk-test-DOCTORKEY0123456789abcdef"
    with FakeProvider([]) as provider:
        out = cli("doctor", "--json", env=environment(OPENAI_API_KEY=key, OPENAI_BASE_URL=provider.base_url))
    assert out.returncode == 0, out.stdout + out.stderr
    assert key not in out.stdout + out.stderr
    checks = {c["what"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["OPENAI_API_KEY"]["detail"] == "set (value not shown)"
    assert checks[f"OPENAI_BASE_URL {provider.base_url}"]["ok"] is True
    assert checks["recording recordings/projectile/reference.json"]["ok"] is True


def test_doctor_fails_on_a_recording_that_does_not_replay(tmp_path):
    (tmp_path / "hunter").mkdir()
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["task"] = "a different task"
    (tmp_path / "hunter" / "symplectic-euler.json").write_text(json.dumps(data))
    out = cli("doctor", "--recordings", str(tmp_path))
    assert out.returncode == 1
    assert "FAIL recording" in out.stdout and "the task has changed" in out.stdout
