"""A study's exclusion rules applied to its participants (rules: surveys/definition/exclusion_rules.py; measures:
analysis/metrics/exclusion.py).

The rules are the file's ``[[exclusions]]``; a study whose attention filter applies (``[participants]
attention_filter``, else its kind's default) and that does not name the filter's rule itself (the rule its kind
names, ``Instrument.attention_rule``, else the installed attention-filter rule: :func:`attention_rule_of`) gets
it with the study's ``attention_threshold`` (so an existing study's report is what it was).
Every completed, non-test participant is judged by every rule; one excluded by any rule is left out of the
report's answers and named with each rule that excluded them and what it measured.

:func:`compute_exclusions` only reads (reports and exports: a GET never writes); :func:`apply_exclusions`
computes and stores the decisions (``ExclusionDecision``; an attention filter's rule also stores its measure and
decision on the participant, ``ExclusionResult.attention``) — the explicit step of ``manage.py exclusions`` (and
``attention``), the report page's button and ``POST /api/studies/<slug>/attention/``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from config.registry import resolve
from surveys.definition.exclusion_rules import attention_rule, describe, resolved, rules
from analysis.metrics import exclusion as measures
from surveys.models import CheckAnswer, ExclusionDecision, Participant, Response, Study
from surveys.questions import questions_of, several
from surveys.respondent_ids import hashed_id


class ExclusionError(ValueError):
    """A rule cannot be computed for this study now; the message names the rule and why."""


class AttentionOutcome(Protocol):
    """What an attention filter's rule computes (``RuleSpec.outcome``; its judge keeps it in
    ``ExclusionResult.attention``): each evaluated participant's measure and decision."""

    decisions: dict[int, tuple[float | None, bool]]

    def describe(self) -> str: ...

    def as_dict(self, raw_ids: bool = False) -> dict: ...

    def report_lines(self) -> list[str]: ...

    def store(self) -> None: ...


def attention_rule_of(study: Study) -> str | None:
    """The exclusion rule the study's attention filter applies (its kind's ``attention_rule``, else the installed
    attention-filter rule); None when none is installed."""
    return attention_rule(study.kind.attention_rule)


def attention_outcome(study: Study) -> AttentionOutcome:
    """The attention filter's outcome for ``study`` without storing anything: its rule's ``outcome`` at the study's
    ``attention_filter_threshold`` (None, every participant kept, when its filter is off). ValueError
    (ExclusionError, or the rule's own) when it cannot be computed."""
    rule = attention_rule_of(study)
    spec = rules().get(rule) if rule is not None else None
    if spec is None or not spec.outcome:
        raise ExclusionError(f"study {study.slug!r}: no attention filter rule is installed for its kind")
    return resolve(spec.outcome, f"exclusion rule {rule!r}")(study, study.attention_filter_threshold)


def declared_rules(study: Study) -> list[tuple[str, dict[str, Any]]]:
    """(rule, resolved parameters) of the study's rules, in the file's order (the implicit attention filter's rule
    last)."""
    rules = [(r["rule"], resolved(r["rule"], {k: v for k, v in r.items() if k != "rule" and v is not None}))
             for r in (study.definition or {}).get("exclusions") or []]
    attention = attention_rule_of(study) if study.applies_attention_filter else None
    if attention is not None and not any(name == attention for name, _ in rules):
        rules.append((attention, {"threshold": float(study.attention_threshold)}))
    return rules


@dataclass
class RuleOutcome:
    rule: str
    params: dict[str, Any]
    excluded: list[int] = field(default_factory=list)  # participant ids

    @property
    def label(self) -> str:
        return describe(self.rule, self.params)


