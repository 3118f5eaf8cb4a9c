"""The pre-flight check of an endpoint: one cheap request before it is registered or a run is created or started
on it, and what failed in plain words, naming the URL.

The request is a one-token completion in the endpoint's API style (``POST …/chat/completions`` or
``…/completions``, ``max_tokens`` 1, the style's ``probe_content``: elicitation/api_styles/), so it checks what a
run needs: the server answers at that URL, the key is accepted and the model exists. A check that passed is remembered for :data:`VALID_SECONDS` per endpoint setting
(base URL, model, API style, key), so starting several runs on one endpoint sends one request.

Every caller offers an explicit way to skip it (``--no-check``, ``"check": false``, the admin's "skip the
check" box) for an endpoint that is not up yet; the default is to check.
"""
from __future__ import annotations

import hashlib
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from .api_styles import adapter_for
from .client import EndpointClient, MalformedResponse, cause_of, classify, error_message, openai
from .destinations import AddressRefused, url_problem
from .models import ElicitationRun, ModelEndpoint
from .modes import complete
from .runs import RunStateError, missing_key, refuse_imported, resume_run, start_run

TIMEOUT_SECONDS = 20.0  # at most this long for the check (or the endpoint's own timeout, if shorter)
VALID_SECONDS = 60.0
_passed: dict[tuple, float] = {}


class PreflightFailed(RunStateError):
    """The endpoint failed its pre-flight check; the message says what failed, at which URL (a run on it is not
    created or started: callers that handle RunStateError handle this too)."""


def request_url(endpoint: ModelEndpoint) -> str:
    """The URL the check (and every request of a run) is sent to."""
    return f"{endpoint.base_url.rstrip('/')}/{adapter_for(endpoint).path}"


def _signature(endpoint: ModelEndpoint) -> tuple:
    key = endpoint.api_key() if endpoint.api_key_env else ""
    return (endpoint.base_url, endpoint.model, endpoint.api_style, endpoint.api_key_env,
            hashlib.sha256(key.encode()).hexdigest())


def describe(exc: BaseException, endpoint: ModelEndpoint, timeout: float) -> str:
    """What failed, in plain words, naming the URL."""
    url = request_url(endpoint)
    if refused := cause_of(exc, AddressRefused):
        return f"{refused} ({endpoint.base_url})"
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout:g} s at {url}"
    if isinstance(exc, openai.APIConnectionError):
        if cause_of(exc, ConnectionRefusedError) or "connection refused" in repr(exc.__cause__).lower():
            return f"connection refused at {endpoint.base_url}: is the server running, on that host and port?"
        if cause_of(exc, socket.gaierror) or "could not be resolved" in repr(exc.__cause__):
            return f"the host {urlsplit(endpoint.base_url).hostname} could not be resolved ({endpoint.base_url})"
        return f"could not connect to {endpoint.base_url}: {exc.__cause__ or exc}"
    if isinstance(exc, openai.APIStatusError):
        status, body = exc.status_code, exc.body
        if not isinstance(body, (dict, list)):
            kind = (exc.response.headers.get("content-type", "") if exc.response is not None else "").split(";")[0]
            return (f"{status} at {url}: not an API response ({kind or 'no content type'}): "
                    "does the base URL end in /v1?")
        message = error_message(exc)[:300]
        if status in (401, 403):
            if endpoint.api_key_env:
                return f"{status}: the key in {endpoint.api_key_env} was refused at {url} ({message})"
            return (f"{status} at {url}: the endpoint wants an API key ({message}); name the environment variable "
                    "that holds it")
        if status == 404:
            if "model" in message.lower():
                return f"404 at {url}: the model {endpoint.model!r} was not found there ({message})"
            return f"404 at {url}: does the base URL end in /v1? ({message})"
        return f"{status} at {url}: {message}"
    if isinstance(exc, MalformedResponse):
        return f"the reply at {url} is not a completion: {classify(exc).reason}"
    return f"{url}: {classify(exc, timeout).reason}"


def problem(endpoint: ModelEndpoint) -> str:
    """Why ``endpoint`` fails its pre-flight check ("" when it passes): its settings first (an address that
    is not allowed, a key variable that may not be sent there or is not set), then one request."""
    if refused := url_problem(endpoint.base_url) or endpoint.key_problem() or missing_key(endpoint):
        return refused
    signature = _signature(endpoint)
    if time.monotonic() - _passed.get(signature, -VALID_SECONDS - 1) < VALID_SECONDS:
        return ""
    timeout = min(float(endpoint.timeout_seconds), TIMEOUT_SECONDS)
    client = EndpointClient(endpoint, timeout=timeout)
    try:
        complete(client.openai, endpoint, adapter_for(endpoint).probe_content(), {"max_tokens": 1, "temperature": 0.0})
    except Exception as exc:  # noqa: BLE001 - every failure is reported in words
        try:
            return describe(exc, endpoint, timeout)
        except Exception:  # noqa: BLE001 - classify re-raises what it does not know
            return f"{request_url(endpoint)}: {exc!r}"[:500]
    finally:
        client.close()
    _passed[signature] = time.monotonic()
    return ""


def require(endpoint: ModelEndpoint, check: bool = True) -> None:
    """PreflightFailed unless ``endpoint`` passes its check (nothing when ``check`` is False)."""
    if check and (reason := problem(endpoint)):
        raise PreflightFailed(f"endpoint {endpoint.name or endpoint.base_url} failed its pre-flight check: {reason}")


def start(run: ElicitationRun, check: bool = True, **options: Any) -> list:
    """``start_run`` after the pre-flight check of the run's endpoint (what the admin and the API call). A run of
    imported answers sends nothing (its endpoint only names the model): ``start_run`` says why it cannot start."""
    refuse_imported(run)
    require(run.endpoint, check)
    return start_run(run, **options)


def resume(run: ElicitationRun, check: bool = True, **options: Any) -> list:
    """``resume_run`` after the pre-flight check of the run's endpoint (imported answers: see :func:`start`)."""
    refuse_imported(run)
    require(run.endpoint, check)
    return resume_run(run, **options)
