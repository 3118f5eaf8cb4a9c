"""A researcher's own study (the ``generic`` kind): a labelled scale of any size (buttons or a slider), a choice
among their own options shown in an order drawn per participant, and free text — validated, stored, exported
and read from a model's answer. Runs on SQLite and, with DATABASE_URL, on PostgreSQL."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from analysis.exports import COLUMNS, export_rows
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import create_run, run_sync, start_run
from generic_studies import CHOICE, FREE_TEXT, SCALE_1_7, generic_study
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys import flow
from surveys.assignment import assign
from surveys.instruments import Answer, AnswerError, get_instrument
from surveys.models import Item, Participant, Response, Study
from surveys.raw_export import COLUMNS as RAW_COLUMNS
from surveys.raw_export import raw_rows

pytestmark = pytest.mark.django_db


def answering(study: Study, pid: str = "PID1") -> tuple[Participant, list]:
    """A participant at the question step, with their slots drawn."""
    now = timezone.now()
    participant = Participant.objects.create(study=study, prolific_pid=pid, consented_at=now,
                                             instructions_read_at=now, pledged_at=now)
    return participant, assign(participant, random.Random(1))


def submit(participant: Participant, slot, data) -> flow.Submission:
    return flow.submit_answer(participant, slot.position, slot.item_id, data)


# --- configuration -------------------------------------------------------------------------------------
def test_a_generic_study_has_its_own_configured_instrument():
    scale = generic_study("scale", SCALE_1_7)
    choice = generic_study("choice", CHOICE)
    assert scale.kind is scale.kind  # built once per Study instance
    assert scale.kind is not get_instrument("generic") and scale.kind is not choice.kind
    assert (scale.kind.shape.name, choice.kind.shape.name) == ("scale", "choice")
    assert scale.kind.answer_options() == [1, 2, 3, 4, 5, 6, 7]
    item = scale.items.first()
    assert item.kind is item.study.kind
    # a named kind is the same object for every study
    other = Study(slug="nv", title="nv", instrument="speaker_belief")
    assert other.kind is get_instrument("speaker_belief")


def test_the_page_and_prompt_come_from_the_definition_templates():
    study = generic_study("scale", SCALE_1_7)
    item = study.items.get(key="s2")
    kind = study.kind
    assert kind.sentence(item) == "Statement number 2 is true."
    assert kind.question(item) == "How much do you agree?"
    assert kind.hints(item) == ["Topic: topic 2"]  # an extra field of the item
    prompt = kind.build_prompt(item, [], few_shot=False)
    assert prompt.text == ("Statement number 2 is true.\nHow much do you agree?\nTopic: topic 2\n"
                           "Answer with a single number from 1 to 7, where 1 means \u201cNot at all\u201d, "
                           "4 means \u201cNeither\u201d and 7 means \u201cCompletely\u201d.\nAnswer:")
    assert prompt.messages == [{"role": "user", "content": prompt.text}]


def test_a_prompt_template_of_the_definition_replaces_the_default():
    study = generic_study("own", SCALE_1_7, prompt={"system": "You rate statements.",
                                                    "block": "{{ statement }} ({{ topic }}) {{ instruction }}"})
    prompt = study.kind.build_prompt(study.items.get(key="s1"), [], few_shot=False)
    assert prompt.messages[0] == {"role": "system", "content": "You rate statements."}
    assert prompt.messages[1]["content"].startswith("Statement number 1 is true. (topic 1) Answer with a single "
                                                    "number from 1 to 7")


def test_choice_and_free_text_prompts_ask_for_their_answer():
    choice = generic_study("choice", {**CHOICE, "randomise": False})
    text = generic_study("text", FREE_TEXT)
    assert choice.kind.build_prompt(choice.items.first(), [], few_shot=False).text.endswith(
        "Options:\nagree. I agree\nunsure. I am not sure\ndisagree. I disagree\nna. Does not apply\n"
        "Answer with the key of one option.\nAnswer:")
    assert text.kind.build_prompt(text.items.first(), [], few_shot=False).text.endswith(
        "Why?\nTopic: topic 1\nAnswer in your own words.\nAnswer:")


# --- scale -----------------------------------------------------------------------------------------------
def test_a_labelled_scale_takes_only_its_own_values():
    study = generic_study("scale", SCALE_1_7)
    kind, item = study.kind, study.items.first()
    assert kind.validate_answer(item, {"value": "6"}) == Answer(value=6)
    for bad in ("0", "8", "6.0", " 6", "six"):
        with pytest.raises(AnswerError):
            kind.validate_answer(item, {"value": bad})
    half = generic_study("half", {"shape": "scale", "min": 0, "max": 2, "step": 0.5}).kind
    assert half.answer_options() == [0, 0.5, 1, 1.5, 2]
    assert half.validate_answer(item, {"value": "1.5"}) == Answer(value=1.5)
    options = kind.page_context(item)["options"]
    assert options[0] == {"value": "1", "label": "Not at all"} and options[1] == {"value": "2", "label": ""}
    assert options[3]["label"] == "Neither"


def test_a_scale_answer_is_stored_and_exported():
    study = generic_study("scale", SCALE_1_7)
    participant, slots = answering(study)
    assert submit(participant, slots[0], {"value": "9"}).outcome == flow.Outcome.INVALID
    assert submit(participant, slots[0], {"value": "5"}).outcome == flow.Outcome.SAVED
    response = Response.objects.get()
    assert (response.value, response.choice, response.text) == (5, "", "")
    rows = [dict(zip(COLUMNS, row)) for row in export_rows(study)]
    assert (rows[0]["value"], rows[0]["bin"], rows[0]["kind"]) == (5, 5, "generic")


def test_a_model_scale_answer_is_the_first_number_on_the_scale():
    kind = generic_study("scale", SCALE_1_7).kind
    assert kind.parse_model_answer("I would say 6 out of 7.").answer == Answer(value=6)
    assert kind.parse_model_answer("2").answer == Answer(value=2)
    assert not kind.parse_model_answer("12").ok
    assert not kind.parse_model_answer("somewhat").ok
    assert kind.score(5.4) == 5 and kind.score(6.6) == 7


def test_an_untouched_slider_is_no_answer():
    study = generic_study("slider", {**SCALE_1_7, "widget": "slider"})
    participant, slots = answering(study)
    client = Client()
    session = client.session
    session[f"hedgelab.participant.{study.pk}"] = participant.pk
    session.save()
    page = client.get(f"/s/{study.slug}/question/")
    html = page.content.decode()
    assert page.status_code == 200, html[:500]
    assert 'type="range"' in html and 'data-untouched' in html
    assert 'name="value" value="" data-slider-value' in html  # the posted field is empty until moved
    assert 'min="1" max="7" step="1" value="4"' in html and "Not at all" in html and "Completely" in html
    # what an untouched slider posts: the empty field, refused; nothing saved
    result = submit(participant, slots[0], {"value": ""})
    assert result.outcome == flow.Outcome.INVALID and Response.objects.count() == 0
    assert submit(participant, slots[0], {"value": "4"}).outcome == flow.Outcome.SAVED


# --- choice ----------------------------------------------------------------------------------------------
def test_a_randomised_choice_order_is_drawn_per_participant_stored_and_stable():
    study = generic_study("choice", CHOICE)
    keys = ["agree", "unsure", "disagree", "na"]
    orders = []
    for n in range(8):
        participant, slots = answering(study, f"PID{n}")
        for slot in slots:
            assert sorted(slot.option_order) == sorted(keys)
            stored = type(slot).objects.get(pk=slot.pk).option_order
            assert stored == slot.option_order
        orders.append(tuple(slots[0].option_order))
    assert len(set(orders)) > 1  # not the same order for everyone
    # reproducible: the same seed draws the same order
    shape = study.kind.shape
    assert shape.draw_order(keys, "x") == shape.draw_order(keys, "x")
    assert generic_study("plain", {**CHOICE, "randomise": False}).kind.option_order(study.items.first(), "x") == []


def test_the_page_shows_the_slots_order_on_every_reload():
    study = generic_study("choice", CHOICE)
    participant, slots = answering(study)
    client = Client()
    session = client.session
    session[f"hedgelab.participant.{study.pk}"] = participant.pk
    session.save()
    labels = {"agree": "I agree", "unsure": "I am not sure", "disagree": "I disagree", "na": "Does not apply"}
    for _ in range(2):
        html = client.get(f"/s/{study.slug}/question/").content.decode()
        shown = sorted(labels, key=lambda key: html.index(f'value="{key}"'))
        assert shown == slots[0].option_order
        assert html.index(labels[shown[0]]) < html.index(labels[shown[-1]])


def test_a_choice_is_stored_and_exported_with_its_order():
    study = generic_study("choice", CHOICE)
    participant, slots = answering(study)
    assert submit(participant, slots[0], {"choice": "maybe"}).outcome == flow.Outcome.INVALID
    assert submit(participant, slots[0], {"choice": "unsure"}).outcome == flow.Outcome.SAVED
    assert Response.objects.get().choice == "unsure"
    row = dict(zip(COLUMNS, next(export_rows(study))))
    assert row["choice"] == "unsure" and row["option_order"] == "|".join(slots[0].option_order)
    raw = next(raw_rows(study))
    assert raw[RAW_COLUMNS.index("option_order")] == "|".join(slots[0].option_order)


def test_a_model_choice_is_read_by_key_or_label():
    study = generic_study("choice", CHOICE)
    kind, item = study.kind, study.items.first()
    assert kind.parse_model_answer("disagree", item).answer == Answer(choice="disagree")
    assert kind.parse_model_answer("Unsure.", item).answer == Answer(choice="unsure")
    assert kind.parse_model_answer("My answer: I am not sure", item).answer == Answer(choice="unsure")
    assert kind.parse_model_answer("Does not apply", item).answer == Answer(choice="na")
    assert not kind.parse_model_answer("agree or disagree", item).ok
    assert not kind.parse_model_answer("no idea", item).ok


# --- free text -------------------------------------------------------------------------------------------
def test_free_text_is_kept_exactly_and_exported():
    study = generic_study("text", FREE_TEXT)
    participant, slots = answering(study)
    written = "  Because it is ‘obvious’,\r\nI think.\n\n— twice  "
    for bad in ("   \n ", "x" * 201, "nul\x00here"):
        assert submit(participant, slots[0], {"text": bad}).outcome == flow.Outcome.INVALID
    assert submit(participant, slots[0], {"text": written}).outcome == flow.Outcome.SAVED
    response = Response.objects.get()
    assert response.text == written and response.value is None and response.choice == ""
    assert response.answer == Answer(free_text=written)
    row = dict(zip(COLUMNS, next(export_rows(study))))
    assert row["text"] == written and row["value"] is None and row["bin"] is None
    raw = next(raw_rows(study))
    assert raw[RAW_COLUMNS.index("text")] == written


def test_free_text_length_counts_a_line_break_once():
    """A browser's maxlength counts a line break as one character but posts it as CR LF."""
    study = generic_study("text", {"shape": "free_text", "max_length": 5})
    kind, item = study.kind, study.items.first()
    assert kind.validate_answer(item, {"text": "ab\r\ncd"}) == Answer(free_text="ab\r\ncd")
    with pytest.raises(AnswerError):
        kind.validate_answer(item, {"text": "abcdef"})


