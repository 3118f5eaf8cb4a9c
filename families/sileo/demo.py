"""The Sileo & Moens demo study ``demo-sileo`` (loaded by ``load_demo`` after the Belem demos): the shipped
definition studies/sileo/study.toml, loaded like any definition file (surveys.definition.loader, ``manage.py
load_study``) and made live: 8 WEP-Reasoning items of 1 hop and 8 of 2 hops and 16 WEP-UNLI-style items
(items.jsonl beside it), each participant answering 12 of them."""
from __future__ import annotations

from django.db import transaction

from surveys.definition.files import STUDIES_DIR
from surveys.definition.loader import load_file
from surveys.models import Study

from surveys.demo.outcome import LoadOutcome

SLUG = "demo-sileo"
DEFINITION = STUDIES_DIR / "sileo" / "study.toml"


def load_verbalisation_demo() -> LoadOutcome:
    """Create ``demo-sileo`` unless a study with that slug exists (then it is left untouched)."""
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None:
        return LoadOutcome(existing, False,
                           f"{SLUG}: already exists ({existing.main_items().count()} items); left unchanged")
    with transaction.atomic():
        study = load_file(DEFINITION, slug=SLUG).study
        study.status = Study.Status.LIVE
        study.save(update_fields=["status"])
    return LoadOutcome(study, True, f"{SLUG}: created, live, {study.main_items().count()} verbalisation items "
                                    f"(1 hop, 2 hops, UNLI-style); completion code {study.completion_code}")
