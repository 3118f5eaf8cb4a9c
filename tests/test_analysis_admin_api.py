"""The analysis admin pages (report, export, importers, attention filter) and the REST endpoints."""
from __future__ import annotations

import io

import pandas as pd
import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token

from analysis.exports import read_csv
from elicitation.models import ModelResponse
from surveys.models import Participant, Response, Study
from test_analysis_factories import nv_and_v
from test_analysis_importers import FAGEN

ADMIN = "admin:analysis_studyanalysis_"


@pytest.fixture
def studies(imported_nv, belem_dir):
    return nv_and_v(imported_nv, belem_dir)


@pytest.fixture
def staff(db):
    return User.objects.create_superuser("boss", "boss@example.org", "pw-for-tests-only")


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def url(name: str, *args) -> str:
    return reverse(ADMIN + name, args=args)


# --- admin ------------------------------------------------------------------------------------
def test_changelist_links_every_study(admin_client, studies):
    nv, v = studies
    page = admin_client.get(url("changelist")).content.decode()
    for study in (nv, v):
        assert url("report", study.pk) in page
        assert url("export", study.pk, "parquet") in page
        assert url("import_responses", study.pk) in page
    assert ">Non-verifiable<" in page or "Non-verifiable" in page


def test_report_page_shows_tables_and_figures(admin_client, studies):
    _, v = studies
    response = admin_client.get(url("report", v.pk))
    assert response.status_code == 200
    page = response.content.decode()
    for heading in ("Summary (Belem Tables 1, 2 and 5)", "PA per expression, verifiable statements (Table 7)",
                    "Knowledge bias", "Participants excluded by the attention filter"):
        assert heading in page
    assert "modelx (greedy)" in page and "Human Individual" in page and "ΔPA" in page
    assert page.count('src="data:image/png;base64,') == 8  # 5 histogram grids + 2 true/false figures + generic
    assert "v-spam" in page  # excluded participants are listed


def test_report_page_explains_missing_data(admin_client, nv_study):
    response = admin_client.get(url("report", nv_study.pk))
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count("has no completed human participants") == 1 and "What the study holds so far" in page


def test_report_json_and_attention_button(admin_client, studies):
    nv, _ = studies
    data = admin_client.get(url("report_json", nv.pk)).json()
    assert data["meta"]["study"] == "nv" and data["tables"]["summary"][0]["agent"] == "Human Mode"
    Participant.objects.filter(study=nv).update(attention_included=None)
    assert admin_client.get(url("attention", nv.pk)).status_code == 405
    response = admin_client.post(url("attention", nv.pk), follow=True)
    assert "12 of 14 completed participants kept" in response.content.decode()
    assert Participant.objects.filter(study=nv, attention_included=False).count() == 2


def test_admin_export_streams_csv_and_parquet(admin_client, studies):
    nv, _ = studies
    response = admin_client.get(url("export", nv.pk, "csv"))
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    assert 'filename="nv-answers.csv"' in response["Content-Disposition"]
    df = read_csv(io.StringIO(b"".join(response.streaming_content).decode()))
    models = ModelResponse.objects.filter(run__study=nv, status__in=["ok", "unparseable"]).count()
    assert len(df) == Response.objects.filter(item__study=nv).count() + models
    assert "nv0" not in set(df["respondent_id"])
    raw = admin_client.get(url("export", nv.pk, "parquet") + "?raw_ids=1")
    assert "raw-ids" in raw["Content-Disposition"]
    table = pd.read_parquet(io.BytesIO(b"".join(raw.streaming_content)))
    assert "nv0" in set(table["respondent_id"])
    assert admin_client.get(url("export", nv.pk, "xlsx")).status_code == 404


def test_admin_import_of_a_long_file(admin_client, imported_nv):
    items = list(imported_nv.main_items().order_by("id")[:3])
    good = "who,sid,expr,answer\n" + "".join(f"P9,{i.statement_id},{i.label},{5 * n}\n" for n, i in enumerate(items))
    form = {"participant": "who", "statement": "sid", "expression": "expr", "value": "answer", "time_unit": "ms"}
    bad = good.replace(",5\n", ",lots\n")
    response = admin_client.post(url("import_responses", imported_nv.pk),
                                 form | {"file": SimpleUploadedFile("a.csv", bad.encode())})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was imported" in page and "line 3, column “answer”: &#x27;lots&#x27; is not a number" in page
    assert "<code>who</code>, <code>sid</code>" in page
    assert not Participant.objects.filter(study=imported_nv).exists()
    response = admin_client.post(url("import_responses", imported_nv.pk),
                                 form | {"file": SimpleUploadedFile("a.csv", good.encode())}, follow=True)
    assert "imported 3 answers of 1 participants" in response.content.decode()
    assert list(Response.objects.filter(participant__prolific_pid="P9").values_list("value", flat=True)) == [0, 5, 10]
    # the mapping form re-asks when it lacks a way to find the items
    response = admin_client.post(url("import_responses", imported_nv.pk),
                                 {"participant": "who", "value": "answer", "time_unit": "ms",
                                  "file": SimpleUploadedFile("a.csv", good.encode())})
    assert response.status_code == 400 and "Give a statement id, text or expression column" in response.content.decode()


