"""Grouping the report by participant fields and personas (analysis/reports/grouping.py) from the database: a
generic 1–7 study grouped by gender, with people who answered the questionnaire and a model run whose answers
carry personas; a family section (Tang RQ1) grouped the same way; and the combined export putting a persona's
fields in the questionnaire's columns. Runs on SQLite and, with DATABASE_URL, on PostgreSQL."""
from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from django.utils import timezone
from scipy import stats

from analysis.exports import COLUMNS, export_study, read_csv, read_parquet, study_layout
from analysis.questionnaire_frame import with_fields
from analysis.dataset import study_answers
from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.models import Assignment, Item, Participant, Response, Study

pytestmark = pytest.mark.django_db

QUESTIONNAIRE = [{"name": "gender", "label": "Gender", "type": "choice", "choices": ["f", "m"]},
                 {"name": "age", "label": "Age", "type": "number", "integer": True, "required": False}]
GENERIC = {"answer": {"shape": "scale", "min": 1, "max": 7, "step": 1}, "questionnaire": QUESTIONNAIRE,
           "report": {"sections": ["generic"], "group_by": ["gender"]}}
# each respondent answers every item the same number: people f 4 and 6, m 2 and 3, one who gave no gender 1;
# the model's personas f 5 and 7, m 1 and 2
PEOPLE = [("P1", {"gender": "f", "age": 30}, 4), ("P2", {"gender": "f", "age": 41}, 6),
          ("P3", {"gender": "m", "age": 52}, 2), ("P4", {"gender": "m"}, 3), ("P5", {}, 1)]
PERSONAS = [({"gender": "f", "age": 34}, 5), ({"gender": "f", "age": 60}, 7), ({"gender": "m", "age": 25}, 1),
            ({"gender": "m", "age": 45}, 2)]


GPT = "gpt (greedy)"  # the report's and the export's name of the run's agent
GF, GM = (GPT, "f"), (GPT, "m")


def make_study(slug: str, definition: dict, instrument: str = "generic", items=("a", "b", "c"), **fields) -> Study:
    study = Study.objects.create(slug=slug, title=f"Study {slug}", instrument=instrument, definition=definition)
    for key in items:
        Item.objects.create(study=study, key=key, statement=f"Statement {key}", **fields.get(key, {}))
    return study


def person(study: Study, pid: str, questionnaire: dict, value: float) -> Participant:
    participant = Participant.objects.create(study=study, prolific_pid=pid, questionnaire=questionnaire)
    for position, item in enumerate(study.main_items().order_by("id"), start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, value=value)
    participant.status, participant.completed_at = Participant.Status.COMPLETED, timezone.now()
    participant.save()
    return participant


def persona_run(study: Study, personas, name: str = "gpt") -> ElicitationRun:
    """A completed run: persona i answers every item with its value, sample index i (None: no persona)."""
    endpoint, _ = ModelEndpoint.objects.get_or_create(name=name, base_url="http://127.0.0.1:9/v1", model=name)
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status=ElicitationRun.Status.COMPLETED,
                                        personas=[{"fields": p, "source": "test"} for p, _ in personas if p])
    ModelResponse.objects.bulk_create([
        ModelResponse(run=run, item=item, sample_index=i, raw_output=str(value), answered_at=timezone.now(),
                      status="ok", value=value, persona=fields)
        for item in study.main_items() for i, (fields, value) in enumerate(personas)])
    return run


@pytest.fixture
def generic_study() -> Study:
    study = make_study("grouped", GENERIC)
    for pid, questionnaire, value in PEOPLE:
        person(study, pid, questionnaire, value)
    persona_run(study, PERSONAS)
    persona_run(study, [(None, 4)], name="plain")  # answers without a persona: not in the grouping
    return study


def test_the_answer_table_carries_persona_fields_typed_like_the_questionnaire(generic_study):
    answers = with_fields(study_answers(generic_study), generic_study, ["gender", "age"])
    people = answers[answers["agent"] == "human"].drop_duplicates("respondent").set_index("respondent")
    assert people["gender"].tolist() == ["f", "f", "m", "m", None] and people["age"].tolist()[:3] == [30, 41, 52]
    gpt = answers[answers["agent"] == GPT].drop_duplicates("sample_index").sort_values("sample_index")
    assert gpt["gender"].tolist() == ["f", "f", "m", "m"] and gpt["age"].tolist() == [34, 60, 25, 45]
    assert all(isinstance(a, int) for a in gpt["age"])  # an integer field is an int for both
    plain = answers[answers["agent"] == "plain (greedy)"]
    assert plain["gender"].isna().all()
    assert answers.groupby("gender")["value"].mean().to_dict() == {"f": 5.5, "m": 2.0}


