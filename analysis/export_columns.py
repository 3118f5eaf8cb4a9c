"""The combined export's columns, each with its codebook entry: the fixed columns every export has (:data:`BASE`,
in their historical order) and the registry of column providers (:data:`PROVIDERS`) whose columns follow them.

A provider adds the columns one part of a study contributes (its questionnaire, its items' own fields, …): for a
study it names its columns (:class:`Column`: name, types, source, meaning, allowed values) and gives a
:class:`Filler` that returns a human row's or a model row's values of them. Plugging in a new part of the export
(a between-subjects cell, a block order, check results, an exclusion decision) is one :class:`Provider` appended
to :data:`PROVIDERS`: its columns then appear in the CSV and Parquet exports, the replication package and the
codebook (analysis/codebook.py), after the earlier ones, so that existing columns keep their names and places.

Sources (the codebook's ``source``): ``study``, ``item`` (the item's own fields), ``answer`` (one answer),
``respondent`` (the person or the model run that answered), ``participant`` (people only), ``model run`` (models
only), ``questionnaire`` (a participant's answers; on model rows the persona's), ``design`` (how the study was
put to the respondent).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import pyarrow as pa

from surveys.condition_context import cells_of, factors_of, levels_of

SOURCES = ("study", "item", "answer", "respondent", "participant", "model run", "questionnaire", "design")
#: The key of the one question a study asks today (its ``[answer]`` table): the ``question`` column's value.
SINGLE_QUESTION = "answer"
#: Item field columns are named ``item.<field>`` (no fixed column has a dot, so they never clash).
ITEM_PREFIX = "item."
#: At most this many distinct values of an item field are listed in the codebook (more: their count and range).
LISTED_VALUES = 20

STRING, INTEGER, NUMBER, BOOLEAN = (pa.string(), "str"), (pa.int64(), "Int64"), (pa.float64(), "float64"), \
    (pa.bool_(), "boolean")
TIMESTAMP = (pa.timestamp("us", tz="UTC"), "datetime64[us, UTC]")


@dataclass(frozen=True)
class Column:
    """One export column and its codebook entry. ``values``: the allowed values or the range, as text;
    ``labels``: (value, label) pairs (a scale's labels, a choice's options), for the JSON codebook."""

    name: str
    arrow: pa.DataType
    dtype: str  # the pandas dtype it reads back as
    source: str
    meaning: str
    values: str = ""
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def type_name(self) -> str:
        """The codebook's type: string, integer, number, boolean or timestamp."""
        if pa.types.is_boolean(self.arrow):
            return "boolean"
        if pa.types.is_integer(self.arrow):
            return "integer"
        if pa.types.is_floating(self.arrow):
            return "number"
        if pa.types.is_timestamp(self.arrow):
            return "timestamp"
        return "string"


def _c(name: str, types: tuple[pa.DataType, str], source: str, meaning: str, values: str = "") -> Column:
    return Column(name, types[0], types[1], source, meaning, values)


