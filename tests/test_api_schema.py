"""The OpenAPI schema is generated from the code, lists every route, and the API keeps to it: a schema-driven
fuzz run (schemathesis) against the WSGI app, authenticated, over every operation with a bounded number of
cases each, finds no server error and no answer that breaks the schema (CI runs it with the rest: a new 500
fails the build)."""
from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from typing import Callable

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import (content_type_conformance, not_a_server_error, response_schema_conformance,
                                 status_code_conformance)
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.modes import GenerationMode
from schemathesis.generation.overrides import Override

from config.json_input import MAX_DEPTH
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from prolific.models import ProlificStudy, Submission
from surveys.models import Assignment, Participant, RecruitmentChannel, Response

pytestmark = pytest.mark.django_db

#: generated cases per operation (FUZZ_EXAMPLES=100 for a longer run), after at most COVERAGE_CASES of
#: schemathesis's coverage phase (boundary values, wrong types, missing fields)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))
COVERAGE_CASES = int(os.environ.get("FUZZ_COVERAGE_CASES", "30"))
HUGE_NUMBER = 99999999999999999999
BODILESS_ACTIONS = ("/start/", "/cancel/", "/resume/", "/attention/", "/publish/", "/sync/", "/send/", "/run-agents/")
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
    # a channel someone came through: its DELETE is a 409, so it is there for every later case
    channel = RecruitmentChannel.objects.create(study=imported_nv, name="sona", id_param="id")
    Participant.objects.create(study=imported_nv, prolific_pid="sona-fuzz", channel=channel)
    return imported_nv


def known_path_parameters(study, objects: dict[str, Callable[[], int | str]]) -> Callable[[str], dict[str, str]]:
    """The seeded objects' slugs, ids and names for an operation's path, read when it is fuzzed (an earlier
    PUT may have renamed an endpoint), so that the fuzzer's cases reach real rows (random ids reach 404)."""

    def for_path(path: str) -> dict[str, str]:
        found = {"slug": study.slug}
        for prefix, value in objects.items():
            if path.startswith(prefix):
                found["name" if prefix == "/api/endpoints/" else "id"] = str(value())
        return {name: value for name, value in found.items() if "{" + name + "}" in path}

    return for_path


def edge_cases(operation, fixed: dict[str, str], headers: dict[str, str], lists: dict) -> list:
    """Cases random generation rarely draws, each of which once gave a 500: every integer query parameter at
    a value no database column holds, a JSON body nested deeper than the parser allows, and, for a create
    route (POST on a collection), the first row its list (``lists``: path → GET operation) holds sent again."""
    cases = [operation.Case(path_parameters=fixed, query={p.name: HUGE_NUMBER})
             for p in operation.query if p.definition.get("schema", {}).get("type") == "integer"]
    json_body = any(body.media_type == "application/json" for body in operation.body)
    if json_body:
        nested: list = []
        for _ in range(MAX_DEPTH + 2):
            nested = [nested]
        cases.append(operation.Case(path_parameters=fixed, body=nested, media_type="application/json"))
    if json_body and operation.method.upper() == "POST" and operation.path in lists:
        listed = lists[operation.path].Case().call(headers=headers)  # through the WSGI app, as every case
        rows = listed.json().get("results", []) if listed.status_code == 200 else []
        if rows:
            cases.append(operation.Case(body=rows[0], media_type="application/json"))
    return cases


def test_fuzzing_the_api_finds_no_server_error_and_no_answer_outside_the_schema(seeded, wsgi_app, django_user_model,
                                                                                settings, monkeypatch):
    """Every operation of the schema, authenticated as a superuser: schemathesis's coverage cases (boundary and
    out-of-schema values; at most COVERAGE_CASES) on the seeded objects, then EXAMPLES generated cases each on
    the seeded objects (valid and invalid data) and on random ids. Any 5xx, or an answer outside the schema,
    fails; so does an operation no case reached (every answer a 404)."""
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9"  # nothing listens there: Prolific routes fail cleanly
    monkeypatch.setenv(settings.PROLIFIC_TOKEN_ENV, "not-a-real-token")
    user = django_user_model.objects.create_superuser("fuzzer", password="pw")
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    # POST …/start/ and …/resume/ queue the run's tasks on commit, which the test's transaction never does
    run = ElicitationRun.objects.get(study=seeded)
    ids = {"/api/items/": seeded.main_items().first().pk,
           "/api/participants/": Participant.objects.get(channel=None).pk,
           "/api/channels/": RecruitmentChannel.objects.get(study=seeded).pk,
           "/api/responses/": Response.objects.get().pk, "/api/runs/": run.pk,
           "/api/model-responses/": ModelResponse.objects.get().pk,
           "/api/prolific/submissions/": Submission.objects.get().pk}
    known = known_path_parameters(seeded, {
        **{prefix: (lambda pk=pk: pk) for prefix, pk in ids.items()},
        "/api/endpoints/": lambda: ModelEndpoint.objects.get(pk=run.endpoint_id).name})
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    documented = {(method.upper(), path) for path, methods in schema.raw_schema["paths"].items() for method in methods}
    assert {(op.method.upper(), op.path) for op in operations} == documented and len(operations) >= 30
    lists = {op.path: op for op in operations if op.method.upper() == "GET" and "{" not in op.path}
    failures: list[str] = []
    answers: dict[str, Counter] = {}
    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"
        seen = answers.setdefault(label, Counter())
        fixed = known(operation.path)

        def call(case) -> None:
            response = case.call_and_validate(headers=headers, checks=CHECKS)
            seen[response.status_code] += 1

        coverage = CoverageGenerator(operation=operation, generation_modes=list(GenerationMode),
                                     generation_config=schema.config.generation_for(operation=operation,
                                                                                   phase="coverage"),
                                     auth_storage=None, override=Override(path_parameters=fixed),
                                     feedback=FeedbackSources())
        strategy = st.one_of(operation.as_strategy(path_parameters=fixed),
                             operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=fixed),
                             operation.as_strategy())

        @given(case=strategy)
        @hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(HealthCheck))
        def fuzz(case) -> None:
            call(case)

        try:
            for case in [*edge_cases(operation, fixed, headers, lists), *itertools.islice(coverage, COVERAGE_CASES)]:
                call(case)
            fuzz()
        except (Exception, BaseExceptionGroup) as exc:  # collect every failing operation, then fail once
            failures.append(f"{label}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
    unreached = sorted(label for label, codes in answers.items() if set(codes) <= {404})
    assert not unreached, f"no case reached these operations (every answer 404): {unreached}"
