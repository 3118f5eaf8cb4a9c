"""The access matrix (issue 24, points 3, 5 and 6): every route that shows or changes a study's data, for
five roles, asserting who sees the study's data, who sees raw PROLIFIC_PIDs, and who can change what.

Roles: the study's ``owner``; ``shared`` (in its sharing list); ``other`` (another researcher with exactly
the owner's model permissions, owning a study of their own); ``report`` (only *view study report*, the study
shared with them); ``super`` (a superuser).

Outcomes of a read: ``denied`` (403, 404 or the login page), ``hidden`` (200 without the study's data),
``shown`` (200 with it, no PIDs), ``pid`` (200 with it and the raw PROLIFIC_PIDs).
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from prolific.models import ProlificStudy, Submission
from surveys.models import Assignment, Item, Participant, RecruitmentChannel, Response, Study

pytestmark = pytest.mark.django_db

PID = "MATRIXPID0123456789abcd"
MARK = "alpha-marker-title"
ROLES = ("owner", "shared", "other", "report", "super")
RESEARCHER = [f"{app}.{action}_{model}" for app, model in
              [("surveys", "study"), ("surveys", "item"), ("surveys", "participant"), ("surveys", "response"),
               ("surveys", "recruitmentchannel"), ("elicitation", "modelendpoint"),
               ("elicitation", "elicitationrun"), ("elicitation", "modelresponse"), ("prolific", "prolificstudy"), ("prolific", "submission")]
              for action in ("view", "add", "change")] + ["analysis.view_studyanalysis"]


def user_with(name: str, perms: list[str], **flags) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True, **flags)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return User.objects.get(pk=user.pk)


@pytest.fixture
def world():
    users = {"owner": user_with("owner", RESEARCHER), "shared": user_with("shared", RESEARCHER),
             "other": user_with("other", RESEARCHER), "report": user_with("report", ["analysis.view_studyanalysis"]),
             "super": User.objects.create_superuser("super", "s@example.org", "pw")}
    study = Study.objects.create(slug="alpha", title=MARK, status=Study.Status.LIVE, owner=users["owner"])
    study.shared_with.add(users["shared"], users["report"])
    Study.objects.create(slug="beta", title="Beta", owner=users["other"])
    item = Item.objects.create(study=study, key="alpha-1", expression="likely", statement=f"{MARK} rains.")
    participant = Participant.objects.create(study=study, prolific_pid=PID)
    slot = Assignment.objects.create(participant=participant, item=item, position=1)
    Response.objects.create(assignment=slot, participant=participant, item=item, value=70)
    endpoint = ModelEndpoint.objects.create(name="alpha-ep", base_url="http://127.0.0.1:9/v1", model=MARK,
                                            owner=users["owner"])
    endpoint.shared_with.add(users["shared"])
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status="running", name=MARK)
    ModelResponse.objects.create(run=run, item=item, status="ok", value=50)
    link = ProlificStudy.objects.create(study=study, prolific_id="alpha-prolific")
    submission = Submission.objects.create(prolific_study=link, submission_id="alpha-sub", participant_pid=PID,
                                           participant=participant, status="AWAITING REVIEW")
    channel = RecruitmentChannel.objects.create(study=study, name="sona", id_param="id")
    return {"users": users, "study": study, "item": item, "endpoint": endpoint, "run": run,
            "submission": submission, "channel": channel}


def clients(user: User) -> tuple[Client, Client]:
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    admin = Client()
    admin.force_login(user)
    return api, admin


def read_routes(w) -> dict[str, tuple[str, str, str]]:
    """name → (client, URL, text that proves the study's data is there)"""
    s, run, item = w["study"], w["run"], w["item"]
    return {
        "api study": ("api", "/api/studies/alpha/", MARK),
        "api studies": ("api", "/api/studies/", MARK),
        "api items": ("api", "/api/items/", MARK),
        "api participants": ("api", "/api/participants/", '"alpha"'),
        "api channels": ("api", "/api/channels/", '"alpha"'),
        "api channel": ("api", f"/api/channels/{w['channel'].pk}/", '"alpha"'),
        "api responses": ("api", "/api/responses/", "alpha-1"),
        "api endpoint": ("api", "/api/endpoints/alpha-ep/", MARK),
        "api runs": ("api", "/api/runs/", MARK),
        "api model responses": ("api", f"/api/model-responses/?run={run.pk}", "alpha-1"),
        "api report": ("api", "/api/studies/alpha/report/", '"detail"'),  # 409: no completed participants
        "api export": ("api", "/api/studies/alpha/export/csv/", "alpha-1"),
        "api export raw": ("api", "/api/studies/alpha/export/csv/?raw_ids=1", "alpha-1"),
        "api package": ("api", "/api/studies/alpha/package/", "data/participants.jsonl"),
        "api codebook": ("api", "/api/studies/alpha/codebook/json/", MARK),  # the items' statements' values
        "api prolific": ("api", "/api/prolific/studies/alpha/", "alpha-prolific"),
        "api submissions": ("api", "/api/prolific/submissions/", "alpha-sub"),
        "admin studies": ("admin", reverse("admin:surveys_study_changelist"), MARK),
        "admin study": ("admin", reverse("admin:surveys_study_change", args=[s.pk]), MARK),
        "admin responses": ("admin", reverse("admin:surveys_response_changelist"), "alpha-1"),
        "admin submissions": ("admin", reverse("admin:prolific_submission_changelist"), "alpha-sub"),
        "admin endpoints": ("admin", reverse("admin:elicitation_modelendpoint_changelist"), "alpha-ep"),
        "admin run": ("admin", reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk]), MARK),
        "admin item answers": ("admin", reverse("admin:elicitation_item_answers", args=[item.pk]), "alpha-1"),
        "admin report": ("admin", reverse("admin:analysis_studyanalysis_report", args=[s.pk]), MARK),
        "admin run agents": ("admin", reverse("admin:elicitation_run_agents", args=["alpha"]), "Study alpha"),
        "admin package": ("admin", reverse("admin:analysis_studyanalysis_package", args=[s.pk]),
                          "data/participants.jsonl"),
        "admin codebook": ("admin", reverse("admin:analysis_studyanalysis_codebook", args=[s.pk, "md"]), MARK),
        "preview": ("admin", reverse("surveys:preview", args=["alpha"]), "alpha"),
        "api login": ("admin", "/api-auth/login/?next=/api/", "alpha"),  # the browsable API's login form
    }


