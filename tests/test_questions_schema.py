"""Several questions per item, the schema side (issue 31 point 5): ``[[questions]]``, ``[prompt] questions``,
``surveys.questions``."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from surveys.definition.errors import DefinitionError
from surveys.definition.files import shipped_definition, validate
from surveys.definition.loader import load_file
from surveys.definition.versions import content_hash
from surveys.models import Study
from surveys.questions import Question, question_definition, question_kind, questions_in, questions_of

BASE = """
[study]
slug = "two-questions"
title = "Two questions per item"
kind = "generic"

[page]
sentence = "Your doctor tells you: “{{ phrase }} {{ outcome }}.”"

[[questions]]
key = "rating"
question = "How likely is it that {{ outcome }}?"
[questions.answer]
shape = "scale"
min = 1
max = 7
labels = { "1" = "Certainly not", "7" = "Certainly" }

[[questions]]
key = "estimate"
question = "In how many cases out of 100 would {{ outcome }}?"
required = false
[questions.answer]
shape = "scale"
min = 0
max = 100
widget = "slider"
[questions.prompt]
user = "{{ sentence }}\\n{{ question }}\\nAnswer with a number from 0 to 100."

[design]
items = "items.csv"
"""
ITEMS = "key,phrase,outcome\na,Probably,the swelling will go down\nb,Possibly,the cough will clear up\n"


def problems(text: str) -> list[str]:
    with pytest.raises(DefinitionError) as caught:
        validate(tomllib.loads(text), "study.toml")
    return [str(p) for p in caught.value.problems]


def test_questions_validate_and_dump_in_order():
    definition = validate(tomllib.loads(BASE), "study.toml")
    dump = definition.model_dump(mode="json")
    assert [q["key"] for q in dump["questions"]] == ["rating", "estimate"]
    assert dump["questions"][1]["required"] is False and dump["questions"][0]["required"] is True
    assert dump["questions"][0]["answer"]["labels"] == {"1": "Certainly not", "7": "Certainly"}
    assert "questions" not in dump["prompt"]  # separate, the default, is left out
    together = validate(tomllib.loads(BASE.replace("[design]", "[prompt]\nquestions = \"together\"\n\n[design]")),
                        "study.toml").model_dump(mode="json")
    assert together["prompt"]["questions"] == "together"


@pytest.mark.parametrize("change, words", [
    (lambda t: t.replace('key = "estimate"', 'key = "rating"'), "questions: keys repeat: rating"),
    (lambda t: t.replace('key = "estimate"', 'key = "Estimate"'), "questions[1].key"),
    (lambda t: t.replace('key = "estimate"', 'key = "' + "e" * 41 + '"'), "questions[1].key"),
    (lambda t: t + '\n[answer]\nshape = "scale"\nmin = 1\nmax = 7\n', "answer: give either [answer]"),
    (lambda t: t.replace('[page]\n', '[page]\nquestion = "How sure?"\n'), "page.question: with [[questions]]"),
    (lambda t: t.replace('kind = "generic"', 'kind = "wep_probability"'),
     "questions: a wep_probability study asks its kind's own question"),
    (lambda t: t.replace("min = 0\nmax = 100", "min = 100\nmax = 0"), "questions[1].answer"),
    (lambda t: t.replace('shape = "scale"\nmin = 1', 'shape = "choice"\nmin = 1'), "a choice needs at least one"),
    (lambda t: t.replace('required = false', 'required = "no"'), "questions[1].required"),
    (lambda t: t.replace('question = "In how many', 'wording = "In how many'), "questions[1].wording"),
    (lambda t: t + '\n[[checks]]\nkey = "c1"\ntype = "instructed"\nquestion = "Choose 1."\npass = [1]\n'
                   'after_item = 1\n', "checks[0].answer: with [[questions]]"),
])
def test_bad_questions_are_refused_naming_the_key(change, words):
    found = problems(change(BASE))
    assert any(words in p for p in found), found


def test_together_without_questions_is_refused():
    text = BASE.split("[[questions]]")[0] + '[answer]\nshape = "scale"\nmin = 1\nmax = 7\n[prompt]\nquestions = "together"\n'
    assert any("prompt.questions: the study declares no [[questions]]" in p for p in problems(text))


def test_a_generic_study_needs_answer_or_questions():
    text = BASE.split("[[questions]]")[0]
    assert any("needs an [answer] table (or [[questions]])" in p for p in problems(text))


@pytest.mark.parametrize("relative", ["examples/hedged-advice/study.toml", "belem/study.toml",
                                      "examples/word-choice/study.toml"])
def test_a_study_without_questions_dumps_as_before(relative):
    """No ``questions`` key and no ``prompt.questions``: stored definitions and content hashes are unchanged."""
    dump = shipped_definition(relative)
    assert "questions" not in dump and "questions" not in dump["prompt"]
    raw = tomllib.loads((Path("studies") / relative).read_text(encoding="utf-8"))
    assert set(dump) - {"study", "texts", "wording", "page", "prompt", "demonstrations", "design", "participants",
                        "questionnaire", "prolific", "report", "agents", "checks", "check_failures", "exclusions",
                        "format", "answer"} <= set(raw)


def test_questions_in_a_one_question_definition():
    dump = shipped_definition("examples/hedged-advice/study.toml")
    (only,) = questions_in(dump)
    assert only == Question(key="", question=dump["page"]["question"], answer=dump["answer"])
    assert only.single and only.required and only.prompt == {}
    assert question_definition(dump, only) == dump


def test_questions_in_a_definition_with_questions():
    dump = validate(tomllib.loads(BASE), "study.toml").model_dump(mode="json")
    rating, estimate = questions_in(dump)
    assert (rating.key, rating.required, rating.answer["max"], rating.prompt) == ("rating", True, 7, {})
    assert (estimate.key, estimate.required, estimate.answer["widget"]) == ("estimate", False, "slider")
    assert estimate.prompt == {"user": "{{ sentence }}\n{{ question }}\nAnswer with a number from 0 to 100."}
    one = question_definition(dump, estimate)
    assert "questions" not in one and one["answer"]["max"] == 100
    assert one["page"] == {**dump["page"], "question": estimate.question}
    assert one["prompt"]["user"] == estimate.prompt["user"] and one["prompt"]["system"] is None


def test_a_seed_family_study_has_one_question_without_an_answer_table():
    dump = shipped_definition("belem/study.toml")
    (only,) = questions_in(dump)
    assert only.key == "" and only.answer == dump.get("answer")


@pytest.mark.django_db
def test_a_loaded_study_reads_its_questions_and_words_each(tmp_path):
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    (tmp_path / "study.toml").write_text(BASE, encoding="utf-8")
    study = load_file(tmp_path / "study.toml").study
    study = Study.objects.get(pk=study.pk)
    rating, estimate = questions_of(study)
    item = study.main_items().get(key="a")
    page = question_kind(study, rating).page_context(item)
    assert page["sentence"] == "Your doctor tells you: “Probably the swelling will go down.”"
    assert page["question"] == "How likely is it that the swelling will go down?"
    assert [label["label"] for label in page["scale"]["labels"]] == ["Certainly not", "Certainly"]
    other = question_kind(study, estimate).page_context(item)
    assert other["question"] == "In how many cases out of 100 would the swelling will go down?"
    assert other["scale"]["max"] == "100"
    assert question_kind(study, estimate).validate("55") == 55.0


@pytest.mark.django_db
def test_question_templates_naming_unknown_fields_are_refused(tmp_path):
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    (tmp_path / "study.toml").write_text(BASE.replace("would {{ outcome }}", "would {{ nothing }}"), "utf-8")
    with pytest.raises(DefinitionError) as caught:
        load_file(tmp_path / "study.toml", commit=False)
    assert any(p.where == "questions[1].question" and "'nothing'" in str(p) for p in caught.value.problems)


def test_questions_change_the_content_hash():
    one = validate(tomllib.loads(BASE), "study.toml").model_dump(mode="json")
    two = validate(tomllib.loads(BASE.replace("min = 0\nmax = 100", "min = 0\nmax = 10")), "study.toml")
    assert content_hash(one, []) != content_hash(two.model_dump(mode="json"), [])


def test_the_tutorials_questions_are_the_examples():
    """docs/tutorials/experiment.md section 9 shows the [[questions]] of studies/examples/advice-estimates."""
    text = Path("docs/tutorials/experiment.md").read_text(encoding="utf-8")
    section = text.split("## 9. Several questions per item", 1)[1]
    shown = tomllib.loads(section.split("```toml", 1)[1].split("```", 1)[0])
    example = tomllib.loads(Path("studies/examples/advice-estimates/study.toml").read_text(encoding="utf-8"))
    assert shown["questions"] == example["questions"] and shown["page"] == example["page"]


@pytest.mark.django_db
def test_a_question_that_fails_to_render_on_an_item_is_refused(tmp_path):
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    broken = BASE.replace("would {{ outcome }}?", "would {{ outcome.nope.deeper }}?")
    (tmp_path / "study.toml").write_text(broken, "utf-8")
    with pytest.raises(DefinitionError) as caught:
        load_file(tmp_path / "study.toml", commit=False)
    assert any(p.where == "questions[1].question" for p in caught.value.problems), caught.value.problems


@pytest.mark.django_db
def test_check_study_shows_the_prompt_of_each_question():
    """check_study's preview shows one prompt per question, each with its own wording and answer instruction
    (it showed the study's first shape without any question's text)."""
    from pathlib import Path

    from surveys.definition.preview import preview_file

    path = Path(__file__).resolve().parent.parent / "studies" / "examples" / "advice-estimates" / "study.toml"
    text = preview_file(path, count=1)
    sure = text.split("── item health-1 [sure] ── prompt")[1].split("── item health-1 [chance]")[0]
    chance = text.split("── item health-1 [chance] ── prompt")[1]
    assert "How sure does your doctor sound?" in sure and "from 1 to 7" in sure
    assert "In how many cases out of 100" in chance and "from 0 to 100" in chance


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["separate", "together"])
def test_check_study_previews_the_prompts_a_model_is_asked(tmp_path, mode):
    """check_study shows, for each question asked separately or for all of them asked together, exactly the prompt
    the worker sends (both come from surveys.question_kinds.asking_kind): a demonstration's per-question answer
    (``answer_<key>``) and the together prompt included."""
    from surveys.definition.preview import preview_file

    from elicitation.prompts import build_prompt

    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    text = BASE.replace("[design]", f'[prompt]\nquestions = "{mode}"\n\n[[demonstrations]]\nphrase = "Surely"\n'
                        'outcome = "the fever will pass"\nanswer = 7\nanswer_rating = 7\nanswer_estimate = 95\n\n[design]')
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")
    shown = preview_file(tmp_path / "study.toml", count=1)
    study = load_file(tmp_path / "study.toml", commit=True).study
    item = study.main_items().order_by("id").first()
    keys = ["rating"] if mode == "together" else ["rating", "estimate"]
    for key in keys:
        prompt = build_prompt(study, item, few_shot=True, question=key)
        assert prompt.shots == 1 and prompt.text in shown, (key, prompt.text, shown)
    if mode == "together":
        assert "── item a [rating, estimate together] ── prompt" in shown and "JSON object" in shown
        assert '"rating": 7' in shown
    else:
        assert "── item a [rating] ── prompt" in shown and "── item a [estimate] ── prompt" in shown
