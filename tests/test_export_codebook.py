"""The combined export keeps the design (issue 31 point 7): every field of the items file as a typed ``item.<field>``
column, the questionnaire on each participant's rows (a persona's on model rows), a ``question`` key, and beside
the data a codebook naming every column with its type, source, meaning and allowed values or scale labels — the
same from the ``export`` command, the admin, the API and the replication package."""
from __future__ import annotations

import csv
import io
import json
import zipfile
from io import StringIO

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.codebook import codebook, codebook_text
from analysis.export_columns import BASE, SOURCES, Column, ByParticipant, PROVIDERS, Provider
from analysis.exports import COLUMNS, export_study, read_csv, study_layout
from surveys.models import Item, Study
from test_analysis_factories import add_participant, add_run
from test_report_groups import persona_run, person

pytestmark = pytest.mark.django_db

STUDY = """format = 1
[study]
slug = "coded"
title = "Doctor or friend"
kind = "generic"

[answer]
shape = "scale"
min = 1
max = 7
step = 1

[answer.labels]
1 = "Not sure at all"
4 = "Half sure"
7 = "Completely sure"

[page]
sentence = "{{ speaker }} says: {{ phrase }} the swelling goes down."
question = "How sure is the speaker?"

[design]
items = "items.csv"
key = "key"

[participants]
items_per_participant = 3

[[questionnaire]]
name = "gender"
label = "What is your gender?"
type = "choice"
choices = [{key = "w", label = "woman"}, {key = "m", label = "man"}]

[[questionnaire]]
name = "age"
label = "How old are you?"
type = "number"
integer = true
min = 18
max = 99
"""
# speaker: text; outcome: whole numbers; p: decimals; urgent: true/false; ward: digits with a leading zero (text);
# note: empty for some items; expression: an Item column the file sets
ITEMS = """key,speaker,phrase,expression,outcome,p,urgent,ward,note
d1,your doctor,Probably,probably,7,0.7,true,012,
d2,your doctor,Possibly,possibly,3,0.35,false,014,check
f1,a friend,Probably,probably,12,1,false,3,
"""
FIELDS = {"speaker": ("string", "str"), "phrase": ("string", "str"), "expression": ("string", "str"),
          "outcome": ("integer", "Int64"), "p": ("number", "float64"), "urgent": ("boolean", "boolean"),
          "ward": ("string", "str"), "note": ("string", "str")}


@pytest.fixture
def coded(tmp_path, settings) -> Study:
    settings.EXPORT_ID_SALT = "salt"
    (tmp_path / "study.toml").write_text(STUDY)
    (tmp_path / "items.csv").write_text(ITEMS)
    call_command("load_study", str(tmp_path / "study.toml"), stdout=StringIO())
    study = Study.objects.get(slug="coded")
    person(study, "P1", {"gender": "w", "age": 30}, 5)
    person(study, "P2", {"gender": "m"}, 2)
    persona_run(study, [({"gender": "w", "age": 44}, 6), (None, 4)])
    return study


def both(study: Study, tmp_path) -> list[pd.DataFrame]:
    """The study's export read back from CSV (with its layout) and from Parquet."""
    export_study(study, "csv", tmp_path / "a.csv")
    export_study(study, "parquet", tmp_path / "a.parquet")
    return [read_csv(tmp_path / "a.csv", study_layout(study)), pd.read_parquet(tmp_path / "a.parquet")]


def test_every_item_field_is_a_typed_column_in_csv_and_parquet(coded, tmp_path):
    header = (tmp_path / "h.csv")
    export_study(coded, "csv", header)
    names = next(csv.reader(header.open()))
    assert names[:len(COLUMNS)] == COLUMNS  # the existing columns keep their names and places
    assert {f"item.{f}" for f in FIELDS} <= set(names)
    parquet_types = {f.name: str(f.type) for f in pq.read_schema(
        (export_study(coded, "parquet", tmp_path / "a.parquet"), tmp_path / "a.parquet")[1])}
    arrow = {"string": "string", "integer": "int64", "number": "double", "boolean": "bool"}
    for df in both(coded, tmp_path):
        for field, (kind, dtype) in FIELDS.items():
            assert str(df[f"item.{field}"].dtype) == dtype, field
            assert parquet_types[f"item.{field}"] == arrow[kind], field
        for respondent in ("human", "model"):  # the item's fields on people's rows and on models' alike
            rows = df[df["respondent_type"] == respondent].set_index("item_key")
            d1, d2, f1 = rows.loc[["d1"]].iloc[0], rows.loc[["d2"]].iloc[0], rows.loc[["f1"]].iloc[0]
            assert (d1["item.speaker"], f1["item.speaker"]) == ("your doctor", "a friend")
            assert (d1["item.outcome"], f1["item.outcome"]) == (7, 12)
            assert (d2["item.p"], f1["item.p"]) == (0.35, 1.0)
            assert (bool(d1["item.urgent"]), bool(d2["item.urgent"])) == (True, False)
            assert (d1["item.ward"], f1["item.ward"]) == ("012", "3")  # a leading zero keeps it text
            assert pd.isna(d1["item.note"]) and d2["item.note"] == "check"
            assert (rows["question"] == "answer").all()


