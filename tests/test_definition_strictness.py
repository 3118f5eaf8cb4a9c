"""What the definition validator refused only at run time, or not at all (issue 32 point 6): a worked example's
answer off the scale, strings where numbers or booleans belong, an empty item cell a template shows, a persona
template that escapes the sandbox. Each problem names the file and the key path, or the line and column."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from surveys.definition.errors import DefinitionError
from surveys.definition.loader import load_file
from surveys.models import Study

EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "examples" / "hedge-confidence"


def copy(tmp_path: Path, *replacements: tuple[str, str], items: tuple[str, str] | None = None) -> Path:
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    text = (folder / "study.toml").read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    (folder / "study.toml").write_text(text, encoding="utf-8")
    if items:
        csv = (folder / "items.csv").read_text(encoding="utf-8")
        assert items[0] in csv
        (folder / "items.csv").write_text(csv.replace(items[0], items[1], 1), encoding="utf-8")
    return folder / "study.toml"


def problems(path: Path) -> dict[str, str]:
    with pytest.raises(DefinitionError) as raised:
        load_file(path, commit=False)
    assert not Study.objects.exists()
    return {f"{Path(p.file).name} at {p.where}": p.message for p in raised.value.problems}


@pytest.mark.django_db
def test_the_example_itself_loads(tmp_path):
    assert load_file(copy(tmp_path), commit=False).items == 12


@pytest.mark.django_db
def test_a_worked_example_answer_off_the_scale_is_refused(tmp_path):
    found = problems(copy(tmp_path, ("answer = 7", "answer = 9")))
    assert list(found) == ["study.toml at demonstrations[0].answer"]
    assert "9 is not an answer this study takes" in found["study.toml at demonstrations[0].answer"]
    found = problems(copy(tmp_path / "b", ("answer = 1\n", 'answer = "sure"\n')))
    assert "'sure' is not an answer" in found["study.toml at demonstrations[1].answer"]


@pytest.mark.django_db
def test_strings_are_not_read_as_numbers_or_booleans(tmp_path):
    found = problems(copy(tmp_path, ("max = 7", 'max = "7"'), ("integer = true", 'integer = "yes"'),
                          ('widget = "buttons"', 'widget = "buttons"\nrandomise = 1')))
    assert found["study.toml at answer.max"] == "Input should be a valid number"
    assert found["study.toml at answer.randomise"] == "Input should be a valid boolean"
    assert found["study.toml at questionnaire[0].integer"] == "Input should be a valid boolean"
    assert len(found) == 3
    loaded = load_file(copy(tmp_path / "b", ("max = 7", "max = 7.0")), commit=False)  # a float is a number
    assert loaded.items == 12


@pytest.mark.django_db
def test_an_empty_cell_that_a_template_shows_is_refused_with_its_line_and_column(tmp_path):
    path = copy(tmp_path, items=("doctor-3,doctor,possibly,\"Dr Patel, a doctor\",doctor,", "doctor-3,doctor,possibly,,doctor,"))
    found = problems(path)
    assert list(found) == ["items.csv at line 4, column 'speaker'"]
    assert "empty, but page.sentence shows it" in found["items.csv at line 4, column 'speaker'"]
    # shown only when set: an empty cell is fine
    guarded = copy(tmp_path / "b", ('sentence = "{{ speaker }} says:', 'sentence = "{% if speaker %}{{ speaker }}{% endif %} says:'),
                   items=("doctor-3,doctor,possibly,\"Dr Patel, a doctor\",doctor,", "doctor-3,doctor,possibly,,doctor,"))
    assert load_file(guarded, commit=False).items == 12


@pytest.mark.django_db
def test_a_persona_template_that_escapes_the_sandbox_is_refused_by_check_study(tmp_path):
    """It parsed, named no field, and passed check_study; then every answer of the run failed. check_study now
    renders it over sample questionnaire answers, as it renders the wording."""
    from django.core.management import CommandError, call_command

    mirror = Path(__file__).resolve().parents[1] / "studies" / "examples" / "persona-mirror"
    folder = tmp_path / "mirror"
    shutil.copytree(mirror, folder)
    text = (folder / "study.toml").read_text(encoding="utf-8")
    old = 'template = "You are a {{ age }}-year-old {{ gender }} whose first language is {{ first_language }}."'
    assert old in text
    (folder / "study.toml").write_text(text.replace(old, "template = \"You are {{ ''.__class__ }} aged {{ age }}.\""),
                                       encoding="utf-8")
    with pytest.raises(CommandError) as raised:
        call_command("check_study", str(folder / "study.toml"))
    message = str(raised.value)
    assert "study.toml at agents[0].persona.template: the template does not render (with sample questionnaire " \
           "answers age=18)" in message and "__class__" in message and "unsafe" in message
