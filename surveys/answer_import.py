"""Importing human answers collected elsewhere into a study, all or nothing.

Two shapes:

- **long** (:func:`import_responses`): one row per answer — participant id, the item (statement id and
  expression, or the item's text), the answer, optionally the time taken, and for a study asking several
  questions per item (``[[questions]]``) the question's key. The column names are given as a
  :class:`ResponseColumns` mapping (command-line options or the admin form). The answer cell is read by its
  question's answer shape (``AnswerShape.from_cell``): a number on the scale, an option's key or text, the
  free text as written, an interval ``[lower, upper]``; each is checked as the participant page checks it.
- **wide** (:func:`import_wide`): one row per respondent, one column per expression, as in the
  Fagen-Ulmschneider survey (headers may be wrapped in quotes). Other columns (education, gender, …)
  are reported as ignored. A study without items gets the items of its instrument's expressions first.

Every imported participant is created completed (completed_at set) with one Assignment per item and one
Response (``imported=True``) per answer (per question). Any bad row raises
:class:`surveys.importers.ImportFailed` naming the
line (the header is line 1) and the column, and nothing is written.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

from django.db import transaction
from django.utils import timezone

from surveys.importers import NUL_MESSAGE, ImportFailed, RowError, read_csv_rows
from surveys.instruments.shapes import Answer, AnswerError, ScaleShape, plain_number
from surveys.models import Assignment, Item, Participant, Response, Study
from surveys.questions import SINGLE, question_column_problem, question_kind, questions_of, several, written_key

CONTROL = "control"
MAX_PID_LENGTH = Participant._meta.get_field("prolific_pid").max_length
TIME_UNITS = {"ms": 1.0, "s": 1000.0}

Source = str | Path | IO[bytes] | IO[str]


def normalise(text: str) -> str:
    """Lower case, single spaces, no surrounding quotes or final full stop: how texts are compared."""
    text = " ".join(str(text or "").split()).strip().strip("\"'“”‘’").strip()
    return text.rstrip(".").strip().lower()


def normalise_expression(text: str) -> str:
    """An expression cell as a label: lower case, single spaces; empty or "control" → "control"."""
    label = " ".join(str(text or "").split()).strip("\"'“”‘’ ").lower()
    return label or CONTROL


@dataclass
class ResponseColumns:
    """Which column of a long file holds what. ``statement`` (statement id) or ``text`` (the item's rendered
    text or its statement) identifies the item together with ``expression`` (and ``truth`` where a
    statement id is shared by a true and a false item); a study with one item per expression needs
    neither. ``time`` is the time taken, in ``time_unit`` ("ms" or "s")."""

    participant: str
    value: str
    expression: str | None = None
    statement: str | None = None
    text: str | None = None
    truth: str | None = None
    time: str | None = None
    time_unit: str = "ms"
    question: str | None = None  # the question's key: required for a study with [[questions]]

    def __post_init__(self) -> None:
        if self.statement and self.text:
            raise ValueError("give either a statement id column or a text column, not both")
        if self.time_unit not in TIME_UNITS:
            raise ValueError(f"time unit must be one of {', '.join(TIME_UNITS)}, not {self.time_unit!r}")

    def required(self) -> list[str]:
        return [c for c in (self.participant, self.value, self.expression, self.statement, self.text,
                            self.truth, self.time, self.question) if c]


@dataclass
class ImportSummary:
    participants: int
    responses: int
    items_created: int = 0
    ignored_columns: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = f"imported {self.responses} answers of {self.participants} participants"
        if self.items_created:
            text += f"; created {self.items_created} items"
        if self.ignored_columns:
            text += f"; ignored columns: {', '.join(self.ignored_columns)}"
        return text


@dataclass
class _Answer:
    line: int
    pid: str
    item: Item
    answer: Answer
    raw: str
    time_ms: int | None
    question: str = SINGLE


# --- matching rows to items -------------------------------------------------------------------
class ItemIndex:
    """The study's main items, looked up by statement id, by text, or by expression alone."""

    def __init__(self, study: Study):
        self.items = list(study.main_items())
        self.by_statement: dict[str, list[Item]] = defaultdict(list)
        self.by_text: dict[str, list[Item]] = defaultdict(list)
        self.by_label: dict[str, list[Item]] = defaultdict(list)
        for item in self.items:
            self.by_label[item.label].append(item)
            if item.statement_id:
                self.by_statement[item.statement_id.strip()].append(item)
            texts = {normalise(item.text()), normalise(item.statement)}
            for text in texts - {""}:
                self.by_text[text].append(item)

    def match(self, cols: ResponseColumns, row: dict[str, str]) -> Item:
        """The one item a row names; _CellError (column, message) otherwise."""
        label = None
        if cols.expression:
            if not (row[cols.expression] or "").strip():
                raise _CellError(cols.expression, "is empty (write 'control' for a control item)")
            label = normalise_expression(row[cols.expression])
        truth = None
        if cols.truth:
            truth = normalise(row[cols.truth])
            if truth not in ("true", "false", ""):
                raise _CellError(cols.truth, f"{row[cols.truth]!r} is not true, false or empty")
        if cols.statement or cols.text:
            key_col = cols.statement or cols.text
            if not (row[key_col] or "").strip():
                raise _CellError(key_col, "is empty")
            if cols.statement:
                key = row[key_col].strip()
                candidates, what = self.by_statement.get(key, []), f"statement id {key!r}"
            else:
                candidates = self.by_text.get(normalise(row[key_col]), [])
                what = f"text {row[key_col].strip()[:80]!r}"
        elif label is not None:
            key_col, candidates, what = cols.expression, self.by_label.get(label, []), f"expression {label!r}"
        else:
            raise _CellError("-", "no column identifies the item: give a statement, text or expression column")
        if not candidates:
            raise _CellError(key_col, f"no item of the study has {what}")
        if label is not None:
            narrowed = [i for i in candidates if i.label == label]
            if not narrowed:
                known = ", ".join(sorted({i.label for i in candidates}))
                raise _CellError(cols.expression, f"no item with {what} has expression {label!r} (it has: {known})")
            candidates = narrowed
        if truth is not None:
            candidates = [i for i in candidates if i.truth == truth]
            if not candidates:
                raise _CellError(cols.truth, f"no item with {what} has truth {truth or 'none'!r}")
        if len(candidates) > 1:
            named = None if key_col == cols.expression else label  # the expression is ``what`` already
            raise _CellError(key_col, ambiguity(cols, what, named, candidates))
        return candidates[0]


