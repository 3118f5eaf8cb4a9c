"""The generic report section (``generic``): any study's answers, each agent beside the humans, per item group.

Built for every study, next to its family's sections (analysis.reports.build_report adds it). What it reads:

- the answer's shape and settings: the definition's ``[answer]`` table when the study was loaded from a file,
  else the kind's shape (``study.kind.shape``) and scale (``scale_min``/``scale_max``/``scale_step``);
- the grouping: the definition's ``[report] group_by`` list. A name is an item field (a model column such as
  ``context``, or a key of ``Item.extra`` such as ``condition``) or a questionnaire field. Item fields make the
  item groups (every combination of their values; one group "all items" without any); questionnaire fields
  name the human breakdowns (without any named, every choice and number field of the questionnaire is broken
  down);
- the participants' questionnaire answers (analysis.questionnaire_frame, typed by the declared fields);
- the answers (analysis.dataset): completed, non-test participants (those the attention filter excludes left
  out when the study applies it) and one run per model agent (analysis.agents, as the family sections).

Tables: ``generic_summary`` (per item group × agent: the shape's metrics against the group's humans,
analysis/metrics/generic.py), ``generic_distribution`` (per item group × agent: the histogram or option shares),
``generic_questionnaire`` (per questionnaire field and value, the humans with that value against all humans of
the item group). A figure per item group and per questionnaire field (analysis/reports/generic_figures.py).
Without human answers the section describes the models alone and says so. A study with between-subjects cells
(``[[factors]]``) has every table grouped by the cell first (``condition``) and a ``generic_cells`` table: people
and models side by side, cell by cell (analysis/reports/cells.py).

Grouping by participant fields and personas (analysis/reports/grouping.py; only for the questionnaire fields
``group_by`` names): ``generic_groups`` and ``generic_group_differences``, the humans of each value beside the
models asked under a persona with that value. The per-answer quantity: a scale's value (compared by W1, PA, %PA
and KL on the scale's bins), an interval's width (upper − lower), a choice's agreement with the humans' majority
option over all items (1 when the answer chose it, else 0); free text is not grouped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.agents import RunUse, choose_runs, used_run_ids
from analysis.dataset import study_answers
from analysis.exclusions import ExclusionError, ExclusionResult, compute_exclusions
from analysis.verifiable import is_verifiable
from analysis.metrics.answers import HUMAN
from analysis.metrics.generic import (Binning, choice_table, count_table, interval_table, option_shares,
                                      scale_binning, scale_histograms, scale_table)
from analysis.metrics.groups import binned_comparison
from analysis.metrics.groups import value_groups as _value_groups
from analysis.reports import ReportError, shared
from analysis.reports.cells import CONDITION, answer_cells, cell_table, has_cells, people_per_cell
from analysis.reports.grouping import Grouping, grouping
from analysis.questionnaire_frame import questionnaire_frame
from surveys.models import Item, Study
from surveys.questions import questions_of, several

ALL_ITEMS = "all items"
NO_ANSWER = "(no answer)"
NUMBER_GROUPS = 4  # a number questionnaire field with more distinct values is cut into this many quantile ranges
NO_HUMANS = "no human answers yet: the models are described alone (the comparisons with people come with them)"
ALL_EXCLUDED = ("no human answers kept: the exclusion rules excluded all {n} completed participant(s) ({how}); the "
                "models are described alone")
NO_MODEL_QUESTIONNAIRE = ("no model answer carries a persona: the questionnaire breakdown is of the human answers only "
                          "(an agent with a persona is compared by the same fields)")
SAME_AS_ITEM = {"truth", "statement_id"}  # answer columns that hold the item's own field
ITEM_COLUMNS = [f.attname for f in Item._meta.concrete_fields
                if f.attname not in ("id", "study_id", "extra", "is_demonstration", "demo_order", "demo_answer")]


# --- what the study declares --------------------------------------------------------------------
@dataclass(frozen=True)
class AnswerSpec:
    """The answer's shape and what its metrics need (the scale's bins, the options)."""

    shape: str
    binning: Binning | None = None
    options: tuple[str, ...] = ()
    option_labels: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        if self.shape == "scale" and self.binning is not None:
            return f"scale, binned in {self.binning.name}"
        if self.shape in ("choice", "pick"):
            return f"{self.shape} among {', '.join(self.options) or 'the options each item offers'}"
        return self.shape.replace("_", " ")


def answer_spec(study: Study, table: dict[str, Any] | None = None) -> AnswerSpec:
    """The study's answer shape from its definition's ``[answer]`` table (``table``: one question's, with
    ``[[questions]]``), else from its kind."""
    table = table if table is not None else (study.definition or {}).get("answer") or {}
    kind = study.kind
    shape = table.get("shape") or kind.shape.name
    if shape == "scale":
        if table.get("min") is not None and table.get("max") is not None:
            binning = scale_binning(float(table["min"]), float(table["max"]), float(table.get("step") or 1))
        else:
            binning = scale_binning(float(kind.scale_min), float(kind.scale_max), float(kind.scale_step))
        return AnswerSpec("scale", binning)
    if shape in ("choice", "pick"):
        declared = [(str(o["key"]), str(o.get("label", o["key"]))) for o in table.get("options") or []]
        if not declared:  # options carried by the items (the family kinds): their keys, first seen first
            seen: dict[str, str] = {}
            for extra in study.main_items().values_list("extra", flat=True):
                for key, text in (extra or {}).get("options", []) or []:
                    seen.setdefault(str(key), str(text))
            declared = list(seen.items())
        return AnswerSpec(shape, options=tuple(k for k, _ in declared), option_labels=tuple(declared))
    return AnswerSpec(shape)


def group_by(study: Study) -> list[str]:
    """The definition's ``[report] group_by`` names (none for a study created the old way)."""
    return [str(n) for n in ((study.definition or {}).get("report") or {}).get("group_by") or []]