def test_a_model_free_text_answer_is_its_raw_text():
    study = generic_study("text", FREE_TEXT)
    kind = study.kind
    assert kind.parse_model_answer("  Because of the wording.\n") .answer == Answer(free_text="Because of the wording.")
    assert not kind.parse_model_answer(" \n").ok
    assert kind.shape.categories(kind, study.items.first()) == [] and kind.shape.mean_text([]) is None


def test_models_answer_a_scale_and_free_text_against_the_stub(stub):
    replies = {"scale": "6 — mostly true", "text": "  Because\nit says so. "}
    endpoint = make_endpoint(stub)
    for slug, answer in (("scale", SCALE_1_7), ("text", FREE_TEXT)):
        study = generic_study(slug, answer, items=2)
        stub.responder = lambda request, reply=replies[slug]: Reply.answer(reply)
        run = create_run(study, endpoint, items=list(study.main_items()))
        start_run(run, queue=False)
        run = run_sync(run)
        assert run.status == ElicitationRun.Status.COMPLETED
        rows = list(ModelResponse.objects.filter(run=run))
        assert len(rows) == 2 and all(r.status == ModelResponse.Status.OK for r in rows)
        exported = [dict(zip(COLUMNS, row)) for row in export_rows(study)]
        if slug == "scale":
            assert {(r.value, r.bin, r.text) for r in rows} == {(6, 6, "")}
        else:
            assert {(r.value, r.text, r.raw_output) for r in rows} == {(None, "Because\nit says so.", replies["text"])}
            assert {e["text"] for e in exported} == {"Because\nit says so."}