def ambiguity(cols: ResponseColumns, what: str, label: str | None, candidates: list[Item]) -> str:
    """Why a row names several items: what they share (the row's statement id or text, and expression), what
    tells them apart, and which column would (``--truth``, ``--expression``, ``--text``)."""
    shared = what + (f" and expression {label!r}" if label is not None else "")
    differ = [name for name, attr in (("expression", "label"), ("truth", "truth"), ("statement", "statement"))
              if len({str(getattr(i, attr) or "") for i in candidates}) > 1]
    fixes = []
    if "truth" in differ and not cols.truth:
        fixes.append("add a truth column (--truth, true/false)")
    if "expression" in differ and not cols.expression:
        fixes.append("add an expression column (--expression)")
    if "statement" in differ and not cols.text:
        fixes.append("identify the rows by the item's text (--text COLUMN with the sentence or the statement, "
                     "instead of --statement)")
    if not fixes:
        fixes.append("name the items by key in the file: nothing else tells them apart"
                     if not differ else "the given columns cannot tell them apart")
    return (f"{len(candidates)} items share {shared}; they differ in "
            f"{', '.join(differ) or 'their key only'}: {'; or '.join(fixes)}")


class _CellError(ValueError):
    def __init__(self, column: str, message: str):
        super().__init__(message)
        self.column, self.message = column, message


