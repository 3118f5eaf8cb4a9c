"""Study.participant_title: what participants see as the study's name (page header, browser tab, Prolific), kept
apart from the researchers' title; set in definition files, the API, the admin and create_study."""
from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from surveys.definition.export import export_to
from surveys.definition.files import STUDIES_DIR
from surveys.definition.loader import load_file
from surveys.definition.versions import pending_hash
from surveys.models import Item, Study, StudyVersion
from tests.test_admin import form_data, staff  # noqa: F401 (staff is a fixture)
from tests.test_analysis_factories import add_participant
from tests.test_api_write import api  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
FILE = """
[study]
slug = "words"
title = "Tang et al. RQ1 replication (researchers)"
participant_title = "A short study about words of probability"
kind = "wep_probability"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC"]

[participants]
items_per_participant = 3
"""


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.toml").write_text(text, encoding="utf-8")
    return folder / "study.toml"


def pages(study: Study) -> dict[str, str]:
    """The consent, instructions, pledge and first item pages a new participant of ``study`` is shown."""
    client = Client()
    params = urlencode({"PROLIFIC_PID": PID, "STUDY_ID": "abc123", "SESSION_ID": "sess42"})
    assert client.get(f"/s/{study.slug}/?{params}").status_code == 302
    shown = {}
    for step, form in (("consent", {"choice": "agree"}), ("instructions", {}), ("pledge", {"pledge": "on"})):
        url = reverse(f"surveys:{step}", kwargs={"slug": study.slug})
        response = client.get(url)
        assert response.status_code == 200, step
        shown[step] = response.content.decode()
        client.post(url, {"step": step, **form})
    item = client.get(reverse("surveys:item", kwargs={"slug": study.slug}))
    assert item.status_code == 200
    shown["item"] = item.content.decode()
    return shown


def header_and_tab(html: str) -> tuple[str, str]:
    header = re.search(r'<span class="site-title">(.*?)</span>', html, re.S).group(1).strip()
    tab = re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()
    return header, tab


def test_participant_pages_show_the_participant_title_not_the_researchers():
    study = Study.objects.create(slug="words", title="Tang et al. RQ1 replication (researchers)",
                                 participant_title="A short study about words of probability",
                                 instrument="wep_probability", status="live", items_per_participant=1)
    Item.objects.create(study=study, key="i1", expression="likely", context="CNC")
    shown = pages(study)
    assert list(shown) == ["consent", "instructions", "pledge", "item"]
    for step, html in shown.items():
        header, tab = header_and_tab(html)
        assert header == "A short study about words of probability", step
        assert tab.endswith("· A short study about words of probability"), (step, tab)
        assert "Tang et al." not in html, step


def test_without_a_participant_title_participants_see_the_title():
    study = Study.objects.create(slug="plain", title="How sure does it sound?", instrument="wep_probability",
                                 status="live", items_per_participant=1)
    Item.objects.create(study=study, key="i1", expression="likely", context="CNC")
    assert study.shown_title == "How sure does it sound?"
    header, tab = header_and_tab(pages(study)["consent"])
    assert header == "How sure does it sound?" and tab.endswith("· How sure does it sound?")


def test_the_shipped_chinese_study_shows_its_chinese_title():
    study = load_file(STUDIES_DIR / "tang-rq1-zh" / "study.toml").study
    study.status = Study.Status.LIVE
    study.save()
    assert study.title.startswith("Tang et al.") and study.participant_title == "表示可能性的词语"
    header, tab = header_and_tab(pages(study)["consent"])
    assert header == "表示可能性的词语" and tab.endswith("· 表示可能性的词语")


def test_the_definition_round_trips_the_participant_title_outside_the_content_hash(tmp_path):
    study = load_file(write(tmp_path / "a", FILE)).study
    assert study.participant_title == "A short study about words of probability"
    sha = study.versions.get().sha256
    without = load_file(write(tmp_path / "b", FILE.replace('slug = "words"', 'slug = "words-2"').replace(
        'participant_title = "A short study about words of probability"\n', ""))).study
    assert without.participant_title == "" and without.versions.get().sha256 == sha  # not part of the content

    export_to(study, tmp_path / "out")
    exported = tomllib.loads((tmp_path / "out" / "study.toml").read_text(encoding="utf-8"))
    assert exported["study"]["participant_title"] == "A short study about words of probability"
    Item.objects.filter(study=study).delete()
    StudyVersion.objects.filter(study=study).delete()
    study.delete()
    again = load_file(tmp_path / "out" / "study.toml")
    assert again.study.participant_title == "A short study about words of probability"
    assert again.version.sha256 == sha

    export_to(without, tmp_path / "plain")  # an empty participant title is left out of the file
    assert "participant_title" not in (tmp_path / "plain" / "study.toml").read_text(encoding="utf-8")


def test_a_new_participant_title_after_answers_needs_no_new_version(tmp_path):
    path = write(tmp_path, FILE)
    study = load_file(path).study
    add_participant(study, "P1", [(study.main_items().first(), 70)])
    loaded = load_file(write(tmp_path, FILE.replace("A short study about words of probability", "Words and chances")))
    assert not loaded.new_version and loaded.version.number == 1
    study.refresh_from_db()
    assert study.participant_title == "Words and chances"


def test_the_api_sets_and_returns_the_participant_title(api, tmp_path):  # noqa: F811
    made = api.post("/api/studies/", {"slug": "s1", "title": "Bahaj et al. replication",
                                      "participant_title": "Ranges you are sure of"})
    assert made.status_code == 201, made.json()
    assert made.json()["participant_title"] == "Ranges you are sure of"
    assert Study.objects.get(slug="s1").shown_title == "Ranges you are sure of"
    assert api.get("/api/studies/s1/").json()["participant_title"] == "Ranges you are sure of"
    assert api.post("/api/studies/", {"slug": "s2", "title": "S", "participant_title": "x" * 201}).status_code == 400
    # a study with answers: a new participant title changes no content, so no new version is asked for
    study = load_file(write(tmp_path, FILE)).study
    add_participant(study, "P1", [(study.main_items().first(), 70)])
    before = pending_hash(study)
    changed = api.patch("/api/studies/words/", {"participant_title": "Words and chances"})
    assert changed.status_code == 200, changed.json()
    study.refresh_from_db()
    assert study.participant_title == "Words and chances" and pending_hash(study) == before
    assert study.versions.count() == 1


def test_create_study_takes_a_participant_title():
    call_command("create_study", "cs", "--instrument", "wep_probability", "--title", "Tang RQ1 (mine)",
                 "--participant-title", "Words of probability", stdout=io.StringIO())
    study = Study.objects.get(slug="cs")
    assert (study.title, study.participant_title, study.shown_title) == (
        "Tang RQ1 (mine)", "Words of probability", "Words of probability")
    call_command("create_study", "cs2", "--instrument", "wep_probability", stdout=io.StringIO())
    assert Study.objects.get(slug="cs2").participant_title == ""


def test_the_admin_sets_it_among_what_participants_see(client, staff):  # noqa: F811
    study = Study.objects.create(slug="adm", title="Bahaj et al. replication", instrument="interval_confidence")
    url = reverse("admin:surveys_study_change", args=[study.pk])
    page = client.get(url)
    shown = next(fs for fs in page.context["adminform"] if fs.name == "Shown to participants")
    assert "participant_title" in [field.field.name for line in shown for field in line]
    data = form_data(page) | {"participant_title": "Ranges you are sure of"}
    assert client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert (study.title, study.shown_title) == ("Bahaj et al. replication", "Ranges you are sure of")
