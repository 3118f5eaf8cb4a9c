"""The definition layer sees model answers without importing the elicitation app above it (issue 34 point 5:
surveys/definition/ reaches them through elicitation's reverse relations, ``item.model_responses`` and
``study.runs``): a study with model answers only has answers, a file that drops an answered item keeps it, and
a study made before versions gets its runs attached to its first version."""
from __future__ import annotations

import pytest

from surveys.definition.loader import load_file
from surveys.definition.versions import ensure_first_version, has_answers
from surveys.models import Item, Study
from tests.test_analysis_factories import add_run
from tests.test_study_definitions import TANG, write


@pytest.mark.django_db
def test_model_answers_alone_are_answers_and_keep_their_item(tmp_path):
    load_file(write(tmp_path, TANG))
    study = Study.objects.get(slug="tang-file")
    assert not has_answers(study)
    answered, unanswered = study.main_items().order_by("key")[:2]
    add_run(study, "stub", [(answered, 60)])
    assert has_answers(study)
    loaded = load_file(write(tmp_path, TANG.replace('settings = ["CNC"]', 'settings = ["ENC"]')), new_version=True)
    assert loaded.kept == [answered.key]  # gone from the file, kept: a model answered it
    assert Item.objects.filter(pk=answered.pk).exists()
    assert not Item.objects.filter(pk=unanswered.pk).exists()


@pytest.mark.django_db
def test_a_study_without_versions_gets_its_runs_attached_to_the_first(tmp_path):
    load_file(write(tmp_path, TANG))
    study = Study.objects.get(slug="tang-file")
    study.versions.all().delete()
    run = add_run(study, "stub", [(study.main_items().first(), 60)])
    assert run.study_version is None
    first = ensure_first_version(study)
    run.refresh_from_db()
    assert first is not None and run.study_version == first
