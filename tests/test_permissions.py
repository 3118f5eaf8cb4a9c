"""Every REST route and custom admin page checks the model permission the admin itself uses for the same
data (config.permissions); raw PROLIFIC_PIDs need *view participant*. For each route: a staff account
without the permission gets 403, the same account with exactly the permissions listed gets through."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.models import Assignment, Item, Participant, RecruitmentChannel, Response, Study

pytestmark = pytest.mark.django_db

PID = "RAWPID0123456789abcdef"


@pytest.fixture
def data():
    study = Study.objects.create(slug="perm", title="Perm", status=Study.Status.LIVE)
    item = Item.objects.create(study=study, key="perm-1", expression="likely", statement="It rains.")
    participant = Participant.objects.create(study=study, prolific_pid=PID)
    slot = Assignment.objects.create(participant=participant, item=item, position=1)
    Response.objects.create(assignment=slot, participant=participant, item=item, value=70)
    endpoint = ModelEndpoint.objects.create(name="ep", base_url="http://127.0.0.1:9/v1", model="m")
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status="completed")
    ModelResponse.objects.create(run=run, item=item, status="ok", value=50)
    channel = RecruitmentChannel.objects.create(study=study, name="sona", id_param="id")
    return {"study": study, "item": item, "run": run, "channel": channel}


def staff_with(*perms: str) -> User:
    user = User.objects.create_user("staffer", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    for owned in (*Study.objects.all(), *ModelEndpoint.objects.all()):  # ownership: tests/test_access_matrix.py
        owned.shared_with.add(user)
    return User.objects.get(pk=user.pk)  # fresh permission cache


def api_client(user: User) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


API_ROUTES = [  # (method, url, permissions needed)
    ("get", "/api/studies/", ["surveys.view_study"]),
    ("get", "/api/studies/perm/", ["surveys.view_study"]),
    ("get", "/api/items/", ["surveys.view_item"]),
    ("get", "/api/participants/", ["surveys.view_participant"]),
    ("get", "/api/responses/", ["surveys.view_response"]),
    ("get", "/api/channels/", ["surveys.view_recruitmentchannel"]),
    ("get", "/api/channels/{channel}/", ["surveys.view_recruitmentchannel"]),
    ("post", "/api/channels/", ["surveys.add_recruitmentchannel"]),
    ("patch", "/api/channels/{channel}/", ["surveys.change_recruitmentchannel"]),
    ("delete", "/api/channels/{channel}/", ["surveys.delete_recruitmentchannel"]),
    ("get", "/api/endpoints/", ["elicitation.view_modelendpoint"]),
    ("get", "/api/runs/", ["elicitation.view_elicitationrun"]),
    ("get", "/api/model-responses/", ["elicitation.view_modelresponse"]),
    ("get", "/api/studies/perm/report/", ["analysis.view_studyanalysis"]),
    ("get", "/api/studies/perm/export/csv/", ["analysis.view_studyanalysis"]),
    ("get", "/api/studies/perm/package/", ["analysis.view_studyanalysis"]),
    ("get", "/api/studies/perm/codebook/json/", ["analysis.view_studyanalysis"]),
    ("get", "/api/studies/perm/export/csv/?raw_ids=1", ["analysis.view_studyanalysis", "surveys.view_participant"]),
    # the result names the excluded participants by PROLIFIC_PID, so raw ids are needed too
    ("post", "/api/studies/perm/attention/", ["analysis.view_studyanalysis", "surveys.change_participant",
                                               "surveys.view_participant"]),
    # a self-refinement creates a run and starts it ({run}: the fixture's run)
    ("post", "/api/runs/{run}/refine/", ["elicitation.add_elicitationrun", "elicitation.change_elicitationrun"]),
    # starting a study's declared agents creates runs and starts them (409 here: "perm" declares none)
    ("post", "/api/studies/perm/run-agents/", ["elicitation.add_elicitationrun", "elicitation.change_elicitationrun"]),
]


@pytest.mark.parametrize("method, url, perms", API_ROUTES, ids=[f"{m} {u}" for m, u, _ in API_ROUTES])
def test_api_route_needs_its_model_permissions(data, method, url, perms):
    url = url.format(run=data["run"].pk, channel=data["channel"].pk)
    for missing in perms:  # each permission is needed: without any one of them, 403
        user = staff_with(*[p for p in perms if p != missing])
        response = getattr(api_client(user), method)(url)
        assert response.status_code == 403, (missing, response.status_code)
        user.delete()
    response = getattr(api_client(staff_with(*perms)), method)(url)
    assert response.status_code not in (401, 403), response.status_code


def test_api_root_lists_collections_for_any_staff(data):
    assert api_client(staff_with()).get("/api/").status_code == 200


def test_the_browsable_api_login_grants_no_permission(data):
    """/api-auth/login/ (the browsable API's session login) is a login and nothing more: the session has the
    user's permissions, as a token does."""
    user = staff_with()
    user.set_password("pw-for-the-test")
    user.save()
    client = Client()
    assert client.post("/api-auth/login/", {"username": user.username, "password": "pw-for-the-test"}).status_code == 302
    assert client.get("/api/").status_code == 200
    assert client.get("/api/studies/").status_code == 403
    assert Client().get("/api/studies/").status_code == 401


def test_responses_show_raw_pids_only_with_view_participant(data):
    without = api_client(staff_with("surveys.view_response")).get("/api/responses/").json()["results"][0]
    assert "prolific_pid" not in without and without["value"] == 70
    User.objects.all().delete()
    with_pid = api_client(staff_with("surveys.view_response", "surveys.view_participant"))
    assert with_pid.get("/api/responses/").json()["results"][0]["prolific_pid"] == PID


def test_attention_post_by_a_report_viewer_writes_nothing(data):
    client = api_client(staff_with("analysis.view_studyanalysis"))
    assert client.post("/api/studies/perm/attention/").status_code == 403
    assert Participant.objects.get().attention_rho is None


def admin_routes(data) -> list[tuple[str, str, list[str]]]:
    run, item, study = data["run"].pk, data["item"].pk, data["study"].pk
    return [
        ("get", reverse("admin:elicitation_elicitationrun_monitor", args=[run]), ["elicitation.view_elicitationrun"]),
        ("get", reverse("admin:elicitation_elicitationrun_progress", args=[run]), ["elicitation.view_elicitationrun"]),
        ("get", reverse("admin:elicitation_item_prompt", args=[item]),
         ["surveys.view_item", "elicitation.view_storedprompt"]),
        ("get", reverse("admin:elicitation_item_answers", args=[item]),
         ["surveys.view_item", "surveys.view_response", "elicitation.view_modelresponse"]),
        ("get", reverse("admin:surveys_study_item_template", args=[study]), ["surveys.view_study"]),
        ("get", reverse("admin:surveys_study_raw_responses", args=[study]),
         ["surveys.view_study", "surveys.view_response", "surveys.view_participant"]),
        ("get", reverse("admin:analysis_studyanalysis_export", args=[study, "csv"]) + "?raw_ids=1",
         ["analysis.view_studyanalysis", "surveys.view_participant"]),
        ("get", reverse("admin:analysis_studyanalysis_package", args=[study]), ["analysis.view_studyanalysis"]),
        ("get", reverse("admin:analysis_studyanalysis_codebook", args=[study, "csv"]), ["analysis.view_studyanalysis"]),
        ("post", reverse("admin:analysis_studyanalysis_attention", args=[study]),
         ["analysis.view_studyanalysis", "surveys.change_participant"]),
        ("get", reverse("admin:elicitation_elicitationrun_refine", args=[run]),
         ["elicitation.add_elicitationrun", "elicitation.change_elicitationrun"]),
        ("get", reverse("admin:elicitation_run_agents", args=[data["study"].slug]),
         ["elicitation.add_elicitationrun", "elicitation.change_elicitationrun"]),
    ]


def test_admin_pages_need_their_model_permissions(data):
    for method, url, perms in admin_routes(data):
        for missing in perms:
            user = staff_with(*[p for p in perms if p != missing])
            client = Client()
            client.force_login(user)
            response = getattr(client, method)(url)
            assert response.status_code == 403, (url, missing, response.status_code)
            user.delete()
        client = Client()
        client.force_login(staff_with(*perms))
        response = getattr(client, method)(url)
        assert response.status_code in (200, 302), (url, response.status_code)
        User.objects.all().delete()


def test_item_answers_page_hides_raw_pids_without_view_participant(data):
    client = Client()
    client.force_login(staff_with("surveys.view_item", "surveys.view_response", "elicitation.view_modelresponse"))
    page = client.get(reverse("admin:elicitation_item_answers", args=[data["item"].pk])).content.decode()
    assert PID not in page and "70" in page