def test_a_model_free_text_with_nul_is_stored_escaped(stub):
    """As every model text (elicitation.nul_text): PostgreSQL stores no NUL, so it is written as ``\\u0000``."""
    study = generic_study("text", FREE_TEXT, items=1)
    stub.responder = lambda request: Reply.answer("Because\x00so.")
    run = create_run(study, make_endpoint(stub), items=list(study.main_items()))
    start_run(run, queue=False)
    assert run_sync(run).status == ElicitationRun.Status.COMPLETED
    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.text) == (ModelResponse.Status.OK, "Because\\u0000so.")
    assert "text" in row.detail["escaped_nul"]


def test_the_api_gives_the_text_and_the_order_shown(admin_client):
    study = generic_study("text", FREE_TEXT, items=1)
    participant, slots = answering(study)
    assert submit(participant, slots[0], {"text": "Line one\nline two"}).outcome == flow.Outcome.SAVED
    choice = generic_study("choice", CHOICE, items=1)
    other, other_slots = answering(choice, "PID2")
    assert submit(other, other_slots[0], {"choice": "na"}).outcome == flow.Outcome.SAVED
    rows = {r["item_key"] + r["text"]: r for r in admin_client.get("/api/responses/").json()["results"]}
    assert rows["s1Line one\nline two"]["option_order"] == []
    assert rows["s1"]["choice"] == "na" and rows["s1"]["option_order"] == other_slots[0].option_order


