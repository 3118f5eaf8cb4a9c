"""Importing model answers produced elsewhere (e.g. a paper's published results) as an *imported run*.

An imported run is an :class:`~elicitation.models.ElicitationRun` with ``source="imported"``, status
*completed*, the file's name and SHA-256, on an endpoint that stands for the external model (``base_url``
:data:`IMPORTED_BASE_URL`, notes :data:`IMPORTED_NOTES`; never called: such a run cannot be started or
resumed). Each answer is one :class:`~elicitation.models.ModelResponse` row: the raw text kept in
``raw_output``, parsed by the study's instrument (``kind.parse_model_answer``) into the typed columns and the
bin exactly as a live answer (``elicitation.modes.answered``); text the instrument cannot read is kept as an
*unparseable* answer and counted. The report treats the run as any other agent (``analysis/agents.py``).

Two shapes of file:

- **long** (CSV or JSON Lines): one row per answer. The item is named by its key (``key``) or by its own
  fields (``expression``, ``statement_id``, ``context``, ``language``, ``truth``, ``text``), each from a
  column or fixed for every row (``fixed``). Repeated answers to one item get sample indexes 0, 1, 2 … in
  file order, or take them from a sample column.
- **wide** (CSV), as published result tables (e.g. ``Results - *.csv``): one row per WEP (first column, or ``wep``), one
  column per context or sample holding the model's answer. Columns named ``avg``/``std`` (and the like) are
  summaries and ignored; rows whose WEP is not an expression of the study are ignored and listed. When the
  WEP names one item, each column is another sample of it (sample index = the column's position); when it
  names several (one per context), the columns stand for them, in the order of their statement ids
  (``columns="position"``), or by the item field their header holds (``columns="statement_id"``…).
  ``aliases`` map an expression as the file writes it to the study's (e.g. a file writing "almost
  certainly" and "chances about even" for the survey's "almost certain" and "about even").

- **refinements** (``refines``, long files): self-refinement answers of a run of the study, made elsewhere; the
  run is a refinement run and the report scores it in its self-refinement table; its answers are read as the
  study's kind reads refinement answers (its refinement hook, ``elicitation.refinement.Refinement``: e.g. a row
  may hold the reply in its own columns, or be a record that names its item by itself).

- **a family's shape**: an authors' file format read by an installed family's importer (config.registry, kind
  ``importers``; ``--shape NAME``), matched to the items of the family's design.

A study asking several questions per item (``[[questions]]``) takes long files with a question column
(``question``: the question's key on every row); each answer is parsed by its question's kind, as a live
answer to that question is (``surveys.question_kinds.prompt_kind``), and samples are numbered per item and
question.

Numbers written on a 0–1 scale (models that answered probabilities 0–1) are read on the instrument's 0–100
scale with ``scale="1"`` (or detected with ``scale="auto"``: every number in the file within 0–1 and one
strictly between); the first number of the text is multiplied by 100 before parsing, the original text is
kept in ``raw_output``. Cells ``NA``, ``N/A``, ``nan``, ``null``, ``none`` or empty are *missing* (no answer
recorded): skipped and counted, or kept as unparseable answers with ``keep_missing``.

All or nothing: any problem raises :class:`surveys.importers.ImportFailed` naming the line (the header is
line 1) and the column, and nothing is written. The same file (same bytes) cannot be imported twice into a
study: the second import is refused, naming the run that holds it (a database constraint backs this).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import IO, Any, Iterable, Mapping, Sequence

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from analysis.agents import IMPORTED_BASE_URL, agent_name
from config import registry
from surveys.answer_import import _CellError, normalise, normalise_expression, question_cell
from config import json_input
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.modes import Outcome, answered
from elicitation.run_settings import REFINE_SETTINGS, REFINE_STYLE, refinable_answers, refine_style, refine_styles
from surveys.importers import NUL_MESSAGE, ImportFailed, RowError, _decode, nul_columns, read_csv_records
from surveys.instruments import Instrument
from surveys.instruments.shapes import FIRST_NUMBER, ScaleShape
from surveys.models import Item, Study
from surveys.question_kinds import prompt_kind
from surveys.questions import SINGLE, keys_of, question_column_problem

IMPORTED_NOTES = "imported answers"
MATCH_FIELDS = ("key", "expression", "statement_id", "context", "language", "truth", "text")
MISSING = ("", "na", "n/a", "nan", "null", "none")
SUMMARY_COLUMNS = ("avg", "average", "mean", "std", "sd", "stdev", "median")
IMPORT_MODES = (ElicitationRun.Mode.GREEDY, ElicitationRun.Mode.SAMPLED)
BUILT_IN_SHAPES = ("long", "wide")  # the other shapes: the installed families' importers (config.registry)
FORMATS = ("csv", "jsonl")
SCALES = ("auto", "1", "100")
WIDE_COLUMNS = ("auto", "samples", "position")
# What tells candidate items apart, in the words of the error messages.
DIFFERENCES = (("expression", "label"), ("statement_id", "statement_id"), ("context", "context"),
               ("language", "language"), ("truth", "truth"), ("text", "statement"))

Source = str | Path | IO[bytes] | IO[str]


@dataclass
class ModelAnswerFile:
    """How to read a file of model answers and what run they become.

    ``fields``: item field → column of a long file (fields: :data:`MATCH_FIELDS`; ``key`` is the item key);
    ``fixed``: item field → the value for every row (e.g. ``{"context": "CNC", "language": "en"}``). A long
    file with neither a key nor a field column is matched by the columns named like the fields.
    ``columns`` (wide): ``auto``, ``samples``, ``position`` or an item field the headers hold.
    """

    model: str
    shape: str = "long"
    format: str = ""                 # csv | jsonl; "" → from the file name (.jsonl/.ndjson → jsonl)
    answer: str = "answer"           # long: the column with the model's answer
    fields: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)
    sample: str | None = None        # long: a column with the sample index (0, 1, …)
    question: str | None = None      # long: the column with the question's key (a study with [[questions]])
    wep: str | None = None           # wide: the column with the WEP (default: the first)
    columns: str = "auto"
    ignore: tuple[str, ...] = ()     # wide: more columns to ignore
    aliases: dict[str, str] = field(default_factory=dict)  # an expression as the file writes it → the study's
    scale: str = "auto"
    keep_missing: bool = False
    allow_missing: bool = False      # wide: import although some of the study's WEPs have no answer
    mode: str = ElicitationRun.Mode.GREEDY
    temperature: float | None = None
    prompt_style: str = "standard"
    few_shot: bool = True
    prompt_version: str = ""
    name: str = ""
    refines: int | None = None       # self-refinement answers of this run (elicitation/refinement.py)
    refine_setting: str = "single"   # refinements: single | mixed
    candidates: int = 3              # refinements: candidates shown per prompt (e; the paper's 3)

    def problems(self) -> list[str]:
        """What is wrong with these settings (empty when they can be used)."""
        out = []
        if not self.model.strip() or not endpoint_name(self.model):
            out.append("give the model's name (letters or digits)")
        if self.shape not in shapes():
            out.append(f"shape must be one of {', '.join(shapes())}, not {self.shape!r}")
        if self.format and self.format not in FORMATS:
            out.append(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.shape == "wide" and self.format == "jsonl":
            out.append("a wide file is a CSV file (one row per WEP, one column per context or sample)")
        for name in list(self.fields) + list(self.fixed):
            if name not in MATCH_FIELDS:
                out.append(f"unknown item field {name!r} (fields: {', '.join(MATCH_FIELDS)})")
        both = set(self.fields) & set(self.fixed)
        if both:
            out.append(f"{', '.join(sorted(both))}: given both as a column and as a fixed value")
        for written, meant in self.aliases.items():
            if not written.strip() or not meant.strip():
                out.append(f"alias {written!r} → {meant!r}: write both the file's expression and the study's")
        if self.columns not in WIDE_COLUMNS + MATCH_FIELDS:
            out.append(f"columns must be one of {', '.join(WIDE_COLUMNS)} or an item field, not {self.columns!r}")
        if self.scale not in SCALES:
            out.append(f"scale must be one of {', '.join(SCALES)}, not {self.scale!r}")
        if self.mode not in IMPORT_MODES:
            out.append(f"mode must be {' or '.join(IMPORT_MODES)} (imported answers are texts; distributions "
                       f"cannot be imported), not {self.mode!r}")
        if self.mode == ElicitationRun.Mode.SAMPLED and not (self.temperature and self.temperature > 0):
            out.append("sampled answers need the temperature they were sampled at (above 0)")
        if self.mode == ElicitationRun.Mode.GREEDY and self.temperature:
            out.append("greedy means temperature 0; use mode sampled for answers at another temperature")
        if self.refines is not None and self.shape != "long":
            out.append("refinement answers come in a long file (one row per answer)")
        if self.question and (self.shape != "long" or self.refines is not None):
            out.append("a question column is read from a long file of answers (not refinements)")
        return out


@dataclass
class ModelImportSummary:
    run: ElicitationRun
    answers: int
    unparseable: int
    items: int
    missing: int = 0
    scale_note: str = ""
    mapping_note: str = ""
    ignored_rows: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    unanswered_expressions: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (f"run {self.run.pk} (imported; agent {agent_name(self.run)!r}): {self.answers} answers "
                f"to {self.items} items, {self.unparseable} unparseable (kept)")
        if self.missing:
            text += f"; {self.missing} missing cell{'s' if self.missing != 1 else ''} skipped"
        for note in (self.scale_note, self.mapping_note):
            if note:
                text += f"; {note}"
        if self.ignored_rows:
            text += f"; ignored rows (not an expression of the study): {', '.join(self.ignored_rows)}"
        if self.ignored_columns:
            text += f"; ignored columns: {', '.join(self.ignored_columns)}"
        if self.unanswered_expressions:
            text += f"; no answer for: {', '.join(self.unanswered_expressions)}"
        return text


@dataclass
class _Cell:
    """One answer read from the file, before parsing."""

    line: int
    column: str
    item: Item
    sample: int | None
    raw: str
    question: str = SINGLE


# --- matching rows to items -------------------------------------------------------------------
def item_values(item: Item, name: str) -> set[str]:
    """The values by which a row can name ``item`` through the field ``name`` (normalised)."""
    if name == "key":
        return {item.key.strip()}
    if name == "expression":
        return {normalise_expression(item.label)}
    if name == "statement_id":
        return {item.statement_id.strip()}
    if name in ("context", "language"):
        return {str(getattr(item, name) or "").strip().lower()}
    if name == "truth":
        return {item.truth or ""}
    return {normalise(item.text()), normalise(item.statement)} - {""}  # text: as shown, or the statement


def aliased(raw: str, aliases: Mapping[str, str]) -> str:
    """An expression cell with ``aliases`` applied (both sides compared as labels: case and spacing ignored)."""
    if not aliases:
        return raw
    table = {normalise_expression(k): v for k, v in aliases.items()}
    return table.get(normalise_expression(raw), raw) if (raw or "").strip() else raw


def cell_value(name: str, raw: str, column: str) -> str:
    """A cell naming an item through field ``name``, normalised as :func:`item_values`; _CellError if empty
    where a value is needed."""
    text = (raw or "").strip()
    if name == "truth":
        value = normalise(text)
        if value not in ("true", "false", ""):
            raise _CellError(column, f"{text!r} is not true, false or empty")
        return value
    if not text:
        hint = " (write 'control' for a control item)" if name == "expression" else ""
        raise _CellError(column, f"is empty{hint}")
    if name == "expression":
        return normalise_expression(text)
    if name in ("context", "language"):
        return text.lower()
    if name == "text":
        return normalise(text)
    return text


class ItemMatcher:
    """The study's main items (those with the ``fixed`` field values), looked up by the values of ``fields``."""

    def __init__(self, study: Study, fields: Sequence[str], fixed: Mapping[str, str] | None = None):
        fixed = dict(fixed or {})
        items = list(study.main_items())
        for name, value in fixed.items():
            wanted = cell_value(name, value, f"--set {name}")
            items = [i for i in items if wanted in item_values(i, name)]
            if not items:
                raise _CellError(f"--set {name}", f"no item of the study has {name} {value!r} "
                                                  "(together with the other fixed values)")
        self.items, self.fields, self.fixed = items, list(fields), fixed
        self.index: dict[tuple[str, ...], dict[int, Item]] = defaultdict(dict)
        for item in items:
            for combo in product(*(item_values(item, f) for f in self.fields)):
                self.index[combo][item.pk] = item

    def fixed_text(self) -> str:
        return "".join(f", {name} {value!r}" for name, value in self.fixed.items())

    def candidates(self, values: Mapping[str, tuple[str, str]]) -> list[Item]:
        """The items whose fields have ``values`` (field → (column, cell)); _CellError when none has."""
        normalised = {f: cell_value(f, values[f][1], values[f][0]) for f in self.fields}
        found = list(self.index.get(tuple(normalised[f] for f in self.fields), {}).values())
        if found:
            return found
        for name in self.fields:  # the first value no item has at all
            if not any(normalised[name] in item_values(i, name) for i in self.items):
                raise _CellError(values[name][0], f"no item of the study{self._with()} has {name} "
                                                  f"{values[name][1].strip()[:80]!r}")
        together = ", ".join(f"{f} {values[f][1].strip()[:60]!r}" for f in self.fields)
        raise _CellError(values[self.fields[-1]][0], f"no item of the study{self._with()} has {together} together")

    def match(self, values: Mapping[str, tuple[str, str]]) -> Item:
        """The one item a row names; _CellError naming what the candidates differ in when there are several."""
        found = self.candidates(values)
        if len(found) == 1:
            return found[0]
        what = ", ".join(f"{f} {values[f][1].strip()[:60]!r}" for f in self.fields)
        column = values[self.fields[-1]][0]
        raise _CellError(column, f"{what}{self.fixed_text()} matches {len(found)} items of the study, which differ "
                                 f"in {tell_apart(found)}: name that field too (a column, or one value for every "
                                 "row), or name the items by key")

    def _with(self) -> str:
        return f" with {self.fixed_text()[2:]}" if self.fixed else ""


