"""The researcher admin: study pages and links, item import, raw CSV, participant actions, read-only
responses, refused deletions, demonstrations inline, and `manage.py ensure_admin`."""
from __future__ import annotations

import csv
import io
import os
import random
import stat
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command
from django.utils import timezone

from surveys.assignment import assign
from surveys.models import Assignment, Item, Participant, Response, Study
from surveys.raw_export import COLUMNS

pytestmark = pytest.mark.django_db


# --- helpers ----------------------------------------------------------------------------------------
@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_superuser("researcher", "r@example.org", "a-long-Passw0rd!")
    client.force_login(user)
    return user


@pytest.fixture
def demo_study(db):
    from surveys.demo.loader import load_demo

    load_demo()
    return Study.objects.get(slug="demo")


def take_part(study: Study, pid: str, answers: int | None = None, seed: int = 1,
              status: str = Participant.Status.STARTED) -> Participant:
    """A participant with their slots drawn and the first ``answers`` slots answered (all if None)."""
    participant = Participant.objects.create(study=study, prolific_pid=pid)
    slots = assign(participant, random.Random(seed))
    for slot in slots[: len(slots) if answers is None else answers]:
        Response.objects.create(assignment=slot, participant=participant, item=slot.item,
                                value=(slot.position * 5) % 105, raw=str((slot.position * 5) % 105),
                                time_taken_ms=1000 + slot.position, client_time_ms=900 + slot.position)
    if status == Participant.Status.COMPLETED:
        participant.completed_at = timezone.now()
    participant.status = status
    participant.save()
    return participant


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def belem_file(belem_dir: Path, tmp_path: Path, n: int, change: dict | None = None) -> Path:
    """The first ``n`` rows of the real non-verifiable file, the last one optionally changed."""
    with open(belem_dir / "non-verifiable.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, [dict(r) for r in list(reader)[:n]]
    rows[-1].update(change or {})
    path = tmp_path / "upload.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


def form_data(response) -> dict[str, object]:
    """The POST data of an admin change form as rendered (main form, inline management forms and rows)."""
    data: dict[str, object] = {}

    def add(form) -> None:
        for name, field in form.fields.items():
            value = form[name].value()
            key = form.add_prefix(name)
            if value is None:
                data[key] = ""
            elif isinstance(value, bool):
                if value:
                    data[key] = "on"
            else:
                data[key] = value

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        add(formset.management_form)
        for form in formset.forms:
            add(form)
    return data


# --- studies ----------------------------------------------------------------------------------------
def test_study_list_counts(client, staff, demo_study):
    take_part(demo_study, "P1", status=Participant.Status.COMPLETED)
    take_part(demo_study, "P2", answers=3, seed=2)
    take_part(demo_study, "P3", answers=0, seed=3, status=Participant.Status.RETURNED)
    response = client.get("/admin/surveys/study/")
    assert response.status_code == 200
    rows = {s.slug: s for s in response.context["cl"].result_list}
    assert (rows["demo"].n_items, rows["demo"].n_completed, rows["demo"].n_participants) == (300, 1, 3)
    html = response.content.decode()
    assert "1 / 3" in html and "0 / 0" in html
    assert "/s/demo/preview/?restart=1" in html


def test_study_page_links_and_prolific_link(client, staff, demo_study):
    response = client.get(f"/admin/surveys/study/{demo_study.pk}/change/")
    html = response.content.decode()
    assert response.status_code == 200
    link = demo_study.participant_link()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}" in html
    assert f'value="{link.replace("&", "&amp;")}"' in html
    assert 'data-copy-target="prolific-link"' in html
    assert f'href="/s/{demo_study.slug}/preview/?restart=1"' in html and "Preview as a participant" in html
    assert f'href="/admin/surveys/study/{demo_study.pk}/import-items/"' in html
    assert f'href="/admin/surveys/study/{demo_study.pk}/raw-responses.csv"' in html
    for field in ("consent_text", "instructions", "pledge_text", "items_per_expression", "completion_code",
                  "failed_attention_code", "screened_out_code", "attention_threshold", "reference_study"):
        assert f'name="{field}"' in html


def test_preview_link_opens_for_staff(client, staff, demo_study):
    response = client.get(f"/s/{demo_study.slug}/preview/?restart=1", follow=True)
    assert response.status_code == 200
    assert "about 8 minutes" in response.content.decode()
    assert not Participant.objects.exists()