# --- the database ---------------------------------------------------------------------------------------
def test_a_free_text_is_a_given_answer_and_cannot_be_changed():
    """surveys migration 0016: a response holding only text is an answer; the triggers guard text too."""
    study = generic_study("text", FREE_TEXT)
    participant, slots = answering(study)
    with pytest.raises(IntegrityError, match="response_has_an_answer"), transaction.atomic():
        Response.objects.create(assignment=slots[0], participant=participant, item=slots[0].item, text="")
    saved = Response.objects.create(assignment=slots[0], participant=participant, item=slots[0].item, text="Mine.")
    with pytest.raises(IntegrityError, match="cannot be changed"), transaction.atomic():
        Response.objects.filter(pk=saved.pk).update(text="Changed.")
    assert Response.objects.get(pk=saved.pk).text == "Mine."


def test_a_model_free_text_once_given_cannot_be_changed(stub):
    """elicitation migration 0013: the answered-row trigger guards ``text``."""
    study = generic_study("text", FREE_TEXT, items=1)
    run = create_run(study, make_endpoint(stub), items=list(study.main_items()))
    pending = ModelResponse.objects.create(run=run, item=study.items.get(), sample_index=0)
    row = ModelResponse.objects.filter(pk=pending.pk)
    assert row.update(status="ok", text="An answer.", raw_output="An answer.") == 1
    with pytest.raises(IntegrityError, match="answered model response cannot be changed"), transaction.atomic():
        row.update(text="Another.")
    assert row.get().text == "An answer."


def test_a_free_text_run_is_greedy_or_sampled(stub):
    """A free-text answer is the whole reply: the modes that read a number's probabilities do not apply."""
    from django.core.exceptions import ValidationError

    study = generic_study("text", FREE_TEXT, items=1)
    endpoint = make_endpoint(stub)
    with pytest.raises(ValidationError, match="whole reply"):
        create_run(study, endpoint, mode="top_logprobs", items=list(study.main_items()))
    assert create_run(study, endpoint, mode="sampled", samples=2, temperature=0.7,
                      items=list(study.main_items())).pk


# --- instructions and preview ------------------------------------------------------------------------
def participant_client(study: Study, participant: Participant) -> Client:
    client = Client()
    session = client.session
    session[f"hedgelab.participant.{study.pk}"] = participant.pk
    session.save()
    return client


@pytest.mark.parametrize("widget", ["buttons", "slider"])
def test_a_demonstration_shows_its_answer_on_the_scale(widget):
    study = generic_study(f"demo-{widget}", {**SCALE_1_7, "widget": widget})
    Item.objects.create(study=study, key="demo-1", statement="The sky is green.", extra={"topic": "sky"},
                        is_demonstration=True, demo_order=1, demo_answer=2)
    now = timezone.now()
    participant = Participant.objects.create(study=study, prolific_pid="PIDD", consented_at=now)
    html = participant_client(study, participant).get(f"/s/{study.slug}/instructions/").content.decode()
    assert "The sky is green." in html
    if widget == "buttons":
        assert re.search(r'id="demo1-2" value="2"[^>]* checked', html)
    else:
        assert 'name="demo1" value="2" data-slider-value' in html and 'value="2" aria-labelledby' in html
        assert "data-untouched" not in html  # a demonstration's slider is shown, not asked


