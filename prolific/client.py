"""A small client of Prolific's public API (https://docs.prolific.com/docs/api-docs/public/): the calls the
platform makes, with ``Authorization: Token <token>`` and JSON bodies. Standard library only.

The token comes from the environment variable named by ``settings.PROLIFIC_TOKEN_ENV`` (default
``PROLIFIC_API_TOKEN``), the address from ``settings.PROLIFIC_API_URL``; neither is stored in the database.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, Iterator
from urllib.parse import quote, urlencode

from django.conf import settings


class ProlificError(Exception):
    """A call to Prolific failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


def token() -> str:
    name = settings.PROLIFIC_TOKEN_ENV
    value = os.environ.get(name, "").strip()
    if not value:
        raise ProlificError(f"no Prolific API token: set the environment variable {name} (Prolific › Settings › "
                            "API tokens) for the web process and the workers")
    return value


class ProlificClient:
    def __init__(self, base_url: str | None = None, api_token: str | None = None, timeout: float | None = None):
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/")
        self.api_token = api_token or token()
        self.timeout = timeout or settings.PROLIFIC_TIMEOUT_SECONDS

    def request(self, method: str, path: str, body: dict | None = None, url: str | None = None) -> Any:
        target = url or f"{self.base_url}/api/v1/{path.lstrip('/')}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(target, data=data, method=method, headers={
            "Authorization": f"Token {self.api_token}", "Accept": "application/json",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            raise ProlificError(f"Prolific answered {exc.code} to {method} {path}: {detail}", exc.code) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ProlificError(f"Prolific could not be reached ({method} {path}): {exc}") from None
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise ProlificError(f"Prolific's answer to {method} {path} is not JSON") from None

    # --- studies ---------------------------------------------------------------------------------------
    def create_study(self, payload: dict) -> dict:
        return self.request("POST", "studies/", payload)

    def get_study(self, study_id: str) -> dict:
        return self.request("GET", f"studies/{quote(study_id)}/")

    def publish_study(self, study_id: str) -> dict:
        return self.request("POST", f"studies/{quote(study_id)}/transition/", {"action": "PUBLISH"})

    # --- submissions -----------------------------------------------------------------------------------
    def submissions(self, study_id: str) -> Iterator[dict]:
        """Every submission of the study, following Prolific's ``_links.next`` pages."""
        page = self.request("GET", f"submissions/?{urlencode({'study': study_id})}")
        seen = 0
        while True:
            for row in page.get("results", []):
                seen += 1
                yield row
            next_url = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not next_url or not page.get("results") or seen > 1_000_000:
                return
            page = self.request("GET", "submissions/", url=next_url)

    def approve(self, submission_id: str) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/transition/", {"action": "APPROVE"})

    def reject(self, submission_id: str, message: str, category: str) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/transition/",
                            {"action": "REJECT", "message": message, "rejection_category": category})

    def request_return(self, submission_id: str, reasons: list[str]) -> dict:
        return self.request("POST", f"submissions/{quote(submission_id)}/request-return/",
                            {"request_return_reasons": reasons})
