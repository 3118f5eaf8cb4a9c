"""A whole-request deadline and a stop check for the HTTP requests of one endpoint client.

httpx's timeouts are per socket operation: a server that sends its headers and then one byte every
couple of seconds never trips a 5 s read timeout, and holds the worker for as long as it likes. Here
every socket operation of the client (connect, write, each read) is bounded by the time left until the
request's deadline, and is cut into slices of at most ``check_every`` seconds between which the guard
asks whether the run was stopped (``should_stop`` raises, e.g. :class:`~elicitation.client.Stopped`). So
the endpoint's timeout bounds connect + send + headers + the whole body, and a cancelled run's request in
flight is abandoned within about ``check_every`` seconds; the connection is then closed, never reused.
"""
from __future__ import annotations

import functools
import socket
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

try:  # the transport under the openai client: httpx2/httpcore2 from openai 3 on, httpx/httpcore before
    import httpcore2 as httpcore
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpcore  # type: ignore[no-redef]
    import httpx  # type: ignore[no-redef]

from .destinations import AddressRefused, checked_addresses


@dataclass
class Guard:
    """What bounds the request in flight: an absolute deadline (``time.monotonic()``) and a stop check."""

    timeout: float | None = None  # seconds a whole request may take (set per request by ``start``)
    should_stop: Callable[[], None] | None = None  # raises to abandon the request (run cancelled…)
    check_every: float = 1.0
    deadline: float | None = None
    undelivered: int = 0  # requests whose connection never opened (so the endpoint never received them)
    _checked_at: float = field(default=0.0, repr=False)

    def start(self) -> None:
        """A new request begins: its deadline is ``timeout`` seconds from now."""
        now = time.monotonic()
        self.deadline = now + self.timeout if self.timeout else None
        self._checked_at = now

    def check(self) -> None:
        """Raise the stop check's exception (at most every ``check_every`` seconds), or ReadTimeout once the
        deadline has passed."""
        now = time.monotonic()
        if self.should_stop is not None and now - self._checked_at >= self.check_every:
            self._checked_at = now
            self.should_stop()
        if self.deadline is not None and now >= self.deadline:
            raise httpcore.ReadTimeout(f"the whole request took longer than {self.timeout:g} s")

    def bound(self, timeout: float | None) -> float | None:
        """The socket timeout of one slice: the operation's own timeout, the time left, ``check_every``."""
        limits = [t for t in (timeout, self.check_every) if t is not None]
        if self.deadline is not None:
            limits.append(max(0.001, self.deadline - time.monotonic()))
        return min(limits) if limits else None


class GuardedStream(httpcore.NetworkStream):
    """A network stream whose reads and writes obey the guard."""

    def __init__(self, inner: Any, guard: Guard) -> None:
        self._inner, self._guard = inner, guard

    def _sliced(self, op: Callable[[float | None], Any], timeout: float | None, error: type[Exception]) -> Any:
        started = time.monotonic()
        while True:
            self._guard.check()
            try:
                return op(self._guard.bound(timeout))
            except error:
                if timeout is not None and time.monotonic() - started >= timeout:
                    raise  # the operation's own timeout (no byte for `timeout` seconds)
                # a slice ended: look at the deadline and the stop check, then wait on

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._sliced(lambda t: self._inner.read(max_bytes, t), timeout, httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # a slice that times out may have sent part of the buffer: writes are not sliced, only bounded
        self._guard.check()
        return self._inner.write(buffer, self._guard.bound(timeout) if self._guard.deadline else timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> "GuardedStream":
        self._guard.check()
        return GuardedStream(self._inner.start_tls(ssl_context, server_hostname, self._guard.bound(timeout)),
                             self._guard)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend, with every connection bounded by the guard, and opened only to an
    address the endpoint may be reached at: the host is resolved here, every address checked
    (elicitation.destinations: AddressRefused otherwise), and the connection made to a checked address."""

    def __init__(self, guard: Guard) -> None:
        self._inner, self._guard = httpcore.SyncBackend(), guard

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> GuardedStream:
        self._guard.check()
        bounded = min(t for t in (timeout, self._guard.bound(None)) if t is not None) if (
            timeout is not None or self._guard.deadline is not None) else None
        try:
            addresses = checked_addresses(host, port)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"the host {host} could not be resolved: {exc}") from exc
        for address in addresses[:-1]:
            try:
                return GuardedStream(self._inner.connect_tcp(address, port, bounded, local_address, socket_options),
                                     self._guard)
            except httpcore.ConnectError:
                continue  # the next address of the host
        return GuardedStream(self._inner.connect_tcp(addresses[-1], port, bounded, local_address, socket_options),
                             self._guard)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> GuardedStream:  # pragma: no cover
        return GuardedStream(self._inner.connect_unix_socket(path, timeout, socket_options), self._guard)

    def sleep(self, seconds: float) -> None:  # pragma: no cover
        time.sleep(seconds)


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CAs, SSL_CERT_FILE…), built once per process and shared by every
    client: building one loads the CA bundle, tens of milliseconds of CPU, which a thread pool paid per thread
    and endpoint. A context is safe to share between threads."""
    return httpx.create_ssl_context()


class GuardedTransport(httpx.HTTPTransport):
    """httpx's default transport (connection pool, keep-alive, TLS) on the guarded backend."""

    def __init__(self, guard: Guard, limits: Any = None) -> None:
        super().__init__(verify=default_ssl_context())
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        # the pool the parent built, rebuilt with our backend (httpx takes no network backend argument)
        self._pool = httpcore.ConnectionPool(
            ssl_context=self._pool._ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(guard))
        self._guard = guard

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """The request; one whose connection could not be opened (refused, timed out, TLS failed) is counted as
        undelivered: the endpoint never saw it, so it is neither billed nor counted as asked (accounting)."""
        try:
            return super().handle_request(request)
        except (httpx.ConnectError, httpx.ConnectTimeout, AddressRefused):
            self._guard.undelivered += 1
            raise
