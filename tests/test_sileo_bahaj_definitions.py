"""The shipped Sileo & Moens and Bahaj et al. definitions (studies/sileo/, studies/sileo-reasoning/, studies/bahaj/):
the wording is data, VerbalisationChoice and IntervalConfidence only logic; the demos are loaded from the files; a
study's own definition words its pages and prompts. The byte-for-byte contract against the wording before the move
is tests/test_prompt_baseline.py (studies demo-sileo, sileo-r, demo-overprecision)."""
from __future__ import annotations

import hashlib
import shutil

import pytest

import prompt_baseline as baseline
from families.bahaj import refinement
from elicitation.prompts import build_prompt, prompt_content, prompt_hash
from surveys.definition.errors import DefinitionError
from surveys.definition.export import export_to
from surveys.definition.files import STUDIES_DIR, read_definition, shipped_definition
from surveys.definition.loader import load_file
from families.bahaj import instrument as interval_confidence
from families.bahaj.demo import load_overprecision_demo
from families.bahaj.instrument import SourceRunNeeded
from families.sileo.demo import load_verbalisation_demo
from families.sileo import instrument as verbalisation_choice
from surveys.instruments import get_instrument
from surveys.instruments.base import Instrument
from surveys.models import Item, Study

SILEO = STUDIES_DIR / "sileo" / "study.toml"
SILEO_REASONING = STUDIES_DIR / "sileo-reasoning" / "study.toml"
BAHAJ = STUDIES_DIR / "bahaj" / "study.toml"
WORDING_TABLES = ("wording", "page", "prompt")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_the_two_sileo_files_validate_and_share_their_wording():
    (demo, _), (reasoning, _) = read_definition(SILEO), read_definition(SILEO_REASONING)
    assert (demo.study.kind, reasoning.study.kind) == ("verbalisation_choice", "verbalisation_choice")
    assert (demo.study.slug, reasoning.study.slug) == ("demo-sileo", "sileo-reasoning")
    for table in WORDING_TABLES:
        assert getattr(demo, table) == getattr(reasoning, table), table
    assert (demo.design.items, reasoning.design.generator) == ("items.jsonl", "wep-reasoning")
    assert reasoning.design.options == {"hops": 2, "n": 40, "seed": 0}


def test_the_kinds_hold_logic_not_wording():
    sileo, bahaj = get_instrument("verbalisation_choice"), get_instrument("interval_confidence")
    assert (sileo.default_definition, bahaj.default_definition) == ("sileo/study.toml", "bahaj/study.toml")
    for kind in (sileo, bahaj):
        for method in ("sentence", "question", "hints", "prompt_block"):
            assert getattr(type(kind), method) is getattr(Instrument, method), (kind.name, method)
        assert kind.task_intro == ""
    for name in ("TASK_INTRO", "QUESTION", "ANSWER_INSTRUCTION", "ANSWER_CUE"):
        assert not hasattr(verbalisation_choice, name), name
    for name in ("GEN", "CONF", "CONFK", "FORM", "FORM_COT", "COT", "HINT", "TASK_INTRO"):
        assert not hasattr(interval_confidence, name), name
    for name in ("CONTEXT", "INSTRUCTIONS", "prompt_text"):
        assert not hasattr(refinement, name), name
    # the instructions page's task description is the shipped file's, word for word as before
    assert sileo.intro()["task"] == ("Each question gives a short text and two statements that differ only in how "
                                     "likely they say something is. Choose the statement whose wording of "
                                     "probability fits the text best.")
    assert bahaj.intro()["task"].startswith("Each question asks for a number you may not know exactly. Instead")


@pytest.mark.django_db
def test_the_demos_are_loaded_from_the_files_with_their_texts():
    sileo = load_verbalisation_demo().study
    outcome = load_overprecision_demo()
    bahaj = outcome.study
    assert outcome.created and "260 items" in outcome.message
    for study, path in ((sileo, SILEO), (bahaj, BAHAJ)):
        assert study.status == Study.Status.LIVE and study.versions.count() == 1
        assert study.definition["page"] == shipped_definition(path.relative_to(STUDIES_DIR).as_posix())["page"]
        assert study.attention_filter is None and not study.applies_attention_filter
    # the participant texts as they were before the move (sha256 of the old Python strings)
    assert [sha(t) for t in (sileo.consent_text, sileo.instructions, sileo.pledge_text)] == [
        "d94c6ee567f36b1a", "a53b4b64a321328a", "96a1ef2148d6804f"]
    assert [sha(t) for t in (bahaj.consent_text, bahaj.instructions, bahaj.pledge_text)] == [
        "4ead2d2837dc8107", "1c9328ee36dd08d1", "419838e7713b1fb1"]
    assert (sileo.items_per_participant, bahaj.items_per_participant) == (12, 10)
    assert sileo.main_items().count() == 32 and bahaj.main_items().count() == 260


@pytest.mark.django_db
def test_sileo_reasoning_loaded_with_load_study_matches_the_baseline_of_sileo_r():
    """The generator file gives the same items, pages and prompt hashes as create_study + generate_items."""
    loaded = load_file(SILEO_REASONING, slug="sileo-r")
    assert loaded.items == 40 and loaded.study.definition["design"]["generator"] == "wep-reasoning"
    prompts, pages = baseline.compare_study("sileo-r")
    assert prompts.ok and pages.ok and (prompts.matching, pages.matching) == (80, 40)


