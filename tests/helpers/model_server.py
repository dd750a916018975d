"""Stand-in model servers for the tests and the benchmark: real HTTP servers on 127.0.0.1 (an
ephemeral port) that speak OpenAI's chat completions.

`FakeProvider` answers each request with the next of a list of scripted answers (status, body,
headers, delay): for the client's handling of odd, failing or hostile answers. `ModelServer` plays
replaylab's lessons, as a model would, for as many runs as asked: for campaigns.

ModelServer recognises the lesson and variant of a request by its system prompt and task, rebuilds the
conversation from the request's messages, and answers with the next message of one of the
lesson's scripted baselines: a model named in `careful`, and `bars-good`, plays the lesson's
careful strategy (right); `bars-coin` tosses a coin for each conversation: the careful strategy, or
one of the others (right or wrong by chance); any other model plays the strategies in turn (some right, some wrong). A conversation's seed travels
in the ids of its tool calls, so the server keeps no state per conversation.

Faults, each every n-th request (0: never): 429 with Retry-After, 500, a hang longer than the
client waits, a dropped connection; `failing` models always get 500. Every answer reports token
usage. It counts requests, answers by status, conversations started (first requests answered
200), requests in flight (the most at once is `max_in_flight`), and the other fields each request
sent besides its model, messages and tools (`sent`: the generation settings). It answers as the
model `served_as[model]` where given (else the model asked), with `fingerprint` as its
`system_fingerprint` where given.
"""

import json
import random
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from replaylab.agents.messages import ModelMessage, ToolCall, ToolResult
from replaylab.lessons import registry

SEED_ID = re.compile(r"s(\d+)-(.*)")


def variants():
    """{(system, task): (lesson, variant)} of every lesson."""
    return {(v.system, v.task): (lesson.name, name) for lesson in registry.lessons() for name, v in lesson.variants.items()}


def conversation_of(messages):
    """The replaylab conversation of a request's messages (after the system prompt), and the
    conversation's seed (None before the first answer)."""
    conversation, seed, names = [], None, {}
    for message in messages[1:]:
        if message["role"] == "user":
            conversation.append({"role": "user", "content": message["content"]})
        elif message["role"] == "assistant":
            calls = []
            for call in message.get("tool_calls") or ():
                found = SEED_ID.fullmatch(call["id"])
                if found:
                    seed = int(found[1]) if seed is None else seed
                names[call["id"]] = call["function"]["name"]
                calls.append(ToolCall(call["id"], call["function"]["name"], json.loads(call["function"]["arguments"])))
            conversation.append({"role": "assistant", "message": ModelMessage(message.get("content") or "", tuple(calls))})
        elif message["role"] == "tool":
            content = json.loads(message["content"])
            name = names.get(message["tool_call_id"])
            conversation.append({"role": "tool", "result": ToolResult(message["tool_call_id"], name, "error" not in content, content)})
    return conversation, seed


class Local:
    """A threading HTTP server on 127.0.0.1, serving in a thread of its own inside the `with` block."""

    def serve(self, handler):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
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


