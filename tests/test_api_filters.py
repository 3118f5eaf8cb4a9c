"""The read-only REST API narrows lists by query parameters (surveys.api.QueryFilterMixin), the same way
in every app: ?study=<slug> on items, participants, responses, runs and model responses; numbers only
for id parameters; staff only."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.models import Assignment, Item, Participant, Response, Study

pytestmark = pytest.mark.django_db


def make_study(slug: str) -> Study:
    study = Study.objects.create(slug=slug, title=slug.upper())
    items = [Item.objects.create(study=study, key=f"{slug}-{n}", expression="likely", statement=f"s{n}.")
             for n in range(3)]
    participant = Participant.objects.create(study=study, prolific_pid=f"PID{slug}")
    slot = Assignment.objects.create(participant=participant, item=items[0], position=1)
    Response.objects.create(assignment=slot, participant=participant, item=items[0], value=70)
    return study


@pytest.fixture
def api(client, django_user_model):
    user = django_user_model.objects.create_user("analyst", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    token = Token.objects.create(user=user)
    return lambda url: client.get(url, HTTP_AUTHORIZATION=f"Token {token.key}")


@pytest.fixture
def two_studies():
    return make_study("alpha"), make_study("beta")


@pytest.mark.parametrize("resource, per_study", [("items", 3), ("participants", 1), ("responses", 1)])
def test_study_parameter_narrows_survey_lists(api, two_studies, resource, per_study):
    assert api(f"/api/{resource}/").json()["count"] == 2 * per_study
    alpha = api(f"/api/{resource}/?study=alpha").json()
    assert alpha["count"] == per_study
    if resource == "responses":
        assert alpha["results"][0]["item_key"].startswith("alpha-")
    else:
        assert {row["study"] for row in alpha["results"]} == {"alpha"}
    assert api(f"/api/{resource}/?study=nobody").json()["count"] == 0


def test_run_and_model_response_filters(api, two_studies):
    alpha, beta = two_studies
    endpoint = ModelEndpoint.objects.create(name="ep", base_url="http://127.0.0.1:9/v1", model="m")
    runs = {}
    for study, status in ((alpha, "completed"), (beta, "running")):
        run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status=status)
        for item in study.main_items():
            ModelResponse.objects.create(run=run, item=item, status="ok", value=50)
        runs[study.slug] = run
    assert api("/api/runs/?study=beta").json()["results"][0]["id"] == runs["beta"].pk
    assert api("/api/runs/?status=completed").json()["count"] == 1
    assert api("/api/runs/?endpoint=ep").json()["count"] == 2
    assert api("/api/model-responses/").json()["count"] == 6
    assert api(f"/api/model-responses/?run={runs['alpha'].pk}").json()["count"] == 3
    assert api("/api/model-responses/?study=beta").json()["count"] == 3
    item = alpha.main_items().first()
    only = api(f"/api/model-responses/?item={item.pk}&study=alpha").json()
    assert only["count"] == 1 and only["results"][0]["item_key"] == item.key
    bad = api("/api/model-responses/?item=1;drop")
    assert bad.status_code == 400 and bad.json() == {"item": "must be a number"}


def test_the_api_is_for_staff_only(client, two_studies, django_user_model):
    for url in ("/api/items/?study=alpha", "/api/responses/", "/api/model-responses/?run=1"):
        assert client.get(url).status_code in (401, 403)
    user = django_user_model.objects.create_user("participant-ish", password="pw")
    token = Token.objects.create(user=user)
    assert client.get("/api/items/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 403
