"""The two speaker-belief demos (``manage.py load_demo``): the shipped Belem definitions, loaded like any
definition file (surveys.definition.loader, ``manage.py load_study``): ``studies/belem/study.toml`` → ``demo`` and
``studies/belem-verifiable/study.toml`` → ``demo-verifiable`` (texts, draw settings, demonstrations, and the items
of the file beside each: every statement × the 14 expressions + one control), then made live, the verifiable one
with ``demo`` as its reference study (so ``demo`` is declared first)."""
from __future__ import annotations

from surveys.definition.files import STUDIES_DIR
from surveys.definition.loader import Loaded
from surveys.demo.outcome import LoadOutcome, load_live_demo

# The Belem demos (definitions under studies/), in load order: the verifiable set names the non-verifiable one it
# is scored against ([study] reference), so that one comes first.
BELEM_DEMOS: tuple[str, ...] = ("belem/study.toml", "belem-verifiable/study.toml")


def created_line(loaded: Loaded) -> str:
    """What load_demo says of a Belem demo it created."""
    study = loaded.study
    controls = study.main_items().filter(is_control=True).count()
    return (f"{study.slug}: created, live, {loaded.items} items ({controls} controls), "
            f"{loaded.demonstrations} demonstrations; completion code {study.completion_code}")


def load_nonverifiable_demo() -> LoadOutcome:
    """``demo``: Belem's non-verifiable statements (left untouched when it exists)."""
    return load_live_demo(STUDIES_DIR / BELEM_DEMOS[0], created_line)


def load_verifiable_demo() -> LoadOutcome:
    """``demo-verifiable``: Belem's verifiable statements, scored against ``demo`` (left untouched when it exists)."""
    return load_live_demo(STUDIES_DIR / BELEM_DEMOS[1], created_line)
