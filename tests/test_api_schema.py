"""The OpenAPI schema is generated from the code, lists every route, and the API keeps to it: a schema-driven
fuzz run (schemathesis) against the WSGI app finds no server error and no answer that breaks the schema."""
from __future__ import annotations

import os
import re

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import (content_type_conformance, not_a_server_error, response_schema_conformance,
                                 status_code_conformance)

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from prolific.models import ProlificStudy, Submission
from surveys.models import Assignment, Participant, Response

pytestmark = pytest.mark.django_db

#: examples per operation (FUZZ_EXAMPLES=100 for a longer run)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
BODILESS_ACTIONS = ("/start/", "/cancel/", "/resume/", "/attention/", "/publish/", "/sync/", "/send/")
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def api_routes() -> set[str]:
    """Every /api/ route of the URL map, as OpenAPI paths ({slug}, {id}, ...); format-suffix twins left out."""
    found: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                route = prefix + str(p.pattern)
                if route.startswith("api/") and "format" not in route and route not in (
                        "api/", "api/schema/", "api/docs/", "api/redoc/"):
                    found.add(route)

    walk(get_resolver().url_patterns, "")

    paths = set()
    for route in found:
        route = route.replace("^", "").replace("$", "")
        route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", route)  # router regexes
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)  # path converters
        paths.add("/" + route.replace("{pk}", "{id}"))
    return paths


def test_schema_lists_every_api_route_with_its_answers(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    documented = set(schema["paths"])
    assert api_routes() == documented
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            assert any(code.startswith("2") for code in operation["responses"]), (method, path)
            assert {"401", "403"} <= set(operation["responses"]), (method, path)
            if method in ("post", "put", "patch") and not path.endswith(BODILESS_ACTIONS):
                assert "requestBody" in operation, (method, path)


def test_documentation_pages_are_served_without_a_cdn(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/api/schema/" in html and "swagger-ui" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
    assert client.get("/api/redoc/").status_code == 200


@pytest.fixture
def wsgi_app():
    """Django's WSGI app, without closing the database connection after each request (as Django's test
    client does): the test's transaction holds the data."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def seeded(imported_nv):
    """Objects for the fuzzer's ids to find: a participant with an answer, an endpoint, a run with answers."""
    participant = Participant.objects.create(study=imported_nv, prolific_pid="FUZZ1")
    item = imported_nv.main_items().first()
    slot = Assignment.objects.create(participant=participant, item=item, position=1)
    Response.objects.create(assignment=slot, participant=participant, item=item, value=50)
    endpoint = ModelEndpoint.objects.create(name="fuzz", base_url="http://127.0.0.1:9/v1", model="m")
    run = ElicitationRun.objects.create(study=imported_nv, endpoint=endpoint, status="completed")
    ModelResponse.objects.create(run=run, item=item, status="ok", value=40, bin=40)
    link = ProlificStudy.objects.create(study=imported_nv, prolific_id="abc123", prolific_status="ACTIVE")
    Submission.objects.create(prolific_study=link, submission_id="s1", participant_pid="FUZZ1",
                              participant=participant, status="AWAITING REVIEW", decision="approve", state="queued")
    return imported_nv


def test_fuzzing_the_api_finds_no_server_error_and_no_answer_outside_the_schema(seeded, wsgi_app, django_user_model,
                                                                                settings, monkeypatch):
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9"  # nothing listens there: Prolific routes fail cleanly
    monkeypatch.setenv(settings.PROLIFIC_TOKEN_ENV, "not-a-real-token")
    user = django_user_model.objects.create_superuser("fuzzer", password="pw")
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30
    failures: list[str] = []
    for operation in operations:
        if operation.path.endswith(("/start/", "/resume/")):
            continue  # would queue real model requests; covered by tests/test_api_write.py

        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            check()
        except Exception as exc:  # collect every failing operation, then fail once with all of them
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