def tell_apart(items: Sequence[Item]) -> str:
    """The item fields in which ``items`` differ (e.g. ``statement_id, statement``), or ``key only``."""
    differ = [name for name, attr in DIFFERENCES if len({str(getattr(i, attr) or "") for i in items}) > 1]
    return ", ".join(differ) or "key only"


def _natural(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


# --- reading ----------------------------------------------------------------------------------
def _read(source: Source) -> tuple[bytes, str]:
    """The file's bytes and name."""
    if isinstance(source, (str, Path)):
        return Path(source).read_bytes(), Path(source).name
    data = source.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    return data, Path(getattr(source, "name", "") or "upload").name


def _format_of(settings: ModelAnswerFile, name: str) -> str:
    if settings.format:
        return settings.format
    return "jsonl" if name.lower().endswith((".jsonl", ".ndjson", ".jsonlines")) else "csv"


def _json_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def read_jsonl(data: bytes) -> tuple[list[tuple[int, dict[str, str]]], list[RowError]]:
    """(line, row) of a JSON Lines file (one object per line; blank lines skipped), values as text, and an
    error naming the line of each line that is not a JSON object."""
    text = _decode(io.BytesIO(data))
    rows, errors = [], []
    for line, content in enumerate(text.splitlines(), start=1):
        if not content.strip():
            continue
        try:
            obj = json_input.loads(content)
        except json.JSONDecodeError as exc:
            errors.append(RowError(line, "-", f"not valid JSON ({exc.msg} at character {exc.colno})"))
            continue
        except json_input.TooDeep as exc:
            errors.append(RowError(line, "-", f"{exc}: a line holds one flat object"))
            continue
        if not isinstance(obj, dict):
            errors.append(RowError(line, "-", "a line must hold one JSON object ({\"key\": …, \"answer\": …})"))
            continue
        row = {str(k): _json_cell(v) for k, v in obj.items()}
        if nul := nul_columns(row, row.values()) + [k for k in row if "\x00" in k]:
            errors.extend(RowError(line, key, NUL_MESSAGE) for key in nul)
            continue
        rows.append((line, row))
    return rows, errors


def read_table(data: bytes) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line, cells) of a CSV file kept as lists (a wide file's headers may be blank or repeat);
    blank rows skipped; ImportFailed for malformed CSV or a row with more or fewer cells than the header."""
    reader = csv.reader(io.StringIO(_decode(io.BytesIO(data)), newline=""))
    try:
        header = [h.strip() for h in next(reader, [])]
        if any("\x00" in h for h in header):
            raise ImportFailed([RowError(1, "-", f"the header {NUL_MESSAGE}")])
        rows, errors = [], []
        while True:
            start = reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                break
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                errors.append(RowError(start, "-", f"the row has {len(cells)} cells, "
                                                   f"{'more' if len(cells) > len(header) else 'fewer'} than the "
                                                   f"{len(header)} columns of the header"))
                continue
            if nul := nul_columns([h or f"column {i}" for i, h in enumerate(header, start=1)], cells):
                errors.extend(RowError(start, column, NUL_MESSAGE) for column in nul)
                continue
            rows.append((start, cells))
    except csv.Error as exc:
        raise ImportFailed([RowError(reader.line_num or 1, "-", f"malformed CSV: {exc}")]) from None
    if errors:
        raise ImportFailed(errors)
    return header, rows


def is_missing(raw: str) -> bool:
    return (raw or "").strip().lower() in MISSING


def _fields_named_like_the_items(names: Iterable[str] | Mapping[str, Any], settings: ModelAnswerFile) -> dict[str, str]:
    """The columns (or keys) named like the item's fields, when the settings name none: ``key`` alone if there
    is one."""
    fields = {f: f for f in MATCH_FIELDS if f in names and f not in settings.fixed
              and f not in (settings.answer, settings.sample)}
    return {"key": "key"} if "key" in fields else fields


def _answer_columns(settings: ModelAnswerFile, composed: tuple[str, ...]) -> list[str]:
    """The columns an answer is read from: a refinement reply's own columns (``composed``: the reply rebuilt
    from them), else one."""
    return list(composed) if composed else [settings.answer]


def _required(settings: ModelAnswerFile, fields: Mapping[str, str], composed: tuple[str, ...]) -> list[str]:
    """The columns every row of a long file must have."""
    return [*_answer_columns(settings, composed), *fields.values(), *([settings.sample] if settings.sample else []),
            *([settings.question] if settings.question else [])]


def _composed(columns: Mapping[str, str] | list[str], reply_columns: tuple[str, ...]) -> tuple[str, ...]:
    """``reply_columns`` when a row (or header) holds every one of them, else none."""
    return reply_columns if reply_columns and all(k in columns for k in reply_columns) else ()


@dataclass
class _LongRecords:
    """The rows of a long file, the columns naming the item's fields, and the columns a refinement reply is
    composed of (none: the answer column holds it)."""

    records: list[tuple[int, Mapping[str, str]]]
    fields: dict[str, str]
    composed: tuple[str, ...]


def _read_long(settings: ModelAnswerFile, data: bytes, fmt: str,
               reply_columns: tuple[str, ...] = ()) -> _LongRecords:
    """The rows of a long file (CSV or JSON Lines), each with every required column; ImportFailed otherwise.
    ``reply_columns``: the columns a refinement's row may hold its reply in (the refinement hook's)."""
    fields = dict(settings.fields)
    if fmt == "csv":
        first = [h.strip() for h in next(csv.reader(io.StringIO(_decode(io.BytesIO(data)))), [])]
        if not fields:  # the columns named like the item's fields
            fields = _fields_named_like_the_items(first, settings)
        composed = _composed(first, reply_columns) if settings.refines is not None else ()
        required = _required(settings, fields, composed)
        records = [(r.line, r.values) for r in read_csv_records(io.BytesIO(data), required)]
        return _LongRecords(records, fields, composed)
    records, errors = read_jsonl(data)
    if not fields and records:  # the keys named like the item's fields, in the first line
        fields = _fields_named_like_the_items(records[0][1], settings)
    composed = _composed(records[0][1], reply_columns) if settings.refines is not None and records else ()
    errors += [RowError(line, key, "is missing from this line") for line, row in records
               for key in _required(settings, fields, composed) if key not in row]
    if errors:
        raise ImportFailed(sorted(errors, key=lambda e: e.line))
    return _LongRecords(records, fields, composed)


def _matched_item(matcher: ItemMatcher, fields: Mapping[str, str], row: Mapping[str, str],
                  settings: ModelAnswerFile) -> Item:
    """The item a long file's row names by its fields' columns (or the one item the fixed values leave)."""
    if fields:
        values = {f: (column, row.get(column, "")) for f, column in fields.items()}
        if "expression" in values:
            values["expression"] = (fields["expression"], aliased(values["expression"][1], settings.aliases))
        return matcher.match(values)
    if len(matcher.items) == 1:
        return matcher.items[0]
    raise _CellError("-", f"the fixed values{matcher.fixed_text()[1:]} match {len(matcher.items)} "
                          "items: give a column naming the item")


def _sample_of(row: Mapping[str, str], settings: ModelAnswerFile) -> int | None:
    """The row's sample index, from the sample column if the settings name one."""
    if not settings.sample:
        return None
    text = (row.get(settings.sample) or "").strip()
    if not text.isdigit():
        raise _CellError(settings.sample, f"{text!r} is not a sample index (0, 1, 2 …)")
    return int(text)


