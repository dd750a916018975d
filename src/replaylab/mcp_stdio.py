"""The MCP server's stdio transport: JSON-RPC lines in and out, an answer to every request, and
memory that stays bounded whatever the client does.

The SDK's own (mcp.server.stdio) hands the server a line it cannot read as an exception, which the
server answers with nothing: the client then waits for ever. And it reads stdin in a worker thread
that neither a signal nor the end of the server can stop. Here a daemon thread reads stdin's bytes,
and a line that is not a message the server can take gets its JSON-RPC error at once, with the
request's id when it can be read: -32700 (parse error) for bytes that are not UTF-8 or text that is
not JSON; -32600 (invalid request) for a batch (a JSON array: MCP has none), a value that is not a
JSON-RPC message, a request whose id is neither a string nor an integer (null, true, 6.5, a list:
answered with id null, as JSON-RPC 2.0 says, where the SDK would take it for a notification and
answer nothing), or one holding what no recording holds (a lone surrogate, an integer of more
digits than a recording reads, nesting too deep, a key twice) or too long a line. The other lines
go to the SDK's server as its messages. Its answers are written by a daemon thread too, so that a
client that does not read cannot keep a stopped server alive.

Bounded, with backpressure: the lines read and not yet taken, and the answers not yet written, are
each at most QUEUE_BYTES (or one line); the server holds at most MAX_PENDING requests unanswered,
their lines at most PENDING_BYTES (or one). The SDK starts a task for every request it reads, so
without that bound a client that writes and never reads would have it hold every request, each
waiting to write its answer. When the server is behind, reading stops, and the client's writes wait
in the pipe; when the client does not read, writing waits, and so does reading.
"""

import collections
import json
import os
import re
import select
import threading
import time
from contextlib import asynccontextmanager
from functools import partial

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from replaylab.agents.recording import MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS, json_path, short

PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603
MAX_LINE_BYTES = MAX_BYTES + (1 << 16)  # a call a recording could hold, with its envelope
DRAIN_SECONDS = 2.0  # to write the last answers once the server ends
QUEUE_BYTES = 1 << 20  # each of the two queues: lines read, answers to write
MAX_PENDING = 16  # requests the server holds unanswered: past them, no line is read
PENDING_BYTES = MAX_LINE_BYTES  # and their lines together, a single longer one aside
READ_BYTES = 1 << 16  # one read of stdin
ITEM_BYTES = 128  # a queued line's or answer's objects, besides its bytes
_SURROGATE = re.compile("[\ud800-\udfff]")


class _TooLong:
    """What an integer of too many digits is read as: no id, no value."""


def error_line(request_id, code, message):
    """A JSON-RPC error answer, as the bytes of one line (ASCII: any id can be written)."""
    data = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(data, ensure_ascii=True).encode() + b"\n"


def _wrong(value, depth):
    """What is wrong with one value itself (not what it holds), at `depth`, or None."""
    if isinstance(value, _TooLong):
        return f"an integer of more than {MAX_INT_DIGITS} digits"
    texts = value.keys() if isinstance(value, dict) else [value] if isinstance(value, str) else []
    if any(_SURROGATE.search(text) for text in texts):
        return "a lone surrogate (\\ud800 to \\udfff: half of a character, not text)"
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    return None


def _children(value):
    return iter(value.items() if isinstance(value, dict) else enumerate(value))


def _problem(data):
    """(JSON path, what is wrong) of the first value the server does not take, or None. Depth
    first, holding only the path it is on: a line of millions of values costs no more memory than
    its parsed data (a list of every value's path would cost a hundred bytes each)."""
    if (wrong := _wrong(data, 1)) is not None:
        return (), wrong
    stack, path = ([_children(data)] if isinstance(data, (dict, list)) else []), []
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            if path:
                path.pop()
            continue
        key, value = step
        if (wrong := _wrong(value, len(stack) + 1)) is not None:
            return (*path, key), wrong
        if isinstance(value, (dict, list)):
            path.append(key)
            stack.append(_children(value))
    return None


