"""Study definitions through the REST API and the admin: load, download, versions (issue 20)."""
from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from surveys.models import Item, Study
from tests.test_admin import form_data
from tests.test_analysis_factories import add_participant
from tests.test_api_write import user_api
from tests.test_study_definitions import TANG

pytestmark = pytest.mark.django_db

JSONL = TANG.replace('generator = "tang-rq1"\n[design.options]\nsettings = ["CNC"]', 'items = "items.jsonl"')
ROWS = ('{"key": "a", "expression": "likely", "statement": "It is {} that it rains."}\n'
        '{"key": "b", "expression": "unlikely", "statement": "It is {} that it snows."}\n')


def test_api_loads_a_definition_with_its_item_file_and_gives_it_back(client, django_user_model):
    api = user_api(client, django_user_model, superuser=True)
    reply = api.post("/api/studies/definition/", {
        "definition": SimpleUploadedFile("study.toml", JSONL.encode()),
        "items": [SimpleUploadedFile("items.jsonl", ROWS.encode())]}, fmt="multipart")
    assert reply.status_code == 201, reply.content
    body = reply.json()
    assert body["slug"] == "tang-file" and body["created"] and body["version"] == 1 and body["items"] == 2
    study = Study.objects.get(slug="tang-file")
    assert study.owner.username == "researcher"
    files = api.get("/api/studies/tang-file/definition/").json()
    assert 'kind = "wep_probability"' in files["study.toml"] and files["items.jsonl"].count("\n") == 2
    # the same definition as JSON text, through POST /api/studies/ itself, under another slug
    again = api.post("/api/studies/", {"definition": JSONL, "files": {"items.jsonl": ROWS}, "slug": "copy"})
    assert again.status_code == 201, again.content
    assert again.json()["sha256"] == body["sha256"]
    assert api.get("/api/studies/copy/").json()["version"] == 1


def test_api_refuses_a_bad_definition_with_every_problem_and_writes_nothing(client, django_user_model):
    api = user_api(client, django_user_model, superuser=True)
    bad = JSONL.replace("[participants]", "[participants]\ncolour = 3")
    reply = api.post("/api/studies/definition/", {"definition": bad, "files": {"items.jsonl": ROWS + ROWS}})
    assert reply.status_code == 400
    problems = reply.json()["problems"]
    assert {"file": "study.toml", "where": "participants.colour",
            "message": "unknown key (not part of the definition format; check its spelling)"} in problems
    missing = api.post("/api/studies/definition/", {"definition": JSONL})
    assert missing.status_code == 400 and missing.json()["problems"][0]["where"] == "design.items"
    assert not Study.objects.exists() and not Item.objects.exists()


def test_api_needs_the_permissions_and_never_overwrites_another_researchers_study(client, django_user_model):
    owner = user_api(client, django_user_model, "owner", superuser=True)
    assert owner.post("/api/studies/definition/", {"definition": JSONL, "files": {"items.jsonl": ROWS}}).status_code == 201
    viewer = user_api(client, django_user_model, "viewer", perms=["surveys.view_study"])
    assert viewer.post("/api/studies/definition/", {"definition": JSONL}).status_code == 403
    other = user_api(client, django_user_model, "other", perms=["surveys.add_study", "surveys.add_item",
                                                                "surveys.change_study"])
    Study.objects.get(slug="tang-file").shared_with.remove(*django_user_model.objects.filter(username="other"))
    reply = other.post("/api/studies/definition/", {"definition": JSONL.replace("from a file", "mine"),
                                                    "files": {"items.jsonl": ROWS}})
    assert reply.status_code == 400 and "not yours" in reply.json()["problems"][0]["message"]
    assert Study.objects.get(slug="tang-file").title == "Tang RQ1 from a file"


def test_api_edit_of_a_study_with_answers_needs_new_version(client, django_user_model):
    api = user_api(client, django_user_model, superuser=True)
    api.post("/api/studies/definition/", {"definition": JSONL, "files": {"items.jsonl": ROWS}})
    study = Study.objects.get(slug="tang-file")
    add_participant(study, "P1", [(study.main_items().first(), 60)])
    refused = api.patch("/api/studies/tang-file/", {"instructions": "New words."})
    assert refused.status_code == 400 and "new_version" in refused.json()
    assert study.versions.count() == 1
    accepted = api.patch("/api/studies/tang-file/", {"instructions": "New words.", "new_version": True})
    assert accepted.status_code == 200 and accepted.json()["version"] == 2
    study.refresh_from_db()
    assert study.definition["texts"]["instructions"] == "New words."
    assert api.patch("/api/studies/tang-file/", {"status": "live"}).status_code == 200  # not content: no version
    assert study.versions.count() == 2


def test_admin_loads_a_definition_shows_problems_and_downloads_it(admin_client):
    page = admin_client.get("/admin/surveys/study/")
    assert "Load from a definition file" in page.content.decode()
    bad = admin_client.post("/admin/surveys/study/load-definition/", {
        "definition": SimpleUploadedFile("study.toml", JSONL.replace("= 10", "= -1").encode()),
        "item_files": [SimpleUploadedFile("items.jsonl", ROWS.encode())]})
    assert bad.status_code == 422
    assert "participants.items_per_participant" in bad.content.decode() and not Study.objects.exists()
    good = admin_client.post("/admin/surveys/study/load-definition/", {
        "definition": SimpleUploadedFile("study.toml", JSONL.encode()),
        "item_files": [SimpleUploadedFile("items.jsonl", ROWS.encode())]})
    study = Study.objects.get(slug="tang-file")
    assert good.status_code == 302 and good["Location"].endswith(f"/admin/surveys/study/{study.pk}/change/")
    change = admin_client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert "Download definition" in change
    archive = zipfile.ZipFile(io.BytesIO(admin_client.get(f"/admin/surveys/study/{study.pk}/definition.zip").content))
    assert sorted(archive.namelist()) == ["tang-file/items.jsonl", "tang-file/study.toml"]
    assert b'title = "Tang RQ1 from a file"' in archive.read("tang-file/study.toml")


def test_admin_edit_of_a_study_with_answers_asks_for_a_new_version(admin_client):
    from surveys.definition.loader import load

    load(JSONL, "study.toml", lambda name: ROWS.encode())
    study = Study.objects.get(slug="tang-file")
    add_participant(study, "P1", [(study.main_items().first(), 60)])
    data = form_data(admin_client.get(f"/admin/surveys/study/{study.pk}/change/"))
    data["instructions"] = "Changed."
    refused = admin_client.post(f"/admin/surveys/study/{study.pk}/change/", data)
    assert refused.status_code == 200 and "Make a new version" in refused.content.decode()
    assert "tick" in refused.content.decode()
    study.refresh_from_db()
    assert study.instructions == "" and study.versions.count() == 1
    accepted = admin_client.post(f"/admin/surveys/study/{study.pk}/change/", {**data, "new_version": "on"})
    assert accepted.status_code == 302, accepted.context["adminform"].form.errors if accepted.context else ""
    study.refresh_from_db()
    assert study.instructions == "Changed." and study.versions.count() == 2
