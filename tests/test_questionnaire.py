"""The participant questionnaire (surveys/questionnaire.py): the definition's fields, the form's validation, storing
the answers once, the before/after pages in the flow, the export's columns, the API and the report's frame."""
from __future__ import annotations

import io
import re

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.test import Client
from django.utils import translation
from pydantic import ValidationError

from analysis import exports
from analysis.dataset import human_answers
from analysis.exports import COLUMNS, export_study, read_csv, study_layout
from analysis.questionnaire_frame import questionnaire_frame
from surveys import flow, questionnaire
from surveys.definition.schema import RESERVED_FIELD_NAMES, Definition, QuestionnaireField
from surveys.flow import Step
from surveys.models import Participant, Study
from test_analysis_factories import add_participant, add_run
from test_flow import answer_all, link, url

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"

FIELDS = [
    {"name": "age", "label": "How old are you (in years)?", "type": "number", "min": 18, "max": 99, "integer": True},
    {"name": "gender", "label": "Your gender", "choices": [{"key": "f", "label": "Female"},
                                                           {"key": "m", "label": "Male"},
                                                           {"key": "x", "label": "Another, or I prefer not to say"}]},
    {"name": "first_language", "label": "Your first language", "type": "text", "required": False,
     "max_length": 30},
    {"name": "difficulty", "label": "How difficult were the questions (1 to 7)?", "type": "number", "min": 1,
     "max": 7, "when": "after"},
]
BEFORE = {"q-age": "34", "q-gender": "f", "q-first_language": "Mandarin"}


def with_questionnaire(study: Study, fields: list[dict] = FIELDS) -> Study:
    """The study's definition (its own, else its kind's shipped one) with ``fields`` as its questionnaire."""
    definition = dict(study.kind.wording(study))
    study.definition = definition | {"questionnaire": fields}
    study.save(update_fields=["definition"])
    return Study.objects.get(pk=study.pk)