#: The fixed columns, in the order every export has had them (their values for a study: analysis/codebook.py).
BASE: tuple[Column, ...] = (
    _c("study", STRING, "study", "The study's slug."),
    _c("item_id", INTEGER, "item", "The item's id in this site's database."),
    _c("item_key", STRING, "item", "The item's key, unique within the study (the items file's key column)."),
    _c("kind", STRING, "study", "The study's kind (its instrument)."),
    _c("expression", STRING, "item", "The item's label in analyses: its expression, or \"control\" for a control "
                                     "item (the item's own expression is item.expression)."),
    _c("is_control", BOOLEAN, "item", "Whether the item is a control (attention) item."),
    _c("statement_id", STRING, "item", "The item's statement id (empty when it has none)."),
    _c("truth", STRING, "item", "Whether the item's statement is true (a verifiable item).",
       "true | false | empty (non-verifiable)"),
    _c("context", STRING, "item", "The item's context setting (e.g. CNC/ENC; empty when none)."),
    _c("language", STRING, "item", "The item's language code (e.g. en)."),
    _c("respondent_type", STRING, "respondent", "Who answered.",
       "human | test (a researcher's test participant, only with include_test) | model"),
    _c("respondent_id", STRING, "respondent", "People: a salted hash of the PROLIFIC_PID (HMAC-SHA256 with the "
                                              "site's EXPORT_ID_SALT, 16 hex characters), or the raw id when asked "
                                              "for; models: run-<run_id>."),
    _c("participant_status", STRING, "participant", "The participant's status when exported (empty for models).",
       "started | completed | returned | timed_out | …"),
    _c("agent", STRING, "respondent", "\"human\" for people; for models the agent's name (model and mode)."),
    _c("model", STRING, "model run", "The model the run asked (empty for people)."),
    _c("mode", STRING, "model run", "How the run asked the model (empty for people)."),
    _c("run_id", INTEGER, "model run", "The model run's id (empty for people)."),
    _c("sample_index", INTEGER, "model run", "The answer's number among a sampled run's answers to the item "
                                             "(0 for a single answer; empty for people)."),
    _c("value", NUMBER, "answer", "A number answer (a scale's value); empty for other shapes."),
    _c("choice", STRING, "answer", "The key of the option chosen (a choice or pick); empty for other shapes."),
    _c("lower", NUMBER, "answer", "An interval answer's lower bound; empty for other shapes."),
    _c("upper", NUMBER, "answer", "An interval answer's upper bound; empty for other shapes."),
    _c("bin", NUMBER, "answer", "The bin the value falls in, by the kind's scoring; empty without a value."),
    _c("distribution", STRING, "answer", "A model's distribution over the bins as JSON ({\"0\": p, …, \"-1\": q}; "
                                         "-1 = mass on non-numbers); empty for people and single answers."),
    _c("raw_text", STRING, "answer", "The answer as sent: a person's form field, a model's raw output."),
    _c("status", STRING, "answer", "Whether the answer was read.", "ok | unparseable (a model's answer that "
                                                                 "could not be read: its values are empty)"),
    _c("time_taken_ms", INTEGER, "answer", "A person's time on the item page, or a model's request latency, in "
                                           "milliseconds."),
    _c("included", BOOLEAN, "participant", "The exclusion rules' decision (computed when exported, or as stored "
                                           "by manage.py exclusions): false when a rule left the participant out; "
                                           "empty for models."),
    _c("timestamp", TIMESTAMP, "answer", "When the answer was given (UTC)."),
    _c("channel", STRING, "participant", "How the person came in (empty for models).",
       "prolific | a recruitment channel's name"),
    _c("text", STRING, "answer", "A free-text answer (people: as written; models: the raw output, stripped); "
                                 "empty for other shapes."),
    _c("option_order", STRING, "design", "A choice whose options are randomised per participant: the keys in "
                                         "the order the person saw them, joined by | (B|A|C); empty otherwise."),
    _c("study_version", INTEGER, "respondent", "The number of the study definition's version the participant or "
                                               "run was given; empty for answers given before versions."),
    _c("excluded_by", STRING, "participant", "The exclusion rules that left the participant out, each with what it "
                                             "measured (docs/reference/checks-exclusions.md); empty when included "
                                             "and for models."),
)


class Filler(Protocol):
    """A provider's values for one study: a tuple per row, in the provider's column order."""

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple: ...

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple: ...


@dataclass(frozen=True)
class Provider:
    """A part of the export: ``columns(study)`` names its columns (none: the study has no such part),
    ``filler(study, columns)`` gives their values row by row."""

    name: str
    columns: Callable[[Any], list[Column]]
    filler: Callable[[Any, Sequence[Column]], Filler]


