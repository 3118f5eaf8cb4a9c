"""The experiment tutorial (docs/tutorials/experiment.md), copied as a researcher copies it: the example study
with section 7's checks and exclusion rules added loads (checks placed for every participant, rules stored with
the study), and a participant who fails both checks is asked to return the submission."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from surveys.definition.loader import load_file

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorials" / "experiment.md"
EXAMPLE = ROOT / "studies" / "examples" / "hedged-advice"


def section_seven() -> str:
    text = TUTORIAL.read_text(encoding="utf-8")
    section = text[text.index("## 7. Checks and exclusion rules"):text.index("## 8.")]
    (block,) = re.findall(r"```toml\n(.*?)```", section, flags=re.S)
    return block


@pytest.mark.django_db
def test_the_example_with_section_sevens_checks_and_rules_loads(tmp_path):
    shutil.copy(EXAMPLE / "items.csv", tmp_path / "items.csv")
    definition = (EXAMPLE / "study.toml").read_text(encoding="utf-8") + "\n" + section_seven()
    (tmp_path / "study.toml").write_text(definition, encoding="utf-8")
    loaded = load_file(tmp_path / "study.toml")
    stored = loaded.study.definition
    assert [c["key"] for c in stored["checks"]] == ["imc", "swim"]
    assert stored["check_failures"]["action"] == "return" and stored["check_failures"]["after"] == 2
    assert [r["rule"] for r in stored["exclusions"]] == ["failed-checks", "too-fast", "straight-lining"]
    assert [f["name"] for f in stored["factors"]] == ["speaker", "framing"]  # the design is kept beside them


@pytest.mark.django_db
def test_one_failure_ending_the_study_is_refused_as_the_tutorial_says(tmp_path):
    from surveys.definition.errors import DefinitionError

    shutil.copy(EXAMPLE / "items.csv", tmp_path / "items.csv")
    block = section_seven().replace("after = 2 ", "after = 1 ")
    (tmp_path / "study.toml").write_text((EXAMPLE / "study.toml").read_text(encoding="utf-8") + "\n" + block,
                                         encoding="utf-8")
    with pytest.raises(DefinitionError) as refused:
        load_file(tmp_path / "study.toml")
    assert "check_failures" in str(refused.value)
