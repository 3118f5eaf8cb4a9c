"""Item import: a CSV file becomes a study's items, all or nothing."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

from django.db import transaction

from .instruments import ImportRowError
from .models import Item, Study

MAX_REPORTED_ERRORS = 20


@dataclass
class RowError:
    line: int  # line in the file; the header is line 1
    column: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column!r}: {self.message}"


class ImportFailed(Exception):
    """Nothing was imported; ``errors`` says where and why."""

    def __init__(self, errors: list[RowError], total: int | None = None):
        self.errors = errors
        self.total = total if total is not None else len(errors)
        shown = "\n".join(f"  {e}" for e in errors[:MAX_REPORTED_ERRORS])
        more = f"\n  … and {self.total - MAX_REPORTED_ERRORS} more" if self.total > MAX_REPORTED_ERRORS else ""
        super().__init__(f"nothing imported: {self.total} error(s)\n{shown}{more}")


@dataclass
class ImportResult:
    created: int
    controls: int
    by_truth: dict[str, int] = field(default_factory=dict)


def read_csv_rows(source: str | Path | IO[bytes] | IO[str], required: Iterable[str]) -> list[dict[str, str]]:
    """Rows of a CSV file (UTF-8, BOM allowed) as dicts; ImportFailed if a required column is missing."""
    if isinstance(source, (str, Path)):
        text = Path(source).read_bytes()
    else:
        text = source.read()
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFailed([RowError(1, "-", f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})")])
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in required if c not in header]
    if missing:
        raise ImportFailed([RowError(1, c, "required column is missing from the header") for c in missing])
    rows = []
    try:
        for row in reader:
            if None in row:  # more cells than header columns
                raise ImportFailed([RowError(reader.line_num, "-", "the row has more cells than the header")])
            rows.append(row)
    except csv.Error as exc:
        raise ImportFailed([RowError(reader.line_num, "-", f"malformed CSV: {exc}")]) from None
    return rows


def import_items(study: Study, source: str | Path | IO[bytes] | IO[str]) -> ImportResult:
    """Import every row of ``source`` as an item of ``study`` with the study's instrument.

    All or nothing: any bad row (or a key already in the study) raises ImportFailed naming the
    line and column, and the database is left as it was.
    """
    kind = study.kind
    rows = read_csv_rows(source, kind.import_columns)
    errors: list[RowError] = []
    items: list[Item] = []
    existing = set(study.items.values_list("key", flat=True))
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        line = index + 2
        if not any((v or "").strip() for v in row.values()):
            continue  # blank line
        try:
            fields = kind.item_fields_from_row(row)
        except ImportRowError as exc:
            errors.append(RowError(line, exc.column, exc.message))
            continue
        key = kind.item_key(fields)
        if key in seen:
            errors.append(RowError(line, "statement_id", f"same item as line {seen[key]} ({key})"))
            continue
        if key in existing:
            errors.append(RowError(line, "statement_id", f"item {key} is already in study {study.slug}"))
            continue
        seen[key] = line
        items.append(Item(study=study, key=key, source_row=line, **fields))
    if errors:
        raise ImportFailed(errors)
    if not items:
        raise ImportFailed([RowError(2, "-", "the file has no rows")])
    with transaction.atomic():
        Item.objects.bulk_create(items, batch_size=500)
        if not study.demonstrations() and hasattr(kind, "default_demonstrations"):
            for order, fields in enumerate(kind.default_demonstrations(items), start=1):
                Item.objects.create(study=study, key=f"demo-{order}", is_demonstration=True, demo_order=order,
                                    **fields)
    truth: dict[str, int] = {}
    for item in items:
        truth[item.truth or "none"] = truth.get(item.truth or "none", 0) + 1
    return ImportResult(created=len(items), controls=sum(i.is_control for i in items), by_truth=truth)
