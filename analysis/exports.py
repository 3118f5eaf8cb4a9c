"""The combined export (SPEC §7): humans and models of a study in one tidy long table, one row per answer,
as CSV or Parquet, streamed.

Rows come from ``QuerySet.iterator(chunk_size=…)`` and are written in chunks (CSV) or row groups
(Parquet, one ``pyarrow.parquet.ParquetWriter``), so memory stays bounded by the chunk size, not by the
number of rows. The writer functions take any iterable of row tuples (in :data:`COLUMNS` order), so they
can be measured apart from the database (bench/analysis.py).

Columns and types (:data:`SCHEMA`, the same in both formats; an empty CSV cell is a null):

- ``distribution`` is a JSON string in both formats (``{"0": p, "5": p, …, "100": p, "-1": q}``, bins in
  numeric order, "-1" = mass on non-numbers), so the two files hold identical values; ``json.loads`` it.
- ``respondent_id`` is, for humans, a salted hash (HMAC-SHA256 with settings.EXPORT_ID_SALT, 16 hex
  characters) of the PROLIFIC_PID — stable across exports and studies with the same salt — or the raw
  PROLIFIC_PID when asked for; for models ``run-<id>``.
- ``expression`` is the item's label: its expression, or ``control`` for a control item.
- The answer is typed by the item kind's answer shape: ``value`` (a number on a scale, with its ``bin``),
  ``choice`` (the key of the option chosen), ``lower`` and ``upper`` (an interval), ``text`` (a free-text
  answer: a person's as written, a model's raw output stripped); the columns a shape does not fill are empty.
- ``option_order``: a choice whose options a generic study randomises per participant: the option keys in the
  order that person saw them, joined by ``|`` (``B|A|C``); empty otherwise and for models.
- ``study_version``: the number of the study definition's version the participant or the run was given
  (surveys/definition/versions.py); empty for answers given before the study had versions.
- ``time_taken_ms``: a person's time on the item page; a model's request latency.
- Model responses that are answers are exported (parsed, and unparseable ones with an empty value and
  their raw text); pending and failed requests are not answers and are left out. All participants'
  answers are exported with ``participant_status``; ``included`` is the exclusion rules' decision
  (analysis/exclusions.py; a kind's attention filter is one rule) and ``excluded_by`` the rules that
  excluded the participant with what each measured (``too-fast: 41.0 s in total; failed-checks: 2 failed
  check(s)``), empty for a participant kept and for models.
- Test participants (surveys.test_mode) are left out unless ``include_test``; then their rows have
  ``respondent_type`` ``test`` instead of ``human``.
- A study with a questionnaire (surveys/questionnaire.py) has one more column per field after these, named by
  the field (``age``, ``gender``, …) and typed by it (analysis/questionnaire.py): every row of a participant
  carries their answers; a model answer asked under a persona (``ModelResponse.persona``) carries the persona's
  values of the same fields, typed the same way (so ``df.groupby("gender")`` compares like with like), and
  never a free-text field of a persona drawn from participants (a person's own words); other model rows leave
  them empty. :func:`study_layout` gives a study's columns.
- Then ``question`` (the key of the question answered: ``answer`` when an item asks one; with ``[[questions]]``
  one row per question answered, each row's ``question`` its key and ``bin`` by that question's scale) and
  ``item.<field>``,
  every own field of the items (the items file's columns and the Item columns it set), typed by their values.
- Those columns after :data:`COLUMNS` come from the registry of column providers (analysis/export_columns.py),
  each column with its codebook entry (analysis/codebook.py); existing columns keep their names and order, new
  ones are appended.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.export_columns import BASE, PROVIDERS, Column, Filler, Provider
from surveys.respondent_ids import hashed_id
from surveys.spreadsheet import safe_cell, unescape_cell

CSV_CHUNK_ROWS = 2000
PARQUET_ROW_GROUP = 50_000
DB_CHUNK = 2000

# name → (pyarrow type, pandas dtype the column reads back as): the fixed columns (analysis/export_columns.BASE)
_COLUMN_TYPES: dict[str, tuple[pa.DataType, str]] = {c.name: (c.arrow, c.dtype) for c in BASE}
COLUMNS: list[str] = list(_COLUMN_TYPES)
PANDAS_DTYPES: dict[str, str] = {name: dtype for name, (_, dtype) in _COLUMN_TYPES.items()}


def _schema(types: dict[str, tuple[pa.DataType, str]]) -> pa.Schema:
    """The explicit schema, with pandas metadata so ``pd.read_parquet`` restores nullable dtypes
    (Int64, boolean) instead of float and object columns."""
    template = pd.DataFrame({name: pd.Series([], dtype=dtype) for name, (_, dtype) in types.items()})
    metadata = pa.Schema.from_pandas(template, preserve_index=False).metadata
    return pa.schema([pa.field(name, typ, nullable=True) for name, (typ, _) in types.items()],
                     metadata=metadata)


def _unique(columns: Sequence[Column]) -> list[Column]:
    """``columns`` with a name taken by an earlier column suffixed (``_2``, ``_3``, …), so that no column hides
    another (a questionnaire field of a study loaded before a provider's column took its name)."""
    seen: set[str] = set()
    out = []
    for column in columns:
        name, n = column.name, 1
        while name in seen:
            n += 1
            name = f"{column.name}_{n}"
        seen.add(name)
        out.append(column if name == column.name else replace(column, name=name))
    return out


class Layout:
    """The columns of one export, in order, with their types and codebook entries: :data:`COLUMNS`, then the
    providers' columns (``parts``: provider → its columns, analysis/export_columns.PROVIDERS)."""

    def __init__(self, parts: Sequence[tuple[Provider, Sequence[Column]]] = ()):
        extra = _unique([*BASE, *(c for _, columns in parts for c in columns)])[len(BASE):]
        self.parts: list[tuple[Provider, list[Column]]] = []
        at = 0
        for provider, columns in parts:
            self.parts.append((provider, extra[at:at + len(columns)]))
            at += len(columns)
        self.entries: list[Column] = [*BASE, *extra]
        self.types = {c.name: (c.arrow, c.dtype) for c in self.entries}
        self.columns: list[str] = list(self.types)
        self.schema = _schema(self.types)
        self.timestamp = self.columns.index("timestamp")
        self.booleans = [i for i, c in enumerate(self.columns) if self.types[c][0] == pa.bool_()]
        self.texts = [i for i, c in enumerate(self.columns) if self.types[c][0] == pa.string()]

    def fillers(self, study) -> list[Filler]:
        """Each provider's filler of its columns for ``study`` (a provider without columns: none)."""
        return [provider.filler(study, columns) for provider, columns in self.parts if columns]


LAYOUT = Layout()
SCHEMA: pa.Schema = LAYOUT.schema
Row = tuple


def study_layout(study) -> Layout:
    """The export's columns for ``study``: :data:`COLUMNS`, then each provider's (its questionnaire fields, the
    question key, its items' own fields ``item.<field>``, …) in the registry's order."""
    return Layout([(provider, provider.columns(study)) for provider in PROVIDERS])


# --- rows from the database -------------------------------------------------------------------
def _none_if_blank(text: str | None) -> str | None:
    return text if text else None


def distribution_json(dist: dict | None) -> str | None:
    """A stored distribution as a compact JSON string, bins in numeric order ("-1" last)."""
    if not dist:
        return None
    def order(key: str) -> float:
        k = float(key)
        return float("inf") if k < 0 else k
    return json.dumps({str(k): dist[k] for k in sorted(dist, key=order)}, separators=(",", ":"))


def human_rows(study, *, raw_ids: bool = False, include_test: bool = False,
               chunk_size: int = DB_CHUNK, decisions: dict[int, tuple[bool, str | None]] | None = None,
               fillers: Sequence[Filler] = ()) -> Iterator[Row]:
    """One row per human answer of ``study`` (all participants, see ``participant_status``; test participants
    only with ``include_test``, as ``respondent_type`` ``test``). ``included`` and ``excluded_by`` come from
    ``decisions`` (participant id → (included, reasons)) for the participants it names, else ``included`` from
    what was stored. ``fillers``: the providers' values that end each row (:meth:`Layout.fillers`)."""
    from surveys.models import PROLIFIC_CHANNEL, Response

    kind = study.kind
    score = lru_cache(maxsize=4096)(kind.score)
    scores = _question_scores(study)  # [[questions]]: each question's value is binned by its own scale
    ident: Callable[[str], str] = (lambda pid: pid) if raw_ids else lru_cache(maxsize=65536)(hashed_id)
    responses = Response.objects.filter(item__study=study)
    if not include_test:
        responses = responses.filter(participant__is_test=False)
    rows = (responses
            .order_by("participant_id", "assignment__position", "pk")
            .values_list("item_id", "item__key", "item__expression", "item__is_control", "item__statement_id",
                         "item__truth", "item__context", "item__language", "participant__prolific_pid",
                         "participant__status", "participant__attention_included", "value", "choice", "lower",
                         "upper", "raw", "time_taken_ms", "created_at", "participant__is_test",
                         "participant__channel__name", "participant_id", "text", "assignment__option_order",
                         "participant__study_version__number", "pk", "question"))
    decisions = decisions or {}
    for (item_id, key, expression, is_control, statement_id, truth, context, language, pid, status, included,
         value, choice, lower, upper, raw, time_ms, created, is_test,
         channel, participant_id, text, order, version, pk, question) in rows.iterator(chunk_size=chunk_size):
        included, reasons = decisions.get(participant_id, (included, None))
        scorer = scores.get(question, score) if question else score
        row = (study.slug, item_id, key, study.instrument, "control" if is_control else expression, is_control,
               _none_if_blank(statement_id), _none_if_blank(truth), _none_if_blank(context),
               _none_if_blank(language), "test" if is_test else "human", ident(pid), status, "human", None, None,
               None, None, value, _none_if_blank(choice), lower, upper, None if value is None else scorer(value),
               None, _none_if_blank(raw), "ok", time_ms, included, created, channel or PROLIFIC_CHANNEL,
               _none_if_blank(text), "|".join(order) if order else None, version, reasons or None)
        for filler in fillers:
            row += filler.human(participant_id, item_id, pk)
        yield row


def _question_scores(study) -> dict[str, Callable[[float], float]]:
    """Question key → the scoring of its answers (``[[questions]]``; empty for a one-question study)."""
    from surveys.questions import question_kind, questions_of, several

    if not several(study):
        return {}
    return {q.key: lru_cache(maxsize=4096)(question_kind(study, q).score) for q in questions_of(study)}


def model_rows(study, *, chunk_size: int = DB_CHUNK, fillers: Sequence[Filler] = ()) -> Iterator[Row]:
    """One row per model answer (parsed or unparseable) of ``study``'s runs (``fillers``: the providers' values
    that end each row, e.g. the questionnaire fields' from the answer's persona)."""
    from analysis.agents import ANSWER_STATUSES, agent_names
    from analysis.dataset import run_respondent
    from analysis.questionnaire import study_fields
    from elicitation.models import ElicitationRun, ModelResponse
    from elicitation.personas import from_participants

    kind = study.kind
    score = lru_cache(maxsize=4096)(kind.score)
    runs = ElicitationRun.objects.filter(study=study).select_related("endpoint")
    names = agent_names(runs)
    # a persona drawn from a participant never brings that person's free text onto a model row
    texts = {f.name for f in study_fields(study) if f.type == "text"}
    drawn = {run.pk for run in runs if from_participants(run.agent_settings)}
    rows = (ModelResponse.objects.filter(run__study=study, status__in=ANSWER_STATUSES, check_key="")
            .order_by("run_id", "item_id", "sample_index", "question")
            .values_list("item_id", "item__key", "item__expression", "item__is_control", "item__statement_id",
                         "item__truth", "item__context", "item__language", "run_id", "run__endpoint__model",
                         "run__mode", "sample_index", "value", "choice", "lower", "upper", "bin", "distribution",
                         "raw_output", "status", "latency_ms", "answered_at", "created_at", "text",
                         "run__study_version__number", "persona", "pk"))
    for (item_id, key, expression, is_control, statement_id, truth, context, language, run_id, model, mode,
         sample, value, choice, lower, upper, bin_, dist, raw, status, latency, answered,
         created, text, version, persona, pk) in rows.iterator(chunk_size=chunk_size):
        if bin_ is None and value is not None:
            bin_ = score(value)
        if persona and run_id in drawn and texts:
            persona = {k: v for k, v in persona.items() if k not in texts}
        row = (study.slug, item_id, key, study.instrument, "control" if is_control else expression, is_control,
               _none_if_blank(statement_id), _none_if_blank(truth), _none_if_blank(context),
               _none_if_blank(language), "model", run_respondent(run_id), None, names[run_id], model, mode,
               run_id, sample, value, _none_if_blank(choice), lower, upper, bin_, distribution_json(dist),
               _none_if_blank(raw), status, latency, None,
               answered or created, None, _none_if_blank(text), None, version, None)
        for filler in fillers:
            row += filler.model(run_id, item_id, pk, persona or None)
        yield row


def export_rows(study, *, raw_ids: bool = False, include_test: bool = False,
                chunk_size: int = DB_CHUNK, decisions: dict[int, tuple[bool, str | None]] | None = None,
                layout: Layout | None = None) -> Iterator[Row]:
    """Humans, then models, of ``study`` as rows in :func:`study_layout` order (``layout``: that layout, when
    already built; ``decisions``: see human_rows)."""
    fillers = (layout or study_layout(study)).fillers(study)
    yield from human_rows(study, raw_ids=raw_ids, include_test=include_test, chunk_size=chunk_size,
                          decisions=decisions, fillers=fillers)
    yield from model_rows(study, chunk_size=chunk_size, fillers=fillers)


# --- CSV --------------------------------------------------------------------------------------
def csv_chunks(rows: Iterable[Row], chunk_rows: int = CSV_CHUNK_ROWS, layout: Layout = LAYOUT) -> Iterator[str]:
    """The CSV text (header first) in pieces of ``chunk_rows`` rows. Nulls are empty cells, booleans
    ``true``/``false``, timestamps ISO 8601 with their offset; text a spreadsheet would run as a formula
    (``=…``, ``+…``, ``-…``, ``@…``) gets a leading ``'`` (surveys.spreadsheet; :func:`read_csv` removes it).
    ``layout``: the columns (a study's: :func:`study_layout`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(layout.columns)
    pending: list[list[Any]] = []
    timestamp, booleans, texts = layout.timestamp, layout.booleans, layout.texts
    for row in rows:
        cells = list(row)
        stamp = cells[timestamp]
        if stamp is not None:
            cells[timestamp] = stamp.isoformat()
        for i in booleans:
            flag = cells[i]
            if flag is not None:
                cells[i] = "true" if flag else "false"
        for i in texts:
            cells[i] = safe_cell(cells[i])
        pending.append(cells)
        if len(pending) >= chunk_rows:
            writer.writerows(pending)  # csv writes None as an empty cell
            pending.clear()
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    writer.writerows(pending)
    yield buffer.getvalue()


def write_csv(rows: Iterable[Row], target: str | Path | IO[str], chunk_rows: int = CSV_CHUNK_ROWS,
              layout: Layout = LAYOUT) -> int:
    """Write rows as CSV to a path or text file; returns the number of rows."""
    counted = _Counted(rows)
    if isinstance(target, (str, Path)):
        with open(target, "w", encoding="utf-8", newline="") as fh:
            for chunk in csv_chunks(counted, chunk_rows, layout):
                fh.write(chunk)
    else:
        for chunk in csv_chunks(counted, chunk_rows, layout):
            target.write(chunk)
    return counted.n


def read_csv(source: str | Path | IO[str], layout: Layout = LAYOUT) -> pd.DataFrame:
    """Read an export CSV back with the same column types as the Parquet file (``layout``: a study's columns,
    :func:`study_layout`; without it questionnaire columns are typed as pandas guesses, text unescaped)."""
    dtypes = {name: dtype for name, (_, dtype) in layout.types.items() if name != "timestamp"}
    df = pd.read_csv(source, dtype=dtypes, keep_default_na=False, na_values=[""],
                     true_values=["true"], false_values=["false"])
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
    texts = [layout.columns[i] for i in layout.texts]
    texts += [c for c in df.columns if c not in layout.types and not pd.api.types.is_numeric_dtype(df[c])]
    for name in texts:
        df[name] = df[name].map(unescape_cell, na_action="ignore").astype(df[name].dtype)
    return df


# --- Parquet ----------------------------------------------------------------------------------
class _Counted:
    """Wraps an iterable and counts what passed through."""

    def __init__(self, rows: Iterable[Row]):
        self.rows, self.n = rows, 0

    def __iter__(self) -> Iterator[Row]:
        for row in self.rows:
            self.n += 1
            yield row


def _batches(rows: Iterable[Row], size: int, schema: pa.Schema = SCHEMA) -> Iterator[pa.Table]:
    """Row tuples as tables of at most ``size`` rows with ``schema``."""
    width = len(schema)
    chunk: list[Row] = []
    for row in rows:
        if len(row) != width:
            raise ValueError(f"a row has {len(row)} values, expected {width}")
        chunk.append(row)
        if len(chunk) >= size:
            yield _table(chunk, schema)
            chunk = []
    if chunk:
        yield _table(chunk, schema)


def _table(chunk: list[Row], schema: pa.Schema = SCHEMA) -> pa.Table:
    columns = list(zip(*chunk))
    arrays = [pa.array(col, type=field.type) for col, field in zip(columns, schema)]
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(rows: Iterable[Row], target: str | Path | IO[bytes],
                  row_group_size: int = PARQUET_ROW_GROUP, layout: Layout = LAYOUT) -> int:
    """Write rows as Parquet (one row group per ``row_group_size`` rows); returns the number of rows."""
    n = 0
    sink = str(target) if isinstance(target, Path) else target
    schema = layout.schema
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        for table in _batches(rows, row_group_size, schema):
            writer.write_table(table, row_group_size=row_group_size)
            n += table.num_rows
        if n == 0:
            writer.write_table(schema.empty_table())
    return n


class _Drain(io.RawIOBase):
    """A write-only file that hands out what was written since the last call to :meth:`take`."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._pos = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        chunk = bytes(data)
        self._parts.append(chunk)
        self._pos += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._pos

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


def parquet_chunks(rows: Iterable[Row], row_group_size: int = PARQUET_ROW_GROUP,
                   layout: Layout = LAYOUT) -> Iterator[bytes]:
    """The Parquet file in pieces, one per row group (then the footer), for a streamed HTTP response."""
    drain = _Drain()
    schema = layout.schema
    writer = pq.ParquetWriter(drain, schema, compression="zstd")
    try:
        wrote = False
        for table in _batches(rows, row_group_size, schema):
            writer.write_table(table, row_group_size=row_group_size)
            wrote = True
            piece = drain.take()
            if piece:
                yield piece
        if not wrote:
            writer.write_table(schema.empty_table())
    finally:
        writer.close()
    yield drain.take()


def read_parquet(source: str | Path | IO[bytes]) -> pd.DataFrame:
    """Read an export Parquet file (plain ``pd.read_parquet`` gives the same types)."""
    return pd.read_parquet(source)


# --- a whole study ----------------------------------------------------------------------------
from analysis.export_formats import CONTENT_TYPES, FORMATS, export_filename  # noqa: E402,F401 (re-exported)


def current_decisions(study) -> dict[int, tuple[bool, str]] | None:
    """Participant id → (kept, the rules that excluded them) as the study's exclusion rules decide now
    (analysis/exclusions.py; computed, never stored: an export is a read), or None when a rule cannot run (e.g.
    a verifiable study without its reference: ``included`` is then what was stored)."""
    from analysis.exclusions import ExclusionError, compute_exclusions, reasons_text
    from surveys.models import Participant

    if not Participant.objects.filter(study=study, status=Participant.Status.COMPLETED).exists():
        return None
    try:
        result = compute_exclusions(study)
    except ExclusionError:
        return None
    return {pk: (not why, reasons_text(why)) for pk, why in result.reasons.items()}


def export_study(study, fmt: str, target: str | Path | IO, *, raw_ids: bool = False,
                 include_test: bool = False, layout: Layout | None = None) -> int:
    """Write the combined export of ``study`` in ``fmt`` ("csv" or "parquet"); returns the row count
    (``layout``: the study's :func:`study_layout`, when the caller writes its codebook too)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    layout = layout or study_layout(study)
    rows = export_rows(study, raw_ids=raw_ids, include_test=include_test, decisions=current_decisions(study),
                       layout=layout)
    return write_csv(rows, target, layout=layout) if fmt == "csv" else write_parquet(rows, target, layout=layout)


def stream_study(study, fmt: str, *, raw_ids: bool = False, include_test: bool = False) -> Iterator[bytes]:
    """The combined export of ``study`` as byte chunks (for StreamingHttpResponse)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    layout = study_layout(study)
    rows = export_rows(study, raw_ids=raw_ids, include_test=include_test, decisions=current_decisions(study),
                       layout=layout)
    if fmt == "csv":
        return (chunk.encode("utf-8") for chunk in csv_chunks(rows, layout=layout))
    return parquet_chunks(rows, layout=layout)
