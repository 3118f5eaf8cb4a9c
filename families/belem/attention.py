"""Belem et al.'s attention filter applied to a study (SPEC §6; App. A): the Django side of the ``belem-ranking``
exclusion rule (declared in rules.py; the pure metric is metrics/attention.py).

:func:`compute_attention_filter` only reads (reports and exports use it: a GET never writes);
:func:`apply_attention_filter` computes and stores the decisions (the explicit action of the admin's button,
``POST /api/studies/<slug>/attention/`` and ``manage.py attention``).

The ranking of the labels comes from the mean answer of ALL completed participants of the
non-verifiable study, before filtering; a verifiable study (one whose items carry a truth value) uses its
``reference_study``'s ranking. Each completed participant's ρ and decision (ρ > study.attention_threshold)
are saved on Participant.attention_rho / attention_included. Excluded participants are kept and listed.
A study whose filter is off (``Study.applies_attention_filter``: the study's setting, else the instrument's
default) keeps every participant; ρ is still computed and stored.

The core applies the rule through the generic attention-filter interface of analysis/exclusions.py
(:func:`compute_attention_filter`, :func:`judge`): the exclusion rule a study's kind names (``Instrument.attention_rule``), which
Tang RQ1's report also reaches by name (``analysis.exclusions.attention_outcome``), never by importing this module.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from django.db import transaction

from analysis.dataset import human_answers
from analysis.exclusions import ExclusionError, ExclusionResult
from analysis.metrics.answers import AnswersError
from analysis.verifiable import is_verifiable
from families.belem.metrics.attention import attention_filter, label_ranking
from surveys.models import Participant, Study
from surveys.respondent_ids import hashed_id


class FilterError(ValueError):
    """The filter cannot run for this study; the message says why."""


@dataclass
class ExcludedParticipant:
    participant_id: int
    prolific_pid: str
    rho: float | None
    n_answers: int

    @property
    def respondent_id(self) -> str:
        """The salted hash of the PROLIFIC_PID (the combined export's ``respondent_id``)."""
        return hashed_id(self.prolific_pid)

    def as_dict(self, raw_ids: bool = False) -> dict:
        """The row; the raw PROLIFIC_PID only with ``raw_ids`` (callers check *view participant*)."""
        row = {"participant_id": self.participant_id, "respondent_id": self.respondent_id}
        if raw_ids:
            row["prolific_pid"] = self.prolific_pid
        return row | {"rho": self.rho, "n_answers": self.n_answers}


@dataclass
class FilterResult:
    study: str
    threshold: float | None  # None: the filter is not applied (every participant kept)
    ranking_study: str
    ranking: list[dict] = field(default_factory=list)  # [{"label", "mean", "rank"}], highest mean first
    evaluated: int = 0
    included: int = 0
    excluded: list[ExcludedParticipant] = field(default_factory=list)
    #: participant id → (ρ, included) for every completed participant evaluated (what storing would write)
    decisions: dict[int, tuple[float | None, bool]] = field(default_factory=dict, repr=False)

    @property
    def applied(self) -> bool:
        return self.threshold is not None

    def describe(self) -> str:
        """Which filter was applied, in words (the report says it)."""
        if not self.applied:
            return "none: every completed participant is kept (the attention filter is off for this study)"
        return f"Belem et al.'s attention filter: Spearman ρ > {self.threshold:g} (ranking from {self.ranking_study})"

    def as_dict(self, raw_ids: bool = False) -> dict:
        return {"study": self.study, "threshold": self.threshold, "applied": self.applied,
                "filter": self.describe(), "ranking_study": self.ranking_study,
                "ranking": self.ranking, "evaluated": self.evaluated, "included": self.included,
                "excluded": [e.as_dict(raw_ids) for e in self.excluded]}

    def report_lines(self) -> list[str]:
        """What ``manage.py exclusions`` prints before its summary: the label ranking (none when empty)."""
        if not self.ranking:
            return []
        return [f"ranking from study {self.ranking_study} (highest mean first): "
                + ", ".join(f"{r['label']} {r['mean']:.1f}" for r in self.ranking)]

    def store(self) -> None:
        """Write ρ and the decisions on the participants (:func:`store_attention_decisions`)."""
        store_attention_decisions(self)


def ranking_study(study: Study) -> Study:
    """The study whose participants rank the labels: the study itself, or its reference for a verifiable set."""
    if not is_verifiable(study):
        return study
    if study.reference_study is None:
        raise FilterError(f"study {study.slug!r} has verifiable items but no reference_study: set its "
                          "non-verifiable companion, whose label ranking the attention filter uses")
    return study.reference_study


def study_ranking(study: Study) -> pd.DataFrame:
    """The label ranking the filter of ``study`` uses (label_ranking() of the ranking study's answers)."""
    source = ranking_study(study)
    answers = human_answers(source)
    if answers.empty:
        raise FilterError(f"study {source.slug!r} has no completed participants to rank the labels by")
    return label_ranking(answers)


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


_STUDY_SETTING = object()


def compute_attention_filter(study: Study, threshold: Any = _STUDY_SETTING) -> FilterResult:
    """ρ and the decision of every completed participant of ``study``, without storing anything.

    Participants who are not completed, and test participants, are not evaluated. ``threshold``: the
    ``belem-ranking`` rule's (:func:`judge`); by default the study's setting (None when its filter is off). It is
    the rule's ``outcome`` (rules.py; analysis.exclusions.attention_outcome calls it at the study's setting).
    """
    ranking = study_ranking(study)
    answers = human_answers(study)
    if threshold is _STUDY_SETTING:
        threshold = study.attention_filter_threshold
    result = FilterResult(study=study.slug, threshold=threshold,
                          ranking_study=ranking_study(study).slug,
                          ranking=[{"label": label, "mean": float(row["mean"]), "rank": float(row["rank"])}
                                   for label, row in ranking.iterrows()])
    if answers.empty:
        return result
    table = attention_filter(answers, ranking, threshold=threshold)
    by_respondent = {int(r[1:]): row for r, row in table.iterrows()}
    participants = (Participant.objects.filter(study=study, status=Participant.Status.COMPLETED, is_test=False)
                    .values_list("id", "prolific_pid"))
    for pk, pid in participants:
        row = by_respondent.get(pk)
        rho = _finite(row["rho"]) if row is not None else None
        included = bool(row["included"]) if row is not None else threshold is None
        result.decisions[pk] = (rho, included)
        if not included:
            result.excluded.append(ExcludedParticipant(pk, pid, rho, int(row["n_answers"]) if row is not None else 0))
    result.evaluated = len(result.decisions)
    result.included = result.evaluated - len(result.excluded)
    result.excluded.sort(key=lambda e: (e.rho is not None, e.rho if e.rho is not None else 0.0))
    return result


def store_attention_decisions(result: FilterResult) -> None:
    """Write ``result``'s ρ and decisions on its participants (one transaction)."""
    rows = [Participant(pk=pk, attention_rho=rho, attention_included=included)
            for pk, (rho, included) in result.decisions.items()]
    with transaction.atomic():
        Participant.objects.bulk_update(rows, ["attention_rho", "attention_included"], batch_size=500)


def apply_attention_filter(study: Study) -> FilterResult:
    """Compute the filter of ``study`` and store ρ and the decisions on its participants (the explicit action)."""
    result = compute_attention_filter(study)
    store_attention_decisions(result)
    return result


def judge(study: Study, params: dict[str, Any], done: list[tuple], result: ExclusionResult) -> dict[int, str]:
    """Belem et al.'s ranking rule (the attention filter); also keeps its FilterResult in ``result.attention``
    (ρ to store)."""
    try:
        filtered = compute_attention_filter(study, threshold=params["threshold"])
    except (FilterError, AnswersError) as exc:
        raise ExclusionError(f"rule belem-ranking cannot run: {exc}") from None
    result.set_attention("belem-ranking", filtered)
    out = {}
    for pk, (rho, included) in filtered.decisions.items():
        if not included:
            out[pk] = f"ρ = {rho:.3f}" if _finite(rho) is not None else "ρ undefined"
    return out
