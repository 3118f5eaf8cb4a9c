"""The shipped Belem definitions (studies/belem/, studies/belem-verifiable/): the speaker-belief wording is data,
SpeakerBelief only logic; a study's own definition words its pages, prompts and instructions page. The byte-for-byte
contract against today's wording is tests/test_prompt_baseline.py (studies demo and demo-verifiable)."""
from __future__ import annotations

import shutil
from io import StringIO

import pytest
from django.core.management import call_command

from elicitation.prompts import build_prompt, prompt_content, prompt_hash
from surveys.definition.export import export_to
from surveys.definition.files import STUDIES_DIR, read_definition, shipped_definition
from surveys.definition.loader import load_file
from families.belem import instrument as speaker_belief
from surveys.instruments import get_instrument
from surveys.instruments.base import Instrument
from surveys.models import Item, Study, StudyVersion

NV = STUDIES_DIR / "belem" / "study.toml"
V = STUDIES_DIR / "belem-verifiable" / "study.toml"
SHARED_TABLES = ("answer", "wording", "page", "prompt", "participants", "design")


def test_the_two_files_validate_and_share_their_wording():
    (nv, _), (v, _) = read_definition(NV), read_definition(V)
    assert (nv.study.kind, v.study.kind) == ("speaker_belief", "speaker_belief")
    assert (nv.study.slug, v.study.slug) == ("demo", "demo-verifiable")
    for table in SHARED_TABLES:
        assert getattr(nv, table) == getattr(v, table), table
    assert nv.wording["task_intro"].startswith("In this experiment, you will be shown text")
    assert [d.answer for d in nv.demonstrations] == [d.answer for d in v.demonstrations] == [0, 100]


def test_speaker_belief_holds_logic_not_wording():
    kind = get_instrument("speaker_belief")
    assert kind.default_definition == "belem/study.toml"
    for method in ("sentence", "question", "hints", "build_prompt", "prompt_block"):
        assert getattr(type(kind), method) is getattr(Instrument, method), method
    for name in ("TASK_INTRO", "SCALE_ENDS", "EXAMPLES_INTRO", "TEST_INTRO", "OPTIONS_LINE", "ANSWER_CUE",
                 "PAPER_DEMONSTRATIONS"):
        assert not hasattr(speaker_belief, name), name
    assert speaker_belief.paper_demonstrations("verifiable")[0] == {
        "speaker_name": "Kathleen", "speaker_gender": "female", "expression": "impossible",
        "statement": "the Sun orbits around the planet Earth.", "demo_answer": 0}


@pytest.fixture
def old_way_study(db):
    """A speaker-belief study created without a definition: its wording is the kind's shipped file."""
    study = Study.objects.create(slug="sb", title="SB", instrument="speaker_belief")
    item = Item.objects.create(study=study, key="k1", expression="doubtful", speaker_name="Ann",
                               speaker_gender="female", statement="[[their]] bus will be late.",
                               statement_id="s1", extra={"pronouns": {"they": "she", "their": "her"}})
    control = Item.objects.create(study=study, key="k2", is_control=True, speaker_name="Bob",
                                  speaker_gender="male", statement="[[they]] will win.", statement_id="s2")
    return study, item, control


def test_a_study_without_a_definition_reads_the_shipped_wording(old_way_study):
    study, item, control = old_way_study
    assert study.definition == {} and study.kind.wording(study) == shipped_definition("belem/study.toml")
    page = study.kind.page_context(item)
    assert page["sentence"] == "Ann believes it's doubtful that her bus will be late."
    assert page["question"] == ("Provide a number between 0 and 100 that reflects, from Ann's perspective, the "
                                "probability (expressed as a percentage) that her bus will be late.")
    assert page["hints"] == ["0 indicates Ann believes there is a 0% chance that her bus will be late.",
                             "100 indicates Ann believes there is a 100% chance that her bus will be late."]
    assert study.kind.sentence(control) == "Bob believes he will win."
    # a participant's drawn speaker: the name and the pronouns of the drawn gender
    assert study.kind.sentence(item, ("Raul", "male")) == "Raul believes it's doubtful that his bus will be late."
    assert study.kind.study_intro(study)["scale_ends"][1].startswith("The number 100 indicates")


