"""A local stand-in for Prolific's public API (https://api.prolific.com/api/v1/…), on loopback, for tests.

It follows the documented endpoints, payloads and behaviour the platform relies on:

- ``POST /api/v1/studies/`` creates a study (``UNPUBLISHED``) from ``name``, ``internal_name``, ``description``,
  ``external_study_url`` (must carry ``{{%PROLIFIC_PID%}}``), ``prolific_id_option``, ``completion_codes``
  (``[{"code", "code_type", "actions": [{"action": …}]}]``), ``total_available_places``,
  ``estimated_completion_time``, ``reward`` and ``filters``;
- ``GET /api/v1/studies/{id}/``; ``POST /api/v1/studies/{id}/transition/`` with ``{"action": "PUBLISH"}``:
  the study is ``PUBLISHING`` in the answer and ``ACTIVE`` when read back; publishing fails when the reward is
  under the minimum hourly rate or the balance does not cover places × reward;
- ``GET /api/v1/submissions/?study={id}&page=N&page_size=M``: pages of 20 by default, ``{"results": [...],
  "meta": {"count": …}}`` and no ``_links``;
- ``POST /api/v1/submissions/{id}/transition/`` with ``{"action": "APPROVE"}`` or ``{"action": "REJECT",
  "message": ≥ 100 characters, "rejection_category": "FAILED_CHECK" | …}``, from ``AWAITING REVIEW``; the same
  transition again is answered 200 (idempotent), another one 422;
- ``POST /api/v1/submissions/{id}/request-return/`` with ``{"request_return_reasons": [...]}``.

Every call needs ``Authorization: Token <token>``. Errors answer Prolific's shape ``{"error": {"status",
"error_code", "title", "detail"}}`` with 400/401/404/422; ``rate_limit_next`` answers 429 (with
``Retry-After``), ``fail_next`` 503, ``redirect_next`` a 302 to another address. A test adds submissions
(``add_submission``) and changes their status as Prolific would (``set_status``). Connections are kept alive
(HTTP/1.1); each call records the client's port.
"""
from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

REJECTION_CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
STUDY_FIELDS = ("name", "description", "external_study_url", "prolific_id_option", "completion_codes",
                "total_available_places", "estimated_completion_time", "reward")
#: The status each submission transition leads to.
TRANSITIONS = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def error(status: int, detail: Any, code: int = 0, title: str = "") -> tuple[int, Any]:
    """An answer in Prolific's error shape."""
    return status, {"error": {"status": status, "error_code": code or status * 1000, "title": title or "Error",
                              "detail": detail, "additional_information": f"/api/v1/errors/{code or status}"}}


@dataclass
class Call:
    method: str
    path: str
    body: Any
    token: str
    query: dict = field(default_factory=dict)
    port: int = 0  # the client's port: one per connection