def _long_cells(study: Study, settings: ModelAnswerFile, data: bytes, fmt: str) -> tuple[list[_Cell], int, list[RowError]]:
    """The answers of a long file (CSV or JSON Lines), the number of missing ones, and the errors."""
    refinement = study.kind.refinement_hook() if settings.refines is not None else None
    read = _read_long(settings, data, fmt, refinement.reply_columns if refinement is not None else ())
    records, fields, composed = read.records, read.fields, read.composed
    if not records:
        raise ImportFailed([RowError(2, "-", "the file has no rows")])
    authors_rows = (refinement is not None and not fields and not settings.fixed
                    and refinement.is_record(records[0][1]))
    if authors_rows:  # records that name their item by themselves (e.g. an authors' file): the hook matches them
        ordered = list(study.main_items().order_by("id"))
    elif not fields and not settings.fixed:
        raise ImportFailed([RowError(1, "-", "no column identifies the item: give the key column or the columns "
                                             f"of the item's fields ({', '.join(MATCH_FIELDS)})")])
    matcher = ItemMatcher(study, list(fields), settings.fixed)
    column = "+".join(_answer_columns(settings, composed))
    keys = keys_of(study)
    cells, errors, missing = [], [], 0
    for line, row in records:
        try:
            item = (refinement.record_item(ordered, row, settings.refine_setting) if authors_rows
                    else _matched_item(matcher, fields, row, settings))
            sample = _sample_of(row, settings)
            question = question_cell(row, settings.question, keys)
        except _CellError as exc:
            errors.append(RowError(line, exc.column, exc.message))
            continue
        raw = refinement.composed_reply(row) if composed else row.get(settings.answer, "")
        if (is_missing(raw) or composed and all(is_missing(row.get(k, "")) for k in composed)) \
                and not settings.keep_missing:
            missing += 1
            continue
        cells.append(_Cell(line, column, item, sample, raw, question))
    return cells, missing, errors


