"""The study file written in docs/tutorials/study-file.md, copied as a new researcher copies it: the definition
shown in section 2 with the example's item file beside it passes ``check_study`` (the walk of issue 32 found its
prompt naming ``wording.task`` with no ``[wording]`` table, refused at ``prompt``)."""
from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorials" / "study-file.md"


def tutorial_definition() -> str:
    """The first TOML block of the tutorial: the whole definition of section 2."""
    blocks = re.findall(r"```toml\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), flags=re.S)
    assert blocks and blocks[0].startswith("format = 1"), "the tutorial's definition block moved"
    return blocks[0]


@pytest.mark.django_db
def test_the_tutorials_definition_passes_check_study_as_written(tmp_path):
    (tmp_path / "study.toml").write_text(tutorial_definition(), encoding="utf-8")
    shutil.copy(ROOT / "studies" / "examples" / "hedge-confidence" / "items.csv", tmp_path / "items.csv")
    out = StringIO()
    call_command("check_study", str(tmp_path / "study.toml"), stdout=out)
    text = out.getvalue()
    assert "OK: nothing was written" in text
    assert "How sure is the doctor that the treatment will work?" in text
