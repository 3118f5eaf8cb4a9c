"""The Sileo & Moens demo study ``demo-sileo`` (loaded by ``load_demo`` after the Belem demos): the shipped
definition studies/sileo/study.toml, loaded like any definition file (surveys.definition.loader, ``manage.py
load_study``) and made live: 8 WEP-Reasoning items of 1 hop and 8 of 2 hops and 16 WEP-UNLI-style items
(items.jsonl beside it), each participant answering 12 of them."""
from __future__ import annotations

from surveys.definition.files import STUDIES_DIR
from surveys.demo.outcome import LoadOutcome, load_live_demo

SLUG = "demo-sileo"
DEFINITION = STUDIES_DIR / "sileo" / "study.toml"


def load_verbalisation_demo() -> LoadOutcome:
    """Create ``demo-sileo`` unless a study with that slug exists (then it is left untouched)."""
    return load_live_demo(DEFINITION, lambda loaded: (
        f"{SLUG}: created, live, {loaded.study.main_items().count()} verbalisation items (1 hop, 2 hops, "
        f"UNLI-style); completion code {loaded.study.completion_code}"), slug=SLUG)