@dataclass
class _FileCells:
    """The answers read from a file, the number of missing ones, the errors, and what was left out and how the
    columns were read (wide files and a family's shapes)."""

    cells: list[_Cell]
    missing: int
    errors: list[RowError]
    ignored_rows: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    mapping: str = ""


Target = tuple[int, str, Item, int]  # a wide row's answer cell: (cell index, column, item, sample)


class _WideLayout:
    """A wide file's columns: the WEP column, the answer columns (summaries and ignored ones left out), and how an
    answer column names its item (``settings.columns``: a field, the samples of one item, or by position)."""

    def __init__(self, study: Study, settings: ModelAnswerFile, header: list[str]):
        if settings.wep is not None and settings.wep not in header:
            raise ImportFailed([RowError(1, settings.wep, "required column is missing from the header")])
        self.settings, self.header = settings, header
        self.wep_at = header.index(settings.wep) if settings.wep is not None else 0
        self.wep_name = header[self.wep_at] or "column 1"
        ignore = {c.strip().lower() for c in SUMMARY_COLUMNS + tuple(settings.ignore)}
        self.answer_cols = [(i, h or f"column {i + 1}") for i, h in enumerate(header)
                            if i != self.wep_at and h.lower() not in ignore]
        self.ignored_columns = [h for i, h in enumerate(header) if i != self.wep_at and h.lower() in ignore]
        if not self.answer_cols:
            raise ImportFailed([RowError(1, "-", "no answer column: the file has only the WEP column and summaries")])
        self.matcher = ItemMatcher(study, ["expression"], settings.fixed)
        self.labels = {normalise_expression(i.label) for i in self.matcher.items}
        self.by_field = None
        if settings.columns in MATCH_FIELDS:
            self.by_field = ItemMatcher(study, ["expression", settings.columns], settings.fixed)

    def targets(self, wep: str, label: str, candidates: list[Item]) -> tuple[list[Target], str]:
        """The answer cells of the row of ``wep`` (whose label is ``label``, which ``candidates`` have) and how
        they were matched."""
        settings, wep_name = self.settings, self.wep_name
        if self.by_field is not None:
            return ([(i, name, self.by_field.match({"expression": (wep_name, wep),
                                                    settings.columns: (name, self.header[i])}), 0)
                     for i, name in self.answer_cols], f"columns matched by {settings.columns}")
        if settings.columns == "samples" or (settings.columns == "auto" and len(candidates) == 1):
            if len(candidates) != 1:
                raise _CellError(wep_name, f"{label!r} matches {len(candidates)} items of the study, which "
                                           f"differ in {tell_apart(candidates)}: the columns cannot be samples "
                                           "of one item (match them by position or by a field)")
            return ([(i, name, candidates[0], k) for k, (i, name) in enumerate(self.answer_cols)],
                    "each column a sample of the row's item (sample index = column position)")
        ordered = sorted(candidates, key=lambda it: (_natural(it.statement_id), it.pk))
        if len(ordered) != len(self.answer_cols):
            raise _CellError(wep_name, f"{label!r} has {len(ordered)} items in the study (differing in "
                                       f"{tell_apart(ordered)}) but the file has {len(self.answer_cols)} answer "
                                       "columns: the columns stand for the items in order of statement id "
                                       "only when the counts agree")
        return ([(i, name, item, 0) for (i, name), item in zip(self.answer_cols, ordered)],
                "columns matched to the items by position (in order of statement id: "
                f"{ordered[0].statement_id or ordered[0].key} … {ordered[-1].statement_id or ordered[-1].key})")


