"""Talking to an OpenAI-compatible endpoint: one request at a time, and our own retry policy.

The ``openai`` client is built with ``max_retries=0``; :func:`call_with_retries` retries 429, 408/409,
5xx, timeouts, connection errors and malformed bodies (not a completion, cut-off JSON, not UTF-8) with
exponential backoff and jitter, honours
``Retry-After`` / ``retry-after-ms``, and counts every attempt so it can be stored with the answer.
"""
from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from config.lazy_import import lazy_module

try:  # the HTTP library under the openai client: httpx2 from openai 3 on, httpx before
    httpx = lazy_module("httpx2")
except ModuleNotFoundError:  # pragma: no cover
    httpx = lazy_module("httpx")

from . import conf
from .api_styles.base import MalformedResponse, Unsupported
from .destinations import AddressRefused
from .models import ModelEndpoint

openai = lazy_module("openai")  # imported by the first request or error, not by every command's start-up
T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
RETRYABLE_STATUS = {408, 409, 429}


class Stopped(Exception):
    """The run was cancelled or hit its budget; no further request is sent."""


@dataclass
class Failure:
    """Why one attempt failed, and whether trying again can help."""

    reason: str
    retryable: bool
    retry_after: float | None = None
    raw: str = ""


class RequestFailed(Exception):
    """Every attempt failed (or the failure cannot be retried)."""

    def __init__(self, failure: Failure, attempts: int, history: list[str]):
        self.failure = failure
        self.attempts = attempts
        self.history = history
        super().__init__(f"{failure.reason} (after {attempts} attempt{'s' if attempts != 1 else ''})")


@dataclass
class Attempted:
    """The result of the successful attempt, with the attempt count and the earlier failures."""

    value: Any
    attempts: int
    latency_ms: int
    history: list[str] = field(default_factory=list)