def test_admin_import_of_a_wide_file(admin_client, db):
    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    upload = SimpleUploadedFile("survey-results.csv", FAGEN.read_bytes())
    response = admin_client.post(url("import_wide", study.pk), {"file": upload}, follow=True)
    assert "imported 2091 answers of 123 participants; created 17 items" in response.content.decode()
    assert Participant.objects.filter(study=study, prolific_pid="survey-results-2").exists()


def test_admin_import_of_a_bad_wide_file_names_line_and_column_and_imports_nothing(admin_client, db):
    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    bad = '"""Likely""",Unlikely,Age\n70,20,31\n75,much,40\n'
    response = admin_client.post(url("import_wide", study.pk), {"file": SimpleUploadedFile("w.csv", bad.encode())})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was imported: 1 problem" in page
    assert "line 3, column “Unlikely”: &#x27;much&#x27; is not a number" in page
    assert "<code>Age</code>" in page  # the file's header is shown
    assert not Participant.objects.filter(study=study).exists() and not study.items.exists()


def test_admin_pages_need_staff(client, studies, db):
    nv, _ = studies
    for target in (url("report", nv.pk), url("export", nv.pk, "csv"), url("import_wide", nv.pk)):
        response = client.get(target)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    viewer = User.objects.create_user("viewer", password="pw-for-tests-only", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_studyanalysis"))
    nv.shared_with.add(viewer)  # ownership: tests/test_access_matrix.py
    client.force_login(viewer)
    assert client.get(url("report", nv.pk)).status_code == 200
    assert client.get(url("import_wide", nv.pk)).status_code == 403  # importing needs add permissions


# --- API --------------------------------------------------------------------------------------
def test_api_needs_a_staff_token(client, studies, staff):
    _, v = studies
    assert client.get(f"/api/studies/{v.slug}/report/").status_code in (401, 403)
    plain = User.objects.create_user("someone", password="pw-for-tests-only")
    token = Token.objects.create(user=plain)
    assert client.get(f"/api/studies/{v.slug}/report/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 403
    token = Token.objects.create(user=staff)
    response = client.get(f"/api/studies/{v.slug}/report/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    data = response.json()
    summary = {r["agent"]: r for r in data["tables"]["summary"]}
    assert summary["modelx (greedy)"]["delta_pa"] == pytest.approx(summary["modelx (greedy)"]["pa_v"]
                                                                   - summary["modelx (greedy)"]["pa_nv"])
    assert data["meta"]["non_verifiable_study"] == "nv"


def test_api_export_attention_and_errors(client, studies, staff):
    nv, _ = studies
    auth = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=staff).key}"}
    response = client.get(f"/api/studies/{nv.slug}/export/parquet/", **auth)
    assert response.status_code == 200 and response["Content-Type"] == "application/vnd.apache.parquet"
    df = pd.read_parquet(io.BytesIO(b"".join(response.streaming_content)))
    assert set(df["respondent_type"]) == {"human", "model"}
    csv_response = client.get(f"/api/studies/{nv.slug}/export/csv/?raw_ids=1", **auth)
    assert "nv0" in set(read_csv(io.StringIO(b"".join(csv_response.streaming_content).decode()))["respondent_id"])
    assert client.get(f"/api/studies/{nv.slug}/export/xml/", **auth).status_code == 404
    assert client.get("/api/studies/nope/report/", **auth).status_code == 404
    result = client.post(f"/api/studies/{nv.slug}/attention/", **auth).json()
    assert result["included"] == 12 and {e["prolific_pid"] for e in result["excluded"]} == {"nv-spam", "nv-flat"}
    empty = Study.objects.create(slug="empty", title="Empty")
    response = client.get(f"/api/studies/{empty.slug}/report/", **auth)
    assert response.status_code == 200 and "no completed human participants" in response.json()["meta"]["missing"][0]
    response = client.post(f"/api/studies/{empty.slug}/attention/", **auth)
    assert response.status_code == 409 and "no completed participants" in response.json()["detail"]
    assert client.post("/api/studies/nope/attention/", **auth).status_code == 404