def _wide_cells(study: Study, settings: ModelAnswerFile, data: bytes) -> _FileCells:
    """The answers of a wide file: one row per WEP, one column per context or sample."""
    header, rows = read_table(data)
    if not rows:
        raise ImportFailed([RowError(2, "-", "the file has no rows")])
    layout = _WideLayout(study, settings, header)
    cells, errors, ignored_rows, missing, mappings = [], [], [], 0, set()
    for line, row in rows:
        wep = aliased(row[layout.wep_at], settings.aliases)
        try:
            label = cell_value("expression", wep, layout.wep_name)
        except _CellError as exc:
            errors.append(RowError(line, exc.column, exc.message))
            continue
        if label not in layout.labels:
            ignored_rows.append(wep.strip())
            continue
        candidates = layout.matcher.candidates({"expression": (layout.wep_name, wep)})
        try:
            targets, mapping = layout.targets(wep, label, candidates)
        except _CellError as exc:
            errors.append(RowError(line, exc.column, exc.message))
            continue
        mappings.add(mapping)
        for i, name, item, sample in targets:
            raw = row[i]
            if is_missing(raw) and not settings.keep_missing:
                missing += 1
                continue
            cells.append(_Cell(line, name, item, sample, raw))
    return _FileCells(cells, missing, errors, ignored_rows, layout.ignored_columns, "; ".join(sorted(mappings)))


def shapes() -> tuple[str, ...]:
    """The file shapes answers can be imported from: long, wide and each installed family's importer."""
    return (*BUILT_IN_SHAPES, *registry.names("importers"))


def importers() -> list[tuple[str, str]]:
    """(shape, what it reads) of each installed family's importer."""
    return [(name, getattr(registry.get("importers", name), "SUMMARY", "")) for name in registry.names("importers")]


