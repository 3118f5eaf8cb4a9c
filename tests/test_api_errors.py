"""Inputs that used to give HTTP 500 (issue 24.11): each is a clear 4xx now, and nothing is written."""
from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from analysis.model_answer_import import ModelAnswerFile, import_model_answers
from config.json_input import MAX_DEPTH
from config.pagination import MAX_LIMIT
from prolific.models import ProlificStudy
from surveys.importers import ImportFailed
from surveys.models import Assignment, Participant, Response, Study
from test_api_schema import seeded  # noqa: F401 (fixture: a row in every list)
from test_import_model_answers import wep_study  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

LIST_ROUTES = ["studies", "items", "participants", "responses", "endpoints", "runs", "model-responses",
               "prolific/studies", "prolific/submissions"]
HUGE = "99999999999999999999"


@pytest.fixture
def api(django_user_model) -> Client:
    user = django_user_model.objects.create_superuser("admin", password="pw")
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}", raise_request_exception=False)


@pytest.mark.parametrize("route", LIST_ROUTES)
def test_a_huge_limit_or_offset_is_a_page_not_a_server_error(api, seeded, route):
    page = api.get(f"/api/{route}/?limit={HUGE}")
    assert page.status_code == 200 and page.json()["count"] > 0, page.content[:300]
    assert len(page.json()["results"]) == min(page.json()["count"], MAX_LIMIT)
    assert api.get(f"/api/{route}/?offset={HUGE}").json()["results"] == []
    assert api.get(f"/api/{route}/?limit={HUGE}&offset={HUGE}").status_code == 200


def test_the_limit_has_a_ceiling(api, imported_nv):
    assert imported_nv.items.count() > 500
    assert len(api.get("/api/items/?limit=100000").json()["results"]) == min(imported_nv.items.count(), MAX_LIMIT)
    assert len(api.get("/api/items/").json()["results"]) == 500  # the default page


def test_a_second_prolific_link_for_a_study_is_refused(api, nv_study):
    first = api.post("/api/prolific/studies/", {"study": "nv"}, content_type="application/json")
    assert first.status_code == 201
    again = api.post("/api/prolific/studies/", {"study": "nv", "places": 9}, content_type="application/json")
    assert again.status_code == 400 and "already has" in again.json()["study"][0]
    assert "PATCH /api/prolific/studies/nv/" in again.json()["study"][0]
    assert ProlificStudy.objects.get(study=nv_study).places == 50


def test_attention_filter_that_cannot_rank_is_a_409(api, nv_study):
    """The overprecision demo's answers cannot rank labels (AnswersError): with its attention filter turned on, a
    409 with the reason, not a 500; with it off (the kind's default) the study has no rule to apply."""
    from families.bahaj.demo import load_overprecision_demo

    study = load_overprecision_demo().study
    participant = Participant.objects.create(study=study, prolific_pid="P1")
    for position, item in enumerate(study.main_items()[:3], start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, lower=1, upper=2)
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.COMPLETED, completed_at=timezone.now())
    off = api.post(f"/api/studies/{study.slug}/attention/")
    assert off.status_code == 200 and off.json()["rules"] == [] and "declares no exclusion rules" in off.json()["describe"]
    Study.objects.filter(pk=study.pk).update(attention_filter=True)
    answer = api.post(f"/api/studies/{study.slug}/attention/")
    assert answer.status_code == 409 and "rank the labels" in answer.json()["detail"], answer.content[:300]
    assert Participant.objects.get().attention_rho is None
    assert api.get(f"/api/studies/{study.slug}/report/").status_code in (200, 409)


@pytest.mark.parametrize("body", ["[" * 100_000 + "]" * 100_000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
                                  '{"title": ' + '{"a": ' * 5000 + "1" + "}" * 5001])
def test_deeply_nested_json_bodies_are_a_400(api, nv_study, body):
    for send in (api.put, api.patch):
        answer = send("/api/studies/nv/", body, content_type="application/json")
        assert answer.status_code == 400 and "nested deeper" in answer.json()["detail"], answer.content[:200]
    answer = api.post("/api/studies/", body, content_type="application/json")
    assert answer.status_code == 400 and "nested deeper" in answer.json()["detail"]
    answer = api.post("/api/studies/nv/generate-items/", body, content_type="application/json")
    assert answer.status_code == 400 and "nested deeper" in answer.json()["detail"]
    assert Study.objects.count() == 1


def test_ordinary_json_still_parses_strictly(api):
    made = api.post("/api/studies/", {"slug": "ok", "title": "OK"}, content_type="application/json")
    assert made.status_code == 201
    nan = api.patch("/api/studies/ok/", '{"attention_threshold": NaN}', content_type="application/json")
    assert nan.status_code == 400 and "JSON" in nan.json()["detail"]


def test_deeply_nested_json_lines_name_their_line(wep_study, tmp_path):  # noqa: F811
    path = tmp_path / "deep.jsonl"
    path.write_text('{"expression": "likely", "answer": 0.7}\n'
                    '{"expression": "likely", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
                    '{"expression": "we doubt", "answer": ' + json.dumps([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]) + "}\n")
    with pytest.raises(ImportFailed) as info:
        import_model_answers(wep_study, path, ModelAnswerFile(model="x"))
    assert [(e.line, e.column) for e in info.value.errors] == [(2, "-"), (3, "-")]
    assert all("nested deeper" in e.message for e in info.value.errors)


def test_too_many_form_fields_is_a_json_400(api, nv_study):
    answer = api.post("/api/studies/nv/import-items/", {f"f{i}": "v" for i in range(1500)})
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in answer.json()["detail"]
    assert not Participant.objects.exists()
