"""Issue 24 point 3: raw PROLIFIC_PIDs reach only staff who may view participants (report API, admin report
page, report.json, admin response and submission pages), and reading a report never writes."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from analysis.exports import hashed_id
from prolific.models import ProlificStudy, Submission
from surveys.models import Assignment, Item, Participant, Response, Study
from test_analysis_factories import nv_and_v

REPORT_VIEWER = ("analysis.view_studyanalysis",)
WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)


@pytest.fixture
def studies(imported_nv, belem_dir):
    return nv_and_v(imported_nv, belem_dir)


def staff_with(name: str, *perms: str) -> User:
    """A staff account with ``perms``, every study shared with it (ownership is not what is tested here)."""
    user = User.objects.create_user(name, is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    for study in Study.objects.all():
        study.shared_with.add(user)
    return User.objects.get(pk=user.pk)


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def report_texts(user: User, study) -> dict[str, str]:
    """The report as the API, the admin page and report.json give it to ``user``."""
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    admin = logged_in(user)
    out = {"api": api.get(f"/api/studies/{study.slug}/report/"),
           "page": admin.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])),
           "json": admin.get(reverse("admin:analysis_studyanalysis_report_json", args=[study.pk]))}
    for name, response in out.items():
        assert response.status_code == 200, (name, response.status_code)
    return {name: r.content.decode() for name, r in out.items()}


def test_report_names_excluded_participants_by_salted_id_without_view_participant(studies):
    nv, v = studies
    texts = report_texts(staff_with("viewer", *REPORT_VIEWER), v)
    for name, text in texts.items():
        for pid in ("nv-spam", "nv-flat", "v-spam"):
            assert pid not in text, (name, pid)
            assert hashed_id(pid) in text, (name, pid)
    allowed = report_texts(staff_with("lead", *REPORT_VIEWER, "surveys.view_participant"), v)
    for name, text in allowed.items():
        assert "v-spam" in text and "nv-spam" in text, name


def participant_state() -> list[tuple]:
    return list(Participant.objects.order_by("pk").values_list("pk", "status", "attention_rho",
                                                                "attention_included", "live_attention_rho"))


@pytest.mark.parametrize("route", ["api", "page", "json", "export"])
def test_a_report_get_writes_nothing(studies, route):
    nv, v = studies
    Participant.objects.update(attention_rho=None, attention_included=None)
    before = participant_state()
    user = User.objects.create_superuser("boss", "b@example.org", "pw")
    client = logged_in(user)
    urls = {"api": f"/api/studies/{v.slug}/report/",
            "page": reverse("admin:analysis_studyanalysis_report", args=[v.pk]),
            "json": reverse("admin:analysis_studyanalysis_report_json", args=[v.pk]),
            "export": reverse("admin:analysis_studyanalysis_export", args=[nv.pk, "csv"])}
    with CaptureQueriesContext(connection) as queries:
        response = client.get(urls[route])
        body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code == 200 and body
    # the session's last-login and the auth token aside, no statement writes
    writes = [q["sql"] for q in queries.captured_queries if WRITES.match(q["sql"]) and "django_session" not in q["sql"]]
    assert writes == []
    assert participant_state() == before
    if route == "json":  # the filter is still computed into the report
        data = response.json()
        excluded = {r["respondent_id"] for r in data["tables"]["attention"]}
        assert {hashed_id("nv-spam"), hashed_id("v-spam")} <= excluded


def test_storing_decisions_is_the_explicit_action(studies):
    nv, _ = studies
    Participant.objects.update(attention_rho=None, attention_included=None)
    client = logged_in(User.objects.create_superuser("boss", "b@example.org", "pw"))
    client.get(reverse("admin:analysis_studyanalysis_report", args=[nv.pk]))
    assert not Participant.objects.filter(attention_included__isnull=False).exists()
    client.post(reverse("admin:analysis_studyanalysis_attention", args=[nv.pk]))
    assert Participant.objects.get(study=nv, prolific_pid="nv-spam").attention_included is False


@pytest.fixture
def submission(db):
    study = Study.objects.create(slug="sub", title="Sub", status=Study.Status.LIVE)
    item = Item.objects.create(study=study, key="sub-1", expression="likely", statement="It rains.")
    participant = Participant.objects.create(study=study, prolific_pid="nv-spam")
    slot = Assignment.objects.create(participant=participant, item=item, position=1)
    Response.objects.create(assignment=slot, participant=participant, item=item, value=70)
    link = ProlificStudy.objects.create(study=study, prolific_id="p-study")
    return Submission.objects.create(prolific_study=link, submission_id="sub-1", participant_pid="nv-spam",
                                     participant=participant, status="AWAITING REVIEW")


def admin_pages(submission) -> dict[str, tuple[str, str]]:
    """page → (URL, the permission that opens it)"""
    response = Response.objects.filter(participant=submission.participant).first()
    return {
        "response list": (reverse("admin:surveys_response_changelist"), "surveys.view_response"),
        "response detail": (reverse("admin:surveys_response_change", args=[response.pk]), "surveys.view_response"),
        "submission list": (reverse("admin:prolific_submission_changelist"), "prolific.view_submission"),
        "submission detail": (reverse("admin:prolific_submission_change", args=[submission.pk]),
                              "prolific.view_submission"),
    }


def test_admin_response_and_submission_pages_hide_pids_without_view_participant(submission):
    for name, (url, perm) in admin_pages(submission).items():
        page = logged_in(staff_with(f"u-{len(name)}-{name[:3]}", perm)).get(url)
        assert page.status_code == 200, name
        text = page.content.decode()
        assert "nv-spam" not in text, name
        if "list" in name:
            assert hashed_id("nv-spam") in text, name
        User.objects.filter(is_superuser=False).delete()
        text = logged_in(staff_with("lead", perm, "surveys.view_participant")).get(url).content.decode()
        assert "nv-spam" in text, name
        User.objects.filter(is_superuser=False).delete()