@dataclass
class ByParticipant:
    """A filler for participant-level columns: people's values by participant id, models' by persona (or
    ``model_values(run_id, persona)``); empty cells where none."""

    width: int
    people: Mapping[int, tuple] = field(default_factory=dict)
    model_values: Callable[[int, Mapping[str, Any] | None], tuple] | None = None

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple:
        return self.people.get(participant_id) or (None,) * self.width

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple:
        return self.model_values(run_id, persona) if self.model_values else (None,) * self.width


@dataclass
class ByItem:
    """A filler for item-level columns: the same values for every answer to an item, people's and models'."""

    width: int
    items: Mapping[int, tuple] = field(default_factory=dict)

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple:
        return self.items.get(item_id) or (None,) * self.width

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple:
        return self.items.get(item_id) or (None,) * self.width


@dataclass
class Constant:
    """A filler whose values are the same on every row."""

    values: tuple

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple:
        return self.values

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple:
        return self.values


# --- the questionnaire ------------------------------------------------------------------------
def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def questionnaire_columns(study) -> list[Column]:
    """One column per questionnaire field, named by the field, typed by it (analysis/questionnaire.py)."""
    from analysis.questionnaire import column_types, study_fields

    fields = study_fields(study)
    types = column_types(fields)
    out = []
    for f in fields:
        labels: tuple[tuple[str, str], ...] = ()
        if f.type == "choice":
            labels = tuple((c.key, c.label) for c in f.choices)
            values = " | ".join(c.key if c.key == c.label else f"{c.key} = {c.label}" for c in f.choices)
        elif f.type == "number":
            span = f"{_number(f.min)}–{_number(f.max)}" if f.min is not None and f.max is not None else (
                f"≥ {_number(f.min)}" if f.min is not None else (f"≤ {_number(f.max)}" if f.max is not None else ""))
            values = ", ".join(p for p in (span, "whole numbers" if f.integer else "") if p) or "any number"
        else:
            values = f"free text, up to {f.max_length} characters"
        if not f.required:
            values += " (optional: empty when unanswered)"
        meaning = (f"Questionnaire ({f.when} the items): “{f.label}” People: their answer; models asked under a "
                   "persona: the persona's value; other model rows: empty.")
        out.append(Column(f.name, *types[f.name], "questionnaire", meaning, values, labels))
    return out


def questionnaire_filler(study, columns: Sequence[Column]) -> Filler:
    from analysis.questionnaire import participant_values, study_fields, typed_values

    fields = study_fields(study)
    people = participant_values(study, fields)
    return ByParticipant(len(fields), people,
                         lambda run_id, persona: typed_values(fields, persona) if persona else (None,) * len(fields))


# --- the question ------------------------------------------------------------------------------
def question_columns(study) -> list[Column]:
    """``question``: the key of the question an answer is to (``answer`` for a study's only question; with
    ``[[questions]]`` each question's key, its wording and answer shape in the codebook's labels)."""
    from analysis.answer_values import question_labels
    from surveys.questions import several

    if not several(study):
        return [Column("question", pa.string(), "str", "design",
                       "The key of the question the answer is to (an item page asks one question: the study's "
                       "[answer]; with several questions per item, one row per question).", SINGLE_QUESTION)]
    labels = question_labels(study)
    return [Column("question", pa.string(), "str", "design",
                   "The key of the question the answer is to ([[questions]]: an item page asks each of them; one row "
                   "per question answered, each question its own variable).", " | ".join(k for k, _ in labels),
                   labels)]


@dataclass
class ByResponse:
    """A filler whose values are the answer's own: people's by response id, models' by model response id."""

    width: int
    people: Mapping[int, tuple] = field(default_factory=dict)
    models: Mapping[int, tuple] = field(default_factory=dict)

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple:
        return self.people.get(response_id) or (None,) * self.width

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple:
        return self.models.get(response_id) or (None,) * self.width


def question_filler(study, columns: Sequence[Column]) -> Filler:
    """``answer`` on every row of a one-question study; with ``[[questions]]`` each answer's question key (a
    model answer's too: ``ModelResponse.question``)."""
    from surveys.models import Response
    from surveys.questions import several

    if not several(study):
        return Constant((SINGLE_QUESTION,))
    people = {pk: (key,) for pk, key in Response.objects.filter(item__study=study).values_list("pk", "question")}
    return ByResponse(1, people, _model_questions(study))