D, H, S, P = "denied", "hidden", "shown", "pid"
MATRIX: dict[str, tuple[str, ...]] = {
    #                       owner shared other report super
    "api study":           (S, S, D, D, S),
    "api studies":         (S, S, H, D, S),
    "api items":           (S, S, H, D, S),
    "api participants":    (P, P, H, D, P),
    "api channels":        (S, S, H, D, S),
    "api channel":         (S, S, D, D, S),
    "api responses":       (P, P, H, D, P),
    "api endpoint":        (S, S, D, D, S),
    "api runs":            (S, S, H, D, S),
    "api model responses": (S, S, H, D, S),
    "api report":          (S, S, D, S, S),  # 409 "no completed participants": it got through to the data
    "api export":          (S, S, D, S, S),  # salted ids unless ?raw_ids=1
    "api export raw":      (P, P, D, D, P),
    "api package":         (S, S, D, S, S),  # salted ids only, for every role that may read the report
    "api codebook":        (S, S, D, S, S),  # the export's columns and values, no participant ids
    "api prolific":        (S, S, D, D, S),
    "api submissions":     (P, P, H, D, P),
    "admin studies":       (S, S, H, D, S),
    "admin study":         (S, S, D, D, S),
    "admin responses":     (P, P, H, D, P),
    "admin submissions":   (P, P, H, D, P),
    "admin endpoints":     (S, S, H, D, S),
    "admin run":           (S, S, D, D, S),
    "admin item answers":  (P, P, D, D, P),
    "admin report":        (S, S, D, S, S),
    "admin run agents":    (S, S, D, D, S),
    "admin package":       (S, S, D, S, S),
    "admin codebook":      (S, S, D, S, S),
    "preview":             (S, S, D, D, S),
    "api login":           (H, H, H, H, H),  # a form, the same for everyone: no study's data
}