def _id_kind(value):
    """What a request's id that is neither a string nor an integer is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"a number that is not an integer ({short(value)})"
    return "an array" if isinstance(value, list) else "an object"


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
    if problem is None and "method" in data and "id" in data and request_id is None:
        # a request all the same (JSON-RPC: a notification has no id), which the SDK would take for a notification
        problem = f"the id is {_id_kind(data['id'])}; an id is a string or an integer"
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


class LineSplitter:
    """Bytes as they are read, cut into lines: each kept up to MAX_LINE_BYTES, a longer one read
    through, dropped and given as None. Linear in the bytes read: a chunk is looked at once, and a
    long line is joined once, at its end (never a buffer copied again at every read)."""

    def __init__(self):
        self.parts, self.size = [], 0

    def _add(self, piece):
        if self.size <= MAX_LINE_BYTES:  # past it, the rest of the line is read and dropped
            self.parts.append(piece)
        self.size += len(piece)

    def _line(self):
        line = b"".join(self.parts) if self.size <= MAX_LINE_BYTES else None
        self.parts, self.size = [], 0
        return line

    def feed(self, chunk):
        """The lines `chunk` completes (bytes, or None for a line too long)."""
        lines, start = [], 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            lines.append(self._line())
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:])
        return lines

    def end(self):
        """The last line, when the input ended without its newline."""
        return [self._line()] if self.size else []


def write_until(fd, data, deadline):
    """Write `data` to `fd`, or give up at `deadline` (time.monotonic()) when the client does not
    read, or at once when it went away: whether all was written. Pieces of at most PIPE_BUF bytes,
    each once `fd` can take it, so that no write blocks past the deadline."""
    view = memoryview(data)
    try:
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                return False
            view = view[os.write(fd, view[:select.PIPE_BUF]):]
    except OSError:  # the client went away
        return False
    return True


END = object()  # what the reading thread puts last, and what the writer is given to stop
EMPTY = object()  # what a get that does not wait finds in an empty queue


class _Queue:
    """Items between a thread and the event loop, bounded by their bytes: at most `limit` (or a
    single longer item), each counted with ITEM_BYTES more, the objects that hold it (so that a
    flood of empty lines is bounded too). A put waits while it would go past it; once closed, a
    put drops its item, and a get gives END when nothing is left."""

    def __init__(self, limit):
        self.items, self.size, self.limit, self.closed = collections.deque(), 0, limit, False
        self.changed = threading.Condition()

    def _room(self, size):
        return not self.items or self.size + size <= self.limit

    def put(self, item, size=0, block=True):
        """Queue `item` (waiting for room when `block`): False when it is full and not waiting."""
        size += ITEM_BYTES
        with self.changed:
            while block and not self.closed and not self._room(size):
                self.changed.wait()
            if self.closed:
                return True  # dropped: nobody takes it any more
            if not self._room(size):
                return False
            self.items.append((item, size))
            self.size += size
            self.changed.notify_all()
            return True

    def get(self, block=True):
        """The next item, END once closed and empty; EMPTY when empty and not waiting."""
        with self.changed:
            while block and not self.items and not self.closed:
                self.changed.wait()
            if not self.items:
                return END if self.closed else EMPTY
            item, size = self.items.popleft()
            self.size -= size
            self.changed.notify_all()
            return item

    def close(self):
        """Drop what is queued; a put or a get that waits returns."""
        with self.changed:
            self.closed = True
            self.items.clear()
            self.size = 0
            self.changed.notify_all()


async def _put(queue, item, size):
    """queue.put from the event loop: at once when there is room, else in a worker thread (freed
    when the queue closes, if the wait is cancelled)."""
    if not queue.put(item, size, block=False):
        await anyio.to_thread.run_sync(queue.put, item, size, abandon_on_cancel=True)


async def _get(queue):
    """queue.get from the event loop, the same way."""
    item = queue.get(block=False)
    return await anyio.to_thread.run_sync(queue.get, abandon_on_cancel=True) if item is EMPTY else item


class _Writer:
    """Writes lines to a file descriptor from a daemon thread, in order, QUEUE_BYTES of them
    waiting at most: past them, `write` waits for the client to read."""

    def __init__(self, fd):
        self.fd = fd
        self.lines = _Queue(QUEUE_BYTES)
        self.thread = threading.Thread(target=self._run, name="replaylab mcp stdout", daemon=True)
        self.thread.start()

    async def write(self, data):
        await _put(self.lines, data, len(data))

    def _run(self):
        while (data := self.lines.get()) is not END:
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError:  # the client went away
                self.lines.close()
                return

    def close(self, seconds):
        """Write what is queued, for at most `seconds`; then drop the rest (and free any waiting put)."""
        with self.lines.changed:  # past the bound: the end must be queued whatever waits
            self.lines.items.append((END, 0))
            self.lines.changed.notify_all()
        self.thread.join(max(0.0, seconds))
        self.lines.close()


def _read_lines(fd, lines):
    """The reading thread: every line of `fd` into the queue `lines` (None for a line too long),
    then END; it waits while the queue is full (the client's writes then wait in the pipe) and
    stops once it is closed. It never touches the event loop, so the server's end cannot catch it
    half-way."""
    splitter = LineSplitter()
    try:
        while chunk := os.read(fd, READ_BYTES):
            for line in splitter.feed(chunk):
                lines.put(line, 0 if line is None else len(line))
            if lines.closed:
                return
        for line in splitter.end():
            lines.put(line, 0 if line is None else len(line))
    except OSError:  # stdin cannot be read: as if it ended
        pass
    lines.put(END)


class _Pending:
    """The requests the server holds, unanswered: at most MAX_PENDING, their lines at most
    PENDING_BYTES (or a single longer one). A request is let in when there is room, and leaves with
    its answer, or when the server settles it with none (the client cancelled it)."""

    def __init__(self):
        self.sizes = {}  # id: the sizes of the requests of that id (a client may use an id twice)
        self.count = self.bytes = 0
        self.changed = anyio.Condition()

    async def admit(self, request_id, size):
        async with self.changed:
            while self.count and (self.count >= MAX_PENDING or self.bytes + size > PENDING_BYTES):
                await self.changed.wait()
            self.sizes.setdefault(request_id, collections.deque()).append(size)
            self.count += 1
            self.bytes += size

    async def settle(self, request_id):
        sizes = self.sizes.get(request_id)
        if not sizes:  # not one of the client's requests (or answered already)
            return
        size = sizes.popleft()
        if not sizes:
            del self.sizes[request_id]
        self.count -= 1
        self.bytes -= size
        async with self.changed:
            self.changed.notify_all()


@asynccontextmanager
async def stdio_lines(stdin_fd=0, stdout_fd=1):
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout."""
    lines = _Queue(QUEUE_BYTES)
    pending = _Pending()
    to_server, server_reads = anyio.create_memory_object_stream(0)
    server_writes, from_server = anyio.create_memory_object_stream(0)
    out = _Writer(stdout_fd)
    threading.Thread(target=_read_lines, args=(stdin_fd, lines), name="replaylab mcp stdin", daemon=True).start()
    reading, answering = anyio.CancelScope(), anyio.CancelScope()

    async def route():
        with reading:
            async with to_server:
                while (line := await _get(lines)) is not END:
                    message, error = read_message(line)
                    if error is not None:
                        await out.write(error)
                    elif isinstance(message, types.JSONRPCRequest):
                        await pending.admit(message.id, len(line))
                        unanswered = partial(pending.settle, message.id)
                        await to_server.send(SessionMessage(message, ServerMessageMetadata(on_request_unanswered=unanswered)))
                    elif message is not None:
                        await to_server.send(SessionMessage(message))

    async def answer():
        with answering:
            async with from_server:
                async for item in from_server:
                    data = _encoded(item.message)
                    if data is not None:
                        await out.write(data)
                    if isinstance(item.message, (types.JSONRPCResponse, types.JSONRPCError)):
                        await pending.settle(item.message.id)

    give_up = None
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(route)
            tasks.start_soon(answer)
            try:
                yield server_reads, server_writes
            finally:
                give_up = time.monotonic() + DRAIN_SECONDS
                answering.deadline = anyio.current_time() + DRAIN_SECONDS  # a client that does not read cannot hold the end
                reading.cancel()
                lines.close()  # frees the reading thread and a worker thread waiting for a line, which anyio joins at the end
                server_writes.close()  # `answer` writes what the server sent, then ends
    finally:
        out.close(DRAIN_SECONDS if give_up is None else give_up - time.monotonic())
