"""The openai client's HTTP layer, bounded in time: one HTTP client per process, whose
connections wait no longer than the request's and the run's deadlines.

The SDK's own timeout bounds each read and write, so a server that trickles its answer a byte at
a time holds a request for ever (issue 25). Here every connect, read and write of httpcore's
network streams waits at most what is left until the thread's deadline. It is kept out of
agents/ (whose audit allows no networking library, tests/test_audit.py): the client there only
sets the deadlines and catches `RunOver`. It leans on two names the libraries do not document
(the transport's `_pool` and its `_ssl_context`; the client passes openai's DEFAULT_CONNECTION_LIMITS), which
is why httpx2, httpcore2 and openai are pinned in constraints.txt; tests/test_provider_answers.py
drives it against a trickling server.
"""

import ssl
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import httpcore2 as httpcore
import httpx2 as httpx


class _Deadlines(threading.local):
    """The thread's request in flight: its timeout, the run's deadline, and the sooner of both."""

    request_s: float | None = None
    run_at: float | None = None
    at: float | None = None


deadlines = _Deadlines()


class RunOver(BaseException):
    """The run's deadline passed during a request: a BaseException, so that neither the HTTP
    library nor the SDK takes it for a failure worth retrying (both close the connection)."""


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """The timeout of one read or write: what is left until the thread's deadline, at most `timeout`.
    Past the run's deadline, `RunOver`; past the request's, `error` (a timeout the SDK retries)."""
    at = deadlines.at
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        if at == deadlines.run_at:
            raise RunOver()
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


_T = TypeVar("_T")


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def _io(self, action: Callable[[float | None], _T], timeout: float | None, error: type[Exception]) -> _T:
        try:
            return action(_bounded(timeout, error))
        except (httpcore.ReadTimeout, httpcore.WriteTimeout, httpcore.ConnectTimeout):
            _bounded(None, error)  # the run's deadline passed while it waited: no retry
            raise

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._io(lambda t: self.inner.read(max_bytes, t), timeout, httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return self._io(lambda t: self.inner.write(buffer, t), timeout, httpcore.WriteTimeout)

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._io(lambda t: self.inner.start_tls(ssl_context, server_hostname, t), timeout,
                                httpcore.ConnectTimeout))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's network backend, with every connect, read and write bounded by `_bounded`."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self.inner.connect_tcp(host, port, _bounded(timeout, httpcore.ConnectTimeout), local_address,
                                              socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self.inner.connect_unix_socket(path, _bounded(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class _Transport(httpx.HTTPTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        at = None if deadlines.request_s is None else time.monotonic() + deadlines.request_s
        deadlines.at = min((t for t in (at, deadlines.run_at) if t is not None), default=None)
        return super().handle_request(request)


_CLIENTS: dict[str, httpx.Client] = {}  # one for the process: made on first use, under _MAKING (a campaign's runs start in threads)
_MAKING = threading.Lock()


def http_client(make_client: Callable[..., httpx.Client], limits: httpx.Limits) -> httpx.Client:
    """One HTTP client per process, shared by the SDK clients of every run (it is thread-safe):
    making one loads the system's certificates, about 0.1 s of a processor, which a campaign's job
    recording many runs at once would otherwise pay for each run. `make_client` is the SDK's
    DefaultHttpxClient, `limits` its connection limits."""
    with _MAKING:
        if not _CLIENTS:
            _CLIENTS["client"] = _made(make_client, limits)
        return _CLIENTS["client"]


def _made(make_client: Callable[..., httpx.Client], limits: httpx.Limits) -> httpx.Client:
    transport = _Transport(limits=limits)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=transport._pool._ssl_context, max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend(httpcore.SyncBackend()),
    )
    return make_client(transport=transport)
