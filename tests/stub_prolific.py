"""A local stand-in for Prolific's public API (https://api.prolific.com/api/v1/…), on loopback, for tests.

It follows the real endpoints and payloads the platform uses:

- ``POST /api/v1/studies/`` creates a study (``UNPUBLISHED``) from ``name``, ``internal_name``, ``description``,
  ``external_study_url`` (must carry ``{{%PROLIFIC_PID%}}``), ``prolific_id_option``, ``completion_codes``
  (``[{"code", "code_type", "actions": [{"action": …}]}]``), ``total_available_places``,
  ``estimated_completion_time`` and ``reward``;
- ``GET /api/v1/studies/{id}/``; ``POST /api/v1/studies/{id}/transition/`` with ``{"action": "PUBLISH"}``;
- ``GET /api/v1/submissions/?study={id}`` (``{"results": [...], "_links": {"next": {"href": …}}}``, paged);
- ``POST /api/v1/submissions/{id}/transition/`` with ``{"action": "APPROVE"}`` or ``{"action": "REJECT",
  "message": ≥ 100 characters, "rejection_category": "FAILED_CHECK" | …}`` (only from ``AWAITING REVIEW``);
- ``POST /api/v1/submissions/{id}/request-return/`` with ``{"request_return_reasons": [...]}``.

Every call needs ``Authorization: Token <token>``. Errors answer ``{"error": {...}}`` with 400/401/404.
A test adds submissions (``add_submission``) and changes their status as Prolific would (``set_status``).
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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass
class Call:
    method: str
    path: str
    body: Any
    token: str


@dataclass
class StubProlific:
    token: str = "prolific-test-token"
    page_size: int = 2  # small, so that paging is exercised
    fail_next: int = 0  # answer the next N calls with 503
    studies: dict[str, dict] = field(default_factory=dict)
    submissions: dict[str, dict] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    # --- test helpers -----------------------------------------------------------------------------
    def add_submission(self, study_id: str, participant_id: str, status: str = "AWAITING REVIEW",
                       study_code: str = "") -> str:
        sid = secrets.token_hex(12)
        self.submissions[sid] = {"id": sid, "study_id": study_id, "participant_id": participant_id,
                                 "status": status, "started_at": _now(),
                                 "completed_at": _now() if status == "AWAITING REVIEW" else None,
                                 "study_code": study_code, "entered_code": study_code,
                                 "return_requested": None, "is_complete": status == "AWAITING REVIEW"}
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
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    return self._send(400, {"error": {"detail": "body is not JSON"}})
                auth = self.headers.get("Authorization", "")
                url = urlparse(self.path)
                stub.calls.append(Call(method, url.path, body, auth))
                if auth != f"Token {stub.token}":
                    return self._send(401, {"error": {"detail": "Invalid token."}})
                if stub.fail_next:
                    stub.fail_next -= 1
                    return self._send(503, {"error": {"detail": "Service unavailable"}})
                status, answer = stub.route(method, url.path, parse_qs(url.query), body)
                self._send(status, answer)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
            return 404, {"error": {"detail": "Not found."}}
        resource, rest = parts[2], parts[3:]
        if resource == "studies":
            if method == "POST" and not rest:
                return self._create_study(body or {})
            study = self.studies.get(rest[0]) if rest else None
            if study is None:
                return 404, {"error": {"detail": "Not found."}}
            if method == "GET" and len(rest) == 1:
                return 200, study
            if method == "POST" and rest[1:] == ["transition"]:
                action = (body or {}).get("action")
                if action == "PUBLISH" and study["status"] == "UNPUBLISHED":
                    study["status"] = "ACTIVE"
                    return 200, study
                return 400, {"error": {"detail": f"cannot {action} a study that is {study['status']}"}}
        if resource == "submissions":
            if method == "GET" and not rest:
                return self._list_submissions(query)
            sub = self.submissions.get(rest[0]) if rest else None
            if sub is None:
                return 404, {"error": {"detail": "Not found."}}
            if method == "POST" and rest[1:] == ["transition"]:
                return self._transition(sub, body or {})
            if method == "POST" and rest[1:] == ["request-return"]:
                reasons = (body or {}).get("request_return_reasons")
                if not reasons or not isinstance(reasons, list):
                    return 400, {"error": {"request_return_reasons": ["This field is required."]}}
                if sub["status"] not in ("ACTIVE", "AWAITING REVIEW"):
                    return 400, {"error": {"detail": f"submission is {sub['status']}"}}
                sub["return_requested"] = _now()
                sub["request_return_reasons"] = reasons
                return 200, sub
        return 404, {"error": {"detail": "Not found."}}

    def _create_study(self, body: dict) -> tuple[int, Any]:
        missing = [f for f in STUDY_FIELDS if f not in body]
        if missing:
            return 400, {"error": {f: ["This field is required."] for f in missing}}
        if "{{%PROLIFIC_PID%}}" not in body["external_study_url"]:
            return 400, {"error": {"external_study_url": ["must record PROLIFIC_PID as a URL parameter"]}}
        codes = body["completion_codes"]
        if not codes or any(not c.get("code") or not c.get("code_type") or not c.get("actions") for c in codes):
            return 400, {"error": {"completion_codes": ["each needs code, code_type and actions"]}}
        if not isinstance(body["total_available_places"], int) or body["total_available_places"] < 1:
            return 400, {"error": {"total_available_places": ["a positive whole number"]}}
        sid = secrets.token_hex(12)
        self.studies[sid] = {**body, "id": sid, "status": "UNPUBLISHED", "date_created": _now()}
        return 201, self.studies[sid]

    def _list_submissions(self, query: dict) -> tuple[int, Any]:
        study = (query.get("study") or [""])[0]
        if study not in self.studies:
            return 404, {"error": {"detail": "Study not found."}}
        rows = [s for s in self.submissions.values() if s["study_id"] == study]
        page = int((query.get("page") or ["1"])[0])
        start = (page - 1) * self.page_size
        chunk = rows[start:start + self.page_size]
        more = start + self.page_size < len(rows)
        next_href = f"{self.base_url}/api/v1/submissions/?study={study}&page={page + 1}" if more else None
        return 200, {"results": chunk, "_links": {"next": {"href": next_href}}, "meta": {"count": len(rows)}}

    def _transition(self, sub: dict, body: dict) -> tuple[int, Any]:
        action = body.get("action")
        if sub["status"] != "AWAITING REVIEW":
            return 400, {"error": {"detail": f"submission is {sub['status']}, not AWAITING REVIEW"}}
        if action == "APPROVE":
            sub["status"] = "APPROVED"
            return 200, sub
        if action == "REJECT":
            if len(body.get("message") or "") < 100:
                return 400, {"error": {"message": ["Ensure this field has at least 100 characters."]}}
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                return 400, {"error": {"rejection_category": ["not a valid choice"]}}
            sub["status"] = "REJECTED"
            return 200, sub
        return 400, {"error": {"action": [f"{action!r} is not a valid choice"]}}


@pytest.fixture
def prolific(settings, monkeypatch):
    """A running stub with the platform pointed at it and its token in the environment variable the settings
    name."""
    with StubProlific() as server:
        settings.PROLIFIC_API_URL = server.base_url
        monkeypatch.setenv(settings.PROLIFIC_TOKEN_ENV, server.token)
        yield server
