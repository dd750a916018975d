"""A provider's run keeps what was paid for: `replaylab record` against a stand-in server on
127.0.0.1 that plays the lesson and fails midway (a 500, a 200 whose body is not JSON, or the
recorder killed while it waits). The answered messages stay in the run's partial file, and the same
command continues the run: the server is asked for each message once, and the run replays."""

import json
import signal
import subprocess
import sys
from collections import Counter

import pytest

from helpers import environment, in_process, processes
from helpers.model_server import ModelServer
from replaylab import unfinished
from replaylab.agents import recording as recording_io

KEY = "sk-test-FAKEKEY-unfinished"
MODEL = "careful-model"  # the stand-in plays the lesson's careful strategy for it: 7 messages, answered


class Failing(ModelServer):
    """ModelServer, but the first request for each message number of `faults` fails: `500`, `oops`
    (a 200 whose body is `{oops`) or `hang` (no answer for a minute). Counts the requests per
    message number (`asked`) and the answers 200 per message number (`answered`)."""

    def __init__(self, faults):
        super().__init__(KEY, careful=[MODEL])
        self.faults = dict(faults)
        self.asked, self.answered = Counter(), Counter()

    def play(self, handler, number, body, model):
        message = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
        with self.lock:
            self.asked[message] += 1
            fault = self.faults.pop(message, None)
        if fault == "500":
            return self.send(handler, number, 500, {"error": {"message": "The server had an error"}}, model)
        if fault == "hang":
            import time
            time.sleep(60)
            return None
        if fault == "oops":
            self.note(model, 200)
            self.done(handler)
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "5")
            handler.end_headers()
            handler.wfile.write(b"{oops")
            return None
        with self.lock:
            self.answered[message] += 1
        return super().play(handler, number, body, model)


def command(run="r", *options):
    return ["record", "projectile", "--provider", "openai", "--model", MODEL, "--run", run, "--max-retries", "0", *options]


def record(tmp_path, server, run="r", *options, model=MODEL):
    args = command(run, *options)
    args[args.index("--model") + 1] = model
    out = in_process(*args, cwd=tmp_path, env=environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url))
    path = tmp_path / "results" / "live" / "projectile" / f"{run}.json"
    return out, path


@pytest.mark.parametrize("fault", ["500", "oops"])
def test_a_failure_after_two_answers_keeps_them_and_the_same_command_asks_only_for_the_rest(tmp_path, fault):
    with Failing({3: fault}) as server:
        first, path = record(tmp_path, server)
        partial = unfinished.partial_path(path)
        shown = partial.relative_to(tmp_path)  # as the command names it: from its folder
        assert first.returncode == 1, first.stderr
        lines = first.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(f"the 2 messages answered before are kept in {shown}: recording "
                                                     "the run again continues it"), lines
        assert not path.exists()
        data = json.loads(partial.read_text())
        assert len(data["steps"]) == 2 and data["finished"] is False
        assert data["partial"]["next"] == 3 and data["partial"]["why"].startswith("the provider failed at message 3: ")
        assert len(data["provenance"]["request_ids"]) == 2 and data["provenance"]["seconds"] >= 0
        assert server.answered == Counter({1: 1, 2: 1})

        again, _ = record(tmp_path, server)
        assert again.returncode == 0, again.stderr
    assert f"continuing the unfinished run kept in {shown}: its 2 messages replay as recorded" in again.stderr
    run = recording_io.load(path)
    messages = len(run.transcript.steps)
    assert run.transcript.finished and messages == 7
    # each message answered once; message 3 asked twice (its failed request, then once more)
    assert server.answered == Counter(dict.fromkeys(range(1, messages + 1), 1))
    assert server.asked == Counter({**dict.fromkeys(range(1, messages + 1), 1), 3: 2})
    assert len(run.provenance["request_ids"]) == messages == len(set(run.provenance["request_ids"]))
    usage = run.provenance["usage"]
    assert usage == {"input_tokens": server.usage["input_tokens"], "output_tokens": server.usage["output_tokens"]}
    assert run.provenance["seconds"] >= data["provenance"]["seconds"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.json"]  # the partial file removed, nothing else
    assert in_process("replay", path, cwd=tmp_path).returncode == 0


def test_a_killed_recorder_keeps_what_was_answered_and_the_same_command_continues(tmp_path):
    """SIGKILL while the provider is asked for message 4: messages 1 to 3 are in the partial file,
    which says where the run stopped; the rerun asks from message 4 on."""
    with Failing({4: "hang"}) as server:
        env = environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
        process = processes.start([sys.executable, "-m", "replaylab", *command()], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.until(lambda: server.asked[4] == 1, process, timeout=120)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        path = tmp_path / "results" / "live" / "projectile" / "r.json"
        data = json.loads(unfinished.partial_path(path).read_text())
        assert len(data["steps"]) == 3 and data["partial"] == {
            "next": 4, "why": unfinished.RUNNING.format(next=4)}
        again, _ = record(tmp_path, server)
        assert again.returncode == 0, again.stderr
    assert server.answered == Counter(dict.fromkeys(range(1, 8), 1))
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.json"]
    assert in_process("replay", path, cwd=tmp_path).returncode == 0


def test_a_partial_file_of_another_model_or_that_does_not_replay_is_refused_before_any_request(tmp_path):
    with Failing({3: "500"}) as server:
        first, path = record(tmp_path, server)
        assert first.returncode == 1
        partial = unfinished.partial_path(path)
        shown = partial.relative_to(tmp_path)
        asked = server.requests

        other, _ = record(tmp_path, server, model="another-model")
        assert other.returncode == 2
        assert other.stderr.strip() == (
            f"replaylab: {shown}: $.provenance.model: the unfinished run there has 'careful-model', this one "
            f"'another-model': it {unfinished.CANNOT}")

        data = json.loads(partial.read_text())
        data["steps"][0]["results"][0]["content"]["range_m"] = 1.0  # a result changed by hand
        partial.write_text(json.dumps(data))
        tampered, _ = record(tmp_path, server)
        assert tampered.returncode == 3
        assert tampered.stderr.startswith(f"replaylab: {shown}: $.steps[0].results[0]: range_m was 1.0 when recorded")
        assert server.requests == asked  # nothing asked of the provider
        assert not path.exists()


def test_the_token_limit_counts_the_tokens_of_the_kept_messages(tmp_path):
    """Two answered messages used more than the limit given to the rerun: the run ends at once,
    stopped by max_tokens_per_run with the kept messages' tokens, and nothing is asked."""
    with Failing({3: "500"}) as server:
        first, path = record(tmp_path, server)
        assert first.returncode == 1
        used = server.usage["input_tokens"] + server.usage["output_tokens"]
        asked = server.requests
        again, _ = record(tmp_path, server, "r", "--max-tokens-per-run", str(used - 1))
        assert again.returncode == 0, again.stderr
        assert server.requests == asked
    run = recording_io.load(path)
    assert len(run.transcript.steps) == 2 and not run.transcript.finished
    assert run.transcript.stopped_by == {"limit": "max_tokens_per_run", "allowed": used - 1, "used": used}
    assert in_process("replay", path, cwd=tmp_path).returncode == 0