def test_the_prompt_quotes_the_page(old_way_study):
    study, item, _ = old_way_study
    prompt = study.kind.build_prompt(item, [], few_shot=False)
    assert prompt.shots == 0 and prompt.text.endswith(
        'Question Answer the following question by writing a single number as the answer.\n\n'
        'Sentence: "Ann believes it\'s doubtful that her bus will be late."\n\n'
        "Question: Provide a number between 0 and 100 that reflects, from Ann's perspective, the probability "
        "(expressed as a percentage) that her bus will be late.\n\n"
        "- 0 indicates Ann believes there is a 0% chance that her bus will be late.\n"
        "- 100 indicates Ann believes there is a 100% chance that her bus will be late.\n\n"
        "Choose the answer from the following options:\n"
        "0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100\nCorrect answer:")
    assert [m["role"] for m in prompt.messages] == ["system", "user"]


@pytest.mark.django_db
def test_a_study_file_of_its_own_words_pages_prompts_and_instructions(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(NV.parent, folder)
    text = (folder / "study.toml").read_text(encoding="utf-8")
    for old, new in (('slug = "demo"', 'slug = "mine"'),
                     ('answer_cue = "Correct answer:"', 'answer_cue = "Answer:"'),
                     ("task_intro = \"In this experiment,", "task_intro = \"In this study,"),
                     ("believes it's {{ expression }} that", "thinks it is {{ expression }} that")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (folder / "study.toml").write_text(text, encoding="utf-8")
    load_file(folder / "study.toml")
    study = Study.objects.get(slug="mine")
    item = study.main_items().get(key="demo_future_1|likely")
    assert study.kind.sentence(item) == f"{item.speaker_name} thinks it is likely that she will get a parking " \
                                        "spot near the office tomorrow."
    prompt = build_prompt(study, item, True)
    assert prompt.text.startswith("In this study, you will be shown text")
    assert prompt.text.endswith("\nAnswer:") and "\nAnswer: 0\n\nExample Question 2\n" in prompt.text
    assert f'Sentence: "{item.speaker_name} thinks it is likely that' in prompt.text
    assert prompt.messages[2] == {"role": "assistant", "content": "0"}
    assert study.kind.study_intro(study)["task"].startswith("In this study,")
    demo = Study.objects.create(slug="other", title="Other", instrument="speaker_belief")  # no file of its own
    assert demo.kind.study_intro(demo)["task"].startswith("In this experiment,")


@pytest.mark.django_db
def test_the_instructions_page_shows_the_definition_task(client, tmp_path):
    call_command("load_demo", "--no-links", stdout=StringIO())
    study = Study.objects.get(slug="demo")
    study.definition["wording"]["task_intro"] = "A task described by the file."
    study.save(update_fields=["definition"])
    from surveys.views import _instructions_context

    context = _instructions_context(study)
    assert context["intro"]["task"] == "A task described by the file."
    assert context["intro"]["scale_ends"] == study.definition["wording"]["scale_ends"]


@pytest.mark.django_db
def test_check_study_previews_the_shipped_file():
    load_file(STUDIES_DIR / "belem" / "study.toml")  # the verifiable set's reference study
    out = StringIO()
    call_command("check_study", str(V), stdout=out)
    text = out.getvalue()
    assert "believes it's almost certain that" in text and "Correct answer:" in text
    assert "OK: nothing was written" in text and list(Study.objects.values_list("slug", flat=True)) == ["demo"]


@pytest.mark.django_db
def test_the_demo_exported_and_loaded_again_says_the_same(tmp_path):
    call_command("load_demo", "--no-links", stdout=StringIO())
    study = Study.objects.get(slug="demo-verifiable")

    def fingerprint(s: Study) -> dict[str, tuple]:
        out = {}
        for item in s.main_items().order_by("key"):
            page = s.kind.page_context(item)
            hashes = []
            for few_shot in (False, True):
                prompt = build_prompt(s, item, few_shot)
                hashes += [prompt_hash(prompt_content(prompt, "chat")),
                           prompt_hash(prompt_content(prompt, "completions"))]
            out[item.key] = (page["sentence"], page["question"], tuple(page["hints"]), tuple(hashes))
        return out

    before, sha = fingerprint(study), study.versions.get().sha256
    export_to(study, tmp_path / "out")
    study.companions.clear()
    Item.objects.filter(study=study).delete()
    StudyVersion.objects.filter(study=study).delete()
    study.delete()
    loaded = load_file(tmp_path / "out" / "study.toml")
    assert fingerprint(loaded.study) == before and loaded.version.sha256 == sha
