"""The MCP server's stdio transport: JSON-RPC lines in and out, and an answer to every request.

The SDK's own (mcp.server.stdio) hands the server a line it cannot read as an exception, which the
server answers with nothing: the client then waits for ever. And it reads stdin in a worker thread
that neither a signal nor the end of the server can stop. Here a daemon thread reads stdin's bytes,
and a line that is not a message the server can take gets its JSON-RPC error at once, with the
request's id when it can be read: -32700 (parse error) for bytes that are not UTF-8 or text that is
not JSON; -32600 (invalid request) for a batch (a JSON array: MCP has none), a value that is not a
JSON-RPC message, or one holding what no recording holds (a lone surrogate, an integer of more
digits than a recording reads, nesting too deep, a key twice) or too long a line. The other lines
go to the SDK's server as its messages. Its answers are written by a daemon thread too, so that a
client that does not read cannot keep a stopped server alive.
"""

import json
import os
import queue
import re
import threading
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

from replaylab.agents.recording import MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS, json_path, short

PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603
MAX_LINE_BYTES = MAX_BYTES + (1 << 16)  # a call a recording could hold, with its envelope
DRAIN_SECONDS = 2.0  # to write the last answers once the server ends
_SURROGATE = re.compile("[\ud800-\udfff]")


class _TooLong:
    """What an integer of too many digits is read as: no id, no value."""


def error_line(request_id, code, message):
    """A JSON-RPC error answer, as the bytes of one line (ASCII: any id can be written)."""
    data = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(data, ensure_ascii=True).encode() + b"\n"


def _problem(data):
    """(JSON path, what is wrong) of the first value the server does not take, or None."""
    todo = [((), 1, data)]
    while todo:
        path, depth, value = todo.pop()
        if isinstance(value, _TooLong):
            return path, f"an integer of more than {MAX_INT_DIGITS} digits"
        texts = value.keys() if isinstance(value, dict) else [value] if isinstance(value, str) else []
        if any(_SURROGATE.search(text) for text in texts):
            return path, "a lone surrogate (\\ud800 to \\udfff: half of a character, not text)"
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                return path, f"nested more than {MAX_DEPTH} levels deep"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            todo.extend((path + (key,), depth + 1, item) for key, item in items)
    return None


def read_message(line):
    """(the JSON-RPC message of one line, None), (None, the error line to answer), or (None, None)
    for a line to pass over (empty, or a bad notification, which JSON-RPC never answers)."""
    if line is None:
        return None, error_line(None, INVALID_REQUEST, f"the line is longer than {MAX_LINE_BYTES} bytes")
    if not line.strip():
        return None, None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, error_line(None, PARSE_ERROR, f"the line is not UTF-8 (byte {line[error.start]:#04x} at {error.start})")
    twice = []

    def pairs(items):
        keys = [key for key, _ in items]
        if len(set(keys)) < len(keys):
            twice.append(next(key for i, key in enumerate(keys) if key in keys[:i]))
        return dict(items)

    def integer(literal):
        return _TooLong() if len(literal.lstrip("-")) > MAX_INT_DIGITS else int(literal)

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_int=integer)
    except json.JSONDecodeError as error:
        return None, error_line(None, PARSE_ERROR, f"the line is not JSON: {error.msg} at character {error.pos + 1}")
    except RecursionError:
        return None, error_line(None, INVALID_REQUEST, f"the line is nested more than {MAX_DEPTH} levels deep")
    if isinstance(data, list):
        return None, error_line(None, INVALID_REQUEST, "a batch (a JSON array of messages) is not taken: send one message per line")
    if not isinstance(data, dict):
        return None, error_line(None, INVALID_REQUEST, f"a JSON-RPC message is a JSON object, not {type(data).__name__}")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or _problem(request_id):
        request_id = None
    notification = "id" not in data and "method" in data
    found = _problem(data)
    problem = f"{json_path(found[0])}: {found[1]}" if found else (f"the key {short(twice[0])} appears twice" if twice else None)
    if problem is None:
        try:
            return types.jsonrpc_message_adapter.validate_python(data, by_name=False), None
        except Exception:  # pydantic's ValidationError: not one of the four kinds of JSON-RPC message
            problem = "not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\", with a method, or a result or an error)"
    if notification:
        return None, None
    return None, error_line(request_id, INVALID_REQUEST, f"the request cannot be taken: {problem}")


def _encoded(message):
    """The line of one of the server's messages; an answer that cannot be written is an error."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except Exception:  # pydantic's serialization error: text that is not Unicode
        request_id = getattr(message, "id", None)
        return None if request_id is None else error_line(request_id, INTERNAL_ERROR, "the answer could not be written as JSON")


class _Writer:
    """Writes lines to a file descriptor from a daemon thread, in order."""

    def __init__(self, fd):
        self.fd = fd
        self.lines = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="replaylab mcp stdout", daemon=True)
        self.thread.start()

    def write(self, data):
        self.lines.put(data)

    def _run(self):
        while (data := self.lines.get()) is not None:
            try:
                while data:
                    data = data[os.write(self.fd, data):]
            except OSError:  # the client went away
                return

    def close(self, seconds):
        self.lines.put(None)
        self.thread.join(seconds)


EOF = object()  # what the reading thread puts last


def _read_lines(fd, lines):
    """The reading thread: every line of `fd` into the queue `lines` (None for a line too long),
    then EOF. It never touches the event loop, so the server's end cannot catch it half-way."""
    try:
        parts, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            while chunk:
                end = chunk.find(b"\n")
                piece, chunk = (chunk, b"") if end < 0 else (chunk[:end], chunk[end + 1:])
                if size <= MAX_LINE_BYTES:  # past it, the rest of the line is read and dropped
                    parts.append(piece)
                size += len(piece)
                if end >= 0:
                    lines.put(b"".join(parts) if size <= MAX_LINE_BYTES else None)
                    parts, size = [], 0
        if size:
            lines.put(b"".join(parts) if size <= MAX_LINE_BYTES else None)
    except OSError:  # stdin cannot be read: as if it ended
        pass
    lines.put(EOF)


@asynccontextmanager
async def stdio_lines(stdin_fd=0, stdout_fd=1):
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout."""
    lines = queue.SimpleQueue()
    to_server, server_reads = anyio.create_memory_object_stream(0)
    server_writes, from_server = anyio.create_memory_object_stream(0)
    out = _Writer(stdout_fd)
    threading.Thread(target=_read_lines, args=(stdin_fd, lines), name="replaylab mcp stdin", daemon=True).start()
    reading = anyio.CancelScope()

    async def route():
        with reading:
            async with to_server:
                while (line := await anyio.to_thread.run_sync(lines.get, abandon_on_cancel=True)) is not EOF:
                    message, error = read_message(line)
                    if error is not None:
                        out.write(error)
                    elif message is not None:
                        await to_server.send(SessionMessage(message))

    async def answer():
        async with from_server:
            async for item in from_server:
                data = _encoded(item.message)
                if data is not None:
                    out.write(data)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(route)
            tasks.start_soon(answer)
            try:
                yield server_reads, server_writes
            finally:
                reading.cancel()
                lines.put(EOF)  # frees the worker thread still waiting for a line, which anyio joins at the end
                server_writes.close()  # `answer` writes what the server sent, then ends
    finally:
        out.close(DRAIN_SECONDS)
