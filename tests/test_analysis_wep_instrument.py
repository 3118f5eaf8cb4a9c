"""The WEP-probability item kind: one wording for page and prompt, answers, bins, item import, page."""
from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string

from surveys.answer_import import _ensure_items
from surveys.page_tokens import slot_token
from surveys.importers import ImportFailed, import_items
from surveys.instruments import AnswerError, get_instrument
from families.tang.wep_probability import CANONICAL_ORDER, EXPRESSIONS
from surveys.models import Item, Participant, Response, Study

SILEO_MEDIANS = {
    "almost certain": 95, "highly likely": 90, "very good chance": 80, "we believe": 75, "likely": 70,
    "probably": 70, "probable": 70, "better than even": 60, "about even": 50, "probably not": 25,
    "we doubt": 20, "unlikely": 20, "little chance": 10, "chances are slight": 10, "improbable": 10,
    "highly unlikely": 5, "almost no chance": 2,
}


@pytest.fixture
def kind():
    return get_instrument("wep_probability")


@pytest.fixture
def wep_study(db):
    study = Study.objects.create(slug="wep", title="WEP", instrument="wep_probability", status="live")
    _ensure_items(study)
    return study


def test_registered_with_17_weps_in_median_order(kind):
    assert len(EXPRESSIONS) == 17 and set(CANONICAL_ORDER) == set(EXPRESSIONS)
    medians = [SILEO_MEDIANS[e] for e in kind.canonical_order()]
    assert medians == sorted(medians, reverse=True)


def test_page_and_prompt_share_the_wording(wep_study, kind):
    item = wep_study.main_items().get(expression="we doubt")
    page = kind.page_context(item)
    assert page["sentence"] == "How probable is an event described as 'we doubt'?"
    assert page["options"] == list(range(0, 101, 5))
    prompt = kind.build_prompt(item, wep_study.demonstrations())
    assert page["sentence"] in prompt.text
    assert prompt.text.endswith(f"Question: {page['sentence']}\nAnswer with a single number from 0 to 100.\nAnswer:")
    # the two demonstrations (Kent's anchors) with their answers, before the question
    assert "described as 'certain'?\nAnswer with a single number from 0 to 100.\nAnswer: 100" in prompt.text
    assert "described as 'impossible'?\nAnswer with a single number from 0 to 100.\nAnswer: 0" in prompt.text
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in prompt.messages if m["role"] == "assistant"] == ["100", "0"]
    assert page["sentence"] in prompt.messages[-1]["content"]
    zero_shot = kind.build_prompt(item, wep_study.demonstrations(), few_shot=False)
    assert "'certain'" not in zero_shot.text and len(zero_shot.messages) == 2


def test_context_template_item(kind, db):
    item = Item(expression="probably", statement="They will {} launch before us.")
    assert kind.sentence(item) == 'Given the statement "They will probably launch before us.", how probable is it?'


def test_answers_validation_parsing_and_bins(kind):
    assert kind.validate("70") == 70.0
    assert kind.validate("0") == 0.0
    # only numbers written as the page writes them: float() would take the last five
    for bad in ("70.5", "101", "-1", "abc", "", "nan", "inf", "1e2", "\u0665\u0660", "1_0", " 50.0 ", "+50"):
        with pytest.raises(AnswerError):
            kind.validate(bad)
    assert kind.parse_model_answer("I would say 75%.").value == 75
    assert kind.parse_model_answer("0.7").value == 0.7  # read on 0–100, as the prompt asks
    assert not kind.parse_model_answer("probably high").ok
    assert kind.parse_model_answer("150").error == "number 150 is outside 0–100"
    assert [kind.score(v) for v in (0, 2.4, 2.5, 72, 97.4, 97.5, 100)] == [0, 0, 5, 70, 95, 100, 100]


def test_item_file_import(tmp_path, db, kind):
    study = Study.objects.create(slug="w2", title="W2", instrument="wep_probability")
    path = tmp_path / "items.csv"
    path.write_text("expression,context,statement\nLikely,CNC,They will {} launch before us.\nunlikely,,\n")
    result = import_items(study, path)
    assert result.created == 2
    assert set(study.main_items().values_list("key", flat=True)) == {"CNC|en|-|likely", "unlikely"}
    bad = tmp_path / "bad.csv"
    bad.write_text("expression\nlikely\nfairly probable\n")
    with pytest.raises(ImportFailed) as info:
        import_items(study, bad)
    assert (info.value.errors[0].line, info.value.errors[0].column) == (3, "expression")


def test_page_template_renders_21_radio_buttons(wep_study, kind):
    item = wep_study.main_items().get(expression="likely")
    html = render_to_string(kind.template_name, {"q": kind.page_context(item), "name": "value", "prefix": "answer",
                                                 "selected": None, "readonly": False})
    assert "How probable is an event described as &#x27;likely&#x27;?" in html
    assert len(re.findall(r'type="radio" name="value"', html)) == 21
    assert "checked" not in html


def test_a_participant_completes_a_wep_study(wep_study, client):
    """The participant flow (surveys/views.py) with this kind's page: every WEP once, answers saved."""
    response = client.get(f"/s/{wep_study.slug}/", {"PROLIFIC_PID": "abc123", "STUDY_ID": "s", "SESSION_ID": "x"})
    assert response.status_code == 302
    client.post(f"/s/{wep_study.slug}/consent/", {"choice": "agree"})
    client.post(f"/s/{wep_study.slug}/instructions/", {})
    client.post(f"/s/{wep_study.slug}/pledge/", {"pledge": "on"})
    participant = Participant.objects.get(prolific_pid="abc123")
    for slot in participant.assignments.order_by("position"):
        page = client.get(f"/s/{wep_study.slug}/question/")
        assert kind_sentence(slot.item) in page.content.decode()
        value = (SILEO_MEDIANS[slot.item.expression] // 5) * 5
        client.post(f"/s/{wep_study.slug}/question/", {"step": "item", "position": slot.position,
                                                       "item": slot.item_id, "value": str(value),
                                                       "token": slot_token(slot)})
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    saved = dict(Response.objects.filter(participant=participant).values_list("item__expression", "value"))
    assert len(saved) == 17 and saved["almost no chance"] == 0 and saved["we believe"] == 75
    assert participant.passed_attention is True


def kind_sentence(item: Item) -> str:
    return get_instrument("wep_probability").sentence(item).replace("'", "&#x27;")