def _answer(kind: Any, item: Item, raw: str, column: str) -> Answer:
    """A cell read by the question's answer shape (``AnswerShape.from_cell``); _CellError naming the column."""
    try:
        return kind.shape.from_cell(kind, item, raw or "")
    except AnswerError as exc:
        raise _CellError(column, str(exc)) from None


def _question_kinds(study: Study, columns: ResponseColumns) -> dict[str, Any]:
    """The study's questions' kinds by key (one question: ``{"": study.kind}``); ImportFailed when the file's
    columns do not fit them (several questions need a question column; one question takes none)."""
    problem = question_column_problem(study, columns.question, "--question")
    if problem:
        raise ImportFailed([RowError(1, columns.question or "-", problem)])
    if not several(study):
        return {SINGLE: study.kind}
    return {q.key: question_kind(study, q) for q in questions_of(study)}


def question_cell(row: Mapping[str, str], column: str | None, keys: Sequence[str]) -> str:
    """The key of the question a row answers, from ``column`` (``""`` without one); _CellError naming it."""
    if not column:
        return SINGLE
    try:
        return written_key(row.get(column), keys)
    except ValueError as exc:
        raise _CellError(column, str(exc)) from None


def _time_ms(raw: str, column: str, unit: str) -> int | None:
    text = (raw or "").strip()
    if not text:
        return None
    number = plain_number(text)
    if number is None:
        raise _CellError(column, f"{text!r} is not a number")
    value = number * TIME_UNITS[unit]
    if not math.isfinite(value) or value < 0 or value > 2**31 - 1:
        raise _CellError(column, f"{text} is not a time taken in {unit}")
    return int(round(value))


def _check_pid(raw: str, column: str, taken: set[str]) -> str:
    pid = (raw or "").strip()
    if not pid:
        raise _CellError(column, "is empty")
    if len(pid) > MAX_PID_LENGTH:
        raise _CellError(column, f"participant id longer than {MAX_PID_LENGTH} characters")
    if pid in taken:
        raise _CellError(column, f"participant {pid!r} is already in the study (imported before?)")
    return pid


def _is_blank(row: dict[str, Any]) -> bool:
    return not any((v or "").strip() for v in row.values() if isinstance(v, str))


# --- writing ----------------------------------------------------------------------------------
def _save(study: Study, answers: list[_Answer]) -> tuple[int, int]:
    """Create the participants, slots and responses of ``answers`` in one transaction."""
    now = timezone.now()
    by_pid: dict[str, list[_Answer]] = defaultdict(list)
    for answer in answers:
        by_pid[answer.pid].append(answer)
    with transaction.atomic():
        # created answering ("started") and completed once their answers are in: the database refuses
        # answers for a completed participant (surveys migration 0003)
        version = study.current_version()  # bulk_create skips Participant.save: set it here
        participants = Participant.objects.bulk_create([
            Participant(study=study, prolific_pid=pid, status=Participant.Status.STARTED, started_at=now,
                        completed_at=now, status_changed_at=now, user_agent="imported", study_version=version)
            for pid in by_pid
        ], batch_size=500)
        if any(p.pk is None for p in participants):  # a backend that returns no primary keys
            ids = dict(Participant.objects.filter(study=study, prolific_pid__in=list(by_pid))
                       .values_list("prolific_pid", "pk"))
            for p in participants:
                p.pk = p.id = ids[p.prolific_pid]
        slots: dict[tuple[int, int], Assignment] = {}  # one slot per participant and item, in file order
        for participant in participants:
            items = dict.fromkeys(answer.item for answer in by_pid[participant.prolific_pid])
            for position, item in enumerate(items, start=1):
                slots[(participant.pk, item.pk)] = Assignment(participant=participant, item=item, position=position,
                                                              first_shown_at=None)
        created = Assignment.objects.bulk_create(list(slots.values()), batch_size=1000)
        if any(s.pk is None for s in created):
            ids = {(a.participant_id, a.position): a.pk for a in
                   Assignment.objects.filter(participant__in=participants).only("id", "participant_id", "position")}
            for s in created:
                s.pk = s.id = ids[(s.participant_id, s.position)]
        Response.objects.bulk_create([
            Response(assignment=slots[(p.pk, a.item.pk)], participant=p, item=a.item, question=a.question,
                     raw=a.raw[:200], time_taken_ms=a.time_ms, created_at=now, imported=True, **a.answer.columns())
            for p in participants for a in by_pid[p.prolific_pid]
        ], batch_size=1000)
        Participant.objects.filter(pk__in=[p.pk for p in participants]).update(status=Participant.Status.COMPLETED)
    return len(participants), len(answers)