def test_generic_report_grouped_by_gender_humans_beside_the_persona_model(generic_study, tmp_path):
    report = build_report(generic_study)
    tables = report.tables()
    groups = tables["generic_groups"].set_index(["agent", "group"])
    assert set(groups.index) == {("human", "f"), ("human", "m"), ("human", "(no answer)"), GF, GM}
    assert list(tables["generic_groups"]["agent"])[:3] == ["human"] * 3  # humans first; "plain (greedy)" has no persona
    hf, gf = groups.loc[("human", "f")], groups.loc[GF]
    assert (hf["answers"], hf["units"], hf["mean"], hf["median"]) == (6, 2, 5, 5)
    assert (gf["answers"], gf["units"], gf["mean"]) == (6, 2, 6)
    assert gf["vs_humans"] == pytest.approx(1) and gf["w1"] == pytest.approx(1) and gf["pa"] == 0
    assert groups.loc[GM, "mean"] == 1.5 and groups.loc[("human", "m"), "mean"] == 2.5
    diffs = tables["generic_group_differences"]
    assert list(zip(diffs["field"], diffs["agent"], diffs["group_a"], diffs["group_b"])) == [
        ("gender", "human", "f", "m"), ("gender", GPT, "f", "m")]
    h, g = diffs.iloc[0], diffs.iloc[1]
    # humans f 4, 6 and m 2, 3: d = 2.5, se² = 2/2 + ½/2, ν = 1.25² / (1 + 1/16)
    half = stats.t.ppf(0.975, 1.5625 / 1.0625) * math.sqrt(1.25)
    assert h["difference"] == pytest.approx(2.5) and h["ci_low"] == pytest.approx(2.5 - half)
    assert g["difference"] == pytest.approx(4.5) and g["ci_high"] == pytest.approx(4.5 + half)
    assert g["humans_difference"] == pytest.approx(2.5) and g["gap"] == pytest.approx(2)
    section = report.section("generic")
    assert "model answers without a persona are left out of the grouping" in section.meta()["grouping"]["notes"]
    assert not any("no model answer carries a persona" in n for n in report.meta()["notes"])
    names = [name for name, _ in report.figures()]
    assert names[-1] == "generic-groups-gender" and names.count("generic-groups-gender") == 1
    written = {p.name for p in report.write(tmp_path)}
    assert {"generic_groups.csv", "generic_group_differences.csv", "generic-groups-gender.png"} <= written
    assert "generic_groups" in report.titles()


def test_without_personas_the_report_is_unchanged(generic_study):
    before = build_report(generic_study)
    ModelResponse.objects.update(persona=None)
    after = build_report(generic_study)
    assert "generic_groups" in before.tables() and "generic_groups" not in after.tables()
    assert [n for n, _ in after.figures()] == [n for n, _ in before.figures() if not n.startswith("generic-groups")]


def test_a_number_field_groups_people_and_personas_by_the_same_ranges(generic_study):
    generic_study.definition = {**GENERIC, "report": {"sections": ["generic"], "group_by": ["age"]}}
    generic_study.save()
    groups = build_report(generic_study).tables()["generic_groups"]
    # ages 30, 41, 52 (people) and 34, 60, 25, 45 (personas): 7 values cut into 4 ranges together
    ranges = [g for g in dict.fromkeys(groups["group"]) if g != "(no answer)"]
    assert len(ranges) == 4
    assert set(groups.loc[groups["agent"] == GPT, "group"]) <= set(ranges)


