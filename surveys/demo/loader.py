"""The demo studies written into the database.

The two speaker-belief demos are the shipped Belem definitions (``studies/belem/study.toml`` → ``demo``,
``studies/belem-verifiable/study.toml`` → ``demo-verifiable``): their texts, draw settings and demonstrations
from the file, their items from the item file it names (the Belem stimulus format: each statement × the 14
expressions + one control), imported through surveys.importers.import_items like any researcher's file. The
overprecision and verbalisation demos follow (surveys/demo/overprecision.py, verbalisation.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from surveys.definition.files import STUDIES_DIR, read_definition
from surveys.definition.schema import Definition
from surveys.importers import ImportResult, import_items
from surveys.models import Item, Study

DEMO_DIR = Path(__file__).resolve().parent
# The Belem demo definitions, in load order (a reference study before its companions), each with the slug of
# its reference study (the non-verifiable study a verifiable one is scored against; definitions do not name it).
BELEM_DEMOS: tuple[tuple[str, str | None], ...] = (("belem/study.toml", None),
                                                   ("belem-verifiable/study.toml", "demo"))


@dataclass
class LoadOutcome:
    study: Study
    created: bool
    message: str


def belem_definitions() -> list[tuple[Path, Definition, str | None]]:
    """(file, validated definition, reference slug) of each Belem demo, in load order."""
    out = []
    for relative, reference in BELEM_DEMOS:
        path = STUDIES_DIR / relative
        definition, _ = read_definition(path)
        out.append((path, definition, reference))
    return out


def _create(path: Path, definition: Definition, reference_slug: str | None) -> tuple[Study, ImportResult]:
    reference = Study.objects.get(slug=reference_slug) if reference_slug else None
    study_table, texts, draw = definition.study, definition.texts, definition.participants
    codes = {name: value for name, value in definition.prolific.model_dump().items() if value}
    study = Study.objects.create(
        slug=study_table.slug, title=study_table.title, description=study_table.description,
        instrument=study_table.kind, language=study_table.language, status=Study.Status.LIVE,
        reference_study=reference, consent_text=texts.consent, instructions=texts.instructions,
        pledge_text=texts.pledge, items_per_expression=draw.items_per_expression,
        controls_per_participant=draw.controls_per_participant, items_per_participant=draw.items_per_participant,
        draw_speaker_names=draw.draw_speaker_names, attention_filter=draw.attention_filter,
        attention_threshold=draw.attention_threshold, idle_timeout_minutes=draw.idle_timeout_minutes, **codes,
    )
    # The file's demonstrations first, so the importer does not add the paper's pair.
    for order, demo in enumerate(definition.demonstrations, start=1):
        fields = {name: value for name, value in demo.model_dump().items() if name != "answer"}
        Item.objects.create(study=study, key=f"demo-{order}", is_demonstration=True, demo_order=order,
                            demo_answer=demo.answer, **fields)
    result = import_items(study, path.parent / definition.design.items)
    return study, result


def load_demo() -> list[LoadOutcome]:
    """Create the demo studies that do not exist yet; existing ones (same slug) are left untouched."""
    outcomes = []
    with transaction.atomic():
        for path, definition, reference in belem_definitions():
            slug = definition.study.slug
            existing = Study.objects.filter(slug=slug).first()
            if existing is not None:
                count = existing.main_items().count()
                outcomes.append(LoadOutcome(existing, False, f"{slug}: already exists ({count} items); left unchanged"))
                continue
            study, result = _create(path, definition, reference)
            outcomes.append(LoadOutcome(
                study, True,
                f"{study.slug}: created, live, {result.created} items ({result.controls} controls), "
                f"{len(definition.demonstrations)} demonstrations; completion code {study.completion_code}",
            ))
        from .overprecision import load_overprecision_demo

        outcomes.append(LoadOutcome(*load_overprecision_demo()))
    from .verbalisation import load_verbalisation_demo  # late: it imports this module

    outcomes.append(load_verbalisation_demo())
    return outcomes