def outcome(response, mark: str) -> str:
    if response.status_code in (302, 403, 404):
        return D
    assert response.status_code in (200, 409), response.status_code
    body = (b"".join(response.streaming_content) if response.streaming else response.content).decode(errors="replace")
    if mark not in body:
        return H
    return P if PID in body else S


@pytest.mark.parametrize("role", ROLES)
def test_read_matrix(world, role):
    api, admin = clients(world["users"][role])
    seen = {name: outcome((api if kind == "api" else admin).get(url), mark)
            for name, (kind, url, mark) in read_routes(world).items()}
    expected = {name: MATRIX[name][ROLES.index(role)] for name in seen}
    assert seen == expected


EVIL_URL = "http://127.0.0.1:9/evil/v1"  # (no pre-flight check: nothing listens there)


def writes(w, api: Client, admin: Client) -> dict[str, int]:
    """Each change another researcher made in the review; returns the HTTP status of each."""
    run, submission, study = w["run"], w["submission"], w["study"]
    return {
        "cancel run": api.post(f"/api/runs/{run.pk}/cancel/").status_code,
        "re-point endpoint": api.patch("/api/endpoints/alpha-ep/", {"base_url": EVIL_URL, "check": False},
                                       content_type="application/json").status_code,
        "rename study": api.patch("/api/studies/alpha/", {"title": "taken"}, content_type="application/json").status_code,
        "share study": api.patch("/api/studies/alpha/", {"shared_with": ["other"]},
                                 content_type="application/json").status_code,
        "queue approval": admin.post(reverse("admin:prolific_submission_changelist"),
                                     {"action": "approve_action", "_selected_action": [submission.pk]}).status_code,
        "run on endpoint": api.post("/api/runs/", {"study": "beta", "endpoint": "alpha-ep", "check": False},
                                    content_type="application/json").status_code,
        "add channel": api.post("/api/channels/", {"study": "alpha", "name": "evil"},
                                content_type="application/json").status_code,
        "re-point channel": api.patch(f"/api/channels/{w['channel'].pk}/", {"completion_url": EVIL_URL + "{id}"},
                                      content_type="application/json").status_code,
        "reference study": api.post("/api/studies/definition/", {"definition": REFERENCING},
                                    content_type="application/json").status_code,
    }


#: A definition of a new study scored against alpha (``[study] reference``): the cross-researcher reference.
REFERENCING = """
[study]
slug = "xref"
title = "Scored against alpha"
kind = "wep_probability"
reference = "alpha"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC"]
"""


def changed(w) -> dict[str, bool]:
    run = ElicitationRun.objects.get(pk=w["run"].pk)
    study = Study.objects.get(pk=w["study"].pk)
    return {
        "cancel run": run.status == "cancelled",
        "re-point endpoint": ModelEndpoint.objects.get(pk=w["endpoint"].pk).base_url == EVIL_URL,
        "rename study": study.title == "taken",
        "share study": study.shared_with.filter(username="other").exists(),
        "queue approval": Submission.objects.get(pk=w["submission"].pk).decision == "approve",
        "run on endpoint": ElicitationRun.objects.filter(study__slug="beta").exists(),
        "add channel": RecruitmentChannel.objects.filter(name="evil").exists(),
        "re-point channel": RecruitmentChannel.objects.get(pk=w["channel"].pk).completion_url.startswith(EVIL_URL),
        "reference study": Study.objects.filter(slug="xref", reference_study=w["study"]).exists(),
    }


EXPECTED_CHANGES = {  # role → the changes that go through
    "owner": {"cancel run", "re-point endpoint", "rename study", "share study", "queue approval", "add channel",
              "re-point channel", "reference study"},
    "shared": {"cancel run", "re-point endpoint", "rename study", "queue approval", "add channel",
               "re-point channel", "reference study"},  # sharing: the owner's
    "other": set(),  # beta is theirs, but alpha-ep is not shared with them, nor alpha (no reference to it)
    "report": set(),
    "super": {"cancel run", "re-point endpoint", "rename study", "share study", "queue approval",
              "run on endpoint", "add channel", "re-point channel", "reference study"},
}