def test_add_study_with_instrument_choice(client, staff):
    response = client.get("/admin/surveys/study/add/")
    assert '<option value="speaker_belief"' in response.content.decode()
    data = {"title": "Pilot", "slug": "pilot", "status": "draft", "instrument": "no_such_kind", "language": "en",
            "items_per_expression": 2, "controls_per_participant": 2, "draw_speaker_names": "on",
            "attention_threshold": 0.2, "completion_code": "C1", "failed_attention_code": "C2",
            "screened_out_code": "C3", "items-TOTAL_FORMS": 0, "items-INITIAL_FORMS": 0,
            "channels-TOTAL_FORMS": 0, "channels-INITIAL_FORMS": 0}
    response = client.post("/admin/surveys/study/add/", data)
    assert response.status_code == 200 and not Study.objects.exists()
    assert "no_such_kind" in str(response.context["adminform"].form.errors["instrument"])
    data["instrument"] = "speaker_belief"
    response = client.post("/admin/surveys/study/add/", data)
    assert response.status_code == 302
    assert Study.objects.get(slug="pilot").completion_code == "C1"


def test_slug_and_instrument_locked_once_used(client, staff, demo_study):
    take_part(demo_study, "P1", answers=1)
    response = client.get(f"/admin/surveys/study/{demo_study.pk}/change/")
    data = form_data(response)
    assert "slug" not in data and "instrument" not in data
    data["title"] = "New title"
    response = client.post(f"/admin/surveys/study/{demo_study.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    demo_study.refresh_from_db()
    assert (demo_study.title, demo_study.slug) == ("New title", "demo")


# --- demonstrations inline -----------------------------------------------------------------------------
def test_demonstrations_are_edited_inline(client, staff, demo_study):
    url = f"/admin/surveys/study/{demo_study.pk}/change/"
    data = form_data(client.get(url))
    assert data["items-TOTAL_FORMS"] == 2  # only the demonstrations, not the 300 items
    data["items-1-demo_answer"] = "95"
    data["items-TOTAL_FORMS"] = 3
    data.update({"items-2-demo_order": "3", "items-2-speaker_name": "Ines", "items-2-speaker_gender": "female",
                 "items-2-expression": "likely", "items-2-statement": "[[they]] will bake bread tonight.",
                 "items-2-demo_answer": "70"})
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    demos = demo_study.demonstrations()
    assert [(d.demo_order, d.demo_answer) for d in demos] == [(1, 0), (2, 95), (3, 70)]
    assert demos[2].key == "demo-3" and demos[2].is_demonstration
    assert demo_study.main_items().count() == 300


@pytest.mark.parametrize("answer,error", [("", "This field is required"), ("42", "steps of 5"),
                                          ("120", "steps of 5")])
def test_demonstration_answer_is_validated(client, staff, demo_study, answer, error):
    url = f"/admin/surveys/study/{demo_study.pk}/change/"
    data = form_data(client.get(url))
    data["items-0-demo_answer"] = answer
    response = client.post(url, data)
    assert response.status_code == 200
    assert error in response.content.decode()
    assert [d.demo_answer for d in demo_study.demonstrations()] == [0, 100]


# --- item import ------------------------------------------------------------------------------------
def test_import_page_imports_and_reports_counts(client, staff, belem_dir, tmp_path):
    study = Study.objects.create(slug="up", title="Upload")
    url = f"/admin/surveys/study/{study.pk}/import-items/"
    assert client.get(url).status_code == 200
    path = belem_file(belem_dir, tmp_path, 16)
    with open(path, "rb") as f:
        response = client.post(url, {"file": f})
    assert response.status_code == 302 and response.url == f"/admin/surveys/study/{study.pk}/change/"
    assert study.main_items().count() == 16
    assert messages_of(response) == [
        "Imported 16 items from upload.csv into up (2 controls); "
        "added the instrument's 2 default demonstrations."
    ]


def test_import_page_shows_errors_and_imports_nothing(client, staff, belem_dir, tmp_path):
    study = Study.objects.create(slug="up", title="Upload")
    path = belem_file(belem_dir, tmp_path, 5, {"uncertainty_expression": "kind of likely"})
    with open(path, "rb") as f:
        response = client.post(f"/admin/surveys/study/{study.pk}/import-items/", {"file": f})
    assert response.status_code == 422
    assert not study.items.exists()
    html = response.content.decode()
    assert "Nothing was imported from upload.csv" in html
    [error] = response.context["errors"]
    assert (error.row, error.column) == (6, "uncertainty_expression")
    assert error.line > 6  # the Belem rows hold line breaks: the file line is named too
    assert f"<td>{error.line}</td><td>6</td><td>uncertainty_expression</td>" in html
    assert "&#x27;kind of likely&#x27; is not one of the 14 expressions" in html


def test_import_page_without_a_file(client, staff):
    study = Study.objects.create(slug="up", title="Upload")
    response = client.post(f"/admin/surveys/study/{study.pk}/import-items/", {})
    assert response.status_code == 200 and "This field is required" in response.content.decode()


def test_import_page_needs_change_permission(client, django_user_model):
    study = Study.objects.create(slug="up", title="Upload")
    url = f"/admin/surveys/study/{study.pk}/import-items/"
    assert client.get(url).status_code == 302  # anonymous → login
    viewer = django_user_model.objects.create_user("viewer", password="a-long-Passw0rd!", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_study"))
    client.force_login(viewer)
    assert client.get(url).status_code == 403
    assert client.get("/admin/surveys/study/999/import-items/").status_code == 404


# --- raw responses CSV -------------------------------------------------------------------------------
def read_download(response) -> list[dict[str, str]]:
    assert response.streaming
    text = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def test_raw_csv_download(client, staff, demo_study, django_assert_max_num_queries):
    done = take_part(demo_study, "DONE1", status=Participant.Status.COMPLETED)
    half = take_part(demo_study, "HALF1", answers=4, seed=5)
    other = Study.objects.get(slug="demo-verifiable")
    take_part(other, "ELSEWHERE", answers=2)
    url = f"/admin/surveys/study/{demo_study.pk}/raw-responses.csv"
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="demo-raw-responses.csv"'
    rows = read_download(response)
    assert list(rows[0].keys()) == list(COLUMNS)
    assert len(rows) == 30 + 4
    assert {r["study"] for r in rows} == {"demo"}
    assert [r["prolific_pid"] for r in rows] == ["DONE1"] * 30 + ["HALF1"] * 4
    assert {r["participant_status"] for r in rows[:30]} == {"completed"}
    assert [int(r["position"]) for r in rows[30:]] == [1, 2, 3, 4]
    for row in rows:
        participant = done if row["prolific_pid"] == "DONE1" else half
        slot = Assignment.objects.get(participant=participant, position=int(row["position"]))
        answer = slot.responses.get()
        item = slot.item
        assert row["item_key"] == item.key and row["statement_id"] == item.statement_id
        assert row["label"] == item.label and row["expression"] == item.expression
        assert row["is_control"] == ("true" if item.is_control else "false")
        assert row["truth"] == "" and row["statement_type"] == item.statement_type
        assert (row["speaker_shown"], row["speaker_gender_shown"]) == (slot.speaker_name, slot.speaker_gender)
        assert row["sentence_shown"] == item.kind.sentence(item, slot.speaker())
        assert row["sentence_shown"].startswith(f"{slot.speaker_name} believes ")
        assert float(row["value"]) == answer.value
        assert row["time_taken_ms"] == str(answer.time_taken_ms)
        assert row["client_time_ms"] == str(answer.client_time_ms)
        assert row["answered_at"] == answer.created_at.isoformat()
    # a constant number of queries, however many responses (no query per row)
    with django_assert_max_num_queries(12):
        assert len(read_download(client.get(url))) == 34


def test_raw_csv_of_verifiable_study_has_truth(client, staff, demo_study):
    other = Study.objects.get(slug="demo-verifiable")
    take_part(other, "V1")
    rows = read_download(client.get(f"/admin/surveys/study/{other.pk}/raw-responses.csv"))
    truths = [r["truth"] for r in rows if r["is_control"] == "false"]
    assert sorted(set(truths)) == ["false", "true"] and truths.count("true") == 14


def test_raw_csv_needs_staff(client, demo_study, django_user_model):
    url = f"/admin/surveys/study/{demo_study.pk}/raw-responses.csv"
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response.url
    viewer = django_user_model.objects.create_user("viewer", password="a-long-Passw0rd!", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_study"))
    demo_study.shared_with.add(viewer)  # ownership: tests/test_access_matrix.py
    client.force_login(viewer)
    assert client.get(url).status_code == 403  # may see studies, not responses
    viewer.user_permissions.add(Permission.objects.get(codename="view_response"))
    viewer = get_user_model().objects.get(pk=viewer.pk)
    client.force_login(viewer)
    assert client.get(url).status_code == 403  # the file holds raw PROLIFIC_PIDs: needs view participant
    viewer.user_permissions.add(Permission.objects.get(codename="view_participant"))
    viewer = get_user_model().objects.get(pk=viewer.pk)
    client.force_login(viewer)
    assert client.get(url).status_code == 200


# --- participants -----------------------------------------------------------------------------------
def test_participant_list_progress_and_filters(client, staff, demo_study):
    take_part(demo_study, "P1", answers=7)
    take_part(demo_study, "P2", seed=2, status=Participant.Status.COMPLETED)
    response = client.get("/admin/surveys/participant/", {"study__id__exact": demo_study.pk, "status__exact": "started"})
    assert [p.prolific_pid for p in response.context["cl"].result_list] == ["P1"]
    html = response.content.decode()
    assert "7 / 30" in html
    response = client.get("/admin/surveys/participant/", {"status__exact": "completed"})
    assert "30 / 30" in response.content.decode()
    assert client.get("/admin/surveys/participant/add/").status_code == 403


@pytest.mark.parametrize("action,status", [("mark_returned", "returned"), ("mark_timed_out", "timed_out")])
def test_mark_participants(client, staff, demo_study, action, status):
    a = take_part(demo_study, "A1", answers=5)
    b = take_part(demo_study, "B1", answers=2, seed=2)
    c = take_part(demo_study, "C1", answers=1, seed=3)
    response = client.post("/admin/surveys/participant/",
                           {"action": action, "_selected_action": [a.pk, b.pk], "index": 0}, follow=True)
    assert response.status_code == 200
    statuses = dict(Participant.objects.values_list("prolific_pid", "status"))
    assert statuses == {"A1": status, "B1": status, "C1": "started"}
    assert Response.objects.filter(participant__in=[a, b]).count() == 7  # answers are kept
    assert any("2 participant(s) marked as" in m for m in messages_of(response))
    # undo
    client.post("/admin/surveys/participant/", {"action": "reinstate", "_selected_action": [a.pk], "index": 0})
    a.refresh_from_db()
    assert a.status == "started"
    assert c.status == "started"


# --- responses are read-only ----------------------------------------------------------------------------
def test_responses_are_read_only(client, staff, demo_study):
    participant = take_part(demo_study, "P1", answers=3)
    answer = participant.responses.first()
    other = take_part(Study.objects.get(slug="demo-verifiable"), "Q1", answers=2)
    response = client.get("/admin/surveys/response/", {"participant__study__id__exact": demo_study.pk})
    assert response.status_code == 200
    assert {r.participant_id for r in response.context["cl"].result_list} == {participant.pk}
    assert client.get("/admin/surveys/response/add/").status_code == 403
    change = client.get(f"/admin/surveys/response/{answer.pk}/change/")
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
    before = answer.value
    assert client.post(f"/admin/surveys/response/{answer.pk}/change/", {"value": "55"}).status_code == 403
    assert client.post(f"/admin/surveys/response/{answer.pk}/delete/", {"post": "yes"}).status_code == 403
    response = client.post("/admin/surveys/response/",
                           {"action": "delete_selected", "_selected_action": [answer.pk], "post": "yes"})
    answer.refresh_from_db()
    assert answer.value == before
    assert Response.objects.count() == 5 and other.responses.count() == 2


# --- deletions that would lose data are refused ------------------------------------------------------------
def test_deleting_a_study_with_participants_is_refused(client, staff, demo_study):
    take_part(demo_study, "P1", answers=3)
    url = f"/admin/surveys/study/{demo_study.pk}/delete/"
    for response in (client.get(url, follow=True), client.post(url, {"post": "yes"}, follow=True)):
        assert response.status_code == 200
        [message] = messages_of(response)
        assert "was not deleted because collected data depend on it (1 participant, 30 assignments, 3 responses)" in message
        assert "set the study's status to Closed" in message
    assert Study.objects.filter(pk=demo_study.pk).exists()
    assert demo_study.items.count() == 302


def test_bulk_deleting_studies_is_refused_as_a_whole(client, staff, demo_study):
    empty = Study.objects.create(slug="empty", title="Empty")
    take_part(demo_study, "P1", answers=0)
    response = client.post("/admin/surveys/study/", {"action": "delete_selected",
                                                     "_selected_action": [demo_study.pk, empty.pk], "post": "yes"},
                           follow=True)
    assert response.status_code == 200
    assert any("Nothing was deleted (1 of the 2 selected could not be)" in m for m in messages_of(response))
    assert Study.objects.filter(slug__in=["demo", "empty"]).count() == 2


def test_deleting_an_unused_study_works(client, staff, demo_study):
    other = Study.objects.get(slug="demo-verifiable")
    assert client.get(f"/admin/surveys/study/{other.pk}/delete/").status_code == 200
    response = client.post(f"/admin/surveys/study/{other.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Study.objects.filter(slug="demo-verifiable").exists()
    assert not Item.objects.filter(study_id=other.pk).exists()


def test_deleting_an_answered_item_or_participant_is_refused(client, staff, demo_study):
    participant = take_part(demo_study, "P1", answers=1)
    slot = participant.assignments.get(position=1)
    response = client.post(f"/admin/surveys/item/{slot.item_id}/delete/", {"post": "yes"}, follow=True)
    assert any("(1 assignment, 1 response)" in m for m in messages_of(response))
    assert Item.objects.filter(pk=slot.item_id).exists()
    response = client.post(f"/admin/surveys/participant/{participant.pk}/delete/", {"post": "yes"}, follow=True)
    assert any("was not deleted because collected data depend on it (1 response)" in m for m in messages_of(response))
    assert Participant.objects.filter(pk=participant.pk).exists()


# --- items ----------------------------------------------------------------------------------------------
def test_item_list_filters_search_and_sentence(client, staff, demo_study):
    response = client.get("/admin/surveys/item/", {"study__id__exact": demo_study.pk, "expression": "doubtful"})
    items = list(response.context["cl"].queryset)
    assert len(items) == 20 and {i.expression for i in items} == {"doubtful"}
    html = response.content.decode()
    assert items[0].text() in html.replace("&#x27;", "'")
    response = client.get("/admin/surveys/item/", {"study__id__exact": demo_study.pk, "is_control__exact": "1"})
    assert response.context["cl"].result_count == 20
    response = client.get("/admin/surveys/item/", {"study__id__exact": demo_study.pk, "q": "parking spot"})
    assert response.context["cl"].result_count == 15
    other = Study.objects.get(slug="demo-verifiable")
    response = client.get("/admin/surveys/item/", {"study__id__exact": other.pk, "truth__exact": "true"})
    assert response.context["cl"].result_count == 150
    response = client.get("/admin/surveys/item/", {"is_demonstration__exact": "1"})
    assert response.context["cl"].result_count == 4


def test_answered_item_cannot_be_edited(client, staff, demo_study):
    participant = take_part(demo_study, "P1", answers=1)
    used = participant.assignments.get(position=1).item
    unused = demo_study.main_items().exclude(assignments__isnull=False).first()
    html = client.get(f"/admin/surveys/item/{used.pk}/change/").content.decode()
    assert 'name="statement"' not in html and used.statement.replace("'", "&#x27;") in html
    assert 'name="statement"' in client.get(f"/admin/surveys/item/{unused.pk}/change/").content.decode()


# --- ensure_admin -----------------------------------------------------------------------------------------
@pytest.fixture
def var_dir(settings, tmp_path, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.delenv("ADMIN_PASSWORD", raising=False)
    return tmp_path


def test_ensure_admin_generates_and_keeps_a_password(var_dir, capsys):
    call_command("ensure_admin")
    out = capsys.readouterr().out
    secret = var_dir / "admin-password.txt"
    password = secret.read_text().strip()
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    assert f"password: {password}" in out and len(password) >= 20
    user = get_user_model().objects.get(username="admin")
    assert user.check_password(password) and user.is_superuser and user.is_staff
    hashed = user.password

    call_command("ensure_admin")
    out = capsys.readouterr().out
    assert "already exists: admin (nothing changed)" in out
    assert f"password: in {secret}" in out and password not in out
    assert get_user_model().objects.get(username="admin").password == hashed
    assert secret.read_text().strip() == password
    assert get_user_model().objects.count() == 1


def test_ensure_admin_uses_admin_password(var_dir, monkeypatch, capsys):
    monkeypatch.setenv("ADMIN_PASSWORD", "correct-horse-battery-staple-42")
    call_command("ensure_admin")
    out = capsys.readouterr().out
    assert "password: the value of ADMIN_PASSWORD" in out and "correct-horse" not in out
    assert not (var_dir / "admin-password.txt").exists()
    assert get_user_model().objects.get(username="admin").check_password("correct-horse-battery-staple-42")


def test_ensure_admin_refuses_a_weak_password(var_dir, monkeypatch):
    monkeypatch.setenv("ADMIN_PASSWORD", "admin")
    with pytest.raises(CommandError, match="ADMIN_PASSWORD is too weak"):
        call_command("ensure_admin")
    assert not get_user_model().objects.exists()


def test_ensure_admin_leaves_an_existing_superuser(var_dir, django_user_model, capsys):
    django_user_model.objects.create_superuser("lead", "l@example.org", "a-long-Passw0rd!")
    call_command("ensure_admin")
    out = capsys.readouterr().out
    assert "already exists: lead (nothing changed)" in out and "changepassword" in out
    assert list(django_user_model.objects.values_list("username", flat=True)) == ["lead"]
    assert not (var_dir / "admin-password.txt").exists()


# --- in a browser -----------------------------------------------------------------------------------------
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_copy_button_puts_the_prolific_link_on_the_clipboard(live_server, monkeypatch, django_user_model):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop
    django_user_model.objects.create_superuser("researcher", "r@example.org", "a-long-Passw0rd!")
    study = Study.objects.create(slug="copyme", title="Copy me")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
            page = context.new_page()
            page.goto(f"{live_server.url}/admin/login/?next=/admin/surveys/study/{study.pk}/change/")
            page.fill("#id_username", "researcher")
            page.fill("#id_password", "a-long-Passw0rd!")
            page.click("input[type=submit]")
            page.click("button[data-copy-target=prolific-link]")
            page.wait_for_selector(".copy-status:has-text('Copied.')")
            assert page.evaluate("navigator.clipboard.readText()") == study.participant_link()
        finally:
            browser.close()


def test_demonstrations_inline_follows_the_kind(client, staff, demo_study):
    """A kind declares its demonstrations' fields (Instrument.demonstrations); a kind without none has no inline."""
    from surveys.instruments import instrument_choices

    for name, _ in instrument_choices():
        study = Study.objects.create(slug=f"k-{name.replace('_', '-')}", title=name, instrument=name)
        page = client.get(f"/admin/surveys/study/{study.pk}/change/")
        assert page.status_code == 200
        spec = study.kind.demonstrations
        if spec is None:
            assert "items-TOTAL_FORMS" not in page.content.decode()
        else:
            fields = set(page.context["inline_admin_formsets"][0].formset.form.base_fields)
            assert fields == set(spec.fields)
    assert Study.objects.get(slug="k-speaker-belief").kind.demonstrations.required == 2
    assert "language" in Study.objects.get(slug="k-wep-probability").kind.demonstrations.fields
    assert Study.objects.get(slug="k-wep-choice").kind.demonstrations is None


def test_study_form_names_the_attention_default_and_prefills_the_slug(client, staff, demo_study):
    from surveys.instruments import get_instrument

    page = client.get("/admin/surveys/study/add/").content.decode()
    assert "&quot;#id_slug&quot;, &quot;name&quot;: &quot;slug&quot;, &quot;dependency_ids&quot;: [&quot;#id_title&quot;]" in page
    assert "Unknown" not in page and '<option value="unknown" selected>Default (the kind&#x27;s default)</option>' in page
    study = Study.objects.create(slug="tang", title="Tang", instrument="wep_choice")
    page = client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    label = get_instrument("wep_choice").label
    assert f"Default (the default of {label}: off)</option>" in page and "Unknown" not in page
    assert "dependency_ids" not in page  # a saved study's slug is not rewritten from its title
    data = form_data(client.get(f"/admin/surveys/study/{demo_study.pk}/change/"))
    data["attention_filter"] = "false"
    assert client.post(f"/admin/surveys/study/{demo_study.pk}/change/", data).status_code == 302
    demo_study.refresh_from_db()
    assert demo_study.attention_filter is False and not demo_study.applies_attention_filter
    data["attention_filter"] = "unknown"
    client.post(f"/admin/surveys/study/{demo_study.pk}/change/", data)
    demo_study.refresh_from_db()
    assert demo_study.attention_filter is None and demo_study.applies_attention_filter


def test_prolific_studies_are_called_studies(client, staff):
    page = client.get("/admin/").content.decode()
    assert "Prolific studies" in page and "studys" not in page