def test_questionnaire_answers_on_people_rows_and_persona_fields_on_model_rows(coded, tmp_path):
    for df in both(coded, tmp_path):
        people = df[df["respondent_type"] == "human"]
        assert set(people.groupby("respondent_id")["gender"].agg(tuple).map(set).map(tuple)) == {("w",), ("m",)}
        assert sorted(people["age"].dropna().unique()) == [30]
        models = df[df["respondent_type"] == "model"]
        persona, plain = models[models["sample_index"] == 0], models[models["sample_index"] == 1]
        assert set(persona["gender"]) == {"w"} and set(persona["age"]) == {44}
        assert plain["gender"].isna().all() and plain["age"].isna().all()


@pytest.mark.parametrize("which", ["coded", "nv"])
def test_the_codebook_names_every_column_of_the_export(which, request, tmp_path):
    """A column without a codebook entry (or an entry without a column) fails here, for a generic study with a
    questionnaire and for a family study (Belem's non-verifiable set)."""
    study = request.getfixturevalue("coded") if which == "coded" else request.getfixturevalue("imported_nv")
    if which == "nv":
        add_participant(study, "p1", [(study.main_items().first(), 40)])
    export_study(study, "csv", tmp_path / "a.csv")
    export_study(study, "parquet", tmp_path / "a.parquet")
    exported = next(csv.reader((tmp_path / "a.csv").open()))
    assert pq.read_schema(tmp_path / "a.parquet").names == exported
    for fmt in ("csv", "json", "md"):
        text = codebook_text(study, fmt)
        if fmt == "csv":
            named = [row["column"] for row in csv.DictReader(io.StringIO(text))]
        elif fmt == "json":
            named = [entry["column"] for entry in json.loads(text)]
        else:
            named = [line.split("`")[1] for line in text.splitlines() if line.startswith("| `")]
        assert named == exported, fmt
    for entry in codebook(study):
        assert entry.meaning and entry.source in SOURCES and entry.type_name in (
            "string", "integer", "number", "boolean", "timestamp"), entry
    types = {e.name: e.type_name for e in codebook(study)}
    schema = pq.read_schema(tmp_path / "a.parquet")
    assert types["timestamp"] == "timestamp" and types["item_id"] == "integer" and types["included"] == "boolean"
    assert all(types[f.name] == "string" for f in schema if str(f.type) == "string")


def test_scale_labels_choice_labels_and_sources_in_the_codebook(coded):
    entries = {e["column"]: e for e in json.loads(codebook_text(coded, "json"))}
    value = entries["value"]
    assert value["labels"] == [{"value": "1", "label": "Not sure at all"}, {"value": "4", "label": "Half sure"},
                               {"value": "7", "label": "Completely sure"}]
    assert value["values"].startswith("1–7 in steps of 1") and "4 = Half sure" in value["values"]
    assert entries["choice"]["values"].startswith("empty")  # the scale fills no choice
    gender = entries["gender"]
    assert gender["source"] == "questionnaire" and gender["labels"] == [{"value": "w", "label": "woman"},
                                                                        {"value": "m", "label": "man"}]
    assert "What is your gender?" in gender["meaning"] and entries["age"]["values"].startswith("18–99")
    assert entries["item.speaker"]["source"] == "item" and entries["item.speaker"]["values"] == "a friend | your doctor"
    assert entries["item.outcome"]["type"] == "integer" and entries["question"]["values"] == "answer"
    by_csv = {row["column"]: row for row in csv.DictReader(io.StringIO(codebook_text(coded, "csv")))}
    assert "7 = Completely sure" in by_csv["value"]["values"] and by_csv["run_id"]["source"] == "model run"


