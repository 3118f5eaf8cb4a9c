"""The read-only REST API narrows lists by query parameters (django-filter FilterSets, config/filters.py),
the same way in every app: ?study=<slug> on items, participants, responses, runs and model responses; ids
are whole numbers; a status outside its choices is a 400 naming them, and the schema lists them; staff only."""
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
    user = django_user_model.objects.create_superuser("analyst", password="pw")  # staff + every model permission
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
    assert bad.status_code == 400 and bad.json() == {"item": ["Enter a whole number."]}
    for huge in ("99999999999999999999", "0", "-3"):
        assert api(f"/api/model-responses/?run={huge}").status_code == 400


@pytest.mark.parametrize("route, param, allowed", [
    ("participants", "status", "started, completed, returned, timed_out, screened_out, declined"),
    ("runs", "status", "draft, running, cancelled, budget_exhausted, completed, failed"),
    ("model-responses", "status", "pending, ok, unparseable, failed"),
    ("prolific/submissions", "state", "queued, sending, sent, failed, skipped"),
    ("prolific/submissions", "decision", "approve, reject, return, review"),
])
def test_an_unknown_choice_is_a_400_naming_the_allowed_values(api, two_studies, route, param, allowed):
    answer = api(f"/api/{route}/?{param}=bogus")
    assert answer.status_code == 400
    assert answer.json() == {param: [f"bogus is not one of: {allowed}"]}
    first = allowed.split(", ")[0]
    assert api(f"/api/{route}/?{param}={first}").status_code == 200
    assert api(f"/api/{route}/?{param}=").status_code == 200  # empty: no filter
    schema = api("/api/schema/?format=json").json()
    listed = {p["name"]: p["schema"] for p in schema["paths"][f"/api/{route}/"]["get"]["parameters"]}
    assert sorted(listed[param]["enum"]) == sorted(allowed.split(", "))


def test_filters_narrow_by_status(api, two_studies):
    Participant.objects.filter(prolific_pid="PIDalpha").update(status=Participant.Status.RETURNED)
    returned = api("/api/participants/?status=returned").json()
    assert returned["count"] == 1 and returned["results"][0]["prolific_pid"] == "PIDalpha"
    assert api("/api/participants/?status=started&study=alpha").json()["count"] == 0
    assert api("/api/participants/?status=started&study=beta").json()["count"] == 1


def test_the_api_is_for_staff_only(client, two_studies, django_user_model):
    for url in ("/api/items/?study=alpha", "/api/responses/", "/api/model-responses/?run=1"):
        assert client.get(url).status_code in (401, 403)
    user = django_user_model.objects.create_user("participant-ish", password="pw")
    token = Token.objects.create(user=user)
    assert client.get("/api/items/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 403
