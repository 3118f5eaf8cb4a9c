"""The demo studies (`manage.py load_demo`): own statements, from the shipped Belem definitions (studies/belem*/),
imported through the importer, idempotent."""
from __future__ import annotations

import csv
import random
import shutil
from collections import Counter

import pytest
from django.core.management import call_command

from surveys.assignment import assign
from families.belem import demo as belem_demo
from surveys.demo import loader
from surveys.definition.errors import DefinitionError
from surveys.definition.files import read_definition
from families.belem.instrument import EXPRESSIONS, NAMES, PRONOUNS, paper_demonstrations
from surveys.models import Item, Participant, Study

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(db):
    loader.load_demo()
    return Study.objects.get(slug="demo"), Study.objects.get(slug="demo-verifiable")


DEFINITION_DIRS = {"non-verifiable": "belem", "verifiable": "belem-verifiable"}


def statements(name: str) -> list[dict[str, str]]:
    """The distinct statements of a demo's item file (studies/belem*/items.csv), in file order."""
    path = belem_demo.STUDIES_DIR / DEFINITION_DIRS[name] / "items.csv"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    seen: dict[str, dict[str, str]] = {}
    for row in rows:
        seen.setdefault(row["statement_id"], {k: row[k] for k in ("statement_id", "statement_type", "statement")})
    return list(seen.values())


def test_statement_files():
    nv, ver = statements("non-verifiable"), statements("verifiable")
    assert len(nv) == 20 and len(ver) == 20
    assert len({s["statement_id"] for s in nv + ver}) == 40
    assert all("[[they]]" in s["statement"] or "[[their]]" in s["statement"] for s in nv)
    assert Counter(s["statement_type"].rsplit("__", 1)[1] for s in ver) == {"true": 10, "false": 10}
    assert all("__" not in s["statement_type"] for s in nv)


def test_statements_are_our_own(belem_dir):
    """Nothing is copied from the paper's stimuli or demonstrations."""
    paper = set()
    for name in ("non-verifiable", "verifiable"):
        with open(belem_dir / f"{name}.csv", newline="", encoding="utf-8") as f:
            paper |= {row["statement"].strip().lower() for row in csv.DictReader(f)}
    paper |= {d["statement"].lower() for which in ("non-verifiable", "verifiable") for d in paper_demonstrations(which)}
    ours = [s["statement"].lower() for s in statements("non-verifiable") + statements("verifiable")]
    for name in DEFINITION_DIRS.values():
        definition, _ = read_definition(belem_demo.STUDIES_DIR / name / "study.toml")
        ours += [d.statement.lower() for d in definition.demonstrations]
    assert not set(ours) & paper


def test_load_demo_creates_two_live_studies(demo):
    nv, ver = demo
    assert nv.status == ver.status == Study.Status.LIVE
    assert ver.reference_study == nv and nv.reference_study is None
    for study in demo:
        items = list(study.main_items())
        assert len(items) == 20 * 15
        assert sum(i.is_control for i in items) == 20
        assert Counter(i.expression for i in items if not i.is_control) == {e: 20 for e in EXPRESSIONS}
        # every statement appears once per label
        assert Counter(i.statement_id for i in items) == {s: 15 for s in {i.statement_id for i in items}}
        # speakers from the instrument's name list, genders balanced
        assert Counter(i.speaker_gender for i in items) == {"female": 150, "male": 150}
        assert all(i.speaker_name in NAMES[i.speaker_gender] for i in items)
        # loaded from the shipped definition: the row of its item file, the definition and its first version
        assert sorted(i.source_row for i in items) == list(range(2, 302))
        assert study.definition["study"]["slug"] == study.slug and study.versions.count() == 1
        assert study.consent_text and study.instructions and study.pledge_text
        assert "8 minutes" in study.consent_text and "Prolific ID" in study.consent_text
        codes = {study.completion_code, study.failed_attention_code, study.screened_out_code}
        assert len(codes) == 3 and all(codes)
    assert Counter(i.truth for i in nv.main_items()) == {"": 300}
    assert Counter(i.truth for i in ver.main_items()) == {"true": 150, "false": 150}


