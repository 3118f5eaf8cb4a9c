"""The Sileo & Moens demo study ``demo-sileo`` (loaded by ``load_demo`` after the Belem demos): 8 WEP-Reasoning
items of 1 hop and 8 of 2 hops (the ``wep-reasoning`` design, seed 1) and the 16 WEP-UNLI triples of
``wep-unli-triples.csv``, each participant answering 12 of them."""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from surveys.designs import generate_items
from surveys.importers import import_items
from surveys.instruments.verbalisation_choice import VerbalisationChoice
from surveys.models import Study

from .outcome import LoadOutcome

SLUG = "demo-sileo"
TRIPLES = Path(__file__).resolve().parent / "wep-unli-triples.csv"
TEXTS = {
    "title": "Which word of probability fits? (Sileo & Moens demo)",
    "description": ("Demo study shipped with hedgelab: 8 one-step and 8 two-step WEP-Reasoning items (generated, "
                    "exact probabilities with ProbLog) and 16 WEP-UNLI-style items from "
                    "surveys/demo/wep-unli-triples.csv; each participant answers 12."),
    "consent_text": (
        "Thank you for your interest in this study. It is part of a research project on how people understand "
        "words such as \"likely\", \"we doubt\" or \"almost certain\". It takes about 6 minutes.\n\n"
        "What you will do: read 12 short texts and, for each, choose which of two statements fits it better. "
        "\n\nWhat we collect: your Prolific ID, your answers, how long each page took, the times at which you "
        "started and finished, and the type of browser you use. Your Prolific ID is used only to pay you and is "
        "replaced by an anonymous code before the data are analysed or shared.\n\n"
        "Taking part is voluntary. You can stop at any time by closing this page and returning the study on "
        "Prolific."),
    "instructions": (
        "Some texts say how likely a few events are, for example \"It is likely that John went to the kitchen.\" "
        "Work out how likely the statement below the text is, then choose the statement whose wording of "
        "probability fits best. Take the events as independent of one another."),
    "pledge_text": "I will read each text carefully and answer as well as I can, without help from others.",
}


def load_verbalisation_demo() -> LoadOutcome:
    """Create ``demo-sileo`` unless a study with that slug exists (then it is left untouched)."""
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None:
        return LoadOutcome(existing, False,
                           f"{SLUG}: already exists ({existing.main_items().count()} items); left unchanged")
    with transaction.atomic():
        study = Study.objects.create(slug=SLUG, instrument="verbalisation_choice", status=Study.Status.LIVE,
                                     items_per_participant=VerbalisationChoice.default_items_per_participant, **TEXTS)
        generate_items(study, "wep-reasoning", hops=1, n=8, seed=1)
        generate_items(study, "wep-reasoning", hops=2, n=8, seed=1)
        import_items(study, TRIPLES)
    return LoadOutcome(study, True, f"{SLUG}: created, live, {study.main_items().count()} verbalisation items "
                                    f"(1 hop, 2 hops, UNLI-style); completion code {study.completion_code}")
