"""The overprecision demo study (Bahaj et al.) ``demo-overprecision`` (loaded by ``load_demo`` in the families'
order: after the Belem demos, before the Sileo one): the shipped definition
studies/bahaj/study.toml, loaded like any definition file (surveys.definition.loader, ``manage.py load_study``) and
made live: 52 general-knowledge questions with numeric answers written for this project (items.csv beside it: id,
question, answer, source = the topic), each asked at the five confidence levels (260 items)."""
from __future__ import annotations

from surveys.definition.files import STUDIES_DIR
from surveys.demo.outcome import LoadOutcome, load_live_demo

SLUG = "demo-overprecision"
DEFINITION = STUDIES_DIR / "bahaj" / "study.toml"
QUESTIONS_FILE = DEFINITION.parent / "items.csv"


def load_overprecision_demo() -> LoadOutcome:
    """Create the live study ``demo-overprecision`` unless a study with that slug exists (then it is left
    untouched)."""
    return load_live_demo(DEFINITION, lambda loaded: (
        f"{SLUG}: created, live, {loaded.items} items (52 questions × 5 confidence levels); completion code "
        f"{loaded.study.completion_code}"), slug=SLUG)