@pytest.fixture
def study(imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.items_per_expression = 1
    imported_nv.controls_per_participant = 0
    imported_nv.save()
    return with_questionnaire(imported_nv)


def participant(pid: str = PID) -> Participant:
    return Participant.objects.get(prolific_pid=pid)


def post(client: Client, study: Study, step: str, data: dict):
    return client.post(url(study, step), data)


def enter_and_consent(client: Client, study: Study, pid: str = PID):
    assert client.get(link(study, pid)).status_code == 302
    return post(client, study, "consent", {"step": "consent", "choice": "agree"})


# --- the definition's fields --------------------------------------------------------------------------
def test_field_declarations_are_checked_with_their_key_path():
    good = Definition.model_validate({"study": {"slug": "s", "title": "S", "kind": "speaker_belief"},
                                      "questionnaire": FIELDS})
    assert [f.name for f in good.questionnaire] == ["age", "gender", "first_language", "difficulty"]
    assert good.questionnaire[1].type == "choice" and good.questionnaire[3].when == "after"
    bad = [({"name": "value", "label": "V", "type": "text"}, "taken by an export column"),
           ({"name": "age", "label": "A", "type": "number", "choices": ["a"]}, "choices are only for"),
           ({"name": "lang", "label": "L", "type": "text", "min": 1}, "min and max are only for"),
           ({"name": "g", "label": "G", "choices": ["a", "b", "a"]}, "choice keys repeat: a"),
           ({"name": "g", "label": "G", "choices": []}, "needs choices"),
           ({"name": "age", "label": "A", "type": "number", "min": 5, "max": 5}, "must be below max"),
           ({"name": "Age", "label": "A", "type": "text"}, "should match pattern"),
           ({"name": "age", "label": "A", "type": "number", "step": 1}, "Extra inputs are not permitted")]
    for field, message in bad:
        with pytest.raises(ValidationError) as raised:
            Definition.model_validate({"study": {"slug": "s", "title": "S", "kind": "speaker_belief"},
                                       "questionnaire": [FIELDS[0] | {"name": "ok"}, field]})
        assert message in str(raised.value) and "questionnaire.1" in str(raised.value), str(raised.value)
    plain = QuestionnaireField.model_validate({"name": "hand", "label": "Hand", "choices": ["left", "right"]})
    assert [(c.key, c.label) for c in plain.choices] == [("left", "left"), ("right", "right")]


def test_reserved_names_cover_the_export_and_analysis_columns():
    from analysis.dataset import HUMAN_COLUMNS, MODEL_COLUMNS

    assert set(COLUMNS) | set(HUMAN_COLUMNS) | set(MODEL_COLUMNS) <= RESERVED_FIELD_NAMES


def test_fields_of_a_study(study, nv_study):
    assert [f.name for f in questionnaire.study_fields(study)] == ["age", "gender", "first_language", "difficulty"]
    assert [f.name for f in questionnaire.study_fields(study, "after")] == ["difficulty"]
    nv_study.definition = {}
    assert questionnaire.study_fields(nv_study) == [] and not questionnaire.has_questionnaire(nv_study)


# --- the form ---------------------------------------------------------------------------------------
def form(study: Study, data: dict, when: str = "before") -> questionnaire.QuestionnaireForm:
    return questionnaire.questionnaire_form(study, when, data)


def test_valid_answers_are_typed(study):
    before = form(study, BEFORE)
    assert before.is_valid(), before.errors
    assert before.answers() == {"age": 34, "gender": "f", "first_language": "Mandarin"}
    assert isinstance(before.answers()["age"], int)
    optional_left_empty = form(study, BEFORE | {"q-first_language": "  "})
    assert optional_left_empty.is_valid() and optional_left_empty.answers()["first_language"] is None
    after = form(study, {"q-difficulty": "4.5"}, "after")
    assert after.is_valid() and after.answers() == {"difficulty": 4.5}
    assert form(study, {"q-difficulty": "4"}, "after").answers() == {"difficulty": 4}


@pytest.mark.parametrize("data, field, message", [
    ({"q-age": "17"}, "age", "Please enter a number from 18 to 99."),
    ({"q-age": "100"}, "age", "Please enter a number from 18 to 99."),
    ({"q-age": "34.5"}, "age", "Please enter a whole number (for example 42)."),
    ({"q-age": "thirty"}, "age", "Please enter a whole number (for example 42)."),
    ({"q-age": "inf"}, "age", "Please enter a whole number (for example 42)."),
    ({"q-age": ""}, "age", "Please answer this question."),
    ({"q-gender": ""}, "gender", "Please answer this question."),
    ({"q-gender": "z"}, "gender", "Please choose one of the options shown."),
    ({"q-first_language": "x" * 31}, "first_language", "Please keep your answer to at most 30 characters (it has 31)."),
])
def test_bad_answers_are_refused_with_a_clear_message(study, data, field, message):
    bad = form(study, BEFORE | data)
    assert not bad.is_valid()
    assert bad.errors == {field: [message]}


def test_number_bounds_alone(study):
    fields = [{"name": "n", "label": "N", "type": "number", "min": 0}, {"name": "m", "label": "M", "type": "number",
                                                                       "max": 10}]
    study = with_questionnaire(study, fields)
    bad = form(study, {"q-n": "-1", "q-m": "11"})
    assert not bad.is_valid()
    assert bad.errors == {"n": ["Please enter a number of at least 0."], "m": ["Please enter a number of at most 10."]}
    assert form(study, {"q-n": "1e3", "q-m": "-2.25"}).answers() == {"n": 1000, "m": -2.25}


# --- storing --------------------------------------------------------------------------------------------
def test_store_never_overwrites(study):
    someone = flow.enter(study, {"PROLIFIC_PID": PID})
    questionnaire.store(someone, {"age": 34, "gender": "f", "first_language": None})
    with pytest.raises(questionnaire.AlreadyAnswered, match="age"):
        questionnaire.store(someone, {"age": 50})
    someone.refresh_from_db()
    assert someone.questionnaire == {"age": 34, "gender": "f", "first_language": None}
    assert not questionnaire.pending(someone, "before") and questionnaire.pending(someone, "after")


def test_record_stores_only_at_its_step_and_only_once(study):
    someone = flow.enter(study, {"PROLIFIC_PID": PID})
    with pytest.raises(flow.OutOfStep):  # not consented yet: nothing stored
        flow.record_questionnaire(someone, "before", BEFORE)
    with pytest.raises(flow.OutOfStep):
        flow.record_questionnaire(someone, "after", {"q-difficulty": "3"})
    assert Participant.objects.get(pk=someone.pk).questionnaire == {}
    flow.record_consent(someone, True)
    refused = flow.record_questionnaire(someone, "before", BEFORE | {"q-age": "12"})
    assert not refused.is_valid() and Participant.objects.get(pk=someone.pk).questionnaire == {}
    assert flow.record_questionnaire(someone, "before", BEFORE).is_valid()
    assert someone.questionnaire == {"age": 34, "gender": "f", "first_language": "Mandarin"}
    with pytest.raises(flow.OutOfStep):  # a second POST (another tab, a double click) changes nothing
        flow.record_questionnaire(someone, "before", BEFORE | {"q-age": "60", "q-gender": "m"})
    assert Participant.objects.get(pk=someone.pk).questionnaire == {"age": 34, "gender": "f",
                                                                      "first_language": "Mandarin"}


# --- the flow ---------------------------------------------------------------------------------------
def test_before_page_comes_after_consent_and_after_page_after_the_last_item(client, study, settings):
    settings.PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
    consented = enter_and_consent(client, study)
    assert consented["Location"] == url(study, "questionnaire_before")
    someone = participant()
    assert flow.current_step(someone).step == Step.QUESTIONNAIRE_BEFORE
    for step in ("instructions", "pledge", "item", "done", "questionnaire_after"):  # no skipping ahead
        assert client.get(url(study, step))["Location"] == url(study, "questionnaire_before")

    shown = client.get(url(study, "questionnaire_before")).content.decode()
    assert "About you" in shown and "How old are you (in years)?" in shown and ">Continue<" in shown
    assert 'type="number"' in shown and 'min="18"' in shown and 'max="99"' in shown and 'step="1"' in shown
    assert shown.count('type="radio"') == 3 and "Another, or I prefer not to say" in shown
    assert 'maxlength="30"' in shown and "(optional)" in shown
    assert "How difficult" not in shown  # the after field is not on the before page

    refused = post(client, study, "questionnaire_before", BEFORE | {"q-age": "150", "q-gender": ""})
    assert refused.status_code == 200
    text = refused.content.decode()
    assert "Please enter a number from 18 to 99." in text and "Please answer this question." in text
    assert 'value="150"' in text and 'value="Mandarin"' in text  # nothing entered is lost
    assert 'aria-describedby="id_q-age-error"' in text and 'id="id_q-age-error"' in text
    assert participant().questionnaire == {} and not someone.assignments.exists()

    stored = post(client, study, "questionnaire_before", BEFORE | {"q-gender": "x"})
    assert stored["Location"] == url(study, "instructions")
    assert participant().questionnaire == {"age": 34, "gender": "x", "first_language": "Mandarin"}
    again = post(client, study, "questionnaire_before", BEFORE | {"q-age": "70"})
    assert again["Location"] == url(study, "instructions")  # the stale page: redirected, nothing changed
    assert participant().questionnaire["age"] == 34

    assert post(client, study, "instructions", {"step": "instructions"})["Location"] == url(study, "pledge")
    assert post(client, study, "pledge", {"step": "pledge", "pledge": "on"})["Location"] == url(study, "item")
    someone = participant()
    last = answer_all(client, study, someone)
    assert last["Location"] == url(study, "questionnaire_after")
    someone.refresh_from_db()
    assert someone.status == Participant.Status.STARTED and someone.completed_at is None
    assert client.get(url(study, "done"))["Location"] == url(study, "questionnaire_after")

    shown = client.get(url(study, "questionnaire_after")).content.decode()
    assert "How difficult" in shown and "How old" not in shown and ">Finish<" in shown
    assert post(client, study, "questionnaire_after", {"q-difficulty": "9"}).status_code == 200
    assert participant().status == Participant.Status.STARTED
    finished = post(client, study, "questionnaire_after", {"q-difficulty": "5"})
    assert finished["Location"] == url(study, "done")
    someone.refresh_from_db()
    assert someone.status == Participant.Status.COMPLETED and someone.completion_code
    assert someone.questionnaire == {"age": 34, "gender": "x", "first_language": "Mandarin", "difficulty": 5}
    done = client.get(url(study, "done")).content.decode()
    assert someone.completion_code in done and "app.prolific.com" in done  # and the redirect to Prolific
    assert post(client, study, "questionnaire_after", {"q-difficulty": "2"})["Location"] == url(study, "done")
    assert participant().questionnaire["difficulty"] == 5


def test_only_an_after_questionnaire(client, imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    study = with_questionnaire(imported_nv, [FIELDS[3]])
    assert enter_and_consent(client, study)["Location"] == url(study, "instructions")
    someone = participant()
    flow.record_instructions(someone)
    flow.record_pledge(someone)
    slots = list(someone.assignments.order_by("position"))
    for slot in slots[:-1]:
        assert flow.submit_answer(someone, slot.position, slot.item_id, "50").outcome == flow.Outcome.SAVED
    last = flow.submit_answer(someone, slots[-1].position, slots[-1].item_id, "50")
    assert last.outcome == flow.Outcome.SAVED and last.step == Step.QUESTIONNAIRE_AFTER
    assert someone.status == Participant.Status.STARTED
    assert flow.current_step(someone).step == Step.QUESTIONNAIRE_AFTER
    flow.record_questionnaire(someone, "after", {"q-difficulty": "2"})
    assert someone.status == Participant.Status.COMPLETED and someone.questionnaire == {"difficulty": 2}


def test_optional_fields_left_empty_still_answer_the_page(client, study):
    study = with_questionnaire(study, [FIELDS[2]])
    enter_and_consent(client, study)
    assert post(client, study, "questionnaire_before", {})["Location"] == url(study, "instructions")
    assert participant().questionnaire == {"first_language": None}


def test_a_study_without_questionnaire_has_no_new_step(client, imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.items_per_expression = 1
    imported_nv.controls_per_participant = 0
    imported_nv.save()
    assert questionnaire.study_fields(imported_nv) == []
    assert enter_and_consent(client, imported_nv)["Location"] == url(imported_nv, "instructions")
    assert client.get(url(imported_nv, "questionnaire_before"))["Location"] == url(imported_nv, "instructions")
    post(client, imported_nv, "instructions", {"step": "instructions"})
    post(client, imported_nv, "pledge", {"step": "pledge", "pledge": "on"})
    someone = participant()
    assert answer_all(client, imported_nv, someone)["Location"] == url(imported_nv, "done")
    someone.refresh_from_db()
    assert someone.status == Participant.Status.COMPLETED and someone.questionnaire == {}


def test_a_test_participant_and_a_withdrawal(client, study):
    from surveys.test_mode import pilot_token
    from surveys.withdrawal import withdraw

    assert client.get(link(study, "pilot1", test=pilot_token(study))).status_code == 302
    post(client, study, "consent", {"step": "consent", "choice": "agree"})
    page = client.get(url(study, "questionnaire_before")).content.decode()
    assert 'id="test-banner"' in page
    post(client, study, "questionnaire_before", BEFORE)
    pilot = participant("pilot1")
    assert pilot.is_test and pilot.questionnaire["age"] == 34
    assert questionnaire_frame(study, completed_only=False).empty  # test participants stay out of the report
    assert len(questionnaire_frame(study, completed_only=False, include_test=True)) == 1
    withdraw(study, "pilot1", by="test")  # the answers go with the participant's row
    assert not Participant.objects.filter(prolific_pid="pilot1").exists()


def test_chinese_questionnaire_page(client, study):
    study.language = "zh-hans"
    study.save(update_fields=["language"])
    enter_and_consent(client, study)
    shown = client.get(url(study, "questionnaire_before")).content.decode()
    assert "How old are you (in years)?" in shown  # the researcher's label, as written
    assert "关于您" in shown and ">继续<" in shown and ">Continue<" not in shown and "About you" not in shown
    refused = post(client, study, "questionnaire_before", BEFORE | {"q-age": "5"}).content.decode()
    assert "请输入一个18到99之间的数字。" in refused
    with translation.override("zh-hans"):
        assert str(questionnaire.REQUIRED) == "请回答这个问题。"


# --- the export, the API and the report's frame ----------------------------------------------------------
def finished(study: Study, pid: str, before: dict, after: dict, *, status: str = Participant.Status.COMPLETED):
    items = list(study.main_items().order_by("id")[:2])
    someone = add_participant(study, pid, [(items[0], 40), (items[1], 60)], status=status)
    someone.questionnaire = before | after
    someone.save(update_fields=["questionnaire"])
    return someone


@pytest.fixture
def answered(study, settings):
    settings.EXPORT_ID_SALT = "salt"
    finished(study, "p-one", {"age": 34, "gender": "f", "first_language": "=HYPERLINK(1)"}, {"difficulty": 2.5})
    finished(study, "p-two", {"age": 61, "gender": "m", "first_language": None}, {"difficulty": 6})
    finished(study, "p-gone", {"age": 20, "gender": "x", "first_language": "Thai"}, {},
             status=Participant.Status.RETURNED)
    add_run(study, "stub-model", [(study.main_items().order_by("id").first(), 55.0)])
    return study


def test_export_has_a_typed_column_per_field(answered, tmp_path):
    fields = ["age", "gender", "first_language", "difficulty"]
    assert study_layout(answered).columns[:len(COLUMNS) + 4] == COLUMNS + fields  # then the question, item fields
    export_study(answered, "csv", tmp_path / "a.csv")
    export_study(answered, "parquet", tmp_path / "a.parquet")
    schema = pq.read_schema(tmp_path / "a.parquet")
    assert schema.names[len(COLUMNS):len(COLUMNS) + 4] == fields
    assert [str(schema.field(n).type) for n in fields] == ["int64", "string", "string", "double"]
    df = pd.read_parquet(tmp_path / "a.parquet")
    assert str(df["age"].dtype) == "Int64" and str(df["difficulty"].dtype) == "float64"
    by = {who: rows for who, rows in df.groupby("respondent_id", dropna=False)}
    one = by[exports.hashed_id("p-one", "salt")]
    assert len(one) == 2 and set(one["age"]) == {34} and set(one["gender"]) == {"f"}
    assert set(one["difficulty"]) == {2.5} and set(one["first_language"]) == {"=HYPERLINK(1)"}
    two = by[exports.hashed_id("p-two", "salt")]
    assert set(two["difficulty"]) == {6.0} and two["first_language"].isna().all()
    gone = by[exports.hashed_id("p-gone", "salt")]
    assert set(gone["gender"]) == {"x"} and gone["difficulty"].isna().all()
    model = df[df["respondent_type"] == "model"]
    assert len(model) == 1 and model[["age", "gender", "first_language", "difficulty"]].isna().all().all()
    raw = (tmp_path / "a.csv").read_text()
    assert (",channel,text,option_order,study_version,excluded_by,age,gender,first_language,difficulty,"
            in raw.splitlines()[0])
    assert "'=HYPERLINK(1)" in raw  # escaped for spreadsheets like every text column
    pd.testing.assert_frame_equal(read_csv(tmp_path / "a.csv", study_layout(answered)), df, check_exact=True)
    assert read_csv(tmp_path / "a.csv")["first_language"].dropna().iloc[0] == "=HYPERLINK(1)"


def test_export_without_questionnaire_keeps_its_columns(imported_nv, tmp_path):
    add_participant(imported_nv, "p-one", [(imported_nv.main_items().first(), 40)])
    layout = study_layout(imported_nv)
    assert not [c for c in layout.entries if c.source == "questionnaire"]
    buffer = io.StringIO()
    export_study(imported_nv, "csv", buffer)
    header = buffer.getvalue().splitlines()[0].split(",")
    assert header[:len(COLUMNS)] == COLUMNS and header[len(COLUMNS)] == "question"  # the fixed ones, then new ones


def test_api_lists_questionnaire_answers(answered, admin_client):
    participants = admin_client.get("/api/participants/?study=nv").json()
    rows = participants["results"] if isinstance(participants, dict) else participants
    by_pid = {row["prolific_pid"]: row for row in rows}
    assert by_pid["p-one"]["questionnaire"] == {"age": 34, "gender": "f", "first_language": "=HYPERLINK(1)",
                                                "difficulty": 2.5}
    responses = admin_client.get("/api/responses/?study=nv").json()
    rows = responses["results"] if isinstance(responses, dict) else responses
    assert {row["questionnaire"]["age"] for row in rows} == {34, 61, 20}


def test_questionnaire_frame_groups_the_report_answers(answered):
    frame = questionnaire_frame(answered)
    assert list(frame.columns) == ["respondent_id", "age", "gender", "first_language", "difficulty"]
    assert frame.index.name == "respondent" and len(frame) == 2  # completed participants only, like the report
    assert str(frame["age"].dtype) == "Int64" and str(frame["difficulty"].dtype) == "float64"
    assert list(frame["gender"].cat.categories) == ["f", "m", "x"]
    assert frame.loc[f"p{participant('p-one').pk}", "respondent_id"] == exports.hashed_id("p-one", "salt")
    answers = human_answers(answered).join(frame, on="respondent")
    means = answers.groupby("gender", observed=True)["value"].mean()
    assert means.to_dict() == {"f": 50.0, "m": 50.0} and answers["age"].notna().all()
    everyone = questionnaire_frame(answered, completed_only=False)
    assert len(everyone) == 3 and everyone["difficulty"].isna().sum() == 1


def test_questionnaire_frame_types_what_no_longer_fits(answered):
    someone = participant("p-two")
    someone.questionnaire = {"age": "sixty", "gender": "gone-key", "difficulty": True}
    someone.save(update_fields=["questionnaire"])
    row = questionnaire_frame(answered).loc[f"p{someone.pk}"]
    assert pd.isna(row["age"]) and pd.isna(row["gender"]) and pd.isna(row["difficulty"])


# --- from a definition file ----------------------------------------------------------------------------
QUESTIONNAIRE_TOML = """
[study]
slug = "tang-about-you"
title = "Tang RQ1 with a questionnaire"
kind = "wep_probability"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC"]

[[questionnaire]]
name = "age"
label = "How old are you?"
type = "number"
min = 18
max = 99
integer = true

[[questionnaire]]
name = "first_language"
label = "Your first language"
choices = ["English", "Mandarin", "Other"]

[[questionnaire]]
name = "comments"
label = "Anything you want to tell us?"
type = "text"
required = false
when = "after"
"""


def test_a_definition_file_declares_the_questionnaire(tmp_path, db):
    from surveys.definition.loader import load_file
    from surveys.definition.errors import DefinitionError

    path = tmp_path / "study.toml"
    path.write_text(QUESTIONNAIRE_TOML, encoding="utf-8")
    load_file(path)
    study = Study.objects.get(slug="tang-about-you")
    fields = questionnaire.study_fields(study)
    assert [(f.name, f.type, f.when) for f in fields] == [("age", "number", "before"),
                                                          ("first_language", "choice", "before"),
                                                          ("comments", "text", "after")]
    assert [c.key for c in fields[1].choices] == ["English", "Mandarin", "Other"] and fields[0].integer
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "study.toml").write_text(QUESTIONNAIRE_TOML.replace('slug = "tang-about-you"', 'slug = "bad"')
                                    .replace('name = "comments"', 'name = "status"'), encoding="utf-8")
    with pytest.raises(DefinitionError) as refused:
        load_file(bad / "study.toml")
    assert "questionnaire" in str(refused.value.problems[0]) and "export column" in str(refused.value.problems[0])
    assert not Study.objects.filter(slug="bad").exists()


# --- the researcher preview -------------------------------------------------------------------------------
def test_preview_shows_the_questionnaire_pages_and_stores_nothing(study, django_user_model):
    from django.contrib.auth.models import Permission

    researcher = django_user_model.objects.create_user("researcher", password="pw", is_staff=True)
    researcher.user_permissions.add(*Permission.objects.filter(codename__in=["view_study", "view_item"]))
    study.owner = researcher
    study.save(update_fields=["owner"])
    client = Client()
    client.force_login(researcher)
    preview = url(study, "preview")
    client.get(preview + "?restart=1")
    client.post(preview, {"step": "consent", "choice": "agree"})
    shown = client.get(preview).content.decode()
    assert "About you" in shown and "How old are you (in years)?" in shown
    refused = client.post(preview, {"step": "questionnaire_before"} | BEFORE | {"q-age": "5"}).content.decode()
    assert "Please enter a number from 18 to 99." in refused and 'value="Mandarin"' in refused
    client.post(preview, {"step": "questionnaire_before"} | BEFORE)
    assert "I have read the instructions" in client.get(preview).content.decode()
    client.post(preview, {"step": "instructions"})
    client.post(preview, {"step": "pledge", "pledge": "on"})
    while "Question " in (text := client.get(preview).content.decode()):
        position = int(re.search(r'name="position" value="(\d+)"', text).group(1))
        item_id = int(re.search(r'name="item" value="(\d+)"', text).group(1))
        client.post(preview, {"step": "item", "position": position, "item": item_id, "value": "50"})
    assert "How difficult" in text and ">Finish<" in text
    client.post(preview, {"step": "questionnaire_after", "q-difficulty": "3"})
    summary = client.get(preview).content.decode()
    assert "Preview summary" in summary and "Your questionnaire answers" in summary
    assert re.search(r"How old are you \(in years\)\?</td><td>34<", summary)
    assert re.search(r"Your first language</td><td>Mandarin<", summary) and ">3<" in summary
    assert not Participant.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_simultaneous_submissions_of_the_page_store_one(imported_nv):
    """Four POSTs of the "before" page at once (double clicks, two tabs): one is stored, the others are refused
    as out of step and change nothing."""
    import threading

    from django.db import connection

    if connection.vendor == "sqlite":
        pytest.skip("SQLite's in-memory test database reports 'table is locked' instead of waiting; "
                    "run with DATABASE_URL=postgres://... (CI does)")
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    study = with_questionnaire(imported_nv)
    someone = flow.enter(study, {"PROLIFIC_PID": PID})
    flow.record_consent(someone, True)
    results: list[str] = []
    barrier = threading.Barrier(4)

    def submit(age: int) -> None:
        try:
            barrier.wait()
            row = Participant.objects.select_related("study").get(pk=someone.pk)
            try:
                flow.record_questionnaire(row, "before", BEFORE | {"q-age": str(age)})
                results.append(f"stored {age}")
            except flow.OutOfStep:
                results.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(age,)) for age in (30, 40, 50, 60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = [r for r in results if r.startswith("stored")]
    assert len(stored) == 1 and results.count("refused") == 3
    assert participant().questionnaire["age"] == int(stored[0].split()[1])