@pytest.mark.parametrize("role", ROLES)
def test_write_matrix(world, role):
    api, admin = clients(world["users"][role])
    statuses = writes(world, api, admin)
    done = {name for name, yes in changed(world).items() if yes}
    assert done == EXPECTED_CHANGES[role], statuses
    for name, code in statuses.items():  # what did not go through was refused, not a server error
        assert code < 500, (name, code)


def test_token_keys_show_a_prefix_only(world):
    token = Token.objects.create(user=world["users"]["owner"])
    viewer = user_with("token-viewer", ["authtoken.view_tokenproxy"])
    admin = Client()
    admin.force_login(viewer)
    listing = admin.get(reverse("admin:authtoken_tokenproxy_changelist")).content.decode()
    page = admin.get(reverse("admin:authtoken_tokenproxy_change", args=[token.user_id])).content.decode()
    for text in (listing, page):
        assert token.key not in text and token.key[:6] in text


def test_a_token_is_revealed_once_at_creation(world):
    admin = Client()
    admin.force_login(world["users"]["super"])
    response = admin.post(reverse("admin:authtoken_tokenproxy_add"), {"user": world["users"]["shared"].pk},
                          follow=True)
    key = Token.objects.get(user=world["users"]["shared"]).key
    assert key in response.content.decode()
    assert key not in admin.get(reverse("admin:authtoken_tokenproxy_changelist")).content.decode()


# --- management commands: --as USER ---------------------------------------------------------------
def test_commands_act_as_a_user(world, tmp_path):
    from django.core.management import CommandError, call_command

    out = tmp_path / "a.csv"
    with pytest.raises(CommandError, match="no study with slug 'alpha'"):
        call_command("export", "alpha", "--out", str(out), "--as", "other")
    with pytest.raises(CommandError, match="may not view participants"):
        call_command("export", "alpha", "--out", str(out), "--raw-ids", "--as", "report")
    call_command("export", "alpha", "--out", str(out), "--raw-ids", "--as", "shared")
    assert PID in out.read_text()
    call_command("export", "alpha", "--out", str(out), "--raw-ids")  # without --as: for the owner
    with pytest.raises(CommandError, match="no run"):
        call_command("elicit", "--cancel", str(world["run"].pk), "--as", "other")
    assert ElicitationRun.objects.get(pk=world["run"].pk).status == "running"
    with pytest.raises(CommandError, match="belongs to another researcher"):
        call_command("add_endpoint", "alpha-ep", "--update", "--base-url", "http://evil.example/v1", "--as", "other")
    with pytest.raises(CommandError, match="no endpoint with name 'alpha-ep'"):
        call_command("elicit", "beta", "--endpoint", "alpha-ep", "--as", "other")
    call_command("create_study", "gamma", "--instrument", "speaker_belief", "--as", "other")
    assert Study.objects.get(slug="gamma").owner == world["users"]["other"]
    with pytest.raises(CommandError, match="no active staff user"):
        call_command("export", "alpha", "--out", str(out), "--as", "nobody")


# --- the data migration --------------------------------------------------------------------------
def test_existing_objects_get_a_sensible_owner(db):
    import importlib

    from django.apps import apps
    from django.contrib.admin.models import ADDITION, LogEntry
    from django.contrib.contenttypes.models import ContentType

    give_owners = importlib.import_module("elicitation.migrations.0010_owners_of_existing_objects").give_owners
    admin_user = User.objects.create_superuser("first-admin", "a@example.org", "pw")
    adder, runner = user_with("adder", []), user_with("runner", [])
    added = Study.objects.create(slug="added", title="Added")
    ran = Study.objects.create(slug="ran", title="Ran")
    lonely = Study.objects.create(slug="lonely", title="Lonely")
    LogEntry.objects.create(user=adder, content_type=ContentType.objects.get_for_model(Study),
                            object_id=str(added.pk), object_repr="Added", action_flag=ADDITION)
    endpoint = ModelEndpoint.objects.create(name="ep", base_url="http://127.0.0.1:9/v1", model="m")
    ElicitationRun.objects.create(study=ran, endpoint=endpoint, created_by=runner)
    give_owners(apps, None)
    owners = dict(Study.objects.values_list("slug", "owner__username"))
    assert owners == {"added": "adder", "ran": "runner", "lonely": admin_user.username}
    assert ModelEndpoint.objects.get(pk=endpoint.pk).owner == runner


