"""What loading one demo study did (``load_demo``'s report line), and loading a shipped definition as one."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from django.db import transaction

from surveys.definition.files import read_definition
from surveys.definition.loader import Loaded, load_file
from surveys.models import Study


@dataclass
class LoadOutcome:
    study: Study
    created: bool
    message: str


def load_live_demo(definition: Path, describe: Callable[[Loaded], str], slug: str | None = None) -> LoadOutcome:
    """The shipped ``definition`` loaded like any definition file (surveys.definition.loader, ``manage.py
    load_study``; as ``slug`` when given) and made live, all or nothing, with ``describe(loaded)`` as its line;
    a study that already has the slug is left untouched (DefinitionError names any problem of the file)."""
    slug_of = slug or read_definition(definition)[0].study.slug
    existing = Study.objects.filter(slug=slug_of).first()
    if existing is not None:
        return LoadOutcome(existing, False,
                           f"{slug_of}: already exists ({existing.main_items().count()} items); left unchanged")
    with transaction.atomic():
        loaded = load_file(definition, **({"slug": slug} if slug else {}))
        loaded.study.status = Study.Status.LIVE
        loaded.study.save(update_fields=["status"])
    return LoadOutcome(loaded.study, True, describe(loaded))
