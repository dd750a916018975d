"""What the MCP tests share: the README's client configuration, as a user fills it in."""

import json

from helpers import ROOT, read_json_line


def readme_server(tmp_path):
    """The desktop snippet of the README with its one placeholder filled in, as a user does:
    /path/to/replaylab becomes a folder whose .venv is this project's."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("To make a desktop MCP client the agent", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".venv").symlink_to(ROOT / ".venv")
    config = json.loads(block.replace("/path/to/replaylab", str(clone)))
    return clone, config


class RawServer:
    """A `replaylab mcp` process spoken to in raw JSON-RPC lines, below any client: each line
    written by hand, each answer read with a deadline (a server that answers nothing fails the
    test instead of hanging it); the process ends with the test (helpers.processes)."""

    def __init__(self, cwd, *args, timeout=60):
        import subprocess
        import sys

        self.timeout = timeout
        from helpers.processes import start

        self.process = start([sys.executable, "-m", "replaylab", "mcp", *args], cwd=cwd,  # ended with the test
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    def send(self, line):
        if not isinstance(line, (bytes, str)):
            line = json.dumps(line)
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def read(self, timeout=None):
        """The next message on stdout, or None when stdout closed."""
        value, self.buffer = read_json_line(self.process, self.buffer, timeout or self.timeout)
        return value

    def read_many(self, count, timeout=None):
        """The next `count` messages on stdout, read in bulk (linear in their bytes, for tens of
        thousands of answers), each within the deadline of one `read`."""
        import os
        import select
        import time

        found, timeout = [], timeout or self.timeout
        while len(found) < count:
            deadline = time.monotonic() + timeout
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                assert left > 0, f"no answer within {timeout} s ({len(found)} of {count} read)"
                if select.select([self.process.stdout], [], [], left)[0]:
                    chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                    assert chunk, f"stdout closed after {len(found)} of {count} messages"
                    self.buffer += chunk
            lines = self.buffer.split(b"\n", count - len(found))  # the rest stays for the next read
            self.buffer = lines.pop()
            found.extend(json.loads(line) for line in lines)
        return found

    def rss_bytes(self):
        """The server's resident memory now (VmRSS of /proc/PID/status)."""
        with open(f"/proc/{self.process.pid}/status") as status:
            (kb,) = [line.split()[1] for line in status if line.startswith("VmRSS:")]
        return int(kb) * 1024

    def answer(self, request_id):
        """The answer to request `request_id` (notifications the server sends are passed over)."""
        while True:
            message = self.read()
            assert message is not None, f"stdout closed before the answer to {request_id}"
            if "id" in message and message["id"] == request_id:
                return message

    def initialize(self, name="raw-client"):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "0"}}})
        answer = self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, request_id, name, arguments):
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})

    def close(self):
        """Close stdin and wait: (exit code, stderr)."""
        self.process.stdin.close()
        return self.wait()

    def wait(self):
        code = self.process.wait(timeout=self.timeout)
        return code, self.process.stderr.read().decode()
