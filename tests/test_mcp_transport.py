"""The MCP stdio transport's parts, in this process (issue 38): lines cut as they come, with a
bound on each; queues bounded by their bytes; requests held by the server bounded; an id that is
not a string or an integer answered as an invalid request. The real server under a client that
never reads, and a refused start fed 20 MB, are tests/test_mcp.py's (`slow`)."""

import json
import threading

import anyio
import mcp_types as types
import pytest

from replaylab import mcp_stdio
from replaylab.mcp_stdio import END, ITEM_BYTES, MAX_LINE_BYTES, MAX_PENDING, PENDING_BYTES, LineSplitter, read_message


def test_lines_are_cut_as_they_come_whatever_the_reads():
    splitter = LineSplitter()
    assert splitter.feed(b"ab") == [] and splitter.feed(b"c\nd") == [b"abc"]
    assert splitter.feed(b"\n\nef\ng") == [b"d", b"", b"ef"]
    assert splitter.end() == [b"g"] and splitter.end() == []  # the last line, with no newline


def test_a_line_too_long_is_read_through_holding_at_most_one_line_and_given_as_none():
    """What a line past MAX_LINE_BYTES holds stops growing (it is dropped), and the next line is whole."""
    splitter, chunk = LineSplitter(), b"x" * (1 << 16)
    for _ in range(MAX_LINE_BYTES // len(chunk) * 3):
        assert splitter.feed(chunk) == []
    assert sum(len(part) for part in splitter.parts) <= MAX_LINE_BYTES + len(chunk)
    assert splitter.feed(b"x\n{}\n") == [None, b"{}"]
    assert read_message(None)[1] == mcp_stdio.error_line(None, -32600, f"the line is longer than {MAX_LINE_BYTES} bytes")


def test_a_queue_holds_at_most_its_bytes_or_one_longer_item_and_closing_frees_a_waiting_put():
    queue = mcp_stdio._Queue(1000)
    assert queue.put(b"a" * 300, 300, block=False) and queue.put(b"b" * 400, 400, block=False)
    assert queue.size == 700 + 2 * ITEM_BYTES and not queue.put(b"c", 1, block=False)  # full: counted with each item's objects
    assert queue.get() == b"a" * 300 and queue.put(b"c", 1, block=False)
    assert queue.get() == b"b" * 400 and queue.get() == b"c" and queue.get(block=False) is mcp_stdio.EMPTY
    assert queue.put(b"d" * 5000, 5000, block=False)  # an item longer than the bound: alone
    waiting = threading.Thread(target=queue.put, args=(b"e", 1))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # waits for room
    queue.close()
    waiting.join(5)
    assert not waiting.is_alive() and queue.get() is END  # closed: freed, and what was queued dropped


def test_the_server_holds_at_most_max_pending_requests_and_a_request_settled_unanswered_frees_its_place():
    async def main():
        pending = mcp_stdio._Pending()
        for n in range(MAX_PENDING):
            await pending.admit(n, 100)
        with anyio.move_on_after(0.2) as waited:
            await pending.admit("one more", 100)
        assert waited.cancel_called  # no place: reading waits
        await pending.settle(3)  # its answer, or the SDK's `on_request_unanswered`
        with anyio.fail_after(5):
            await pending.admit("one more", 100)
        for n in range(MAX_PENDING):
            await pending.settle(n)
        await pending.settle("one more")
        await pending.settle("never sent")  # an answer to no request of the client's: nothing to free
        assert (pending.count, pending.bytes, pending.sizes) == (0, 0, {})
        await pending.admit("big", PENDING_BYTES)  # their lines bounded too, a single long one let in
        with anyio.move_on_after(0.2) as waited:
            await pending.admit("small", 10)
        assert waited.cancel_called

    anyio.run(main)


@pytest.mark.parametrize("raw, kind", [("null", "null"), ("true", "true"), ("false", "false"),
                                       ("6.5", "a number that is not an integer (6.5)"), ("[1]", "an array"),
                                       ('{"n": 1}', "an object")])
@pytest.mark.parametrize("method", ["tools/list", "notifications/initialized"])
def test_a_request_whose_id_is_not_a_string_or_an_integer_is_an_invalid_request_answered_with_id_null(raw, kind, method):
    """The SDK reads such a line as a notification (and answers nothing); JSON-RPC 2.0 calls it a
    request, whatever its method, and its answer an invalid request of id null."""
    message, error = read_message(b'{"jsonrpc": "2.0", "id": %s, "method": "%s"}' % (raw.encode(), method.encode()))
    assert message is None and json.loads(error) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"the request cannot be taken: the id is {kind}; an id is a string or an integer"}}


def test_a_string_or_integer_id_is_a_request_and_no_id_a_notification():
    for request_id in (0, -7, "7", "", 10**30):
        message, error = read_message(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode())
        assert isinstance(message, types.JSONRPCRequest) and message.id == request_id and error is None
    message, error = read_message(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert isinstance(message, types.JSONRPCNotification) and error is None
