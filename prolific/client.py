"""A small client of Prolific's public API (https://docs.prolific.com/api-reference/): the calls the platform
makes, with ``Authorization: Token <token>`` and JSON bodies, on httpx (``httpx2``, installed with ``openai``).

- One pooled connection serves every call of a client (a sync reads all its pages over it); close the client,
  or use it as a context manager, when done.
- Every URL is built from ``settings.PROLIFIC_API_URL``: the client follows no link found in a body, and a
  redirect to another origin loses the ``Authorization`` header (httpx drops it across origins).
- Lists are paged explicitly by ``page`` / ``page_size`` (:meth:`ProlificClient.submissions`), stopping on an
  empty, short or repeated page.
- A 429 is retried with exponential back-off (honouring ``Retry-After``); Prolific's error body
  (``{"error": {"error_code", "title", "detail"}}``) becomes the message the researcher sees.

The token comes from the environment variable named by ``settings.PROLIFIC_TOKEN_ENV`` (default
``PROLIFIC_API_TOKEN``), the address from ``settings.PROLIFIC_API_URL``; neither is stored in the database.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import quote

from django.conf import settings

from config.lazy_import import lazy_module

httpx = lazy_module("httpx2")  # installed with openai; imported by the first call, not by every command's start-up
#: HTTP statuses answered with a back-off and another try.
RETRIED = {429}


class ProlificError(Exception):
    """A call to Prolific failed; ``status`` is the HTTP status (0: no answer), ``code`` Prolific's
    ``error_code`` when it gave one."""

    def __init__(self, message: str, status: int = 0, code: str = ""):
        super().__init__(message)
        self.status = status
        self.code = code


def token() -> str:
    name = settings.PROLIFIC_TOKEN_ENV
    value = os.environ.get(name, "").strip()
    if not value:
        raise ProlificError(f"no Prolific API token: set the environment variable {name} (Prolific › Settings › "
                            "API tokens) for the web process and the workers")
    return value


def _flatten(detail: Any) -> str:
    """Prolific's ``detail`` (a sentence, a list, or ``{field: [messages]}``) as one line."""
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, (list, tuple)):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def error_message(response: httpx.Response, what: str) -> ProlificError:
    """The error a researcher reads for a failed answer: Prolific's ``error.detail`` (or its field errors),
    its ``error_code`` and ``title``, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("error_code") or "")
        detail = error.get("detail")
        if detail is None:  # older shape: the field errors are the error object itself
            detail = {k: v for k, v in error.items() if k not in ("status", "error_code", "title",
                                                                  "additional_information", "traceback",
                                                                  "interactive")}
        text = _flatten(detail) or str(error.get("title") or "")
        label = f"{response.status_code}" + (f", error {code}" if code else "")
        return ProlificError(f"Prolific refused {what} ({label}): {text}"[:2000], response.status_code, code)
    return ProlificError(f"Prolific answered {response.status_code} to {what}: {response.text[:300]}",
                         response.status_code)


@dataclass
class Listing:
    """The rows of a paged list; ``complete`` is False (with ``note`` saying why) when paging stopped
    before the count Prolific reported."""

    rows: list[dict] = field(default_factory=list)
    complete: bool = True
    note: str = ""


class ProlificClient:
    """Prolific's API over one pooled httpx connection. ``transport`` and ``sleep`` are for tests."""

    def __init__(self, base_url: str | None = None, api_token: str | None = None, timeout: float | None = None,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep):
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/")
        self.origin = httpx.URL(self.base_url).origin
        self.page_size = settings.PROLIFIC_PAGE_SIZE
        self.retries = settings.PROLIFIC_MAX_RETRIES
        self.backoff = settings.PROLIFIC_BACKOFF_SECONDS
        self.sleep = sleep
        self.http = httpx.Client(
            timeout=timeout or settings.PROLIFIC_TIMEOUT_SECONDS, follow_redirects=True, max_redirects=3,
            transport=transport, headers={"Authorization": f"Token {api_token or token()}",
                                          "Accept": "application/json"})

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "ProlificClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def url(self, path: str) -> str:
        """The absolute URL of an API path; an absolute URL is accepted only on Prolific's origin."""
        if "://" in path:
            if httpx.URL(path).origin != self.origin:
                raise ProlificError(f"refusing to send the Prolific token to {httpx.URL(path).origin}: "
                                    f"not Prolific's address ({self.base_url})")
            return path
        return f"{self.base_url}/api/v1/{path.lstrip('/')}"

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        """Seconds before the next try: ``Retry-After`` when Prolific sends it, else base × 2^attempt."""
        try:
            after = float(response.headers.get("Retry-After", ""))
        except ValueError:
            after = 0.0
        return min(max(after, self.backoff * 2 ** attempt), settings.PROLIFIC_BACKOFF_MAX_SECONDS)

    def request(self, method: str, path: str, body: dict | None = None, params: dict | None = None) -> Any:
        target, what = self.url(path), f"{method} {path.split('?')[0]}"
        for attempt in range(self.retries + 1):
            try:
                response = self.http.request(method, target, json=body, params=params)
            except httpx.HTTPError as exc:
                raise ProlificError(f"Prolific could not be reached ({what}): {exc}") from None
            if response.status_code in RETRIED and attempt < self.retries:
                self.sleep(self._wait(response, attempt))
                continue
            break
        if response.status_code >= 400:
            raise error_message(response, what)
        if httpx.URL(str(response.url)).origin != self.origin:
            raise ProlificError(f"Prolific's answer to {what} came from another address ({response.url.host})")
        try:
            return response.json() if response.content else {}
        except ValueError:
            raise ProlificError(f"Prolific's answer to {what} is not JSON") from None

    # --- studies ---------------------------------------------------------------------------------------
    def create_study(self, payload: dict) -> dict:
        return self.request("POST", "studies/", payload)

    def get_study(self, study_id: str) -> dict:
        return self.request("GET", f"studies/{quote(study_id)}/")

    def publish_study(self, study_id: str) -> dict:
        return self.request("POST", f"studies/{quote(study_id)}/transition/", {"action": "PUBLISH"})

    # --- submissions -----------------------------------------------------------------------------------
    def pages(self, path: str, params: dict) -> Listing:
        """Every row of a list, asked page by page (``page``, ``page_size``). Stops at an empty page, a page
        shorter than the first, the reported ``meta.count``, or a page whose rows were all seen before (an
        API that ignores ``page`` would otherwise loop)."""
        listing, seen, first_size, total = Listing(), set(), 0, None
        for page in range(1, settings.PROLIFIC_MAX_PAGES + 1):
            answer = self.request("GET", path, params={**params, "page": page, "page_size": self.page_size})
            rows = [r for r in (answer.get("results") or []) if isinstance(r, dict)]
            count = (answer.get("meta") or {}).get("count") if isinstance(answer.get("meta"), dict) else None
            total = count if isinstance(count, int) else total
            ids = {str(r.get("id")) for r in rows}
            if rows and ids <= seen:
                listing.note = f"Prolific repeated page {page - 1} as page {page}; stopped there"
                break
            listing.rows += [r for r in rows if str(r.get("id")) not in seen]
            seen |= ids
            first_size = first_size or len(rows)
            if not rows or len(rows) < first_size or (total is not None and len(listing.rows) >= total):
                break
        else:
            listing.note = f"stopped after {settings.PROLIFIC_MAX_PAGES} pages"
        if total is not None and len(listing.rows) < total:
            listing.complete = False
            listing.note = (listing.note + "; " if listing.note else "") + \
                f"read {len(listing.rows)} of the {total} submissions Prolific counts"
        elif listing.note:
            listing.complete = False
        return listing

    def submissions(self, study_id: str) -> Listing:
        """Every submission of the study (``GET /api/v1/submissions/?study=…``, paged)."""
        return self.pages("submissions/", {"study": study_id})

    def approve(self, submission_id: str) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/transition/", {"action": "APPROVE"})

    def reject(self, submission_id: str, message: str, category: str) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/transition/",
                            {"action": "REJECT", "message": message, "rejection_category": category})

    def request_return(self, submission_id: str, reasons: list[str]) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/request-return/",
                            {"request_return_reasons": reasons})
