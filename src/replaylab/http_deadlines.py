"""The HTTP layer of the openai client and of `doctor`, bounded in time and kept to one host:
one HTTP client per process, whose connections wait no longer than the request's and the run's
deadlines, and which follows no redirect.

The SDK's own timeout bounds each read and write, so a server that trickles its answer a byte at
a time holds a request for ever (issue 25). Here every connect, read and write of httpcore's
network streams waits at most what is left until the thread's deadline, and a retry's wait
(`before_wait`, the SDK's backoff or the server's Retry-After) that would pass the run's deadline
ends the run instead of waiting. No redirect is followed (issue 38): the key goes to the configured
host only, and the answer comes from the server the recording names. It is kept out of agents/
(whose audit allows no networking library, tests/test_audit.py): the client there only sets the
deadlines and catches `RunOver`. It leans on names the libraries do not document (the transport's
`_pool` and its `_ssl_context`; the client passes openai's DEFAULT_CONNECTION_LIMITS; the SDK's
`_calculate_retry_timeout`, which the openai client wraps), which is why httpx2, httpcore2 and
openai are pinned in constraints.txt; tests/test_provider_answers.py and tests/test_http_bounds.py
drive it against trickling, rate-limiting and redirecting servers.
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
    """The run's deadline passed during a request, or would pass during a retry's wait: a
    BaseException, so that neither the HTTP library nor the SDK takes it for a failure worth
    retrying (both close the connection). Its text says why when a wait was refused, else it is
    empty."""


def before_wait(seconds: float, why: str) -> None:
    """Called before a retry waits `seconds` (`why`: what the server answered): `RunOver` at once
    when the run's deadline comes first, so that the run ends then and does not sleep past it."""
    run_at = deadlines.run_at
    if run_at is None:
        return
    left = run_at - time.monotonic()
    if seconds >= left:
        raise RunOver(f"{why}; a retry after {seconds:.3g} s would pass the run's deadline ({max(left, 0):.3g} s "
                      "left): not waited for, the run ended at once")


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


_CLIENTS: dict[str, httpx.Client] = {}  # the SDK's and fetch's, each made on first use under _MAKING (a campaign's runs start in threads)
_MAKING = threading.Lock()


def http_client(make_client: Callable[..., httpx.Client], limits: httpx.Limits) -> httpx.Client:
    """One HTTP client per process, shared by the SDK clients of every run (it is thread-safe):
    making one loads the system's certificates, about 0.1 s of a processor, which a campaign's job
    recording many runs at once would otherwise pay for each run. `make_client` is the SDK's
    DefaultHttpxClient (made to follow no redirect), `limits` its connection limits."""
    with _MAKING:
        if "client" not in _CLIENTS:
            _CLIENTS["client"] = _made(make_client, limits)
        return _CLIENTS["client"]


def _made(make_client: Callable[..., httpx.Client], limits: httpx.Limits) -> httpx.Client:
    transport = _Transport(limits=limits)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=transport._pool._ssl_context, max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend(httpcore.SyncBackend()),
    )
    return make_client(transport=transport, follow_redirects=False)


class Answer:
    """What a server answered to `fetch`: its status, headers and the first bytes of its body."""

    def __init__(self, status: int, headers: httpx.Headers, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class Unanswered(Exception):
    """`fetch` had no whole answer: the server could not be reached, or did not answer in time."""


def fetch(url: str, headers: dict[str, str], timeout: float, max_bytes: int) -> Answer:
    """GET `url` once, the whole request (connect, headers, body) within `timeout` seconds, no
    redirect followed (a 3xx is the answer), at most `max_bytes` of the body read. Raises
    `Unanswered` when the server cannot be asked or its answer is not whole in time; ValueError
    for a URL that is not one."""
    with _MAKING:
        if "fetch" not in _CLIENTS:
            _CLIENTS["fetch"] = _made(httpx.Client, httpx.Limits(max_connections=4, max_keepalive_connections=0))
    deadlines.request_s, deadlines.run_at = timeout, None
    try:
        with _CLIENTS["fetch"].stream("GET", url, headers=headers, timeout=timeout) as response:
            body = b""
            for chunk in response.iter_bytes():
                body += chunk[: max_bytes - len(body)]
                if len(body) >= max_bytes:
                    break
            return Answer(response.status_code, response.headers, body)
    except httpx.InvalidURL as error:
        raise ValueError(str(error)) from None
    except httpx.TimeoutException:
        raise Unanswered(f"no whole answer within {timeout:g} s") from None
    except httpx.HTTPError as error:
        raise Unanswered(str(error) or type(error).__name__) from None
    finally:
        deadlines.request_s = deadlines.run_at = deadlines.at = None