def import_responses(study: Study, source: Source, columns: ResponseColumns) -> ImportSummary:
    """Import a long file of answers (one row per answer) into ``study``. All or nothing."""
    rows = read_csv_rows(source, columns.required())
    kinds = _question_kinds(study, columns)
    index = ItemIndex(study)
    if not index.items:
        raise ImportFailed([RowError(1, "-", f"study {study.slug!r} has no items: import its items first")])
    taken = set(Participant.objects.filter(study=study).values_list("prolific_pid", flat=True))
    errors: list[RowError] = []
    answers: list[_Answer] = []
    seen: dict[tuple[str, int, str], int] = {}
    for offset, row in enumerate(rows):
        line = offset + 2
        if _is_blank(row):
            continue
        try:
            pid = _check_pid(row[columns.participant], columns.participant, taken)
            item = index.match(columns, row)
            question = question_cell(row, columns.question, list(kinds))
            answer = _answer(kinds[question], item, row[columns.value], columns.value)
            time_ms = _time_ms(row[columns.time], columns.time, columns.time_unit) if columns.time else None
        except _CellError as exc:
            errors.append(RowError(line, exc.column, exc.message))
            continue
        first = seen.get((pid, item.pk, question))
        if first is not None:
            asked = f" question {question!r} of" if question else ""
            errors.append(RowError(line, columns.participant, f"participant {pid!r} answers{asked} item {item.key} "
                                                              f"again (first on line {first})"))
            continue
        seen[(pid, item.pk, question)] = line
        raw = row[columns.value]
        answers.append(_Answer(line, pid, item, answer, raw if answer.free_text else raw.strip(), time_ms, question))
    if errors:
        raise ImportFailed(errors)
    if not answers:
        raise ImportFailed([RowError(2, "-", "the file has no rows")])
    participants, responses = _save(study, answers)
    return ImportSummary(participants=participants, responses=responses)


# --- wide files -------------------------------------------------------------------------------
def header_label(header: str) -> str:
    """A wide file's column header as a label: quotes stripped, lower case (\"\"\"Almost Certain\"\"\" → almost certain)."""
    return " ".join(str(header or "").replace('"', " ").split()).lower()


def _ensure_items(study: Study) -> int:
    """Create one item per expression of the study's instrument when the study has no items. Returns the count."""
    if study.main_items().exists():
        return 0
    kind = study.kind
    make = getattr(kind, "items_for_expressions", None)
    if make is None:
        raise ImportFailed([RowError(1, "-", f"study {study.slug!r} has no items and its instrument "
                                             f"{kind.name!r} cannot create them from a wide file: import its "
                                             "items first, or use a study with the wep_probability instrument")])
    items = [Item(study=study, key=kind.item_key(fields), **fields) for fields in make()]
    Item.objects.bulk_create(items)
    if not study.demonstrations() and hasattr(kind, "default_demonstrations"):
        for order, fields in enumerate(kind.default_demonstrations(items), start=1):
            Item.objects.create(study=study, key=f"demo-{order}", is_demonstration=True, demo_order=order, **fields)
    return len(items)


