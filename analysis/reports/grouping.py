"""Grouping a report section by participant fields and personas: the humans of each value of a questionnaire field
beside the models asked under a persona with that value (analysis/metrics/groups.py computes; this module reads
the study and hands each section its tables and figures).

Which fields: the questionnaire fields the definition's ``[report] group_by`` names (item fields there make the
generic section's item groups instead). A study naming none, or whose model answers carry no persona, gets no
grouping: its report is unchanged (the generic section's ``generic_questionnaire`` already breaks the humans
down by those fields).

Each section calls :func:`grouping` with its answers (the report's answer table, analysis.dataset, with the
section's per-answer quantity in a column) and gets a :class:`Grouping` (or None): tables
``<section>_groups`` and ``<section>_group_differences`` and one figure per field. Humans are grouped by their own
questionnaire answers (a study's participants and its reference study's), models by the persona each answer was
asked under (``ModelResponse.persona``, typed like the questionnaire: analysis.questionnaire_frame.with_fields);
a model answer without a persona is left out of the grouping. A respondent is a participant, or one persona of
one run.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.metrics.answers import HUMAN
from analysis.metrics.groups import Compare, group_differences, group_order, group_table, value_groups
from analysis.questionnaire import study_fields
from analysis.questionnaire_frame import with_fields

PREFIX = "f:"  # the field columns added to the answers


def group_fields(study: Any) -> list[str]:
    """The questionnaire fields (of the study or its reference study) that ``[report] group_by`` names."""
    named = [str(n) for n in ((getattr(study, "definition", None) or {}).get("report") or {}).get("group_by") or []]
    if not named:
        return []
    declared = {f.name for s in (study, getattr(study, "reference_study", None)) if s is not None
                for f in study_fields(s)}
    return [n for n in named if n in declared]


def _declared_keys(studies: list[Any], name: str) -> list[str]:
    for s in studies:
        for f in study_fields(s):
            if f.name == name and f.type == "choice":
                return [c.key for c in f.choices]
    return []


def _units(answers: pd.DataFrame) -> pd.Series:
    """A respondent per answer: the participant (``respondent``), or for a model one persona of one run."""
    unit = answers["respondent"].astype(str)
    if "persona" in answers.columns:
        personas = answers["persona"].map(lambda p: json.dumps(p, sort_keys=True) if isinstance(p, dict) else "")
        unit = unit.where(personas == "", unit + "|" + personas)
    return unit


@dataclass
class Grouping:
    """The grouped tables of one section (``prefix``: its table and figure names) and what q is (``quantity``)."""

    prefix: str
    quantity: str
    fields: list[str]
    groups: pd.DataFrame
    differences: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {f"{self.prefix}_groups": self.groups, f"{self.prefix}_group_differences": self.differences}

    @property
    def titles(self) -> dict[str, str]:
        fields = ", ".join(self.fields)
        return {
            f"{self.prefix}_groups": f"By participant field and persona ({fields}): {self.quantity} per group, each "
                                     "agent beside the humans; mean over respondents with its 95% t interval, "
                                     "vs_humans = model mean − humans' mean",
            f"{self.prefix}_group_differences": f"Between groups ({fields}): difference of means a − b of "
                                                f"{self.quantity} with Welch's 95% interval, the humans' beside each "
                                                "model's; gap = model's difference − humans'",
        }

    def figures(self, title: str) -> list[tuple[str, Any]]:
        from django.utils.text import slugify

        from analysis.reports.grouping_figures import grouping_figure

        out = []
        for name in self.fields:
            groups = self.groups[self.groups["field"] == name]
            if groups.empty:
                continue
            diffs = self.differences[self.differences["field"] == name]
            out.append((f"{self.prefix.replace('_', '-')}-groups-{slugify(name) or 'field'}",
                        grouping_figure(groups, diffs, f"{title}: {self.quantity} by {name}", self.quantity)))
        return out

    def meta(self) -> dict[str, Any]:
        return {"group_by": self.fields, "quantity": self.quantity, "notes": self.notes}


def grouping(study: Any, prefix: str, answers: pd.DataFrame, quantity: str, words: str,
             compare: Compare | None = None, fields: list[str] | None = None) -> Grouping | None:
    """The section's answers grouped by each field of ``fields`` (default :func:`group_fields`); None without
    any, or when no model answer carries a persona. ``answers``: one row per answer with ``agent``, ``respondent`` (``p<id>`` for humans), ``persona``
    for models, and the per-answer quantity in column ``quantity`` (``words`` says what it is)."""
    fields = group_fields(study) if fields is None else fields
    if not fields:
        return None
    studies = [s for s in (study, getattr(study, "reference_study", None)) if s is not None]
    frame = answers.reset_index(drop=True)
    if "persona" not in frame.columns:
        frame["persona"] = None
    is_human = (frame["agent"] == HUMAN).to_numpy()
    has_persona = frame["persona"].map(lambda p: isinstance(p, dict)).to_numpy(dtype=bool)
    if not has_persona.any():
        return None
    frame = frame[is_human | has_persona]
    notes = []
    if (~is_human & ~has_persona).any():
        notes.append("model answers without a persona are left out of the grouping")
    frame = with_fields(frame, studies, fields, prefix=PREFIX)
    frame = frame.assign(unit=_units(frame), q=pd.to_numeric(frame[quantity], errors="coerce").astype(float))
    group_parts, diff_parts = [], []
    for name in fields:
        values = frame[PREFIX + name]
        per_unit = values.groupby(frame["unit"], sort=False).first()
        groups = value_groups(per_unit)
        data = frame[["agent", "unit", "q"]].assign(group=frame["unit"].map(groups))
        order = group_order(data["group"].astype(str), _declared_keys(studies, name))
        table = group_table(data, order, compare)
        diffs = group_differences(data, order)
        group_parts.append(table.assign(field=name))
        diff_parts.append(diffs.assign(field=name))
    groups = pd.concat(group_parts, ignore_index=True)
    diffs = pd.concat(diff_parts, ignore_index=True)
    groups = groups[["field", *[c for c in groups.columns if c != "field"]]]
    diffs = diffs[["field", *[c for c in diffs.columns if c != "field"]]]
    return Grouping(prefix=prefix, quantity=words, fields=fields, groups=groups, differences=diffs, notes=notes)