def test_a_choice_study_lists_its_options(tmp_path):
    from generic_studies import generic_study

    study = generic_study("opts", {"shape": "choice", "options": [{"key": "A", "label": "likely"},
                                                                   {"key": "B", "label": "unlikely"}]})
    entry = {c.name: c for c in codebook(study)}["choice"]
    assert entry.labels == (("A", "likely"), ("B", "unlikely")) and entry.values == "A = likely | B = unlikely"


def test_a_provider_plugs_in_with_one_entry(coded, tmp_path, monkeypatch):
    """What the other parts of the export (cell, block order, checks, exclusion) do: one Provider appended to the
    registry gives a column in both formats and its codebook entry."""
    import pyarrow as pa

    people = {pk: ("doctor",) for pk in coded.participants.values_list("pk", flat=True)}
    cell = Provider("cell", lambda study: [Column("cell", pa.string(), "str", "design", "The participant's cell.",
                                                  "doctor | friend")],
                    lambda study, columns: ByParticipant(1, people, lambda run, persona: ("friend",)))
    monkeypatch.setattr("analysis.exports.PROVIDERS", [*PROVIDERS, cell])
    for df in both(coded, tmp_path):
        assert df.columns[-1] == "cell"
        assert set(df.loc[df["respondent_type"] == "human", "cell"]) == {"doctor"}
        assert set(df.loc[df["respondent_type"] == "model", "cell"]) == {"friend"}
    assert codebook(coded)[-1].name == "cell" and codebook(coded)[-1].values == "doctor | friend"


def test_the_export_command_writes_the_codebook_beside_the_data(coded, tmp_path):
    out = StringIO()
    call_command("export", "coded", "--out", str(tmp_path / "coded.csv"), stdout=out)
    for fmt in ("csv", "json", "md"):
        assert (tmp_path / f"coded-codebook.{fmt}").read_text() == codebook_text(coded, fmt)
    assert "codebook" in out.getvalue()
    (tmp_path / "p").mkdir()
    call_command("export", "coded", "--format", "parquet", "--out", str(tmp_path / "p" / "x.parquet"),
                 "--no-codebook", stdout=out)
    assert not list((tmp_path / "p").glob("*codebook*"))


def test_api_and_admin_serve_the_codebook(coded, admin_client):
    response = admin_client.get(reverse("api-study-codebook", args=["coded", "json"]))
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert [e["column"] for e in response.json()] == study_layout(coded).columns
    response = admin_client.get(reverse("api-study-codebook", args=["coded", "csv"]))
    assert response.status_code == 200 and 'filename="coded-codebook.csv"' in response["Content-Disposition"]
    assert admin_client.get(reverse("api-study-codebook", args=["coded", "xml"])).status_code == 404
    page = admin_client.get(reverse("admin:analysis_studyanalysis_codebook", args=[coded.pk, "md"]))
    assert page.status_code == 200 and b"| `item.speaker` | string | item |" in page.content
    listing = admin_client.get(reverse("admin:analysis_studyanalysis_changelist")).content.decode()
    assert reverse("admin:analysis_studyanalysis_codebook", args=[coded.pk, "csv"]) in listing


def test_the_replication_package_holds_the_export_and_its_codebook(coded):
    from analysis.replication.package import package_zip

    data = package_zip(coded)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        assert {"export/answers.csv", "export/codebook.csv", "export/codebook.json", "export/codebook.md"} <= names
        answers = pd.read_csv(archive.open("export/answers.csv"), dtype=str, keep_default_na=False)
        book = json.loads(archive.read("export/codebook.json"))
    assert list(answers.columns) == [e["column"] for e in book]
    assert set(answers["item.speaker"]) == {"your doctor", "a friend"}
    assert package_zip(coded) == data  # still deterministic


def test_a_name_taken_by_an_earlier_column_is_suffixed_not_hidden():
    """A questionnaire field named like a later provider's column (``question``, in a study loaded before that
    column existed) keeps its name; the later column becomes ``question_2``, in the data and the codebook."""
    import pyarrow as pa

    from analysis.exports import Layout

    def part(name: str) -> tuple[Provider, list[Column]]:
        return (Provider(name, lambda study: [], lambda study, columns: None),
                [Column("question", pa.string(), "str", "design", name)])

    layout = Layout([part("questionnaire"), part("question")])
    assert layout.columns[len(BASE):] == ["question", "question_2"]
    assert [c.meaning for c in layout.entries[len(BASE):]] == ["questionnaire", "question"]
    assert [c.name for _, columns in layout.parts for c in columns] == ["question", "question_2"]
