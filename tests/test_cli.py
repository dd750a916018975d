"""The command line as a user runs it: exit codes 0/1/2/3, one-line errors. Each command runs in this
process (`in_process`: replaylab.cli.main, what `python -m replaylab` and the console script exit
with); the last test runs both as real processes and compares them."""

import json
import subprocess

import pytest

from helpers import RECORDINGS, ROOT, cli, in_process
from replaylab.lessons import registry


def test_tools_prints_bounds_from_the_code():
    out = in_process("tools", "projectile")
    assert out.returncode == 0, out.stderr
    assert "range_with_drag(speed number 1..50, angle number 1..89, dt number 0.001..0.05)" in out.stdout
    assert "\n  answer(low integer 1..88, high integer 2..89" in out.stdout  # the answer tool is listed with its bounds too
    for lesson in ("hunter", "review", "pendulum"):  # every kind of answer field (choices, lists of names, text) prints
        listed = in_process("tools", lesson)
        assert listed.returncode == 0, listed.stderr
        # every variant name of the family: the hunter's claims about four integrators, the reviewers, the pendulum's one
        names = {v for i in registry.lesson(lesson).instances for v in registry.lesson(lesson).instance_variants(i)}
        assert listed.stdout.count("\n  answer(") == len(names)
    data = json.loads(in_process("tools", "hunter", "--json").stdout)
    assert data["symplectic-euler"]["budget"] == 8
    assert data["symplectic-euler"]["tools"][0]["parameters"]["additionalProperties"] is False


def test_unknown_lesson_is_invalid_input():
    out = in_process("tools", "astronomy")
    assert out.returncode == 2
    assert out.stderr.strip() == f"replaylab: unknown lesson 'astronomy'; the lessons are: {', '.join(registry.names())}"


def test_call_runs_and_refuses():
    out = in_process("call", "projectile", "range_with_drag", '{"speed": 25, "angle": 40, "dt": 0.01}')
    assert out.returncode == 0
    assert json.loads(out.stdout) == {"ok": True, "content": {"range_m": 35.78932829382288}}
    out = in_process("call", "projectile", "flight_time_without_drag", '{"speed": 25, "angle": 90}')
    assert out.returncode == 3
    assert json.loads(out.stdout) == {"ok": False, "content": {"error": "angle must be between 1 and 89, got 90"}}
    out = in_process("call", "projectile", "os.system", '{"command": "touch /tmp/replaylab-should-not-exist"}')
    assert out.returncode == 3 and "'os.system' is not an allowed tool" in out.stdout
    out = in_process("call", "review", "check_bounded_energy", '{"candidate": 2}')
    assert out.returncode == 0 and json.loads(out.stdout)["content"]["passed"] == 0.0


def test_call_with_bad_json_is_invalid_input():
    out = in_process("call", "projectile", "range_with_drag", "{speed: 25}")
    assert out.returncode == 2
    assert out.stderr.startswith("replaylab: the arguments: not valid JSON")
    assert len(out.stderr.strip().splitlines()) == 1


def test_replay_prints_recomputed_results():
    out = in_process("replay", "recordings/projectile/reference.json")
    assert out.returncode == 0, out.stderr
    assert "Authored example, not a recorded model run" in out.stdout
    assert "range_with_drag(speed=25, angle=35, dt=0.01) -> range_m 35.2776" in out.stdout
    data = json.loads(in_process("replay", "recordings/hunter/velocity-verlet.json", "--json").stdout)
    assert data["steps"][2]["results"][0]["content"]["error"] == "the budget of 8 experiments is spent"


def test_replay_of_a_forged_recording_is_a_mismatch(tmp_path):
    data = json.loads((RECORDINGS / "hunter" / "symplectic-euler.json").read_text())
    data["steps"][0]["results"][2]["content"]["max_energy_drift"] = 0.049
    forged = tmp_path / "symplectic-euler.json"
    forged.write_text(json.dumps(data))
    out = in_process("replay", str(forged))
    assert out.returncode == 3
    assert "message 1, call 3, tool oscillator_energy_drift: max_energy_drift was 0.049 when recorded and is 0.05156720861978181 now" in out.stderr
    assert f"--from {forged}" in out.stderr


def test_malformed_recording_is_one_line_naming_file_and_field(tmp_path):
    data = json.loads((RECORDINGS / "projectile" / "reference.json").read_text())
    data["provenance"]["api_key"] = "x"
    bad = tmp_path / "reference.json"
    bad.write_text(json.dumps(data))
    out = in_process("replay", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip() == f"replaylab: {bad}: $.provenance: unknown field 'api_key'"
    assert "Traceback" not in out.stderr


def test_record_authored_writes_under_results_live_and_replays(tmp_path):
    messages = {
        "variant": "symplectic-euler",
        "messages": [
            {"text": "try", "tool_calls": [{"id": "a", "name": "oscillator_energy_drift",
                                            "arguments": {"method": "symplectic Euler", "steps_per_period": 32, "periods": 20}}]},
            {"text": "found one", "tool_calls": []},
        ],
    }
    source = tmp_path / "mine.json"
    source.write_text(json.dumps(messages))
    out = in_process("record", "hunter", "--provider", "authored", "--from", str(source), "--run", "mine", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    written = tmp_path / "results" / "live" / "hunter" / "mine.json"
    data = json.loads(written.read_text())
    assert data["provenance"]["kind"] == "authored"
    assert data["steps"][0]["results"][0]["content"]["max_energy_drift"] == 0.10886167570727201
    assert not (tmp_path / "recordings").exists()
    assert in_process("replay", str(written)).returncode == 0


def test_record_from_a_bad_messages_file(tmp_path):
    source = tmp_path / "bad.json"
    source.write_text(json.dumps({"messages": [{"text": 3}]}))
    out = in_process("record", "projectile", "--provider", "authored", "--from", str(source), cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"replaylab: {source}: $.messages[0]: text must be a string"


def test_rerecording_a_reference_run_reproduces_it(tmp_path):
    target = tmp_path / "reference.json"
    out = in_process("record", "projectile", "--provider", "authored", "--from", "recordings/projectile/reference.json",
              "--out", str(target), "--json")
    assert out.returncode == 0, out.stderr
    old = json.loads((RECORDINGS / "projectile" / "reference.json").read_text())
    new = json.loads(target.read_text())
    old["provenance"].pop("recorded"), new["provenance"].pop("recorded")
    assert 0 <= new["provenance"].pop("seconds") < 60  # the run's wall time, which the committed run predates
    assert new["provenance"].pop("provider") == old["provenance"].pop("provider") == "authored"  # provenance names the provider
    assert new["format"] == "replaylab-recording/2" and new["steps"][-1]["tool_calls"][0]["name"] == "answer"
    assert new == old


def test_python_dash_m_and_console_script_agree():
    script = ROOT / ".venv" / "bin" / "replaylab"
    if not script.exists():
        pytest.skip("no console script in this environment")
    a = subprocess.run([str(script), "tools", "review", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert a.stdout == cli("tools", "review", "--json").stdout