def _family_cells(study: Study, settings: ModelAnswerFile, data: bytes) -> tuple[list[_Cell], int, list[RowError], str]:
    """The answers of an authors' file read by a family's importer (config.registry, kind ``importers``: an
    object with ``ANSWER_COLUMN`` and ``read_answers(study, data) -> ([(line, item, raw)], errors, note)``)."""
    importer = registry.get("importers", settings.shape)
    try:
        rows, errors, note = importer.read_answers(study, data)
    except ValueError as exc:
        raise ImportFailed([RowError(1, "-", str(exc))]) from None
    cells, missing = [], 0
    for line, item, raw in rows:
        if is_missing(raw) and not settings.keep_missing:
            missing += 1
            continue
        cells.append(_Cell(line, importer.ANSWER_COLUMN, item, None, raw))
    return cells, missing, errors, note


# --- parsing ----------------------------------------------------------------------------------
def _as_percent(text: str) -> str:
    """``text`` with its first number multiplied by 100 (0.7 → 70; 0.07 → 7)."""
    def times_100(match: re.Match) -> str:
        number = round(float(match.group(0)) * 100, 9)
        return f"{int(number)}" if number == int(number) else repr(number)
    return FIRST_NUMBER.sub(times_100, text, count=1)


def choose_scale(kind: Instrument, settings: ModelAnswerFile, cells: Sequence[_Cell]) -> tuple[bool, str]:
    """Whether numbers are read as 0–1 and multiplied by 100, and what to say about it."""
    numeric = isinstance(kind.shape, ScaleShape)
    if settings.scale == "1":
        if not numeric:
            raise ImportFailed([RowError(1, "-", f"a 0–1 scale applies to number answers; {kind.name} answers "
                                                 f"with a {kind.shape.name}")])
        return True, "numbers read on a 0–1 scale (× 100)"
    if settings.scale == "100" or not numeric or kind.scale_max != 100:
        return False, ""
    numbers = []
    for cell in cells:
        match = FIRST_NUMBER.search(cell.raw or "")
        if match:
            numbers.append(float(match.group(0)))
    if numbers and all(0 <= n <= 1 for n in numbers) and any(0 < n < 1 for n in numbers):
        return True, "every number in the file lies within 0–1: read as probabilities (× 100)"
    return False, ""


def outcome_of(kind: Instrument, cell: _Cell, percent: bool, refinement: str | None = None) -> tuple[Outcome, str]:
    """The parsed answer of one cell (as a live answer is parsed) and the text the instrument read;
    ``refinement``: the prompt style of a refinement answer (read as a live one of that style)."""
    if refinement:
        return kind.refinement_hook().imported_outcome(kind, cell.raw, refinement), cell.raw
    text = _as_percent(cell.raw) if percent else cell.raw
    parsed = kind.parse_model_answer(text, cell.item)
    if parsed.ok:
        return answered(kind, parsed.answer, ModelResponse.Status.OK, raw_output=cell.raw), text
    return Outcome(status=ModelResponse.Status.UNPARSEABLE, raw_output=cell.raw,
                   parse_error=(parsed.error or "unreadable")[:300]), text


# --- writing ----------------------------------------------------------------------------------
def endpoint_name(model: str) -> str:
    """The endpoint name of an external model: its name as a slug, dots as hyphens (gpt-3.5 → gpt-3-5). The
    report names the agent by the model's name as given (``gpt-3.5-turbo``; :func:`analysis.agents.agent_name`)."""
    return slugify(model.replace(".", "-"))[:50]


def imported_endpoint(model: str) -> ModelEndpoint:
    """The endpoint standing for an external model (created once; never called). ImportFailed when a live
    endpoint has that name: imported answers need a name of their own so the report keeps them apart."""
    name = endpoint_name(model)
    endpoint, _ = ModelEndpoint.objects.get_or_create(
        name=name, defaults={"base_url": IMPORTED_BASE_URL, "model": model.strip()[:200], "notes": IMPORTED_NOTES,
                             "max_concurrency": 1})
    if endpoint.base_url != IMPORTED_BASE_URL:
        raise ImportFailed([RowError(1, "-", f"endpoint {name!r} is a live endpoint ({endpoint.base_url}): give the "
                                             "imported model another name (e.g. "
                                             f"{name}-published) so that its answers stay a separate agent")])
    if endpoint.model != model.strip()[:200]:
        raise ImportFailed([RowError(1, "-", f"the imported model {endpoint.model!r} already has the endpoint name "
                                             f"{name!r}: write the model's name as then ({endpoint.model!r}), or give "
                                             "another name for another model")])
    return endpoint


def _number_samples(cells: list[_Cell]) -> list[RowError]:
    """Give cells without a sample index the next one of their item and question (file order); errors for an
    (item, question, sample) given twice."""
    errors, seen, next_index = [], {}, Counter()
    for cell in cells:
        if cell.sample is not None:
            continue
        answered = (cell.item.pk, cell.question)
        while (*answered, next_index[answered]) in seen:
            next_index[answered] += 1
        cell.sample = next_index[answered]
        seen[(*answered, cell.sample)] = cell
        next_index[answered] += 1
    seen = {}
    for cell in cells:
        first = seen.get((cell.item.pk, cell.question, cell.sample))
        if first is not None:
            asked = f" question {cell.question!r}" if cell.question else ""
            errors.append(RowError(cell.line, cell.column, f"a second answer to item {cell.item.key!r}{asked} sample "
                                                           f"{cell.sample} (first on line {first.line}, column "
                                                           f"{first.column!r})"))
            continue
        seen[(cell.item.pk, cell.question, cell.sample)] = cell
    return errors


def _already_imported(study: Study, sha: str) -> ElicitationRun | None:
    return ElicitationRun.objects.filter(study=study, source_sha256=sha).first()