def own_copy(tmp_path, source):
    folder = tmp_path / source.parent.name
    shutil.copytree(source.parent, folder)
    return folder / "study.toml"


@pytest.mark.django_db
def test_a_bahaj_study_of_its_own_words_its_page_and_prompts(tmp_path):
    path = own_copy(tmp_path, BAHAJ)
    text = path.read_text(encoding="utf-8")
    text = text.replace("question = '''Your {{ confidence }}% interval'''",
                        "question = '''Votre intervalle à {{ confidence }} %'''")
    text = text.replace("Question: {{ statement }}'''\ntext = '''{{ question }}\nAnswer:'''",
                        "Q ({{ source }}): {{ statement }}'''\ntext = '''{{ question }}\nA:'''")
    start = text.index("[prompt.styles.refine]")
    text = text[:start] + text[text.index("# 52 general-knowledge"):]  # no refine style of its own
    path.write_text(text, encoding="utf-8")
    study = load_file(path, slug="own-intervals").study
    item = study.main_items().get(key="boil-c|95")
    kind = study.kind
    assert kind.page_context(item)["question"] == "Votre intervalle à 95 %"
    assert kind.hints(item)[1].startswith("Lower bound: so low that there is only a 2.5% chance")
    prompt = kind.build_prompt(item, [], style="standard")
    assert prompt.text.endswith("Q (science): At what temperature, in degrees Celsius, does pure water boil at sea "
                                "level?\nA:")
    assert "only a 2.5% probability" in prompt.text and prompt.messages[0]["role"] == "user"
    # a style it does not override, the authors' styles and the refinement keep their wording
    assert kind.build_prompt(item, [], style="cot").text.endswith("Question: At what temperature, in degrees Celsius, "
                                                                  "does pure water boil at sea level?\nReasoning:")
    assert "lower_bound:" in kind.build_prompt(item, [], style="authors-vanilla").text
    refine = kind.refinement_prompt(item, [(90.0, 110.0, 95)])
    assert refine.text.endswith("lower_bound | upper_bound | confidence\n90 | 110 | 95%\nOutput:")
    with pytest.raises(SourceRunNeeded, match="needs a source run"):
        kind.build_prompt(item, [], style="authors-refine")


@pytest.mark.django_db
def test_a_template_naming_a_missing_field_is_refused(tmp_path):
    path = own_copy(tmp_path, SILEO)
    path.write_text(path.read_text(encoding="utf-8").replace("Text: {{ statement }}", "Text: {{ premise }}"),
                    encoding="utf-8")
    with pytest.raises(DefinitionError, match=r"prompt\.block.*'premise'"):
        load_file(path)
    assert not Study.objects.exists() and not Item.objects.exists()


REFINE_TEXT = """\
Context: A group of people were given a question and asked for two numbers, a lower and an upper bound, such that \
they were sure, at a stated level of confidence, that the right answer lies between them. Their answers and the \
confidence level each was given at are listed below.
Instructions:
- Analyse the question, the answers to the question and their corresponding confidence level.
- Determine the most likely answer among the possible answers (chosen_answer), and propose a new answer that is more \
likely to contain the right answer (proposed_answer).
- Give your reasoning for each.
- Your output should have the following format: {"chosen_answer": [lower_bound, upper_bound], "chosen_reason": \
"...", "proposed_answer": [lower_bound, upper_bound], "proposed_reason": "..."}
Question: How high is Mount Everest, in metres?
Possible Answers:
lower_bound | upper_bound | confidence
8000 | 9000.5 | 90%
-3 | 15000000 | 60%"""


def test_the_refinement_prompt_is_worded_as_before():
    """Table 2's prompt from the shipped file, byte for byte what the refinement module wrote."""
    study = Study(slug="op", title="Op", instrument="interval_confidence")
    item = Item(study=study, key="everest|90", statement="How high is Mount Everest, in metres?",
                extra={"confidence": 90})
    prompt = get_instrument("interval_confidence").refinement_prompt(item, [(8000.0, 9000.5, 90), (-3.0, 1.5e7, 60)])
    assert prompt.text == REFINE_TEXT + "\nOutput:"
    assert prompt.messages == [{"role": "user", "content": REFINE_TEXT}]


@pytest.mark.django_db
def test_export_then_load_keeps_the_overprecision_prompt_hashes(tmp_path):
    study = load_overprecision_demo().study
    export_to(study, tmp_path / "op")
    copy = load_file(tmp_path / "op" / "study.toml", slug="op-copy").study
    assert copy.versions.get().sha256 == study.versions.get().sha256
    for key in ("boil-c|60", "abs-zero-c|95"):
        for style in ("standard", "cot", "hint", "cot_hint", "authors-vanilla"):
            hashes = []
            for s in (study, copy):
                item = s.main_items().get(key=key)
                prompt = build_prompt(s, item, False, s.demonstrations(), style)
                hashes.append(prompt_hash(prompt_content(prompt, "chat")))
            assert hashes[0] == hashes[1], (key, style)
        assert study.kind.page_context(study.main_items().get(key=key)) == \
            copy.kind.page_context(copy.main_items().get(key=key))
