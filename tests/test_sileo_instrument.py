"""The verbalisation-choice item kind: page and prompt from one wording, the pick parser, likelihood
candidates, and WEP-UNLI items imported from (premise, hypothesis, p) triples."""
from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.template.loader import render_to_string

from surveys.definition.files import STUDIES_DIR
from surveys.importers import ImportFailed, import_items
from surveys.instruments import AnswerError, get_instrument
from families.sileo.wep_scale import WEP_MEDIANS, closest_weps, verbalise
from surveys.models import Item, Study

UNLI_DEMO = STUDIES_DIR / "sileo" / "wep-unli-triples.csv"


@pytest.fixture
def kind():
    return get_instrument("verbalisation_choice")


@pytest.fixture
def study(db):
    return Study.objects.create(slug="v", title="V", instrument="verbalisation_choice", status="live")


@pytest.fixture
def item(study, kind):
    import_items(study, io.StringIO("premise,hypothesis,p\nA man in a white shirt takes a photo.,"
                                    "A man takes a picture.,1.0\n"))
    return Item.objects.get(study=study)


def test_imported_triple_is_verbalised(item):
    extra = item.extra
    assert item.statement == "A man in a white shirt takes a photo."
    assert extra["hypothesis"] == "a man takes a picture" and extra["p"] == 1.0 == item.ground_truth
    assert extra["valid_wep"] == "certain" and abs(WEP_MEDIANS[extra["distractor_wep"]] - 100) >= 40
    options = dict(extra["options"])
    assert options[extra["valid_key"]] == "It is certain that a man takes a picture."
    assert extra["dataset"] == "wep-unli" and item.key.startswith("unli-")


def test_page_shows_premise_and_two_buttons(kind, item):
    html = render_to_string(kind.template_name, {"q": kind.page_context(item), "name": "choice",
                                                 "prefix": "answer", "selected": None, "readonly": False})
    assert item.statement in html and "Given this text, which statement is right?" in html
    assert len(re.findall(r'type="radio" name="choice"', html)) == 2
    for key, text in item.extra["options"]:
        assert f'value="{key}"' in html and text in html
    assert "pick-option" in html and "checked" not in html


def test_prompt_presents_the_same_two_options(kind, item):
    prompt = kind.build_prompt(item, [], few_shot=True)
    (a, text_a), (b, text_b) = item.extra["options"]
    assert prompt.text.endswith(f"Text: {item.statement}\nGiven this text, which statement is right?\n"
                                f"A. {text_a}\nB. {text_b}\nAnswer with A or B.\nAnswer:")
    assert prompt.text.startswith(kind.intro()["task"] + "\n\n") and kind.intro()["task"].startswith("Each question gives")
    assert prompt.messages == [{"role": "user", "content": prompt.text}]
    with pytest.raises(ValueError, match="unknown prompt style"):
        kind.build_prompt(item, [], style="cot")


def test_parser_reads_the_option(kind, item):
    (_, text_a), (_, text_b) = item.extra["options"]
    assert kind.parse_model_answer(" B", item).answer.choice == "B"
    assert kind.parse_model_answer("A. " + text_a, item).answer.choice == "A"
    assert kind.parse_model_answer(f"I think: {text_b}", item).answer.choice == "B"
    assert not kind.parse_model_answer("A or B", item).ok  # names both
    assert not kind.parse_model_answer("no idea", item).ok
    assert kind.validate_answer(item, {"choice": "B"}).choice == "B"
    with pytest.raises(AnswerError):
        kind.validate_answer(item, {"choice": "C"})


def test_likelihood_candidates(kind, item):
    candidates = kind.likelihood_candidates(item)
    assert [c[0] for c in candidates] == ["A", "B"]
    for key, whole, alone in candidates:
        assert whole == f"{item.statement} {alone}" and alone == dict(item.extra["options"])[key]


def test_import_is_all_or_nothing_and_names_line_and_column(study):
    bad = ("premise,hypothesis,p\nA dog runs.,An animal moves.,0.9\nA cat sleeps.,,0.5\nA bird sings.,"
           "It is morning.,1.4\nA car stops.,The driver waits.,lots\n")
    with pytest.raises(ImportFailed) as info:
        import_items(study, io.StringIO(bad))
    text = str(info.value)
    assert "line 3, column 'hypothesis': is empty" in text
    assert "line 4, column 'p': 1.4 is not a probability between 0 and 1" in text
    assert "line 5, column 'p': 'lots' is not a number" in text
    assert Item.objects.count() == 0
    with pytest.raises(ImportFailed, match="required column is missing"):
        import_items(study, io.StringIO("premise,hypothesis\nA dog runs.,An animal moves.\n"))


def test_demo_triples_file(study):
    call_command("import_items", "v", str(UNLI_DEMO))
    items = list(Item.objects.filter(study=study))
    assert len(items) == 16 and {i.key for i in items} == {f"unli-{n:02d}" for n in range(1, 17)}
    for item in items:
        assert item.extra["valid_wep"] in closest_weps(item.extra["p"])
        assert abs(WEP_MEDIANS[item.extra["distractor_wep"]] - 100 * item.extra["p"]) >= 40
    # drawn from the row's text: a second study gets the same WEPs and order
    other = Study.objects.create(slug="v2", title="V2", instrument="verbalisation_choice")
    import_items(other, UNLI_DEMO)
    assert [i.extra["options"] for i in Item.objects.filter(study=other).order_by("key")] == \
        [i.extra["options"] for i in sorted(items, key=lambda i: i.key)]
    with pytest.raises(CommandError, match="already in study v"):
        call_command("import_items", "v", str(UNLI_DEMO))


def test_case_of_the_hypothesis_inside_a_template(study):
    import_items(study, io.StringIO("premise,hypothesis,p\nJohn waves.,John is happy.,0.7\n"
                                    "I see rain.,The ground is wet.,0.9\n"))
    hyps = sorted(i.extra["hypothesis"] for i in Item.objects.filter(study=study))
    assert hyps == ["John is happy", "the ground is wet"]
    assert verbalise("we doubt", "John is happy") == "We doubt that John is happy."


def test_load_demo_adds_the_verbalisation_study(db):
    from surveys.demo.loader import load_demo

    outcomes = {o.study.slug: o for o in load_demo()}
    study = Study.objects.get(slug="demo-sileo")
    assert outcomes["demo-sileo"].study == study and outcomes["demo-sileo"].created
    assert study.status == Study.Status.LIVE and study.items_per_participant == 12
    datasets = [i.extra["dataset"] for i in study.main_items()]
    assert {d: datasets.count(d) for d in set(datasets)} == {"wep-reasoning-1hop": 8, "wep-reasoning-2hops": 8,
                                                             "wep-unli": 16}
    again = {o.study.slug: o for o in load_demo()}
    assert not again["demo-sileo"].created and "demo-sileo: already exists (32 items)" in again["demo-sileo"].message