def import_model_answers(study: Study, source: Source, settings: ModelAnswerFile) -> ModelImportSummary:
    """Import a file of model answers into ``study`` as one imported run. All or nothing."""
    settings = _checked_settings(study, settings)
    data, name, sha = _new_file(study, source)
    read = _answers_of(study, settings, data, _format_of(settings, name))
    cells = read.cells
    refinement = settings.refines is not None
    kinds = {key: prompt_kind(study, key) for key in dict.fromkeys(c.question for c in cells)}
    percent, notes = {}, []
    for key, kind in kinds.items():  # each question's numbers on its own scale
        percent[key], note = (False, "") if refinement else choose_scale(
            kind, settings, [c for c in cells if c.question == key])
        notes += [f"{key}: {note}" if key else note] if note else []
    refinement_style = settings.prompt_style if refinement else None
    parsed = [(cell, *outcome_of(kinds[cell.question], cell, percent[cell.question], refinement_style))
              for cell in cells]
    unanswered = _unanswered_expressions(study, settings, cells)
    if not refinement:  # refinement runs are not agents of the report's tables: it names each by its run
        refuse_second_run_of_agent(study, settings, {c.item.pk for c in cells})
    run = _save(study, settings, name, sha, parsed)
    unparseable = sum(1 for _, outcome, _ in parsed if outcome.status == ModelResponse.Status.UNPARSEABLE)
    return ModelImportSummary(run=run, answers=len(parsed), unparseable=unparseable,
                              items=len({c.item.pk for c in cells}), missing=read.missing, scale_note="; ".join(notes),
                              mapping_note=read.mapping, ignored_rows=read.ignored_rows,
                              ignored_columns=read.ignored_columns, unanswered_expressions=unanswered)


def _checked_settings(study: Study, settings: ModelAnswerFile) -> ModelAnswerFile:
    """``settings`` with a refinement's prompt style filled in; ImportFailed naming every problem with them."""
    problems = settings.problems()
    kind = study.kind
    if settings.refines is not None:
        if settings.prompt_style == "standard":  # the default: the source run's refinement style
            settings = replace(settings, prompt_style=_default_refine_style(settings.refines))
        if settings.prompt_style not in refine_styles(study):
            problems.append(f"refinement answers have the prompt style {' or '.join(map(repr, refine_styles(study)))}, "
                            f"not {settings.prompt_style!r}")
        problems += _source_problems(study, settings.refines, settings.refine_setting, settings.candidates)
    elif settings.prompt_style in refine_styles(study):
        problems.append(f"prompt style {settings.prompt_style!r} is for refinement answers: give the run they refine "
                        "(--refines RUN)")
    if settings.prompt_style not in kind.prompt_styles:
        problems.append(f"prompt style {settings.prompt_style!r} is not one of {kind.name}'s "
                        f"({', '.join(kind.prompt_styles)})")
    question_problem = question_column_problem(study, settings.question, "--question-column, in a long file")
    if question_problem:
        problems.append(question_problem)
    if problems:
        raise ImportFailed([RowError(1, "-", p) for p in problems])
    return settings


def _new_file(study: Study, source: Source) -> tuple[bytes, str, str]:
    """The file's bytes, name and SHA-256; ImportFailed if it was imported into the study before, or if the study
    has no items to answer."""
    data, name = _read(source)
    sha = hashlib.sha256(data).hexdigest()
    earlier = _already_imported(study, sha)
    if earlier is not None:
        raise ImportFailed([RowError(1, "-", f"this file (SHA-256 {sha[:12]}…) was already imported into "
                                             f"{study.slug} as run {earlier.pk} ({earlier.source_file}); nothing "
                                             "imported again")])
    if not study.main_items().exists():
        raise ImportFailed([RowError(1, "-", f"study {study.slug!r} has no items: import or generate its items first")])
    return data, name, sha


def _answers_of(study: Study, settings: ModelAnswerFile, data: bytes, fmt: str) -> _FileCells:
    """The file's answers in its shape (long, wide, a family's importer), each with its sample index; ImportFailed naming
    every bad cell, or when there is no answer at all."""
    try:
        if settings.shape == "wide":
            read = _wide_cells(study, settings, data)
        elif settings.shape == "long":
            read = _FileCells(*_long_cells(study, settings, data, fmt))
        else:
            cells, missing, errors, mapping = _family_cells(study, settings, data)
            read = _FileCells(cells, missing, errors, mapping=mapping)
    except _CellError as exc:  # a fixed value naming nothing
        raise ImportFailed([RowError(1, exc.column, exc.message)]) from None
    errors = read.errors + _number_samples(read.cells)
    if errors:
        raise ImportFailed(sorted(errors, key=lambda e: e.line))
    if not read.cells:
        raise ImportFailed([RowError(2, "-", f"the file has no answers ({read.missing} missing cells)")])
    return read


def _unanswered_expressions(study: Study, settings: ModelAnswerFile, cells: list[_Cell]) -> list[str]:
    """The study's WEPs a wide file has no answer for (none for other shapes); ImportFailed when there are some
    and the settings do not allow them."""
    if settings.shape != "wide":
        return []
    answered_labels = {c.item.label for c in cells}
    unanswered = sorted({normalise_expression(i.label) for i in ItemMatcher(study, [], settings.fixed).items}
                        - {normalise_expression(label) for label in answered_labels})
    if unanswered and not settings.allow_missing:
        raise ImportFailed([RowError(1, "-", f"the file has no answer for {len(unanswered)} WEP(s) of the study: "
                                             f"{', '.join(unanswered)}; nothing imported (give --allow-missing "
                                             "to import it without them)")])
    return unanswered