def declared_questionnaire(study: Study) -> dict[str, str]:
    """Questionnaire field name → type (choice | number | text), as the definition declares them."""
    return {str(f["name"]): str(f.get("type", "choice")) for f in (study.definition or {}).get("questionnaire") or []
            if isinstance(f, dict) and f.get("name")}


def item_frame(study: Study, names: list[str]) -> pd.DataFrame:
    """One row per item (index ``item_id``): the fields ``names`` (a model column, else ``Item.extra``'s key; None
    where an item lacks it) and ``truth_value``, an item's true number (``ground_truth``, else a numeric
    ``truth`` or ``ground_truth`` in ``extra``; NaN without)."""
    columns = [n for n in names if n in ITEM_COLUMNS]
    rows = []
    for pk, ground, extra, *values in Item.objects.filter(study=study).values_list("pk", "ground_truth", "extra",
                                                                                 *columns):
        extra = extra or {}
        own = dict(zip(columns, values))
        row = {n: own[n] if n in own else extra.get(n) for n in names}
        row["truth_value"] = ground if ground is not None else _number(extra.get("truth", extra.get("ground_truth")))
        rows.append((pk, row))
    frame = pd.DataFrame([r for _, r in rows], index=pd.Index([pk for pk, _ in rows], name="item_id"),
                         columns=[*names, "truth_value"])
    frame["truth_value"] = frame["truth_value"].astype(float)
    return frame


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def split_group_by(study: Study, names: list[str], questionnaire: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(item fields, questionnaire fields) of ``group_by``; ReportError naming a name that is neither."""
    declared = declared_questionnaire(study)
    q_names = set(declared) | set(questionnaire.columns)
    item_keys: set[str] = set()
    for extra in Item.objects.filter(study=study).values_list("extra", flat=True):
        item_keys.update((extra or {}).keys())
    items, fields = [], []
    for name in names:
        if name in q_names:
            fields.append(name)
        elif name in ITEM_COLUMNS or name in item_keys:
            items.append(name)
        else:
            extra_keys = ", ".join(sorted(item_keys)) or "none"
            raise ReportError(f"[report] group_by names {name!r}, which is neither an item field (the item columns, "
                              f"or the items' own fields: {extra_keys}) nor a questionnaire field "
                              f"({', '.join(sorted(q_names)) or 'none'})")
    return items, fields


def breakdown_fields(study: Study, named: list[str], questionnaire: pd.DataFrame) -> list[str]:
    """The questionnaire fields broken down: those ``group_by`` names, else every declared choice and number
    field (and any field found in the answers when none is declared); free-text fields never."""
    declared = declared_questionnaire(study)
    if named:
        return named
    if declared:
        return [n for n, t in declared.items() if t != "text"]
    return [str(c) for c in questionnaire.columns]


def questionnaire_groups(values: pd.Series) -> pd.Series:
    """Each participant's group for one field: the value as text; a number field with more than
    ``NUMBER_GROUPS`` distinct values cut into that many quantile ranges ("18–25"); "(no answer)" when empty."""
    return _value_groups(values, NUMBER_GROUPS)


def _group_value(value: Any) -> str:
    """An item field's value as the name of its group ("(no answer)" when empty)."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return NO_ANSWER
    return _fmt(value)


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    return f"{float(value):g}"


# --- the section ------------------------------------------------------------------------------------
@dataclass
class GenericSection:
    """The generic section of one study's report."""

    study: Study
    spec: AnswerSpec
    item_fields: list[str]
    breakdown: list[str]
    answers: pd.DataFrame  # the answers read: item fields, agent, answer columns, questionnaire groups (humans)
    humans: int  # participants whose answers are counted
    attention: str
    runs: list[RunUse] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw_ids: bool = False
    computed: dict[str, pd.DataFrame] = field(default_factory=dict)  # the tables, computed once (:func:`build`)
    grouped: Grouping | None = None  # by participant fields and personas (only for group_by's questionnaire fields)
    humans_excluded: int = 0  # completed participants the exclusion rules left out
    exclusions: ExclusionResult | None = None  # the exclusion rules' result (analysis/exclusions.py)

    # --- tables -------------------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        return _flat(self._metric(self.answers, self.item_fields))

    def distribution(self) -> pd.DataFrame | None:
        return _flat(self._distribution(self.answers, self.item_fields))

    def questionnaire(self) -> pd.DataFrame:
        parts = []
        for name, frame in self.breakdown_frames():
            table = self._metric(frame, self.item_fields)
            table = table[table["agent"] != HUMAN]
            table.insert(0, "field", name)
            table = table.rename(columns={"agent": "group"})
            table["group"] = table["group"].str.slice(len(name) + 3)
            parts.append(table)
        if not parts:
            return pd.DataFrame(columns=["field", *self.item_fields, "group", "answers"])
        return _flat(pd.concat(parts, ignore_index=True))

    def breakdown_frames(self) -> list[tuple[str, pd.DataFrame]]:
        """Per broken-down field: the group's humans (agent "FIELD = VALUE") and all humans (agent "human")."""
        humans = self.answers[self.answers["agent"] == HUMAN]
        out = []
        for name in self.breakdown:
            column = f"q:{name}"
            if humans.empty or column not in humans.columns:
                continue
            groups = humans.assign(agent=name + " = " + humans[column].astype(str))
            out.append((name, pd.concat([humans, groups], ignore_index=True)))
        return out

    def _metric(self, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        shape = self.spec.shape
        if shape == "scale":
            return scale_table(df, self.spec.binning, keys)
        if shape in ("choice", "pick"):
            return choice_table(df, self.spec.options, keys)
        if shape == "interval":
            return interval_table(df, keys)
        return count_table(df, keys)

    def _distribution(self, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
        if self.spec.shape == "scale":
            return scale_histograms(df, self.spec.binning, keys)
        if self.spec.shape in ("choice", "pick"):
            return option_shares(df, self.spec.options, keys)
        return None

    def tables(self) -> dict[str, pd.DataFrame]:
        """The section's tables (computed once, when the section is built; copies)."""
        if not self.computed:
            self.computed = self.compute_tables()
        return {name: table.copy() for name, table in self.computed.items()}

    def compute_tables(self) -> dict[str, pd.DataFrame]:
        out = {"exclusion_flow": self.exclusions.flow()} if self.exclusions is not None else {}
        out["generic_summary"] = self.summary()
        distribution = self.distribution()
        if distribution is not None:
            out["generic_distribution"] = distribution
        if self.breakdown:
            out["generic_questionnaire"] = self.questionnaire()
        if self.grouped is not None:
            out.update(self.grouped.tables())
        if has_cells(self.study):
            out["generic_cells"] = cell_table(self.study, self.answers, self.spec.shape == "scale")
        return out

    @property
    def titles(self) -> dict[str, str]:
        groups = " × ".join(self.item_fields) or ALL_ITEMS
        return {**(self.grouped.titles if self.grouped is not None else {}),
            "exclusion_flow": "Participants: entered, completed, excluded by each exclusion rule, analysed",
            "generic_summary": f"Generic: each agent beside the humans per item group ({groups}); {METRIC_WORDS.get(self.spec.shape, 'answers counted')}",
            "generic_distribution": f"Generic: answer distribution per item group ({groups}) and agent",
            "generic_questionnaire": "Generic: the humans per questionnaire answer, against all humans of the item group",
            "generic_cells": "Generic: people and models per between-subjects cell (respondents, answers"
                             + (", mean and median answer)" if self.spec.shape == "scale" else ")"),
        }

    # --- figures, meta ------------------------------------------------------------------------
    def figures(self) -> list[tuple[str, Any]]:
        from analysis.reports.generic_figures import section_figures

        figures = list(section_figures(self))
        if self.grouped is not None:
            figures += self.grouped.figures(self.study.title)
        return figures

    def groups(self) -> list[tuple[str, pd.DataFrame]]:
        """(name, answers) of each item group, in order ("all items" without item fields)."""
        if not self.item_fields:
            return [(ALL_ITEMS, self.answers)]
        out = []
        for key, part in self.answers.groupby(self.item_fields, sort=True, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            out.append((", ".join(f"{n} = {_fmt(v)}" for n, v in zip(self.item_fields, key)), part))
        return out

    def agents(self) -> list[str]:
        names = set(self.answers["agent"].astype(str))
        return ([HUMAN] if HUMAN in names else []) + sorted(names - {HUMAN})

    def meta(self) -> dict[str, Any]:
        return {
            "study": self.study.slug, "title": self.study.title, "instrument": self.study.instrument,
            "answer": self.spec.describe(), "item_groups_by": self.item_fields,
            "questionnaire_fields": self.breakdown, "human_participants": self.humans,
            "agents": self.agents(), "attention": self.attention,
            "runs_used": [u.run_id for u in self.runs if u.used], "notes": self.notes,
            **({"grouping": self.grouped.meta()} if self.grouped is not None else {}),
            **({"people_per_cell": people_per_cell(self.study)} if has_cells(self.study) else {}),
        }

    def summary_text(self) -> str:
        lines = [f"Generic section ({self.spec.describe()}; item groups: {' × '.join(self.item_fields) or ALL_ITEMS})"]
        lines += [f"Note: {n}" for n in self.notes]
        lines.append(self.tables()["generic_summary"].round(3).to_string(index=False))
        return "\n".join(lines)


METRIC_WORDS = {
    "scale": "mean and median of the answers; PA and %PA (×100), Wasserstein-1 and KL(humans ‖ agent) against the "
             "group's humans",
    "choice": "the most chosen option, agreement with the humans' majority option (0–1) and the Jensen–Shannon "
              "distance (base 2) to the humans' option shares",
    "interval": "mean bounds, mean and median width, and coverage of the items' true values",
}
METRIC_WORDS["pick"] = METRIC_WORDS["choice"]


def _flat(df: pd.DataFrame | None) -> pd.DataFrame | None:
    if df is None:
        return None
    out = df.copy()
    out.columns = [str(c) for c in out.columns]
    return out.reset_index(drop=True)


# --- building -----------------------------------------------------------------------------------------
def attention_kept(study: Study, answers: pd.DataFrame) -> tuple[pd.DataFrame, str, ExclusionResult | None]:
    """The answers without the humans the study's exclusion rules exclude (analysis/exclusions.py: its
    ``[[exclusions]]``, and its kind's attention filter rule when the filter applies), what was done in
    words, and the rules' result (None when no rule could run)."""
    if not (answers["agent"] == HUMAN).any():
        return answers, "none: no human answers to judge", None
    try:
        result = shared(("exclusions", study.pk), lambda: compute_exclusions(study))
    except ExclusionError as exc:
        return answers, f"not applied ({exc}): every completed participant is kept", None
    if not result.rules:
        return answers, "none: every completed participant is kept (the study declares no exclusion rules)", result
    out = {f"p{pk}" for pk in result.excluded}
    kept = answers[(answers["agent"] != HUMAN) | ~answers["respondent"].isin(out)]
    return kept, result.describe(), result


def build(study: Study) -> "GenericSection | QuestionsSection":
    """The generic section of ``study``; ReportError when it has no answers at all yet, or when ``group_by``
    names an unknown field. A study with ``[[questions]]``: one section per question (:class:`QuestionsSection`)."""
    if not several(study):
        return build_one(study)
    parts = []
    for question in questions_of(study):
        try:
            parts.append((question.key, build_one(study, question.key, dict(question.answer or {}))))
        except ReportError as exc:
            if "has no answers yet" not in str(exc):
                raise
    if not parts:
        raise ReportError(f"study {study.slug!r} has no answers yet (no completed participant, no model answer)")
    return QuestionsSection(study, parts)


def build_one(study: Study, question: str | None = None, table: dict[str, Any] | None = None) -> GenericSection:
    """The generic section of ``study``'s answers (``question``: of that question only, its shape ``table``)."""
    spec = answer_spec(study, table)
    questionnaire = questionnaire_frame(study).drop(columns="respondent_id")  # index: the answers' respondent
    item_fields, named = split_group_by(study, group_by(study), questionnaire)
    breakdown = breakdown_fields(study, named, questionnaire)
    set_name = "v" if is_verifiable(study) else "nv"  # as the 0–100 agreement section names them: one reading for both
    runs = shared(("runs", study.pk, set_name), lambda: choose_runs(study, set_name))
    run_ids = used_run_ids(runs)
    answers = shared(("answers", study.pk, tuple(run_ids)), lambda: study_answers(study, run_ids))
    if question is not None:
        answers = answers[answers["question"] == question]
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet (no completed participant, no model answer)")
    humans_read = int(answers.loc[answers["agent"] == HUMAN, "participant_id"].nunique())
    answers, attention, exclusions = attention_kept(study, answers)
    reserved = sorted(set(item_fields) & (set(answers.columns) - SAME_AS_ITEM))
    if reserved:
        raise ReportError(f"[report] group_by names {', '.join(map(repr, reserved))}, the name of an answer column: "
                          "give the item field another name")
    items = item_frame(study, item_fields)
    answers = answers.drop(columns=[c for c in item_fields if c in answers.columns]).join(items, on="item_id")
    for name in item_fields:
        answers[name] = answers[name].map(_group_value)
    is_human = (answers["agent"] == HUMAN).to_numpy()
    for name in breakdown:
        column = (questionnaire[name].astype(object) if name in questionnaire.columns
                  else pd.Series(None, index=questionnaire.index, dtype=object))
        groups = questionnaire_groups(column)
        answers[f"q:{name}"] = np.where(is_human, answers["respondent"].map(groups).astype(object).fillna(NO_ANSWER)
                                        .to_numpy(dtype=object), None)
    if has_cells(study):  # [[factors]]: every table cell by cell, people beside models (analysis/reports/cells.py)
        answers[CONDITION] = answer_cells(study, answers)
        item_fields = [CONDITION, *item_fields]
    humans = int(answers.loc[is_human, "participant_id"].nunique())
    notes = []
    if not humans:  # none completed yet, or every one excluded by the attention filter: which, said plainly
        notes.append(ALL_EXCLUDED.format(n=humans_read, how=attention) if humans_read else NO_HUMANS)
    with_persona = answers["persona"].map(lambda p: isinstance(p, dict)) if "persona" in answers.columns else None
    if breakdown and (~is_human).any() and (with_persona is None or not with_persona.any()):
        notes.append(NO_MODEL_QUESTIONNAIRE)
    if spec.shape == "free_text":
        notes.append("free-text answers: counted only, no metric")
    section = GenericSection(study=study, spec=spec, item_fields=item_fields, breakdown=breakdown, answers=answers,
                             humans=humans, attention=attention, runs=runs, notes=notes,
                             humans_excluded=humans_read - humans, exclusions=exclusions,
                             grouped=_grouped(study, spec, answers, named))
    section.tables()  # computed once here, so that a cached report holds them
    return section


def _grouped(study: Study, spec: AnswerSpec, answers: pd.DataFrame, named: list[str]) -> Grouping | None:
    """The answers grouped by the questionnaire fields ``group_by`` names, by the shape's per-answer quantity
    (module docstring); None without such fields or for free text."""
    if not named or spec.shape == "free_text":
        return None
    compare = None
    if spec.shape == "scale":
        quantity, words, compare = answers["value"], "answer", binned_comparison(spec.binning)
    elif spec.shape == "interval":
        quantity, words = answers["upper"] - answers["lower"], "interval width"
    else:
        humans = answers.loc[(answers["agent"] == HUMAN) & (answers["choice"] != ""), "choice"]
        majority = set(humans.value_counts().pipe(lambda c: c[c == c.max()]).index) if len(humans) else set()
        chose = answers["choice"].isin(majority).astype(float)
        quantity = chose.where(answers["choice"] != "", np.nan) if majority else pd.Series(np.nan, index=answers.index)
        words = "share choosing the humans' majority option"
    return grouping(study, "generic", answers.assign(_q=quantity), "_q", words, compare, fields=named)


# --- several questions per item ---------------------------------------------------------------------
@dataclass
class QuestionsSection:
    """The generic section of a study with ``[[questions]]``: each question reported separately (its own
    answer shape and metrics), its tables stacked with a leading ``question`` column, its figures named by it."""

    study: Study
    parts: list[tuple[str, GenericSection]]
    raw_ids: bool = False

    @property
    def notes(self) -> list[str]:
        return list(dict.fromkeys(f"{key}: {n}" for key, part in self.parts for n in part.notes))

    def tables(self) -> dict[str, pd.DataFrame]:
        out: dict[str, list[pd.DataFrame]] = {}
        flow = None
        for key, part in self.parts:
            for name, table in part.tables().items():
                if name == "exclusion_flow":  # participants, not questions: once
                    flow = table if flow is None else flow
                    continue
                out.setdefault(name, []).append(table.assign(question=key)[["question", *table.columns]])
        tables = {"exclusion_flow": flow} if flow is not None else {}
        tables.update({name: pd.concat(parts, ignore_index=True) for name, parts in out.items()})
        return tables

    @property
    def titles(self) -> dict[str, str]:
        out = {}
        for _, part in self.parts:
            for name, title in part.titles.items():
                out.setdefault(name, title if name == "exclusion_flow" else f"{title} — each question separately")
        return out

    def figures(self) -> list[tuple[str, Any]]:
        return [(f"{name}-{key}", fig) for key, part in self.parts for name, fig in part.figures()]

    def meta(self) -> dict[str, Any]:
        first = self.parts[0][1].meta()
        first["answer"] = "; ".join(f"{key}: {part.spec.describe()}" for key, part in self.parts)
        first["questions"] = {key: part.meta() for key, part in self.parts}
        first["notes"] = self.notes
        return first

    def summary_text(self) -> str:
        return "\n\n".join(f"Question {key}:\n{part.summary_text()}" for key, part in self.parts)
