"""The items a definition names: an item file beside it (CSV or JSONL), its ``[[demonstrations]]``, or a generator.

Every problem is a :class:`~surveys.definition.errors.Problem` naming the file and the line and column, and all
of a file's problems are found in one pass. The result is a list of Item field dicts (``key`` included; fields
that are not Item columns go into ``extra``), nothing written.

- CSV, a family kind: the kind's own import columns, read by its ``items_from_row`` (the same rules as the
  item import).
- CSV, the generic kind: one item per row, named by the ``[design] key`` column; columns that are Item fields
  (``expression``, ``truth``, ``context``, …) fill them, every other column is a free-form field in ``extra``.
- JSONL: one JSON object per line, an item's fields as ``export_study`` writes them (any kind).
"""
from __future__ import annotations

import io
import json
from typing import Any, Mapping

from surveys.importers import ImportFailed, length_errors, read_csv_records, too_long
from surveys.instruments import ImportRowError
from surveys.models import Item

from .errors import Problem
from .study_fields import ITEM_COLUMNS



def _coerce(name: str, value: Any) -> Any:
    """A CSV cell or JSON value for Item column ``name`` (ValueError says why it does not fit)."""
    field = Item._meta.get_field(name)
    internal = field.get_internal_type()
    if internal == "BooleanField":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no", ""):
            return False
        raise ValueError(f"{value!r} is not true or false")
    if internal in ("FloatField",):
        if value in ("", None):
            return None
        return float(value)
    if internal in ("PositiveSmallIntegerField", "PositiveIntegerField"):
        if value in ("", None):
            return None
        number = int(value)
        if number < 0:
            raise ValueError("must not be negative")
        return number
    if internal == "JSONField":
        return value
    if value is None:
        return ""
    text = str(value)
    if field.choices and text not in {c[0] for c in field.choices}:
        raise ValueError(f"{text!r} is not one of {', '.join(repr(c[0]) for c in field.choices)}")
    return text


def fields_of(values: Mapping[str, Any], key_column: str = "key") -> dict[str, Any]:
    """Item fields from a generic row or JSON object: Item columns by name, the rest in ``extra``; ValueError
    carries (column, message)."""
    fields: dict[str, Any] = {"extra": {}}
    for name, value in values.items():
        if name == key_column:
            fields["key"] = str(value).strip()
        elif name == "extra" and isinstance(value, dict):
            fields["extra"].update(value)
        elif name in ITEM_COLUMNS and name != "key":
            try:
                fields[name] = _coerce(name, value)
            except (TypeError, ValueError) as exc:
                raise ValueError(name, str(exc)) from None
        else:
            fields["extra"][name] = value
    if not fields.get("key"):
        raise ValueError(key_column, "is empty (every item needs a key)")
    return fields


def _column_and_message(exc: ValueError) -> tuple[str, str]:
    """(column, message) of a :func:`fields_of` error (or "-" and its text for any other ValueError)."""
    return exc.args if len(exc.args) == 2 else ("-", str(exc))  # type: ignore[return-value]


def read_items(kind: Any, data: bytes, file: str, key_column: str = "key") -> tuple[list[dict[str, Any]], list[Problem]]:
    """(item field dicts, problems) of an item file's bytes; ``kind`` is the study's instrument."""
    if file.lower().endswith(".jsonl"):
        return _read_jsonl(data, file)
    if file.lower().endswith(".csv"):
        return _read_csv(kind, data, file, key_column)
    return [], [Problem(file, "", "an item file is .csv or .jsonl")]


def _read_csv(kind: Any, data: bytes, file: str, key_column: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    errors: list = []
    generic = not kind.import_columns
    required = (key_column,) if generic else kind.import_columns
    try:
        records = read_csv_records(io.BytesIO(data), required, errors)
    except ImportFailed as failed:
        return [], [Problem(file, f"{e.where()}, column {e.column!r}", e.message) for e in failed.errors]
    problems = [Problem(file, f"{e.where()}, column {e.column!r}", e.message) for e in errors]
    items: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for record in records:
        try:
            if generic:
                rows = [fields_of(record.values, key_column)]
            else:
                rows = kind.items_from_row(record.values)
                for fields in rows:
                    fields["key"] = kind.item_key(fields)
        except ImportRowError as exc:
            problems.append(Problem(file, f"{record.where()}, column {exc.column!r}", exc.message))
            continue
        except ValueError as exc:
            column, message = _column_and_message(exc)
            problems.append(Problem(file, f"{record.where()}, column {column!r}", message))
            continue
        for fields in rows:
            too_long = length_errors(record, fields)
            if too_long:
                problems.extend(Problem(file, f"{e.where()}, column {e.column!r}", e.message) for e in too_long)
                break
            key = fields["key"]
            if key in seen:
                problems.append(Problem(file, f"{record.where()}, column {key_column if generic else 'key'!r}",
                                        f"duplicate item key {key!r} (first at {seen[key]})"))
                break
            seen[key] = record.where()
            fields["source_row"] = record.row
            items.append(fields)
    if not items and not problems:
        problems.append(Problem(file, "line 2", "the file has no items"))
    return items, problems


def _read_jsonl(data: bytes, file: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    problems: list[Problem] = []
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [], [Problem(file, f"byte {exc.start}", "not UTF-8 text")]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(file, f"line {number}, column {exc.colno}", f"not JSON: {exc.msg}"))
            continue
        if not isinstance(values, dict):
            problems.append(Problem(file, f"line {number}", "each line is one JSON object (an item's fields)"))
            continue
        try:
            fields = fields_of(values)
        except ValueError as exc:
            column, message = _column_and_message(exc)
            problems.append(Problem(file, f"line {number}, field {column!r}", message))
            continue
        problems.extend(Problem(file, f"line {number}, field {name!r}", message) for name, message in too_long(fields))
        if fields["key"] in seen:
            problems.append(Problem(file, f"line {number}, field 'key'",
                                    f"duplicate item key {fields['key']!r} (first on line {seen[fields['key']]})"))
            continue
        seen[fields["key"]] = number
        fields.setdefault("source_row", number)
        items.append(fields)
    if not items and not problems:
        problems.append(Problem(file, "line 1", "the file has no items"))
    return items, problems


def demonstration_fields(demonstrations: list[Mapping[str, Any]], file: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Item fields of the ``[[demonstrations]]`` (keys ``demo-1``, …; a numeric answer is ``demo_answer``, a
    choice's key ``extra.demo_choice``)."""
    out: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for number, demo in enumerate(demonstrations, start=1):
        values = {k: v for k, v in demo.items() if k != "answer"}
        values.setdefault("key", f"demo-{number}")
        try:
            fields = fields_of(values)
        except ValueError as exc:
            column, message = _column_and_message(exc)
            problems.append(Problem(file, f"demonstrations[{number - 1}].{column}", message))
            continue
        answer = demo.get("answer")
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            fields["demo_answer"] = float(answer)
        else:
            fields["extra"]["demo_choice"] = str(answer)
        fields.update(is_demonstration=True, demo_order=fields.get("demo_order") or number)
        out.append(fields)
    return out, problems