class ModelServer(Local):
    def __init__(self, key, latency=0.0, careful=(), rate_limit_every=0, retry_after=0.05, error_every=0,
                 hang_every=0, hang_seconds=5.0, drop_every=0, failing=(), served_as=None, fingerprint=None):
        self.key = key
        self.served_as = dict(served_as or {})
        self.fingerprint = fingerprint
        self.sent = Counter()  # {JSON of a request's other fields: requests}
        self._coin = random.Random()
        self.latency = latency
        self.careful = set(careful)
        self.rate_limit_every, self.retry_after = rate_limit_every, retry_after
        self.error_every, self.drop_every = error_every, drop_every
        self.hang_every, self.hang_seconds = hang_every, hang_seconds
        self.failing = set(failing)
        self.lock = threading.Lock()
        self.settled = threading.Condition(self.lock)  # notified when a request is no longer in flight
        self._faulted = set()  # bodies of requests refused by a planned fault, not yet sent again
        self.requests = 0
        self.statuses = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = Counter()  # conversations started, per model
        self.usage = Counter()  # tokens reported in answers 200
        self.log = []  # (time, model, status, seed)
        self._seeds = Counter()
        self._variants = variants()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                with server.lock:
                    server.requests += 1
                    number = server.requests
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self.in_flight = True
                try:
                    server.answer(self, number)
                finally:
                    server.done(self)

        self.serve(Handler)

    # -----------------------------------------------------------------------------------------

    @staticmethod
    def every(n, number):
        return n and number % n == 0

    def answer(self, handler, number):
        length = int(handler.headers.get("Content-Length", 0))
        raw = handler.rfile.read(length)
        body = json.loads(raw or b"{}")
        model = body.get("model", "")
        if self.latency:
            time.sleep(self.latency)
        if handler.headers.get("Authorization") != f"Bearer {self.key}":
            return self.send(handler, number, 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}, model)
        with self.lock:  # a request refused by a planned fault goes through when it is sent again, as a
            retried = raw in self._faulted  # real limit clears after Retry-After: otherwise, with several runs
            self._faulted.discard(raw)  # in flight, one run's retries could keep landing on the faulty turns
            if not retried and any(self.every(n, number) for n in (self.drop_every, self.hang_every, self.rate_limit_every, self.error_every)):
                self._faulted.add(raw)
        if not retried and self.every(self.drop_every, number):
            self.note(model, "dropped")
            handler.close_connection = True
            return  # no answer: the client sees the connection end
        if not retried and self.every(self.hang_every, number):
            self.note(model, "hang")
            time.sleep(self.hang_seconds)
            return
        if not retried and self.every(self.rate_limit_every, number):
            return self.send(handler, number, 429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, model,
                             {"Retry-After": f"{self.retry_after:g}"})
        if model in self.failing or (not retried and self.every(self.error_every, number)):
            return self.send(handler, number, 500, {"error": {"message": "The server had an error", "type": "server_error"}}, model)
        return self.play(handler, number, body, model)

    def play(self, handler, number, body, model):
        messages = body["messages"]
        found = self._variants.get((messages[0]["content"], messages[1]["content"]))
        if found is None:
            return self.send(handler, number, 400, {"error": {"message": "not a lesson of replaylab", "type": "invalid_request_error"}}, model)
        lesson, variant = found
        with self.lock:
            self.sent[json.dumps({k: v for k, v in body.items() if k not in ("model", "messages", "tools")}, sort_keys=True)] += 1
        conversation, seed = conversation_of(messages)
        agent = registry.lesson(lesson).part("agent")
        first = seed is None
        if first:
            with self.lock:
                seed = self._seeds[(model, lesson, variant)]
                self._seeds[(model, lesson, variant)] += 1
            if model in self.careful or model == "bars-good":
                seed *= len(agent.STRATEGIES)
            elif model == "bars-coin":
                with self.lock:
                    heads = self._coin.random() < 0.5  # the careful strategy (index 0), else a wrong one
                    seed = seed * len(agent.STRATEGIES) + (0 if heads else self._coin.randrange(1, len(agent.STRATEGIES)))
        message = agent.baseline(variant, seed)(conversation)
        calls = [
            {"id": f"s{seed}-{call.id}", "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
            for call in message.tool_calls
        ]
        prompt = sum(len(json.dumps(m)) for m in messages) // 4
        completion = len(message.text) // 4 + 12 * len(calls)
        answer = {
            "id": f"chatcmpl-{seed}", "object": "chat.completion", "created": 0, "model": self.served_as.get(model, model),
            **({"system_fingerprint": self.fingerprint} if self.fingerprint else {}),
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": {"role": "assistant", "content": message.text or None, **({"tool_calls": calls} if calls else {})}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }
        with self.lock:
            self.usage["input_tokens"] += prompt
            self.usage["output_tokens"] += completion
            if first:
                self.started[model] += 1
        return self.send(handler, number, 200, answer, model, seed=seed)

    def note(self, model, status, seed=None):
        with self.lock:
            self.statuses[status] += 1
            self.log.append((time.monotonic(), model, status, seed))

    def done(self, handler):
        """A request is no longer in flight once its answer starts (or it ends unanswered): its
        client may send the next one as soon as it has the answer, before the handler returns."""
        with self.lock:
            if getattr(handler, "in_flight", False):
                handler.in_flight = False
                self.in_flight -= 1
                self.settled.notify_all()

    def wait_idle(self, timeout):
        """Wait until no request is in flight (each answer wakes the waiter: no polling), at most
        `timeout` seconds; whether none is."""
        with self.settled:
            return self.settled.wait_for(lambda: self.in_flight == 0, timeout)

    def send(self, handler, number, status, answer, model, headers=None, seed=None):
        self.note(model, status, seed)
        data = json.dumps(answer).encode()
        self.done(handler)
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("x-request-id", f"req-{number}")
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


# ---------------------------------------------------------------------------------------------
# Scripted answers


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


class FakeProvider(Local):
    """Each request takes the next scripted answer: (status, body dict, extra headers, delay in
    seconds). A body may contain the placeholder "{AUTH}", replaced by the request's Authorization
    header (a server that echoes the key back in its errors); a body given as bytes is sent as it is
    (a server that answers with something that is not JSON)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []
        self.arrived = threading.Condition()  # notified at each request
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with provider.arrived:
                    provider.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                    provider.arrived.notify_all()
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

        self.serve(Handler)

    def wait_for_requests(self, count, timeout):
        """Wait until `count` requests have come (each request wakes the waiter: no polling), at most
        `timeout` seconds; whether they came."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)