def _model_questions(study) -> dict[int, tuple]:
    """Model response id → (question key,) (an attention check's answer is no item's: left out)."""
    from elicitation.models import ModelResponse

    rows = ModelResponse.objects.filter(run__study=study, check_key="").values_list("pk", "question")
    return {pk: (key or None,) for pk, key in rows}


# --- the items' own fields -------------------------------------------------------------------
#: Item model columns that are an item's own fields (bookkeeping, demonstrations and the key left out)
ITEM_MODEL_FIELDS = ("expression", "speaker_name", "speaker_gender", "statement", "statement_id", "statement_type",
                     "truth", "is_control", "context", "language", "ground_truth")
_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_INT64 = 2 ** 63


def _blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < _INT64
    if isinstance(value, float):
        return False  # 12.0 is written as a decimal: a number column
    return isinstance(value, str) and bool(_INT.fullmatch(value)) and abs(int(value)) < _INT64


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return isinstance(value, str) and bool(_FLOAT.fullmatch(value)) and math.isfinite(float(value))


def infer_type(values: Iterable[Any]) -> tuple[pa.DataType, str]:
    """An item field's column type from its values (blanks ignored): boolean when all are true/false (JSON
    booleans or the words), integer when all are whole numbers written as such (``12``, not ``012`` or
    ``12.0``), number when all are numbers, else string."""
    present = [v for v in values if not _blank(v)]
    if not present:
        return STRING
    if all(isinstance(v, bool) or (isinstance(v, str) and v.lower() in ("true", "false")) for v in present):
        return BOOLEAN
    if all(_is_int(v) for v in present):
        return INTEGER
    if all(_is_number(v) for v in present):
        return NUMBER
    return STRING