def test_rendered_sentences(demo):
    nv, _ = demo
    for item in nv.main_items():
        text = item.text()
        assert "[[" not in text and item.speaker_name in text
        pronoun = PRONOUNS[item.speaker_gender]["they"]
        if item.statement.startswith("[[they]]"):
            assert f" {pronoun} " in text
        if item.is_control:
            assert "believes it's" not in text
        else:
            assert f"believes it's {item.expression} that " in text
    item = nv.main_items().get(statement_id="demo_future_1", expression="likely")
    pronoun = PRONOUNS[item.speaker_gender]["they"]
    assert item.text() == f"{item.speaker_name} believes it's likely that {pronoun} will get a parking spot " \
                          "near the office tomorrow."


def test_own_demonstrations(demo):
    for study in demo:
        demos = study.demonstrations()
        assert [(d.expression, d.demo_answer) for d in demos] == [("impossible", 0), ("certain", 100)]
        assert [d.speaker_name for d in demos] == ["Nora", "Felix"]
        prompt = study.kind.build_prompt(study.main_items().first(), demos)
        assert "Nora believes it's impossible that" in prompt.text
        assert "Kathleen" not in prompt.text and "Cedric" not in prompt.text


def test_load_demo_is_idempotent(demo, capsys):
    nv, ver = demo
    before = sorted(Item.objects.values_list("id", "key", "study_id"))
    codes = (nv.completion_code, ver.completion_code)
    nv.title = "Renamed by a researcher"
    nv.save()
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "nothing changed" in out
    assert "demo: already exists (300 items); left unchanged" in out
    assert sorted(Item.objects.values_list("id", "key", "study_id")) == before
    assert Study.objects.count() == 4  # demo, demo-verifiable, demo-overprecision and demo-sileo
    nv.refresh_from_db()
    ver.refresh_from_db()
    assert nv.title == "Renamed by a researcher"
    assert (nv.completion_code, ver.completion_code) == codes


def test_command_output_on_first_load(db, capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "demo: created, live, 300 items (20 controls)" in out
    assert "demo-verifiable: created, live, 300 items (20 controls)" in out
    assert "/s/demo/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in out
    assert "nothing changed" not in out


def test_a_bad_item_file_creates_nothing(db, tmp_path, monkeypatch):
    for name in DEFINITION_DIRS.values():
        shutil.copytree(belem_demo.STUDIES_DIR / name, tmp_path / name)
    bad = tmp_path / "belem-verifiable" / "items.csv"
    bad.write_text(bad.read_text().replace("whales are mammals.", ""))
    monkeypatch.setattr(belem_demo, "STUDIES_DIR", tmp_path)
    with pytest.raises(DefinitionError) as info:
        loader.load_demo()
    problems = info.value.problems
    assert len(problems) == 15 and {p.file for p in problems} == {"items.csv"}
    assert all(p.where.endswith("column 'statement'") and p.message == "is empty" for p in problems)
    assert not Study.objects.exists() and not Item.objects.exists()


@pytest.mark.parametrize("slug", ["demo", "demo-verifiable"])
def test_a_participant_draw(demo, slug):
    study = Study.objects.get(slug=slug)
    participant = Participant.objects.create(study=study, prolific_pid="P1")
    slots = assign(participant, random.Random(7))
    items = [s.item for s in slots]
    assert len(items) == 14 * 2 + 2
    assert Counter(i.label for i in items) == {**{e: 2 for e in EXPRESSIONS}, "control": 2}
    if slug == "demo-verifiable":
        for expression in EXPRESSIONS:
            assert sorted(i.truth for i in items if i.expression == expression) == ["false", "true"]


def test_participant_sees_the_demo_texts(demo, client):
    response = client.get("/s/demo/", {"PROLIFIC_PID": "abc123", "STUDY_ID": "s1", "SESSION_ID": "x1"},
                          follow=True)
    assert response.status_code == 200
    assert "about 8 minutes" in response.content.decode()
