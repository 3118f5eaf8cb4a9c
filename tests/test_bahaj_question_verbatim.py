"""Bahaj et al.: the question verbatim under the authors' prompt styles (issue 33.5). The authors' code sends the
CSV's ``question`` as stored ("\\nQuestion: " + question, protocol §1.4), double spaces and all; the platform's own
pages and prompts keep the collapsed statement (and so the wording baseline's prompts)."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from families.bahaj import authors as bahaj
from surveys.importers import import_items
from surveys.models import Study

pytestmark = pytest.mark.django_db

# An MMLU-style question as the authors' CSV stores it: double spaces after the colon and the full stop.
QUESTION = "Find the value of x:  2x + 3 = 11.  Give x as a number."
CSV = f'id,question,answer,source\n7,"{QUESTION}",4,mmlu\n'


def test_the_authors_styles_send_the_question_as_stored(tmp_path):
    call_command("create_study", "verb", "--instrument", "interval_confidence", stdout=io.StringIO())
    study = Study.objects.get(slug="verb")
    import_items(study, io.StringIO(CSV))
    item = study.main_items().get(key="7|90")
    assert item.statement == "Find the value of x: 2x + 3 = 11. Give x as a number."  # collapsed, as before
    kind = study.kind
    for style, strategy in (("authors-vanilla", "vanilla"), ("authors-cot", "cot")):
        prompt = kind.prompt_for_sample(item, [], False, style, 0, 1)
        assert f"\nQuestion: {QUESTION}\n" in prompt.text  # byte for byte
        assert prompt.text == bahaj.generation_prompt(QUESTION, 90, strategy, bahaj.draw_hint(
            bahaj.NO_HINT, 4.0, bahaj.hint_rng(1, item.key, 0)))
    assert kind.authors_question(item) == QUESTION  # the authors' refinement prompt's question too
    # the platform's own prompt styles and page keep the collapsed statement
    standard = kind.build_prompt(item, [], False, "standard").text
    assert QUESTION not in standard and item.statement in standard
    # a question without extra whitespace stores nothing more than before
    import_items(study, io.StringIO("id,question,answer,source\n8,What is 2 + 2?,4,mmlu\n"))
    assert "question" not in study.main_items().get(key="8|90").extra
