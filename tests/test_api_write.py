"""The writable REST API: studies, imports, runs and participants are created and changed with the same
validation and importers as the admin, and every route checks staff + the model permission."""
from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from config.celery import app as celery_app
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.models import Assignment, Item, Participant, Response, Study

pytestmark = pytest.mark.django_db


class Api:
    """The Django test client with a token header."""

    def __init__(self, client, token: str):
        self.client, self.auth = client, {"HTTP_AUTHORIZATION": f"Token {token}"}

    def get(self, url, **kw):
        return self.client.get(url, **self.auth, **kw)

    def post(self, url, data=None, fmt="json"):
        if fmt == "json":
            return self.client.post(url, data or {}, content_type="application/json", **self.auth)
        return self.client.post(url, data, **self.auth)  # multipart

    def patch(self, url, data):
        return self.client.patch(url, data, content_type="application/json", **self.auth)

    def delete(self, url):
        return self.client.delete(url, **self.auth)


def user_api(client, django_user_model, name="researcher", perms=None, superuser=False) -> Api:
    if superuser:
        user = django_user_model.objects.create_superuser(name, password="pw")
    else:
        user = django_user_model.objects.create_user(name, password="pw", is_staff=True)
        for codename in perms or []:
            app, code = codename.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=code))
        for owned in (*Study.objects.all(), *ModelEndpoint.objects.all()):  # ownership: test_access_matrix.py
            owned.shared_with.add(user)
    return Api(client, Token.objects.create(user=user).key)


@pytest.fixture
def api(client, django_user_model):
    return user_api(client, django_user_model, superuser=True)


