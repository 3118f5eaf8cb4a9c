"""The two speaker-belief demos (``manage.py load_demo``): the shipped Belem definitions, loaded like any
definition file (surveys.definition.loader, ``manage.py load_study``): ``studies/belem/study.toml`` → ``demo`` and
``studies/belem-verifiable/study.toml`` → ``demo-verifiable`` (texts, draw settings, demonstrations, and the items
of the file beside each: every statement × the 14 expressions + one control), then made live, the verifiable one
with ``demo`` as its reference study (so ``demo`` is declared first)."""
from __future__ import annotations

from surveys.definition.files import STUDIES_DIR, read_definition
from surveys.definition.loader import load_file
from surveys.demo.outcome import LoadOutcome
from surveys.models import Study

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


def load_shipped_demo(relative: str) -> LoadOutcome:
    """The demo of ``relative`` (under studies/), unless a study with its slug exists: then it is left unchanged."""
    slug = read_definition(STUDIES_DIR / relative)[0].study.slug
    existing = Study.objects.filter(slug=slug).first()
    if existing is not None:
        count = existing.main_items().count()
        return LoadOutcome(existing, False, f"{slug}: already exists ({count} items); left unchanged")
    return load_belem_demo(relative)


def load_nonverifiable_demo() -> LoadOutcome:
    """``demo``: Belem's non-verifiable statements."""
    return load_shipped_demo(BELEM_DEMOS[0])


def load_verifiable_demo() -> LoadOutcome:
    """``demo-verifiable``: Belem's verifiable statements, scored against ``demo``."""
    return load_shipped_demo(BELEM_DEMOS[1])