def test_a_preview_shows_a_randomised_choice_and_saves_nothing():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    study = generic_study("prev", CHOICE, items=2, live=False)
    user = get_user_model().objects.create_user("researcher", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_study", "view_item"]))
    study.owner = user
    study.save(update_fields=["owner"])
    client = Client()
    client.force_login(user)
    preview = f"/s/{study.slug}/preview/"
    client.post(preview, {"step": "consent", "choice": "agree"})
    client.post(preview, {"step": "instructions"})
    client.post(preview, {"step": "pledge", "pledge": "on"})
    for position in (1, 2):
        html = client.get(preview).content.decode()
        assert f"Question {position} of 2" in html and "I am not sure" in html
        item_id = int(re.search(r'name="item" value="(\d+)"', html).group(1))
        client.post(preview, {"step": "item", "position": position, "item": item_id, "choice": "agree"})
    assert "Preview summary" in client.get(preview).content.decode()
    assert (Participant.objects.count(), Response.objects.count()) == (0, 0)


# --- from a definition file ------------------------------------------------------------------------------
LIKERT_FILE = """
[study]
slug = "likert-file"
title = "Agreement, 1 to 7"
kind = "generic"

[answer]
shape = "scale"
min = 1
max = 7
labels = { "1" = "Strongly disagree", "4" = "Neither", "7" = "Strongly agree" }
widget = "slider"

[page]
sentence = "{{ statement }}"
question = "How much do you agree ({{ condition }})?"

[prompt]
system = "You rate statements."
block = \"\"\"{{ sentence }}
{{ instruction }}
Answer:{% if with_answer %} {{ answer }}{% endif %}\"\"\"

[[demonstrations]]
statement = "Water is wet."
condition = "plain"
answer = 7

[design]
items = "items.csv"

[participants]
items_per_participant = 2
"""


def test_a_generic_definition_file_loads_and_words_its_page_and_prompt(tmp_path):
    from surveys.definition.loader import load_file

    (tmp_path / "study.toml").write_text(LIKERT_FILE, encoding="utf-8")
    (tmp_path / "items.csv").write_text("key,statement,condition\na,Cats purr.,plain\nb,Dogs bark.,hedged\n",
                                        encoding="utf-8")
    study = load_file(tmp_path / "study.toml").study
    study = Study.objects.get(pk=study.pk)
    kind, item = study.kind, study.items.get(key="b")
    assert kind.shape.widget == "surveys/answers/slider.html" and kind.answer_options() == [1, 2, 3, 4, 5, 6, 7]
    assert kind.page_context(item)["question"] == "How much do you agree (hedged)?"
    prompt = kind.build_prompt(item, study.demonstrations())
    instruction = ("Answer with a single number from 1 to 7, where 1 means \u201cStrongly disagree\u201d, 4 means "
                   "\u201cNeither\u201d and 7 means \u201cStrongly agree\u201d.")
    assert prompt.messages == [
        {"role": "system", "content": "You rate statements."},
        {"role": "user", "content": f"Water is wet.\n{instruction}\nAnswer:"},
        {"role": "assistant", "content": "7"},
        {"role": "user", "content": f"Dogs bark.\n{instruction}\nAnswer:"},
    ]
    participant, slots = answering(study)
    assert submit(participant, slots[0], {"value": ""}).outcome == flow.Outcome.INVALID
    assert submit(participant, slots[0], {"value": "7"}).outcome == flow.Outcome.SAVED


@pytest.mark.parametrize("example", sorted(p.parent.name for p in (Path(__file__).resolve().parents[1] / "studies" / "examples").glob("*/study.toml")))
def test_every_example_definition_words_its_pages_and_prompts(example):
    """The shipped examples (studies/examples/) load, and every item's page and prompt render with its shape."""
    from surveys.definition.loader import load_file

    path = Path(__file__).resolve().parents[1] / "studies" / "examples" / example / "study.toml"
    from surveys.questions import question_kind, questions_of, several

    study = Study.objects.get(pk=load_file(path).study.pk)
    kind = study.kind
    # a study with [[questions]] words each question with its own kind (surveys/questions.py)
    kinds = [question_kind(study, q) for q in questions_of(study)] if several(study) else [kind]
    for item in study.main_items():
        for each in kinds:
            page = each.page_context(item)
            assert page["question"] and page["widget"].startswith("surveys/answers/")
        prompt = kind.build_prompt(item, study.demonstrations())
        assert prompt.messages[-1]["role"] == "user" and prompt.text
    participant, slots = answering(study)
    html = participant_client(study, participant).get(f"/s/{study.slug}/question/")
    assert html.status_code == 200
    assert all(each.question(slots[0].item) in html.content.decode() for each in kinds)