class EndpointClient:
    """An ``openai.OpenAI`` client for one endpoint, without built-in retries, that counts the HTTP
    requests it sends (``requests``, including those of multi-request modes; ``refused``: those answered
    with an HTTP error status; ``undelivered``: those whose connection never opened) and calls
    ``before_request`` before each one.

    The endpoint's timeout bounds each whole request (connect, send, headers and the full body: see
    :mod:`elicitation.deadline`), and ``guard.should_stop`` (set by the worker) is asked about once a second
    while a request waits, so that a cancelled run's request in flight is abandoned."""

    def __init__(self, endpoint: ModelEndpoint, before_request: Callable[[], None] | None = None,
                 timeout: float | None = None):
        self.requests = 0
        self.refused = 0
        self.before_request = before_request  # e.g. wait for the endpoint's rate limit; runs before every request
        timeout = float(endpoint.timeout_seconds) if timeout is None else timeout
        from .deadline import Guard, GuardedTransport  # httpx's transport: loaded with the first client

        self.guard = Guard(timeout=timeout, check_every=conf.cancel_check_seconds())
        # no redirects: an API answers where it is asked, and a redirect could lead the key elsewhere
        http_client = openai.DefaultHttpxClient(transport=GuardedTransport(self.guard), follow_redirects=False,
                                                event_hooks={"request": [self._count], "response": [self._answered]})
        self.openai = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key() or "none",
                                    max_retries=0, timeout=timeout, http_client=http_client)

    def _count(self, request: Any) -> None:
        if self.before_request is not None:
            self.before_request()
        self.requests += 1
        self.guard.start()  # the deadline runs from here: after any wait for the rate limit

    @property
    def undelivered(self) -> int:
        return self.guard.undelivered

    def reset_counts(self) -> None:
        """Counting starts again (a new answer)."""
        self.requests = self.refused = self.guard.undelivered = 0

    def _answered(self, response: Any) -> None:
        if response.status_code >= 400:
            self.refused += 1

    def close(self) -> None:
        self.openai.close()


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message(exc: openai.APIStatusError) -> str:
    """The server's own error message (from an OpenAI-style error body), else the client's text."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return getattr(exc, "message", "") or str(exc)


def not_an_api_response(status: int, response: Any, body: Any) -> str:
    """The reason stored for a reply that is not an API response (an HTML page, plain text…): its status,
    content type and size, never the body itself (it could be any page of any server)."""
    content_type = response.headers.get("content-type", "").split(";")[0].strip() if response is not None else ""
    size = len(response.content) if response is not None else len(body.encode() if isinstance(body, str) else body)
    return (f"HTTP {status}: not an API response ({content_type or 'no content type'}, {size} bytes; "
            "is the base URL the API's, ending in /v1?)")


def cause_of(exc: BaseException | None, kind: type[E]) -> E | None:
    """The exception of type ``kind`` in ``exc``'s chain of causes (``exc`` itself included), if any: e.g. the
    AddressRefused behind the client's connection error."""
    for _ in range(10):
        if exc is None or isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def classify(exc: BaseException, timeout: float | None = None) -> Failure:
    """Turn an exception from one attempt into a Failure (re-raise anything unexpected)."""
    if refused := cause_of(exc, AddressRefused):  # the connection was not opened: the address is not allowed
        return Failure(f"refused: {refused}", False)
    if isinstance(exc, openai.APITimeoutError):
        return Failure(f"timeout: no answer within {timeout:g} s" if timeout else "timeout", True)
    if isinstance(exc, openai.APIConnectionError):
        return Failure(f"connection error: {exc}", True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retryable = status in RETRYABLE_STATUS or status >= 500
        retry_after = parse_retry_after(exc.response.headers) if exc.response is not None else None
        if not isinstance(exc.body, (dict, list)):
            return Failure(not_an_api_response(status, exc.response, exc.body), retryable, retry_after)
        body = exc.response.text if exc.response is not None else ""
        return Failure(f"HTTP {status}: {error_message(exc)}"[:500], retryable, retry_after, raw=body[:2000])
    if isinstance(exc, Unsupported):
        return Failure(str(exc), False)
    if isinstance(exc, MalformedResponse):
        if isinstance(exc.body, (str, bytes)):  # the client hands back a body that is not JSON as text
            return Failure(f"malformed response ({not_an_api_response(200, None, exc.body)})", True)
        return Failure(str(exc), True, raw=str(exc.body)[:2000])
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure(f"malformed response: {exc}", True)
    if isinstance(exc, json.JSONDecodeError):  # the body was cut off or is not JSON at all
        return Failure(f"malformed response (truncated or invalid JSON: {exc})", True, raw=exc.doc[:2000])
    if isinstance(exc, UnicodeDecodeError):  # a body in another encoding, or binary: a malformed reply
        raw = exc.object.decode("utf-8", "backslashreplace") if isinstance(exc.object, bytes) else str(exc.object)
        return Failure(f"malformed response (not UTF-8: {exc.reason} at byte {exc.start})", True, raw=raw[:2000])
    if isinstance(exc, httpx.TransportError):  # e.g. the connection closed while the body was being read
        return Failure(f"connection error: {exc!r}"[:500], True)
    raise exc


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None,
                  rng: random.Random | None = None) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based).

    Exponential with "equal jitter": d = min(cap, base·2^(attempt−1)), wait d/2 + U(0, d/2). A
    ``Retry-After`` from the server is a floor (never retry earlier than the server asked).
    """
    rng = rng or random
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    delay = ceiling / 2 + rng.uniform(0, ceiling / 2)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def call_with_retries(
    attempt_fn: Callable[[], T],
    *,
    max_retries: int,
    base: float,
    cap: float,
    timeout: float | None = None,
    before_attempt: Callable[[int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    history: list[str] | None = None,
) -> Attempted:
    """Call ``attempt_fn`` until it succeeds, at most ``max_retries + 1`` times.

    ``before_attempt(n)`` runs before each attempt and may raise :class:`Stopped`; ``sleep`` is
    used for the waits (it may also raise Stopped, e.g. when the run is cancelled meanwhile).
    Raises :class:`RequestFailed` with the last failure and the number of attempts made. Each failed
    attempt's reason is appended to ``history`` (a new list unless one is given).
    """
    history = [] if history is None else history
    attempts = max(1, max_retries + 1)
    for attempt in range(1, attempts + 1):
        if before_attempt is not None:
            before_attempt(attempt)
        started = time.monotonic()
        try:
            value = attempt_fn()
        except Stopped:
            raise
        except Exception as exc:  # noqa: BLE001 - classify() re-raises what it does not know
            failure = classify(exc, timeout)
            history.append(f"attempt {attempt}: {failure.reason}")
            if not failure.retryable or attempt == attempts:
                raise RequestFailed(failure, attempt, history) from exc
            sleep(backoff_delay(attempt, base, cap, failure.retry_after, rng))
            continue
        return Attempted(value, attempt, int((time.monotonic() - started) * 1000), history)
    raise AssertionError("unreachable")  # pragma: no cover