@dataclass
class ExclusionResult:
    study: str
    entered: int  # non-test participants who opened the study
    completed: int  # of them, completed (the ones judged)
    rules: list[RuleOutcome] = field(default_factory=list)
    reasons: dict[int, list[dict[str, str]]] = field(default_factory=dict)  # participant id → [{rule, detail}]
    pids: dict[int, str] = field(default_factory=dict, repr=False)
    attention: AttentionOutcome | None = None  # the attention filter rule's outcome (ρ to store), when it ran
    attention_rule: str = ""  # the rule that computed ``attention``

    @property
    def excluded(self) -> set[int]:
        return {pk for pk, why in self.reasons.items() if why}

    @property
    def analysed(self) -> int:
        return self.completed - len(self.excluded)

    def set_attention(self, rule: str, outcome: AttentionOutcome) -> None:
        """Keep an attention filter rule's outcome (its judge calls it): the report describes it and
        :func:`apply_exclusions` stores it."""
        self.attention, self.attention_rule = outcome, rule

    def decision(self, pk: int) -> bool:
        """Whether participant ``pk`` is kept (included)."""
        return not self.reasons.get(pk)

    def describe(self) -> str:
        """The rules in words (the report's meta says it)."""
        if not self.rules:
            return "none: the study declares no exclusion rules; every completed participant is kept"
        labels = [f"{r.label}, {self.attention.describe()}" if r.rule == self.attention_rule and self.attention
                  is not None else r.label for r in self.rules]
        return "; ".join(labels) + f": {self.analysed} of {self.completed} kept"

    def flow(self) -> pd.DataFrame:
        """The participant flow: entered, completed, excluded by each rule (a participant excluded by several
        rules counts under each), analysed."""
        rows = [("entered", self.entered), ("completed", self.completed)]
        rows += [(f"excluded by {r.label}", len(r.excluded)) for r in self.rules]
        if len(self.rules) > 1:
            rows.append(("excluded by any rule", len(self.excluded)))
        rows.append(("analysed", self.analysed))
        return pd.DataFrame(rows, columns=["step", "participants"])

    def as_dict(self, raw_ids: bool = False) -> dict[str, Any]:
        def who(pk: int) -> dict[str, Any]:
            row = {"participant_id": pk, "respondent_id": hashed_id(self.pids[pk])}
            return row | ({"prolific_pid": self.pids[pk]} if raw_ids else {})

        return {"study": self.study, "rules": [{"rule": r.rule, "params": r.params, "excluded": len(r.excluded)}
                                               for r in self.rules],
                "entered": self.entered, "completed": self.completed, "analysed": self.analysed,
                "evaluated": self.completed, "included": self.analysed,  # the attention filter's names of the two
                "excluded": [who(pk) | {"reasons": self.reasons[pk]} for pk in sorted(self.excluded)],
                "describe": self.describe(),
                **({"attention_filter": self.attention.as_dict(raw_ids)} if self.attention is not None else {})}


def _seconds(pk_times: dict[int, tuple[Any, Any]]) -> dict[int, float]:
    return {pk: (done - start).total_seconds() if start and done else float("nan")
            for pk, (start, done) in pk_times.items()}


def compute_exclusions(study: Study) -> ExclusionResult:
    """Every completed, non-test participant of ``study`` judged by every declared rule; nothing stored.
    ExclusionError when a rule cannot be computed (e.g. a ranking rule without completed participants)."""
    people = Participant.objects.filter(study=study, is_test=False)
    done = list(people.filter(status=Participant.Status.COMPLETED)
                .values_list("id", "prolific_pid", "started_at", "completed_at"))
    result = ExclusionResult(study=study.slug, entered=people.count(), completed=len(done),
                             pids={pk: pid for pk, pid, *_ in done})
    result.reasons = {pk: [] for pk in result.pids}
    for rule, params in declared_rules(study):
        outcome = RuleOutcome(rule, params)
        for pk, detail in _judge(study, rule, params, done, result).items():
            outcome.excluded.append(pk)
            result.reasons[pk].append({"rule": rule, "detail": detail})
        outcome.excluded.sort()
        result.rules.append(outcome)
    return result


def _answers(study: Study, pks: list[int], question: str | None = None) -> pd.DataFrame:
    """The participants' answers (``question``: to that question only; else one row per item page, its first
    question's, so that a page of several questions counts once)."""
    rows = Response.objects.filter(participant_id__in=pks, item__study=study)
    if question is not None:
        rows = rows.filter(question=question)
    elif several(study):
        rows = rows.filter(question=questions_of(study)[0].key)
    rows = rows.values_list("participant_id", "value", "choice", "time_taken_ms")
    return pd.DataFrame.from_records(list(rows), columns=["respondent", "value", "choice", "time_taken_ms"])


def _straight_lining(study: Study, pks: list[int], params: dict[str, Any]) -> dict[int, str]:
    """Straight-lining, per question (``[[questions]]``: a participant who straight-lines any of them)."""
    asked = questions_of(study) if several(study) else []
    out: dict[int, str] = {}
    for question in asked or [None]:
        answers = _answers(study, pks, question.key if question else None)
        shape = ((question.answer or {}).get("shape", "scale") if question else study.kind.shape.name)
        answers["answer"] = answers["value"] if shape == "scale" else answers["choice"]
        table = measures.straight_lining(answers, params["percent"], params.get("min_items", 3))
        where = f" ({question.key})" if question else ""
        for pk, row in table[table["excluded"]].iterrows():
            out.setdefault(int(pk), f"{row.measure:.0f} % the same answer{where}")
    return out