def belem_rows(belem_dir, n: int) -> bytes:
    """The header and the first ``n`` rows of Belem's non-verifiable file, as an upload."""
    with open(belem_dir / "non-verifiable.csv", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[: n + 1]
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


def upload(name: str, data: bytes):
    f = io.BytesIO(data)
    f.name = name
    return f


# --- studies --------------------------------------------------------------------------------------------
def test_create_update_and_validate_a_study(api):
    bad = api.post("/api/studies/", {"slug": "s1", "title": "S", "instrument": "nonsense"})
    assert bad.status_code == 400 and "instrument" in bad.json()
    bad = api.post("/api/studies/", {"slug": "not a slug", "title": "S"})
    assert bad.status_code == 400 and "slug" in bad.json()
    made = api.post("/api/studies/", {"slug": "s1", "title": "S", "consent_text": "Agree?",
                                      "completion_code": "C0DE1", "items_per_expression": 4})
    assert made.status_code == 201, made.json()
    study = Study.objects.get(slug="s1")
    assert (study.consent_text, study.completion_code, study.items_per_expression) == ("Agree?", "C0DE1", 4)
    assert made.json()["participant_link"].endswith("/s/s1/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
                                                    "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert api.post("/api/studies/", {"slug": "s1", "title": "again"}).status_code == 400  # slug taken
    changed = api.patch("/api/studies/s1/", {"status": "live", "attention_threshold": 0.3})
    assert changed.status_code == 200 and changed.json()["status"] == "live"
    assert api.patch("/api/studies/s1/", {"status": "paused"}).status_code == 400
    assert api.patch("/api/studies/s1/", {"reference_study": "s1"}).status_code == 400
    study.refresh_from_db()
    assert (study.status, study.attention_threshold) == ("live", 0.3)


def test_report_options_through_the_api(api):
    made = api.post("/api/studies/", {"slug": "rq2", "title": "RQ2", "instrument": "wep_choice"})
    assert made.status_code == 201 and made.json()["report_options"] == {}
    changed = api.patch("/api/studies/rq2/", {"report_options": {"reading": "authors"}})
    assert changed.status_code == 200 and changed.json()["report_options"] == {"reading": "authors"}
    refused = api.patch("/api/studies/rq2/", {"report_options": {"reading": "mine"}})
    assert refused.status_code == 400 and "must be one of text, authors" in str(refused.json())
    assert api.patch("/api/studies/rq2/", {"report_options": {"hue": "red"}}).status_code == 400
    assert Study.objects.get(slug="rq2").report_options == {"reading": "authors"}


def test_instrument_fixed_once_items_and_slug_once_participants(api):
    study = Study.objects.create(slug="fixed", title="F")
    Item.objects.create(study=study, key="k", expression="likely", statement="s.")
    r = api.patch("/api/studies/fixed/", {"instrument": "wep_probability"})
    assert r.status_code == 400 and "instrument" in r.json()
    Participant.objects.create(study=study, prolific_pid="P1")
    r = api.patch("/api/studies/fixed/", {"slug": "moved"})
    assert r.status_code == 400 and "slug" in r.json()
    assert Study.objects.filter(slug="fixed", instrument="speaker_belief").exists()


def test_deleting_a_study_with_data_is_refused(api):
    study = Study.objects.create(slug="keep", title="K")
    item = Item.objects.create(study=study, key="k", expression="likely", statement="s.")
    participant = Participant.objects.create(study=study, prolific_pid="P1")
    Response.objects.create(assignment=Assignment.objects.create(participant=participant, item=item, position=1),
                            participant=participant, item=item, value=50)
    r = api.delete("/api/studies/keep/")
    assert r.status_code == 409 and "1 participant" in r.json()["detail"]
    Study.objects.create(slug="empty", title="E")
    assert api.delete("/api/studies/empty/").status_code == 204
    assert list(Study.objects.values_list("slug", flat=True)) == ["keep"]


# --- imports --------------------------------------------------------------------------------------------
def test_item_import_is_all_or_nothing_and_names_line_and_column(api, belem_dir):
    Study.objects.create(slug="nv", title="NV")
    data = belem_rows(belem_dir, 30).decode()
    broken = data.replace(",very likely,", ",fairly likely,", 1)
    assert broken != data
    r = api.post("/api/studies/nv/import-items/", {"file": upload("items.csv", broken.encode())}, fmt="multipart")
    assert r.status_code == 400
    body = r.json()
    assert body["total"] == 1 and body["errors"][0]["column"] == "uncertainty_expression"
    assert body["errors"][0]["line"] > 1 and "fairly likely" in body["errors"][0]["message"]
    assert Item.objects.count() == 0
    r = api.post("/api/studies/nv/import-items/", {"file": upload("items.csv", data.encode())}, fmt="multipart")
    assert r.status_code == 201, r.json()
    assert r.json()["created"] == 30 and r.json()["demonstrations_added"] == 2
    assert Study.objects.get(slug="nv").main_items().count() == 30
    again = api.post("/api/studies/nv/import-items/", {"file": upload("items.csv", data.encode())}, fmt="multipart")
    assert again.status_code == 400 and again.json()["total"] == 30
    assert api.post("/api/studies/nv/import-items/", {}, fmt="multipart").status_code == 400  # no file


def test_answer_import_through_the_api(api, imported_nv):
    items = list(imported_nv.main_items().order_by("id")[:3])
    lines = ["pid,sid,expr,answer"] + [f"A1,{i.statement_id},{i.label},{v}" for i, v in zip(items, (10, 20, 30))]
    bad = lines + [f"A2,{items[0].statement_id},{items[0].label},700"]
    r = api.post("/api/studies/nv/import-responses/",
                 {"file": upload("a.csv", "\n".join(bad).encode()), "participant": "pid", "statement": "sid",
                  "expression": "expr", "value": "answer"}, fmt="multipart")
    assert r.status_code == 400 and r.json()["errors"][0] == {"line": 5, "row": None, "column": "answer",
                                                               "message": r.json()["errors"][0]["message"]}
    assert not Participant.objects.exists()
    r = api.post("/api/studies/nv/import-responses/",
                 {"file": upload("a.csv", "\n".join(lines).encode()), "participant": "pid", "statement": "sid",
                  "expression": "expr", "value": "answer"}, fmt="multipart")
    assert r.status_code == 201 and (r.json()["participants"], r.json()["responses"]) == (1, 3)
    assert sorted(Response.objects.values_list("value", flat=True)) == [10, 20, 30]
    missing = api.post("/api/studies/nv/import-responses/", {"file": upload("a.csv", b"x\n1\n")}, fmt="multipart")
    assert missing.status_code == 400 and set(missing.json()) == {"participant", "value"}


def test_generate_items_from_a_design(api):
    Study.objects.create(slug="tang", title="Tang RQ1", instrument="wep_probability")
    assert api.post("/api/studies/tang/generate-items/", {}).status_code == 400  # no design named
    wrong = api.post("/api/studies/tang/generate-items/", {"design": "tang-rq2"})
    assert wrong.status_code == 400 and "wep_choice" in wrong.json()["detail"]  # another instrument's design
    unknown = api.post("/api/studies/tang/generate-items/", {"design": "tang-rq1", "options": {"colour": "red"}})
    assert unknown.status_code == 400 and "colour" in unknown.json()["detail"]
    assert not Item.objects.exists()
    made = api.post("/api/studies/tang/generate-items/", {"design": "tang-rq1"})
    assert made.status_code == 201, made.json()
    assert made.json()["created"] == Study.objects.get(slug="tang").items.count() > 0
    again = api.post("/api/studies/tang/generate-items/", {"design": "tang-rq1"})
    assert again.status_code == 400 and "already has" in again.json()["detail"]


def test_design_options_and_imports_never_read_a_server_path(api, tmp_path):
    """An option or an import from the API is a value or an upload: a server path is refused unread (it used
    to open the file and echo its first line in the error)."""
    secret = tmp_path / "env"
    secret.write_text("DB_PASSWORD=hunter2\n1 2 3\n")
    Study.objects.create(slug="rq2", title="Tang RQ2", instrument="wep_choice")
    for numbers in (str(secret), "/dev/null"):
        r = api.post("/api/studies/rq2/generate-items/", {"design": "tang-rq2", "options": {"numbers": numbers}})
        assert r.status_code == 400 and "command line" in r.json()["detail"]
        assert "hunter2" not in r.content.decode() and "DB_PASSWORD" not in r.content.decode()
    assert not Item.objects.exists()
    made = api.post("/api/studies/rq2/generate-items/",
                    {"design": "tang-rq2", "options": {"numbers": {"narrow": [1, 2, 3], "wide": [4, 5, 6]}}})
    assert made.status_code == 201 and Item.objects.filter(study__slug="rq2").count() == 360
    for route in ("import-items", "import-responses", "import-wide"):  # a path where the file goes: not a file
        for fmt in ("json", "multipart"):
            r = api.post(f"/api/studies/rq2/{route}/", {"file": str(secret)}, fmt=fmt)
            assert r.status_code in (400, 415) and "hunter2" not in r.content.decode(), (route, fmt, r.content)
    assert Item.objects.filter(study__slug="rq2").count() == 360 and not Response.objects.exists()


def test_the_command_line_reads_the_numbers_file(tmp_path):
    from django.core.management import CommandError, call_command

    Study.objects.create(slug="rq2", title="Tang RQ2", instrument="wep_choice")
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("1 2 3\n4 5 6\n")
    call_command("generate_items", "rq2", "--design", "tang-rq2", "--numbers", str(numbers), stdout=io.StringIO())
    assert Item.objects.get(key="height|5|narrow|0.500|between").extra["sample"] == [1, 2, 3]
    with pytest.raises(CommandError, match="No such file"):
        call_command("generate_items", "rq2", "--design", "tang-rq2", "--numbers", str(tmp_path / "missing"))


# --- runs -----------------------------------------------------------------------------------------------
def test_run_create_start_progress_cancel_resume(api, stub, imported_nv, monkeypatch,
                                                 django_capture_on_commit_callbacks):
    # the Celery app's own conf: once the app has read Django's settings (an earlier test), a changed setting
    # no longer reaches it, and the tasks would go to the broker
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    stub.default = Reply.answer("70")
    make_endpoint(stub, name="stubbed")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:3])
    bad = api.post("/api/runs/", {"study": "nv", "endpoint": "stubbed", "mode": "greedy", "temperature": 0.7})
    assert bad.status_code == 400 and "temperature" in bad.json()
    bad = api.post("/api/runs/", {"study": "nv", "endpoint": "stubbed", "items": ["nope"]})
    assert bad.status_code == 400 and "nope" in bad.json()["items"][0]
    made = api.post("/api/runs/", {"study": "nv", "endpoint": "stubbed", "items": keys, "name": "api run"})
    assert made.status_code == 201, made.json()
    run_id = made.json()["id"]
    assert made.json()["status"] == "draft" and made.json()["progress"]["total"] == 3
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"/api/runs/{run_id}/start/")
    assert started.status_code == 200
    progress = api.get(f"/api/runs/{run_id}/progress/").json()
    assert (progress["status"], progress["done"], progress["total"]) == ("completed", 3, 3)
    assert sorted(ModelResponse.objects.filter(run_id=run_id).values_list("value", flat=True)) == [70, 70, 70]
    assert api.post(f"/api/runs/{run_id}/start/").status_code == 409
    assert api.post(f"/api/runs/{run_id}/cancel/").status_code == 409  # not running
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(f"/api/runs/{run_id}/resume/").json()["status"] == "completed"
    # the pre-flight check when the run was created (remembered for the start and the resume), then the 3 answers;
    # resume of a complete run asks nothing again
    assert len(stub.requests) == 4 and stub.requests[0].body["max_tokens"] == 1
    second = api.post("/api/runs/", {"study": "nv", "endpoint": "stubbed", "items": keys[:1]}).json()
    cancelled = api.post(f"/api/runs/{second['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert ElicitationRun.objects.get(pk=second["id"]).status_reason.startswith("cancelled through the API")


def test_endpoints_are_writable_without_ever_holding_a_key(api, monkeypatch, settings):
    settings.MODEL_API_KEY_VARS = ["HEDGELAB_TEST_API_KEY@api.example.org"]
    made = api.post("/api/endpoints/", {"name": "oa", "base_url": "https://api.example.org/v1", "model": "m",
                                        "api_key_env": "HEDGELAB_TEST_API_KEY", "check": False})
    assert made.status_code == 201 and made.json()["key_set"] is False
    monkeypatch.setenv("HEDGELAB_TEST_API_KEY", "sk-secret")
    shown = api.get("/api/endpoints/oa/")
    assert shown.json()["key_set"] is True and "sk-secret" not in shown.content.decode()
    assert api.post("/api/endpoints/", {"name": "x", "base_url": "not a url", "model": "m"}).status_code == 400
    refused = api.post("/api/endpoints/", {"name": "y", "base_url": "https://evil.example/v1", "model": "m",
                                           "api_key_env": "ADMIN_PASSWORD"})  # a secret of the platform's own
    assert refused.status_code == 400 and "api_key_env" in refused.json()


# --- participants ---------------------------------------------------------------------------------------
def test_mark_participants_gives_their_unanswered_items_back(api, imported_nv):
    from surveys.assignment import assign, item_usage

    p = Participant.objects.create(study=imported_nv, prolific_pid="P1", pledged_at="2026-01-01T00:00Z")
    assign(p)
    assert sum(item_usage(imported_nv).values()) == 30
    r = api.post("/api/participants/mark/", {"participants": [p.pk], "status": "returned"})
    assert r.status_code == 200 and r.json() == {"changed": 1}
    p.refresh_from_db()
    assert p.status == "returned" and sum(item_usage(imported_nv).values()) == 0
    assert api.post("/api/participants/mark/", {"participants": [p.pk], "status": "reinstate"}).json()["changed"] == 1
    assert sum(item_usage(imported_nv).values()) == 30
    assert api.post("/api/participants/mark/", {"participants": [p.pk], "status": "completed"}).status_code == 400
    assert api.post("/api/participants/mark/", {"participants": [999999], "status": "returned"}).status_code == 400


# --- permissions ----------------------------------------------------------------------------------------
def test_every_write_needs_staff_and_the_model_permission(client, django_user_model, imported_nv):
    viewer = user_api(client, django_user_model, "viewer", ["surveys.view_study", "surveys.view_participant"])
    assert viewer.get("/api/studies/").status_code == 200
    assert viewer.post("/api/studies/", {"slug": "x", "title": "X"}).status_code == 403
    assert viewer.patch("/api/studies/nv/", {"title": "Y"}).status_code == 403
    assert viewer.post("/api/studies/nv/import-items/", {}, fmt="multipart").status_code == 403
    assert viewer.post("/api/participants/mark/", {"participants": [1], "status": "returned"}).status_code == 403
    assert viewer.get("/api/runs/").status_code == 403
    editor = user_api(client, django_user_model, "editor", ["surveys.view_study", "surveys.change_study"])
    assert editor.patch("/api/studies/nv/", {"title": "Y"}).status_code == 200
    assert editor.delete("/api/studies/nv/").status_code == 403
    analyst = user_api(client, django_user_model, "analyst", ["analysis.view_studyanalysis"])  # as the admin report
    assert analyst.get("/api/studies/nv/export/csv/").status_code == 200
    assert analyst.get("/api/studies/nv/export/csv/?raw_ids=1").status_code == 403
    nobody = django_user_model.objects.create_user("plain", password="pw")  # not staff, even with the permission
    nobody.user_permissions.add(Permission.objects.get(codename="view_study"))
    token = Token.objects.create(user=nobody).key
    assert client.get("/api/studies/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 403
    assert client.get("/api/studies/").status_code in (401, 403)