@dataclass
class StubProlific:
    token: str = "prolific-test-token"
    page_size: int = 20  # Prolific's default when page_size is not given
    fail_next: int = 0  # answer the next N calls with 503
    rate_limit_next: int = 0  # answer the next N calls with 429
    retry_after: str = "0"
    redirect_next: str = ""  # answer the next call with a 302 to this URL
    ignore_page: bool = False  # answer page 1 whatever page is asked (an API that would loop a pager)
    balance_cents: int = 10**9
    min_hourly_cents: int = 800
    studies: dict[str, dict] = field(default_factory=dict)
    submissions: dict[str, dict] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    # --- test helpers -----------------------------------------------------------------------------
    def add_submission(self, study_id: str, participant_id: str, status: str = "AWAITING REVIEW",
                       study_code: str = "", completed_at: str | None = None) -> str:
        sid = secrets.token_hex(12)
        done = status in ("AWAITING REVIEW", "APPROVED", "REJECTED", "PARTIALLY APPROVED")
        self.submissions[sid] = {"id": sid, "study_id": study_id, "participant_id": participant_id,
                                 "status": status, "started_at": _now(),
                                 "completed_at": (completed_at or _now()) if done else None,
                                 "study_code": study_code, "entered_code": study_code,
                                 "return_requested": None, "is_complete": done}
        return sid

    def set_status(self, submission_id: str, status: str) -> None:
        self.submissions[submission_id]["status"] = status

    def transitions(self) -> list[tuple[str, dict]]:
        """(submission id, body) of every submission transition and return request received."""
        return [(c.path.split("/")[4], c.body) for c in self.calls
                if c.method == "POST" and c.path.startswith("/api/v1/submissions/")]

    # --- server -----------------------------------------------------------------------------------
    def __enter__(self) -> "StubProlific":
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Prolific's servers

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: Any, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    return self._send(*error(400, "body is not JSON"))
                auth = self.headers.get("Authorization", "")
                url = urlparse(self.path)
                query = parse_qs(url.query)
                stub.calls.append(Call(method, url.path, body, auth, query, self.client_address[1]))
                if auth != f"Token {stub.token}":
                    return self._send(*error(401, "Invalid token.", 401100))
                if stub.redirect_next:
                    target, stub.redirect_next = stub.redirect_next, ""
                    return self._send(302, {}, {"Location": target})
                if stub.rate_limit_next:
                    stub.rate_limit_next -= 1
                    return self._send(*error(429, "Request was throttled.", 429000), {"Retry-After": stub.retry_after})
                if stub.fail_next:
                    stub.fail_next -= 1
                    return self._send(*error(503, "Service unavailable"))
                status, answer = stub.route(method, url.path, query, body)
                self._send(status, answer)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- the API ------------------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict, body: Any) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]  # api, v1, resource, id?, verb?
        if parts[:2] != ["api", "v1"] or len(parts) < 3:
            return error(404, "Not found.")
        resource, rest = parts[2], parts[3:]
        if resource == "studies":
            if method == "POST" and not rest:
                return self._create_study(body or {})
            study = self.studies.get(rest[0]) if rest else None
            if study is None:
                return error(404, "Not found.")
            if method == "GET" and len(rest) == 1:
                if study["status"] == "PUBLISHING":  # Prolific finishes publishing in the background
                    study["status"] = "ACTIVE"
                return 200, study
            if method == "POST" and rest[1:] == ["transition"]:
                return self._publish(study, (body or {}).get("action"))
        if resource == "submissions":
            if method == "GET" and not rest:
                return self._list_submissions(query)
            sub = self.submissions.get(rest[0]) if rest else None
            if sub is None:
                return error(404, "Not found.")
            if method == "POST" and rest[1:] == ["transition"]:
                return self._transition(sub, body or {})
            if method == "POST" and rest[1:] == ["request-return"]:
                reasons = (body or {}).get("request_return_reasons")
                if not reasons or not isinstance(reasons, list):
                    return error(400, {"request_return_reasons": ["This field is required."]})
                if sub["status"] not in ("ACTIVE", "AWAITING REVIEW"):
                    return error(422, f"submission is {sub['status']}", 422100)
                sub["return_requested"] = _now()
                sub["request_return_reasons"] = reasons
                return 200, sub
        return error(404, "Not found.")

    def _create_study(self, body: dict) -> tuple[int, Any]:
        missing = [f for f in STUDY_FIELDS if f not in body]
        if missing:
            return error(400, {f: ["This field is required."] for f in missing})
        if "{{%PROLIFIC_PID%}}" not in body["external_study_url"]:
            return error(400, {"external_study_url": ["must record PROLIFIC_PID as a URL parameter"]})
        codes = body["completion_codes"]
        if not codes or any(not c.get("code") or not c.get("code_type") or not c.get("actions") for c in codes):
            return error(400, {"completion_codes": ["each needs code, code_type and actions"]})
        if len({c["code"] for c in codes}) != len(codes):
            return error(400, {"completion_codes": ["completion codes must be unique"]})
        if not isinstance(body["total_available_places"], int) or body["total_available_places"] < 1:
            return error(400, {"total_available_places": ["a positive whole number"]})
        if not isinstance(body["estimated_completion_time"], int) or body["estimated_completion_time"] < 1:
            return error(400, {"estimated_completion_time": ["Ensure this value is greater than or equal to 1."]})
        sid = secrets.token_hex(12)
        self.studies[sid] = {**body, "id": sid, "status": "UNPUBLISHED", "date_created": _now()}
        return 201, self.studies[sid]

    def _publish(self, study: dict, action: Any) -> tuple[int, Any]:
        if action != "PUBLISH" or study["status"] != "UNPUBLISHED":
            return error(422, f"cannot {action} a study that is {study['status']}", 422200)
        hourly = study["reward"] * 60 / study["estimated_completion_time"]
        if hourly < self.min_hourly_cents:
            return error(400, f"The reward per hour ({hourly:.0f}) is below the minimum ({self.min_hourly_cents}).",
                         140101)
        if study["reward"] * study["total_available_places"] > self.balance_cents:
            return error(402, "Insufficient balance to publish this study. Top up your workspace.", 140201)
        study["status"] = "PUBLISHING"
        return 200, study

    def _list_submissions(self, query: dict) -> tuple[int, Any]:
        study = (query.get("study") or [""])[0]
        if study not in self.studies:
            return error(404, "Study not found.")
        rows = [s for s in self.submissions.values() if s["study_id"] == study]
        try:
            page = 1 if self.ignore_page else int((query.get("page") or ["1"])[0])
            size = int((query.get("page_size") or [str(self.page_size)])[0])
        except ValueError:
            return error(400, {"page": ["A valid integer is required."]})
        chunk = rows[(page - 1) * size:page * size]
        return 200, {"results": chunk, "meta": {"count": len(rows)}}

    def _transition(self, sub: dict, body: dict) -> tuple[int, Any]:
        action = body.get("action")
        if action not in TRANSITIONS:
            return error(400, {"action": [f"{action!r} is not a valid choice"]})
        if sub["status"] == TRANSITIONS[action]:
            return 200, sub  # the same transition again changes nothing
        if sub["status"] != "AWAITING REVIEW":
            return error(422, f"submission is {sub['status']}, not AWAITING REVIEW", 422100)
        if action == "REJECT":
            if len(body.get("message") or "") < 100:
                return error(400, {"message": ["Ensure this field has at least 100 characters."]})
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                return error(400, {"rejection_category": ["not a valid choice"]})
        sub["status"] = TRANSITIONS[action]
        return 200, sub


@pytest.fixture
def prolific(settings, monkeypatch):
    """A running stub with the platform pointed at it, its token in the environment variable the settings
    name, a public SITE_URL (publishing refuses a loopback one) and no real waiting on back-off."""
    with StubProlific() as server:
        settings.PROLIFIC_API_URL = server.base_url
        settings.SITE_URL = "https://lab.example.org"
        settings.PROLIFIC_BACKOFF_SECONDS = 0.001
        monkeypatch.setenv(settings.PROLIFIC_TOKEN_ENV, server.token)
        yield server
