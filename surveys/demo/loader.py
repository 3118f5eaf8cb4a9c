"""The demo studies written into the database.

The two speaker-belief demos are the shipped Belem definitions, loaded like any definition file
(surveys.definition.loader, ``manage.py load_study``): ``studies/belem/study.toml`` → ``demo`` and
``studies/belem-verifiable/study.toml`` → ``demo-verifiable`` (texts, draw settings, demonstrations, and the
items of the file beside each: every statement × the 14 expressions + one control), then made live, the
verifiable one with ``demo`` as its reference study. The overprecision demo follows, loaded the same way from
``studies/bahaj/study.toml`` (surveys/demo/overprecision.py), then the demos the installed families contribute
(config.registry, kind ``demos``; e.g. families/sileo/demo.py: ``demo-sileo``).
"""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from surveys.definition.files import STUDIES_DIR, read_definition
from surveys.definition.loader import load_file
from surveys.models import Study

from .outcome import LoadOutcome
from config import registry

from .overprecision import load_overprecision_demo

DEMO_DIR = Path(__file__).resolve().parent
# The Belem demos (definitions under studies/), in load order: the verifiable set names the non-verifiable one it
# is scored against ([study] reference), so that one comes first.
BELEM_DEMOS: tuple[str, ...] = ("belem/study.toml", "belem-verifiable/study.toml")


def load_belem_demo(relative: str) -> LoadOutcome:
    """Load one shipped Belem definition as a live demo study (DefinitionError names any problem)."""
    loaded = load_file(STUDIES_DIR / relative)
    study = loaded.study
    study.status = Study.Status.LIVE
    study.save(update_fields=["status"])
    controls = study.main_items().filter(is_control=True).count()
    return LoadOutcome(study, True, f"{study.slug}: created, live, {loaded.items} items ({controls} controls), "
                                    f"{loaded.demonstrations} demonstrations; completion code {study.completion_code}")


def load_demo() -> list[LoadOutcome]:
    """Create the demo studies that do not exist yet; existing ones (same slug) are left untouched."""
    outcomes = []
    with transaction.atomic():
        for relative in BELEM_DEMOS:
            slug = read_definition(STUDIES_DIR / relative)[0].study.slug
            existing = Study.objects.filter(slug=slug).first()
            if existing is not None:
                count = existing.main_items().count()
                outcomes.append(LoadOutcome(existing, False, f"{slug}: already exists ({count} items); left unchanged"))
                continue
            outcomes.append(load_belem_demo(relative))
        outcomes.append(LoadOutcome(*load_overprecision_demo()))
    outcomes.extend(load_family_demos())
    return outcomes


def load_family_demos() -> list[LoadOutcome]:
    """The demos the installed families contribute (config.registry, kind ``demos``), in the families' order."""
    return [registry.get("demos", name)() for name in registry.names("demos")]