def test_a_family_section_tang_rq1_grouped_by_gender():
    definition = {"questionnaire": QUESTIONNAIRE, "report": {"sections": ["tang_rq1"], "group_by": ["gender"]}}
    study = make_study("tang", definition, instrument="wep_probability", items=("likely", "unlikely"),
                       likely={"expression": "likely"}, unlikely={"expression": "unlikely"})
    for pid, questionnaire, value in [("P1", {"gender": "f"}, 60), ("P2", {"gender": "f"}, 80),
                                      ("P3", {"gender": "m"}, 20), ("P4", {"gender": "m"}, 30)]:
        person(study, pid, questionnaire, value)
    persona_run(study, [({"gender": "f"}, 70), ({"gender": "f"}, 90), ({"gender": "m"}, 10), ({"gender": "m"}, 40)])
    report = build_report(study)
    assert "tang_rq1" in report.sections, report.skipped
    groups = report.tables()["tang_rq1_groups"].set_index(["agent", "group"])
    assert groups.loc[("human", "f"), "mean"] == 70 and groups.loc[GF, "mean"] == 80
    # θ̂ = P(X > Y) + ½P(X = Y), people f (60, 80) against the model's f (70, 90): X > Y in 1 of 4 pairs
    assert groups.loc[GF, "theta"] == pytest.approx(0.25)
    assert groups.loc[GM, "vs_humans"] == pytest.approx(25 - 25)
    diffs = report.tables()["tang_rq1_group_differences"].set_index("agent")
    assert diffs.loc["human", "difference"] == pytest.approx(45) and diffs.loc[GPT, "difference"] == pytest.approx(55)
    assert diffs.loc[GPT, "gap"] == pytest.approx(10)
    assert "tang-rq1-groups-gender" in [name for name, _ in report.figures()]


def test_the_export_puts_persona_fields_in_the_questionnaire_columns(generic_study):
    layout = study_layout(generic_study)
    assert layout.columns[len(COLUMNS):len(COLUMNS) + 2] == ["gender", "age"]  # right after the fixed columns
    out = io.StringIO()
    export_study(generic_study, "csv", out)
    text = out.getvalue()
    csv = read_csv(io.StringIO(text), layout)
    buffer = io.BytesIO()
    export_study(generic_study, "parquet", buffer)
    buffer.seek(0)
    parquet = read_parquet(buffer)
    for df in (csv, parquet):
        models = df[df["respondent_type"] == "model"]
        gpt = models[models["agent"] == GPT].drop_duplicates("sample_index").sort_values("sample_index")
        assert gpt["gender"].tolist() == ["f", "f", "m", "m"] and gpt["age"].tolist() == [34, 60, 25, 45]
        assert str(df["age"].dtype) == "Int64"
        plain = models[models["agent"] == "plain (greedy)"]
        assert plain["gender"].isna().all() and plain["age"].isna().all()
        humans = df[df["respondent_type"] == "human"]
        assert humans.groupby("gender")["value"].mean().to_dict() == {"f": 5.0, "m": 2.5}
        assert df.groupby(["respondent_type", "gender"])["value"].mean()[("model", "f")] == 6
    header, first_model = text.splitlines()[0], next(l for l in text.splitlines()[1:] if ",model," in l)
    at = len(COLUMNS)
    assert header.split(",")[at:at + 2] == ["gender", "age"] and first_model.split(",")[at:at + 2] == ["f", "34"]


def test_the_belem_section_grouped_by_gender():
    definition = {"questionnaire": QUESTIONNAIRE, "report": {"sections": ["belem"], "group_by": ["gender"]}}
    study = make_study("belem", definition, instrument="speaker_belief", items=("likely", "unlikely"),
                       likely={"expression": "likely"}, unlikely={"expression": "unlikely"})
    study.attention_filter = False
    study.save()
    for pid, questionnaire, value in [("P1", {"gender": "f"}, 60), ("P2", {"gender": "f"}, 80),
                                      ("P3", {"gender": "m"}, 20), ("P4", {"gender": "m"}, 30)]:
        person(study, pid, questionnaire, value)
    persona_run(study, [({"gender": "f"}, 60), ({"gender": "f"}, 90), ({"gender": "m"}, 10), ({"gender": "m"}, 40)])
    report = build_report(study)
    assert "belem" in report.sections, report.skipped
    groups = report.tables()["belem_groups"].set_index(["agent", "group"])
    assert groups.loc[("human", "f"), "mean"] == 70 and groups.loc[GF, "mean"] == 75
    # people f answer 60 and 80, the model's f personas 60 and 90 (half each): PA = ½·½ ×100 = 25 on Belem's bins,
    # %PA = PA / max P = 25 / 0.5 = 50
    assert groups.loc[GF, "pa"] == pytest.approx(25) and groups.loc[GF, "percent_pa"] == pytest.approx(50)
    diffs = report.tables()["belem_group_differences"].set_index("agent")
    assert diffs.loc["human", "difference"] == pytest.approx(45) and diffs.loc[GPT, "gap"] == pytest.approx(5)
    assert "belem-groups-gender" in [name for name, _ in report.figures()]
    assert "belem_groups" in report.titles() and report.meta()["grouping"]["group_by"] == ["gender"]