def _wide_columns(study: Study, header: list[str], id_column: str | None
                  ) -> tuple[dict[str, Item], list[str], list[RowError]]:
    """A wide file's answer columns, each matched to the study's item of its expression; the columns that name
    no expression (ignored); the errors (an expression of several items, a second column for one, none at all)."""
    by_label: dict[str, list[Item]] = defaultdict(list)
    for item in study.main_items():
        by_label[item.label].append(item)
    matched: dict[str, Item] = {}
    errors: list[RowError] = []
    ignored: list[str] = []
    for column in header:
        if column == id_column:
            continue
        label = header_label(column)
        items = by_label.get(label, [])
        if len(items) > 1:
            errors.append(RowError(1, column, f"expression {label!r} matches {len(items)} items of the study"))
        elif items:
            if any(m.pk == items[0].pk for m in matched.values()):
                errors.append(RowError(1, column, f"a second column for expression {label!r}"))
            matched[column] = items[0]
        else:
            ignored.append(column)
    if not matched and not errors:
        known = ", ".join(sorted(by_label))
        errors.append(RowError(1, "-", f"no column is an expression of the study ({known})"))
    return matched, ignored, errors


def import_wide(study: Study, source: Source, *, id_column: str | None = None, id_prefix: str = "row-") -> ImportSummary:
    """Import a wide file (one row per respondent, one column per expression) into ``study``. All or nothing.

    Respondent ids come from ``id_column`` or are ``id_prefix`` + the line number. Blank answer cells are
    skipped (no answer); a row with no answer at all is an error.
    """
    if "\x00" in id_prefix:  # it goes into every respondent id (e.g. from the uploaded file's name)
        raise ImportFailed([RowError(1, "-", f"the id prefix {NUL_MESSAGE}")])
    rows = read_csv_rows(source, [id_column] if id_column else [])
    header = list(rows[0].keys()) if rows else []
    if not rows:
        raise ImportFailed([RowError(2, "-", "the file has no rows")])
    kind = study.kind
    if several(study) or not isinstance(kind.shape, ScaleShape):
        raise ImportFailed([RowError(1, "-", f"a wide file holds one number per expression; study {study.slug!r} "
                                             + ("asks several questions per item" if several(study) else
                                                f"takes {kind.shape.name} answers")
                                             + ": import it in long form (one row per answer)")])
    with transaction.atomic():
        created = _ensure_items(study)
        matched, ignored, errors = _wide_columns(study, header, id_column)
        taken = set(Participant.objects.filter(study=study).values_list("prolific_pid", flat=True))
        pids: dict[str, int] = {}
        answers: list[_Answer] = []
        for offset, row in enumerate(rows):
            line = offset + 2
            if _is_blank(row):
                continue
            try:
                pid = _check_pid(row[id_column] if id_column else f"{id_prefix}{line}", id_column or "-", taken)
            except _CellError as exc:
                errors.append(RowError(line, exc.column, exc.message))
                continue
            if pid in pids:
                errors.append(RowError(line, id_column or "-", f"respondent {pid!r} again (first on line {pids[pid]})"))
                continue
            pids[pid] = line
            row_answers = []
            for column, item in matched.items():
                if not (row[column] or "").strip():
                    continue
                try:
                    answer = _answer(kind, item, row[column], column)
                except _CellError as exc:
                    errors.append(RowError(line, exc.column, exc.message))
                    continue
                row_answers.append(_Answer(line, pid, item, answer, row[column].strip(), None))
            if matched and not row_answers and not any(e.line == line for e in errors):
                errors.append(RowError(line, "-", "the row has no answer"))
            answers += row_answers
        if errors:
            raise ImportFailed(errors)  # leaving the atomic block undoes the items created above
        participants, responses = _save(study, answers)
    return ImportSummary(participants=participants, responses=responses, items_created=created,
                         ignored_columns=ignored)
