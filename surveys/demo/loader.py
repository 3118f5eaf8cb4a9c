"""The demo studies (surveys/demo/studies.toml + statement files) written into the database.

Items are generated in the Belem stimulus format from the statement files (each statement × the
14 expressions + one control, speakers from the instrument's name list with genders balanced) and
imported through surveys.importers.import_items, like any researcher's file.
"""
from __future__ import annotations

import csv
import io
import tomllib
from pathlib import Path
from typing import Any

from django.db import transaction

from surveys.importers import ImportResult, import_items
from surveys.instruments.speaker_belief import CONTROL, EXPRESSIONS, NAMES, PRONOUNS
from surveys.models import Item, Study

from .outcome import LoadOutcome
from .overprecision import load_overprecision_demo
from .verbalisation import load_verbalisation_demo

DEMO_DIR = Path(__file__).resolve().parent
STUDIES_FILE = DEMO_DIR / "studies.toml"
BELEM_COLUMNS = ("statement_type", "name", "gender", "pronouns", "is_control", "uncertainty_expression",
                 "statement_id", "statement")
STUDY_FIELDS = ("title", "description", "consent_text", "instructions", "pledge_text", "items_per_expression",
                "controls_per_participant")


def demo_specs() -> list[dict[str, Any]]:
    """The studies described in studies.toml, in load order (a reference study before its companions)."""
    with open(STUDIES_FILE, "rb") as f:
        return tomllib.load(f)["study"]


def read_statements(path: Path) -> list[dict[str, str]]:
    """Rows (statement_id, statement_type, statement) of a demo statements file."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def belem_rows(statements: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each statement × (14 expressions + control) as rows of the Belem stimulus format.

    Speakers alternate female/male row by row and walk through each gender's name list, so the
    genders are balanced and the same inputs always give the same file.
    """
    genders = sorted(NAMES)
    used = {g: 0 for g in genders}
    rows = []
    for statement in statements:
        for label in (CONTROL, *EXPRESSIONS):
            gender = genders[len(rows) % len(genders)]
            name = NAMES[gender][used[gender] % len(NAMES[gender])]
            used[gender] += 1
            rows.append({
                "statement_type": statement["statement_type"],
                "name": name,
                "gender": gender,
                "pronouns": repr(dict(sorted(PRONOUNS[gender].items()))),
                "is_control": str(label == CONTROL),
                "uncertainty_expression": label,
                "statement_id": statement["statement_id"],
                "statement": statement["statement"],
            })
    return rows


def belem_csv(rows: list[dict[str, str]]) -> str:
    """The rows as CSV text with the Belem column names."""
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=BELEM_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _create(spec: dict[str, Any]) -> tuple[Study, ImportResult]:
    reference = Study.objects.get(slug=spec["reference"]) if spec.get("reference") else None
    study = Study.objects.create(
        slug=spec["slug"], status=Study.Status.LIVE, reference_study=reference,
        **{name: spec[name].strip() if isinstance(spec[name], str) else spec[name] for name in STUDY_FIELDS},
    )
    # Our own demonstrations first, so the importer does not add the paper's pair.
    for order, demo in enumerate(spec["demonstration"], start=1):
        Item.objects.create(study=study, key=f"demo-{order}", is_demonstration=True, demo_order=order, **demo)
    rows = belem_rows(read_statements(DEMO_DIR / spec["statements"]))
    result = import_items(study, io.StringIO(belem_csv(rows)))
    return study, result


def load_demo() -> list[LoadOutcome]:
    """Create the demo studies that do not exist yet; existing ones (same slug) are left untouched."""
    outcomes = []
    with transaction.atomic():
        for spec in demo_specs():
            existing = Study.objects.filter(slug=spec["slug"]).first()
            if existing is not None:
                count = existing.main_items().count()
                outcomes.append(LoadOutcome(existing, False,
                                            f"{spec['slug']}: already exists ({count} items); left unchanged"))
                continue
            study, result = _create(spec)
            outcomes.append(LoadOutcome(
                study, True,
                f"{study.slug}: created, live, {result.created} items ({result.controls} controls), "
                f"2 demonstrations; completion code {study.completion_code}",
            ))
        outcomes.append(LoadOutcome(*load_overprecision_demo()))

    outcomes.append(load_verbalisation_demo())
    return outcomes
