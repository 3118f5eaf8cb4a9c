"""The overprecision demo study (Bahaj et al.) ``demo-overprecision`` (loaded by ``load_demo`` in the families'
order: after the Belem demos, before the Sileo one): the shipped definition
studies/bahaj/study.toml, loaded like any definition file (surveys.definition.loader, ``manage.py load_study``) and
made live: 52 general-knowledge questions with numeric answers written for this project (items.csv beside it: id,
question, answer, source = the topic), each asked at the five confidence levels (260 items)."""
from __future__ import annotations

from django.db import transaction

from surveys.definition.files import STUDIES_DIR
from surveys.definition.loader import load_file
from surveys.models import Study

from surveys.demo.outcome import LoadOutcome

SLUG = "demo-overprecision"
DEFINITION = STUDIES_DIR / "bahaj" / "study.toml"
QUESTIONS_FILE = DEFINITION.parent / "items.csv"


def load_overprecision_demo() -> LoadOutcome:
    """Create the live study ``demo-overprecision`` unless a study with that slug exists (then it is left
    untouched)."""
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None:
        return LoadOutcome(existing, False,
                           f"{SLUG}: already exists ({existing.main_items().count()} items); left unchanged")
    with transaction.atomic():
        loaded = load_file(DEFINITION, slug=SLUG)
        study = loaded.study
        study.status = Study.Status.LIVE
        study.save(update_fields=["status"])
    return LoadOutcome(study, True, f"{SLUG}: created, live, {loaded.items} items (52 questions × 5 confidence "
                                    f"levels); completion code {study.completion_code}")
