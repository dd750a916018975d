"""A real HTTP server on 127.0.0.1 that speaks enough of the chat completions protocol for the tests.

Each request takes the next scripted answer: (status, body dict, extra headers, delay in seconds).
A body may contain the placeholder "{AUTH}", replaced by the request's Authorization header (a
server that echoes the key back in its errors); a body given as bytes is sent as it is (a server
that answers with something that is not JSON).
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(text="", tool_calls=(), usage=True, model="fake-model"):
    """A chat completion body with an assistant message; tool_calls are (id, name, arguments text)."""
    message = {"role": "assistant", "content": text or None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in tool_calls
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    return body


class FakeProvider:
    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                provider.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                status, answer, headers, delay = provider.answers.pop(0) if provider.answers else (500, {"error": "no more answers"}, {}, 0)
                if delay:
                    time.sleep(delay)
                text = answer.decode("latin-1") if isinstance(answer, bytes) else json.dumps(answer)
                data = text.replace("{AUTH}", self.headers.get("Authorization", "")).encode("latin-1" if isinstance(answer, bytes) else "utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("x-request-id", f"req-{len(provider.requests)}")
                    for key, value in headers.items():
                        self.send_header(key, value.replace("{AUTH}", self.headers.get("Authorization", "")))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