def typed(value: Any, types: tuple[pa.DataType, str]) -> Any:
    """One item field's value as its column's type (:func:`infer_type`); None when blank."""
    if _blank(value):
        return None
    arrow = types[0]
    if arrow == pa.bool_():
        return value if isinstance(value, bool) else value.lower() == "true"
    if arrow == pa.int64():
        return int(value)
    if arrow == pa.float64():
        return float(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def item_fields(study) -> dict[int, dict[str, Any]]:
    """Item id → its own fields (the non-default Item columns of :data:`ITEM_MODEL_FIELDS`, then ``extra``'s keys,
    as ``export_study`` writes them to items.jsonl), for the study's items that are not demonstrations."""
    from surveys.models import Item

    defaults = {name: Item._meta.get_field(name).get_default() for name in ITEM_MODEL_FIELDS}
    out: dict[int, dict[str, Any]] = {}
    rows = (Item.objects.filter(study=study, is_demonstration=False).order_by("id")
            .values_list("pk", "extra", *ITEM_MODEL_FIELDS))
    for pk, extra, *own in rows.iterator(chunk_size=2000):
        fields = {name: value for name, value in zip(ITEM_MODEL_FIELDS, own) if value != defaults[name]}
        for key, value in (extra or {}).items():
            fields.setdefault(str(key), value)
        out[pk] = fields
    return out


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _item_values(values: list[Any], types: tuple[pa.DataType, str]) -> str:
    """The codebook's allowed values of an item field: every distinct value (up to :data:`LISTED_VALUES`), else
    the range of a number or the count of distinct texts."""
    present = sorted({typed(v, types) for v in values if not _blank(v)}, key=lambda v: (str(type(v)), v))
    empty = " (empty for some items)" if any(_blank(v) for v in values) else ""
    if len(present) <= LISTED_VALUES:
        return " | ".join(_value_text(v) for v in present) + empty
    if types in (INTEGER, NUMBER):
        return f"{_value_text(present[0])}–{_value_text(present[-1])} ({len(present)} distinct values){empty}"
    return f"{len(present)} distinct values{empty}"


def item_columns(study) -> list[Column]:
    """``item.<field>`` for every own field of the study's items (Item columns first, then the items file's other
    columns in the order first seen), typed by :func:`infer_type`."""
    from surveys.models import Item

    fields = item_fields(study)
    names: dict[str, None] = {}
    for own in fields.values():
        names.update(dict.fromkeys(own))
    out = []
    for name in names:
        values = [own.get(name) for own in fields.values()]
        types = infer_type(values)
        if name in ITEM_MODEL_FIELDS:
            model_field = Item._meta.get_field(name)
            note = f" ({model_field.help_text})" if model_field.help_text else ""
            meaning = f"The item's own field {name}{note}."
        else:
            meaning = f"The item's own field {name} (a column of the items file)."
        out.append(Column(ITEM_PREFIX + name, *types, "item", meaning, _item_values(values, types)))
    return out


def item_filler(study, columns: Sequence[Column]) -> Filler:
    fields = item_fields(study)
    named = [(c.name[len(ITEM_PREFIX):], (c.arrow, c.dtype)) for c in columns]
    return ByItem(len(named), {pk: tuple(typed(own.get(name), types) for name, types in named)
                               for pk, own in fields.items()})


#: The registry: the export's columns after :data:`BASE`, provider by provider, in this order. Append new ones.
PROVIDERS: list[Provider] = [
    Provider("questionnaire", questionnaire_columns, questionnaire_filler),
    Provider("question", question_columns, question_filler),
    Provider("item fields", item_columns, item_filler),
]


# --- the design: between-subjects cells and block orders (issue 31 points 1-2) -------------------------------
# A study with [[factors]] adds ``condition`` (the cell) and ``condition_<factor>`` (each factor's level key), named
# so as never to meet an item field or a questionnaire field; a study with [blocks] adds ``block_order`` (the
# blocks in the order the person saw them, joined by |). A person's rows carry their cell and order, a model's rows
# its run's cell. A study without them has none of these columns.
def design_columns(study: Any) -> list[Column]:
    """The study's design columns, in order ([]: none)."""
    out: list[Column] = []
    factors = factors_of(study.definition)
    if factors:
        out.append(Column("condition", *STRING, "design", "The between-subjects cell the person was given, or the "
                          "model run asked under (the levels' keys joined by -).", " | ".join(cells_of(study.definition))))
        for factor in factors:
            labels = tuple((lv["key"], lv.get("text") or lv["key"]) for lv in factor["levels"])
            out.append(Column(f"condition_{factor['name']}", *STRING, "design",
                              f"The level of the factor {factor['name']!r} in the row's cell.",
                              " | ".join(k if k == t else f"{k} = {t}" for k, t in labels), labels))
    blocks = (study.definition or {}).get("blocks")
    if blocks:
        out.append(Column("block_order", *STRING, "design", f"The blocks (item field {blocks['field']!r}) in the "
                          "order the person saw them, joined by | (empty for models)."))
    return out


def _cell_values(study: Any, cell: str, factors: list[str]) -> tuple:
    if not factors:
        return ()
    try:
        levels = levels_of(study.definition, cell)
    except KeyError:
        return (cell or None, *(None for _ in factors))
    return (cell, *(levels[name] for name in factors))


def design_filler(study: Any, columns: Sequence[Column]) -> Filler:
    """People's cell and block order by participant id; a model row's cell by its run."""
    from elicitation.models import ElicitationRun
    from surveys.models import Participant

    factors = [f["name"] for f in factors_of(study.definition)]
    blocks = bool((study.definition or {}).get("blocks"))
    people = {pk: (*_cell_values(study, cell, factors), *(("|".join(order) if order else None,) if blocks else ()))
              for pk, cell, order in Participant.objects.filter(study=study).order_by()
              .values_list("pk", "condition", "block_order").iterator(chunk_size=5000)}
    runs = {pk: (*_cell_values(study, cell, factors), *((None,) if blocks else ()))
            for pk, cell in ElicitationRun.objects.filter(study=study).values_list("pk", "condition")}
    width = len(columns)

    def model_values(run_id: int, persona: Mapping[str, Any] | None) -> tuple:
        return runs.get(run_id) or (None,) * width

    return ByParticipant(width, people, model_values)


PROVIDERS.append(Provider("design", design_columns, design_filler))


# --- attention checks (issue 31 point 3) -------------------------------------------------------------------------
# A study with [[checks]] adds ``check.<key>`` per check: whether the answer passed. A person's rows carry their own
# verdicts; a model's rows those of its agent's answers to the checks under the same persona and sample, when the
# agent asks them (``[[agents]] checks = true``; elicitation/question_prompts.py), else empty.
CHECK_PREFIX = "check."


def check_columns(study: Any) -> list[Column]:
    """``check.<key>`` for every declared check, in the file's order ([]: the study declares none)."""
    out = []
    for check in (study.definition or {}).get("checks") or []:
        passing = ", ".join(str(p) for p in check.get("pass") or [])
        out.append(Column(CHECK_PREFIX + check["key"], *BOOLEAN, "participant",
                          f"Attention check {check['key']!r} ({check.get('type', '')}): whether the answer passed "
                          f"(passing: {passing}). People: their answer; models: the agent's answer under the row's "
                          "persona and sample when the agent asks the checks (checks = true); empty when unanswered "
                          "or not asked.", "true | false | empty"))
    return out


@dataclass
class CheckVerdicts:
    """People's verdicts by participant; models' by (run, sample index), found through the row's id."""

    width: int
    people: Mapping[int, tuple] = field(default_factory=dict)
    models: Mapping[tuple[int, int], tuple] = field(default_factory=dict)
    samples: Mapping[int, int] = field(default_factory=dict)  # model answer id → its sample index

    def human(self, participant_id: int, item_id: int, response_id: int) -> tuple:
        return self.people.get(participant_id) or (None,) * self.width

    def model(self, run_id: int, item_id: int, response_id: int, persona: Mapping[str, Any] | None) -> tuple:
        sample = self.samples.get(response_id)
        if sample is None:
            return (None,) * self.width
        return self.models.get((run_id, sample)) or (None,) * self.width


def check_filler(study: Any, columns: Sequence[Column]) -> Filler:
    from elicitation.models import ModelResponse
    from elicitation.question_prompts import check_passed
    from surveys.models import CheckAnswer

    keys = [c["key"] for c in (study.definition or {}).get("checks") or []]
    at = {key: n for n, key in enumerate(keys)}
    people: dict[int, list] = {}
    for participant_id, key, passed in (CheckAnswer.objects.filter(participant__study=study).order_by()
                                        .values_list("participant_id", "check_key", "passed")):
        if key in at:
            people.setdefault(participant_id, [None] * len(keys))[at[key]] = passed
    models: dict[tuple[int, int], list] = {}
    for run_id, sample, key, status, value, choice in (
            ModelResponse.objects.filter(run__study=study).exclude(check_key="").order_by()
            .values_list("run_id", "sample_index", "check_key", "status", "value", "choice")):
        if key in at and status in ("ok", "unparseable"):  # an unreadable answer is no passing answer
            passed = status == "ok" and bool(check_passed(study, key, value, choice))
            models.setdefault((run_id, sample), [None] * len(keys))[at[key]] = passed
    asked_runs = {run_id for run_id, _ in models}
    samples = dict(ModelResponse.objects.filter(run_id__in=asked_runs, check_key="").order_by()
                   .values_list("pk", "sample_index")) if asked_runs else {}
    return CheckVerdicts(len(keys), {p: tuple(v) for p, v in people.items()},
                         {k: tuple(v) for k, v in models.items()}, samples)


PROVIDERS.append(Provider("checks", check_columns, check_filler))