def test_admin_filters_name_only_the_users_studies_and_endpoints(world):
    admin = Client()
    admin.force_login(world["users"]["other"])
    for name in ("surveys_participant", "surveys_item", "elicitation_elicitationrun", "elicitation_modelresponse"):
        page = admin.get(reverse(f"admin:{name}_changelist")).content.decode()
        assert MARK not in page and "alpha-ep" not in page, name


def test_only_the_owner_edits_the_sharing_in_the_admin(world):
    url = reverse("admin:surveys_study_change", args=[world["study"].pk])
    pages = {}
    for role in ("owner", "shared"):
        admin = Client()
        admin.force_login(world["users"][role])
        pages[role] = admin.get(url).content.decode()
    assert 'name="shared_with"' in pages["owner"] and 'name="owner"' in pages["owner"]
    assert 'name="shared_with"' not in pages["shared"] and "Access" in pages["shared"]


def test_a_run_is_started_only_on_an_endpoint_shared_with_the_user(world):
    theirs = ModelEndpoint.objects.create(name="zeta-ep", base_url="http://127.0.0.1:9/v1", model="z",
                                          owner=world["users"]["super"])
    draft = ElicitationRun.objects.create(study=world["study"], endpoint=theirs, status="draft")
    api, admin = clients(world["users"]["owner"])  # the study is theirs, the endpoint is not
    assert api.post(f"/api/runs/{draft.pk}/start/").status_code == 403
    assert api.post(f"/api/runs/{draft.pk}/resume/").status_code == 403
    assert admin.post(reverse("admin:elicitation_elicitationrun_action", args=[draft.pk, "start"])).status_code == 403
    admin.post(reverse("admin:elicitation_elicitationrun_changelist"),
               {"action": "start_runs", "_selected_action": [draft.pk]})
    assert ElicitationRun.objects.get(pk=draft.pk).status == "draft"


def test_withdrawal_records_follow_their_study(world):
    from surveys.models import Withdrawal

    Withdrawal.objects.create(study_slug="alpha", respondent_id="alpha-withdrawn", reason="withdrawn",
                              requested_by="owner", participant_status="completed")
    url = reverse("admin:surveys_withdrawal_changelist")
    for role, shown in (("owner", True), ("other", False)):
        user = world["users"][role]
        user.user_permissions.add(Permission.objects.get(codename="view_withdrawal"))
        admin = Client()
        admin.force_login(User.objects.get(pk=user.pk))
        assert ("alpha-withdrawn" in admin.get(url).content.decode()) is shown, role


def test_show_links_as_a_user_lists_their_studies(world):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("show_links", "--as", "other", stdout=out)
    assert "'beta'" in out.getvalue() and "'alpha'" not in out.getvalue()


def test_an_endpoint_is_created_with_its_sharing_list_through_the_api(world):
    """The endpoint serializer's checks set the sharing list (many-to-many) on a model instance: a 500 before."""
    api, _ = clients(world["users"]["owner"])
    answer = api.post("/api/endpoints/", {"name": "beta-ep", "base_url": EVIL_URL, "model": "m", "check": False,
                                          "shared_with": ["shared"]}, content_type="application/json")
    assert answer.status_code == 201, answer.content
    endpoint = ModelEndpoint.objects.get(name="beta-ep")
    assert endpoint.owner == world["users"]["owner"]
    assert list(endpoint.shared_with.values_list("username", flat=True)) == ["shared"]