def _source_problems(study: Study, source_id: int, setting: str, candidates: int) -> list[str]:
    """What is wrong with refining run ``source_id`` of ``study`` (empty when it can be refined)."""
    source = ElicitationRun.objects.filter(pk=source_id).first()
    problems = []
    if source is None:
        problems.append(f"--refines {source_id}: no such run")
    elif source.study_id != study.pk:
        problems.append(f"--refines {source_id}: the run belongs to study {source.study.slug!r}, not {study.slug!r}")
    elif source.refines_id is not None:
        problems.append(f"--refines {source_id}: the run is itself a refinement; refine a run of answers")
    if study.kind.refinement_hook() is None:
        problems.append(f"--refines: self-refinement needs {refinable_answers()} answers, not {study.instrument} items")
    if setting not in REFINE_SETTINGS:
        problems.append(f"--refine-setting must be one of {', '.join(REFINE_SETTINGS)}, not {setting!r}")
    if candidates < 1:
        problems.append("--candidates: each prompt showed at least one candidate")
    return problems


def _default_refine_style(source_id: int) -> str:
    """The prompt style of refinements of run ``source_id``: the one a live refinement takes (``refine`` when
    there is no such run; the settings check names it)."""
    source = ElicitationRun.objects.filter(pk=source_id).first()
    return refine_style(source) if source is not None else REFINE_STYLE


def _run_settings(settings: ModelAnswerFile) -> dict[str, Any]:
    out = {"mode": settings.mode, "temperature": settings.temperature or 0.0, "few_shot": settings.few_shot,
           "prompt_style": settings.prompt_style}
    if settings.refines is not None:
        out.update(refines_id=settings.refines, refine_setting=settings.refine_setting,
                   refine_shown=settings.candidates, refine_seed=0)
    if settings.prompt_version:
        out["prompt_version"] = settings.prompt_version
    return out


def refuse_second_run_of_agent(study: Study, settings: ModelAnswerFile, items: set[int]) -> None:
    """ImportFailed when the study already has a run of the agent this import would make that answers any of
    ``items`` (the import's items): a report uses one run per agent for a set of items, so the second would be
    silently left out. Files of other items — the same model in another context setting (e.g. per-context files
    imported with ``--set context=…``) — are imported runs of the same agent, and the report uses them together
    (analysis/agents.py); a live run of the agent counts as answering every item."""
    endpoint = ModelEndpoint(name=endpoint_name(settings.model), model=settings.model.strip()[:200],
                             base_url=IMPORTED_BASE_URL)
    agent = agent_name(ElicitationRun(study=study, endpoint=endpoint, **_run_settings(settings)))
    for run in ElicitationRun.objects.filter(study=study).select_related("endpoint"):
        if agent_name(run) != agent:
            continue
        imported = run.source == ElicitationRun.Source.IMPORTED
        if imported and not run.responses.filter(item_id__in=items).exists():
            continue  # another setting of the same agent
        what = f"imported from {run.source_file}" if run.source_file else run.name or "a live run"
        raise ImportFailed([RowError(1, "-", f"study {study.slug!r} already has run {run.pk} ({what}) for agent "
                                             f"{agent!r} answering the same items, and a report uses one run per "
                                             "agent and item: import the answers of another context setting with "
                                             "--set context=… (their items then differ), these under another model "
                                             f"name or prompt style, or remove run {run.pk} first "
                                             f"(delete_run {run.pk}); nothing imported")])


def _save(study: Study, settings: ModelAnswerFile, name: str, sha: str,
          parsed: list[tuple[_Cell, Outcome, str]]) -> ElicitationRun:
    now = timezone.now()
    samples = max(cell.sample for cell, _, _ in parsed) + 1
    try:
        with transaction.atomic():
            endpoint = imported_endpoint(settings.model)
            run = ElicitationRun(
                study=study, endpoint=endpoint, **_run_settings(settings), samples_per_item=samples,
                name=settings.name or f"{endpoint.model}: imported from {name}"[:200],
                status=ElicitationRun.Status.COMPLETED, status_reason=f"imported from {name}",
                started_at=now, last_started_at=now, finished_at=now, source=ElicitationRun.Source.IMPORTED,
                source_file=name[:300], source_sha256=sha)
            run.save()
            run.items.set(sorted({cell.item.pk for cell, _, _ in parsed}))
            ModelResponse.objects.bulk_create([
                ModelResponse(run=run, item=cell.item, question=cell.question, sample_index=cell.sample,
                              status=outcome.status,
                              raw_output=outcome.raw_output, parse_error=outcome.parse_error,
                              base_url=endpoint.base_url, model_id=endpoint.model, answered_at=now,
                              detail={**((outcome.detail or {}) if settings.refines is not None else {}),
                                      "imported": {"file": name, "line": cell.line, "column": cell.column},
                                      **({"read_as": text} if text != cell.raw else {})},
                              **outcome.answer_columns())
                for cell, outcome, text in parsed
            ], batch_size=1000)
    except IntegrityError as exc:
        earlier = _already_imported(study, sha)
        if earlier is not None:  # imported at the same moment by someone else
            raise ImportFailed([RowError(1, "-", f"this file was already imported into {study.slug} as run "
                                                 f"{earlier.pk}; nothing imported again")]) from None
        raise ImportFailed([RowError(1, "-", f"the database refused the answers: {exc}")]) from None
    return run


def parse_assignments(values: Iterable[str], what: str, check_fields: bool = True) -> dict[str, str]:
    """``FIELD=VALUE`` strings (command-line ``--field``/``--set``/``--alias``) as a dict; ValueError naming a
    bad one."""
    out = {}
    for text in values:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            form = f"FIELD=VALUE (fields: {', '.join(MATCH_FIELDS)})" if check_fields else "WRITTEN=MEANT"
            raise ValueError(f"{what} {text!r}: write {form}")
        out[name.strip()] = value.strip()
    return out


__all__ = ["IMPORTED_BASE_URL", "IMPORTED_NOTES", "ItemMatcher", "ModelAnswerFile", "ModelImportSummary",
           "import_model_answers", "parse_assignments", "tell_apart"]
