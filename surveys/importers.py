"""Item import: a CSV file becomes a study's items, all or nothing."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

from django.core.exceptions import FieldDoesNotExist
from django.db import IntegrityError, transaction

from .instruments import ImportRowError
from .models import Item, Study

MAX_REPORTED_ERRORS = 20


@dataclass
class RowError:
    line: int  # line in the file where the row starts; the header is line 1
    column: str
    message: str
    row: int | None = None  # the row as a spreadsheet numbers it (header = row 1); differs from
    # ``line`` when a cell holds line breaks (as in some published stimulus files) or the file has blank lines

    def where(self) -> str:
        """``line N`` plus the spreadsheet row when it differs."""
        return _where(self.line, self.row)

    def __str__(self) -> str:
        return f"{self.where()}, column {self.column!r}: {self.message}"


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
    demonstrations_added: int = 0

    def breakdown(self) -> str:
        """What the items hold, for the messages after an import: "60 controls; truth false: 450, true: 450";
        controls and truth values only when there are any (not "0 controls; truth none: 15" for questions)."""
        parts = [f"{self.controls} control{'' if self.controls == 1 else 's'}"] if self.controls else []
        if set(self.by_truth) - {"none"}:
            parts.append("truth " + ", ".join(f"{k}: {v}" for k, v in sorted(self.by_truth.items())))
        return "; ".join(parts)


@dataclass
class CsvRecord:
    """One data row of a CSV file and where it is."""

    line: int  # first line of the row in the file (header = 1)
    row: int  # the row as a spreadsheet numbers it (header = 1)
    values: dict[str, str]

    def error(self, column: str, message: str) -> RowError:
        return RowError(self.line, column, message, self.row)

    def where(self) -> str:
        return _where(self.line, self.row)


def _where(line: int, row: int | None) -> str:
    return f"line {line}" + (f" (spreadsheet row {row})" if row and row != line else "")


def _decode(source: str | Path | IO[bytes] | IO[str]) -> str:
    if isinstance(source, (str, Path)):
        data: str | bytes = Path(source).read_bytes()
    else:
        data = source.read()
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFailed([RowError(1, "-", f"the file is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                                 "save it as CSV UTF-8")]) from None
    return data.removeprefix("\ufeff")


NUL_MESSAGE = ("holds a NUL character (byte 0), which no text column can store: remove it (a file saved "
               "as UTF-16 or a binary file shows this)")


def nul_columns(names: Iterable[str], cells: Iterable[str]) -> list[str]:
    """The columns (of ``names``) whose cell holds a NUL character."""
    return [name for name, cell in zip(names, cells) if "\x00" in cell]


def read_csv_records(source: str | Path | IO[bytes] | IO[str], required: Iterable[str],
                     errors: list[RowError] | None = None) -> list[CsvRecord]:
    """Data rows of a CSV file (UTF-8, BOM allowed) with their locations; blank rows are skipped.

    ImportFailed if a required column is missing (in ``required``'s order), a column is repeated, or the file
    is not UTF-8. A row with more or fewer cells than the header, a cell holding a NUL character (no database
    text takes one), or malformed CSV from some row on: an error of that row; with ``errors`` given, these are appended to it and the good rows are returned (so that the
    caller reports them together with the errors it finds in the good rows), else ImportFailed.
    """
    reader = csv.reader(io.StringIO(_decode(source), newline=""))
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise ImportFailed([RowError(1, "-", f"malformed CSV: {exc}")]) from None
    header = [h.strip() for h in header]
    if any("\x00" in h for h in header):
        raise ImportFailed([RowError(1, "-", f"the header {NUL_MESSAGE}", 1)])
    missing = [c for c in required if c not in header]
    if missing:
        hint = ""
        if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
            hint = " (the file seems to use ';' or tabs between columns: save it as comma-separated CSV)"
        raise ImportFailed([RowError(1, c, "required column is missing from the header" + hint, 1)
                            for c in missing])
    duplicated = sorted({h for h in header if h and header.count(h) > 1})
    if duplicated:
        raise ImportFailed([RowError(1, c, "the header has this column more than once", 1) for c in duplicated])
    records: list[CsvRecord] = []
    collect, errors = errors is not None, errors if errors is not None else []
    row_number = 1
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append(RowError(start, "-", f"malformed CSV: {exc}", row_number + 1))
            break
        row_number += 1
        if not any(c.strip() for c in cells):
            continue  # blank row
        if len(cells) != len(header):
            more_or_fewer = "more" if len(cells) > len(header) else "fewer"
            errors.append(RowError(start, "-", f"the row has {len(cells)} cells, {more_or_fewer} than the "
                                               f"{len(header)} columns of the header", row_number))
            continue
        if nul := nul_columns(header, cells):
            errors.extend(RowError(start, column, NUL_MESSAGE, row_number) for column in nul)
            continue
        records.append(CsvRecord(start, row_number, dict(zip(header, cells))))
    if errors and not collect:
        raise ImportFailed(errors)
    return records


def read_csv_rows(source: str | Path | IO[bytes] | IO[str], required: Iterable[str]) -> list[dict[str, str]]:
    """Rows of a CSV file (UTF-8, BOM allowed) as dicts; ImportFailed if a required column is missing."""
    return [record.values for record in read_csv_records(source, required)]


def _column_of(values: dict[str, str], field_name: str, value: str) -> str:
    """The file's column a model field came from: the same name, else the column holding that value."""
    if field_name in values:
        return field_name
    matches = [c for c, cell in values.items() if cell.strip().lower() == value.lower()]
    return matches[0] if matches else ("statement_id" if "statement_id" in values else "-")


def too_long(fields: dict[str, object]) -> list[tuple[str, str]]:
    """(field, message) per value longer than its Item column allows (PostgreSQL would refuse the whole insert
    with a DataError naming neither line nor column)."""
    found = []
    for name, value in fields.items():
        try:
            limit = Item._meta.get_field(name).max_length
        except FieldDoesNotExist:
            continue
        if limit and isinstance(value, str) and len(value) > limit:
            found.append((name, f"{len(value)} characters; at most {limit} are allowed"))
    return found


def length_errors(record: CsvRecord, fields: dict[str, object]) -> list[RowError]:
    """A RowError per value longer than its Item column allows, naming the CSV column it came from."""
    return [record.error(_column_of(record.values, name, fields[name]),  # type: ignore[arg-type]
                         message + (" (in the item's key built from it)" if name == "key" else ""))
            for name, message in too_long(fields)]


def import_items(study: Study, source: str | Path | IO[bytes] | IO[str]) -> ImportResult:
    """Import every row of ``source`` as an item of ``study`` with the study's instrument.

    All or nothing: any bad row (or a key already in the study) raises ImportFailed naming the
    line and column, and the database is left as it was. Every row is checked in one pass: the errors of the
    whole file come together, in line order (a short row does not hide the others).
    """
    kind = study.kind
    errors: list[RowError] = []
    records = read_csv_records(source, kind.import_columns, errors)
    items: list[Item] = []
    existing = set(study.items.values_list("key", flat=True))
    seen: dict[str, CsvRecord] = {}
    for record in records:
        try:
            rows_fields = kind.items_from_row(record.values)
        except ImportRowError as exc:
            errors.append(record.error(exc.column, exc.message))
            continue
        for fields in rows_fields:
            key = kind.item_key(fields)
            too_long = length_errors(record, {**fields, "key": key})
            if too_long:
                errors.extend(too_long)
                break
            if key in seen:
                errors.append(record.error("statement_id", f"same item as {seen[key].where()} ({key})"))
                break
            if key in existing:
                errors.append(record.error("statement_id", f"item {key} is already in study {study.slug}"))
                break
            seen[key] = record
            items.append(Item(study=study, key=key, source_row=record.row, **fields))
    if errors:
        raise ImportFailed(sorted(errors, key=lambda e: e.line))
    if not items:
        raise ImportFailed([RowError(2, "-", "the file has no rows", 2)])
    demonstrations = 0
    try:
        with transaction.atomic():
            Item.objects.bulk_create(items, batch_size=500)
            if not study.demonstrations() and hasattr(kind, "default_demonstrations"):
                for order, fields in enumerate(kind.default_demonstrations(items), start=1):
                    Item.objects.create(study=study, key=f"demo-{order}", is_demonstration=True,
                                        demo_order=order, **fields)
                    demonstrations += 1
            if study.versions.exists():  # a study loaded from a definition: its items are part of its content
                from surveys.definition.versions import sync

                sync(study)
    except IntegrityError:
        # Another import into the same study won the race; the transaction left nothing behind.
        raise ImportFailed([RowError(1, "-", f"study {study.slug} received items with the same keys while "
                                             "this file was being imported; nothing was imported, try again")]
                           ) from None
    truth: dict[str, int] = {}
    for item in items:
        truth[item.truth or "none"] = truth.get(item.truth or "none", 0) + 1
    return ImportResult(created=len(items), controls=sum(i.is_control for i in items), by_truth=truth,
                        demonstrations_added=demonstrations)