def _judge(study: Study, rule: str, params: dict[str, Any], done: list[tuple], result: ExclusionResult
           ) -> dict[int, str]:
    """Participant id → what the rule measured, for the participants it excludes (the rule's ``judge``)."""
    spec = rules().get(rule)
    if spec is None or not spec.judge:
        raise ExclusionError(f"unknown rule {rule!r}")
    if not done and not spec.judges_nobody_done:
        return {}
    return resolve(spec.judge, f"exclusion rule {rule!r}")(study, params, done, result)


def failed_checks(study: Study, params: dict[str, Any], done: list[tuple], result: ExclusionResult) -> dict[int, str]:
    rows = CheckAnswer.objects.filter(participant_id__in=[row[0] for row in done], passed__isnull=False).values_list(
        "participant_id", "passed")
    table = measures.failed_checks(pd.DataFrame.from_records(list(rows), columns=["respondent", "passed"]),
                                   params["at_least"])
    return {pk: f"{int(row.measure)} failed check(s)" for pk, row in table[table["excluded"]].iterrows()}


def too_fast(study: Study, params: dict[str, Any], done: list[tuple], result: ExclusionResult) -> dict[int, str]:
    seconds = _seconds({pk: (start, end) for pk, _, start, end in done})
    participants = pd.DataFrame({"respondent": list(seconds), "total_seconds": list(seconds.values())})
    table = measures.too_fast(participants, _answers(study, [row[0] for row in done]), params.get("total_seconds"),
                              params.get("median_item_seconds"))
    what = "in total" if "total_seconds" in params else "median per item"
    return {int(pk): f"{row.measure:.1f} s {what}" for pk, row in table[table["excluded"]].iterrows()}


def straight_lining(study: Study, params: dict[str, Any], done: list[tuple], result: ExclusionResult
                    ) -> dict[int, str]:
    """Straight-lining, per question (``[[questions]]``: a participant who straight-lines any of them)."""
    return _straight_lining(study, [row[0] for row in done], params)


def missing_answers(study: Study, params: dict[str, Any], done: list[tuple], result: ExclusionResult
                    ) -> dict[int, str]:
    counts = (Participant.objects.filter(pk__in=[row[0] for row in done])
              .annotate(n_slots=Count("assignments", distinct=True),
                        n_answered=Count("responses__assignment", filter=Q(responses__item__study=study),
                                         distinct=True))
              .values_list("id", "n_slots", "n_answered"))
    slots = pd.DataFrame.from_records(list(counts), columns=["respondent", "slots", "answered"])
    table = measures.missing_answers(slots, params["percent"])
    return {int(pk): f"{row.measure:.0f} % of items unanswered" for pk, row in table[table["excluded"]].iterrows()}


def apply_exclusions(study: Study) -> ExclusionResult:
    """Compute the study's rules and store each completed participant's decision with its reasons (the
    explicit action); an attention filter's rule also stores its measure and decision on the participant."""
    result = compute_exclusions(study)
    rules = [{"rule": r.rule, "params": r.params} for r in result.rules]
    now = timezone.now()
    with transaction.atomic():
        ExclusionDecision.objects.filter(participant__study=study).delete()
        ExclusionDecision.objects.bulk_create(
            [ExclusionDecision(participant_id=pk, excluded=bool(why), reasons=why, rules=rules, decided_at=now)
             for pk, why in result.reasons.items()], batch_size=500)
        if result.attention is not None:
            result.attention.store()
    return result


def stored_reasons(study: Study) -> dict[int, list[dict[str, str]]]:
    """Participant id → the reasons stored by the last :func:`apply_exclusions` ([] when kept)."""
    return dict(ExclusionDecision.objects.filter(participant__study=study).values_list("participant_id", "reasons"))


def reasons_text(reasons: list[dict[str, str]]) -> str:
    """The reasons as one cell: ``too-fast: 40.2 s in total; failed-checks: 2 failed check(s)``."""
    return "; ".join(f"{r['rule']}: {r['detail']}" for r in reasons)
