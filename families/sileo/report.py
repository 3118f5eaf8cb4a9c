"""Sileo & Moens report section: verbalisation-validity accuracy (their Table 1) and the correct-WEP shares
(their Appendix C), from a verbalisation-choice study's items and answers.

Tables (one CSV each):
- ``sileo_table1``: Table 1 shaped — rows Chance, Human baseline (when participants answered) and each model
  agent (one run per agent, analysis/agents.py), columns WEP-Reasoning (1 hop), WEP-Reasoning (2 hops), WEP-UNLI
  (those the study has): accuracy % and its Wilson 95% interval with n.
- ``sileo_accuracy``: the same in long form (n, correct, unreadable answers, accuracy, ci_low, ci_high).
- ``sileo_agreement``: Fleiss' κ between the participants per dataset.
- ``sileo_likelihood``: likelihood-mode agents — the accuracy each of the raw, length-normalised and calibrated
  scores would give; ``decides`` marks the score whose choice is the answer (length-normalised, see
  elicitation/likelihood.py), which is the one Table 1 uses.
- ``sileo_correct_weps``: per dataset, the share of items whose valid verbalisation uses each WEP.
Figures: accuracy per agent and dataset with the intervals and the chance line; the correct-WEP shares.
Formulas: families/sileo/metrics.py.

Grouped by participant fields and personas (analysis/reports/grouping.py, when ``[report] group_by`` names
questionnaire fields and model answers carry personas): tables ``sileo_groups`` and ``sileo_group_differences``
of each answer's correctness, 100 when it chose the valid verbalisation, else 0 (an unreadable answer is 0, as in
the accuracy), so a group's mean is its accuracy (%) over respondents.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.agents import choose_runs, used_run_ids
from analysis.dataset import human_answers, model_answers
from families.sileo.metrics import (CHANCE, DATASETS, accuracy, annotator_agreement, correct, score_accuracy,
                                    table1, wep_distribution)
from analysis.reports import ReportError
from analysis.reports.grouping import Grouping, grouping
from elicitation.likelihood import DECIDING_SCORE, SCORES
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Study

HUMAN_AGENT = "Human baseline"
TITLES = {
    "sileo_table1": "Sileo & Moens Table 1: verbalisation-validity accuracy (%) per agent and dataset, Wilson 95% "
                    "interval and n; chance 50",
    "sileo_accuracy": "Accuracy per agent and dataset (unreadable answers count as wrong)",
    "sileo_agreement": "Human baseline: Fleiss' κ between participants on the chosen option, per dataset",
    "sileo_likelihood": "Likelihood agents: accuracy by each score (raw, length-normalised, calibrated); "
                        "'decides' marks the score the answer follows",
    "sileo_correct_weps": "Appendix C: share (%) of items whose valid verbalisation uses each WEP, per dataset",
}


def item_table(study: Study) -> pd.DataFrame:
    """The study's items: item_id, dataset, valid_key, valid_wep (ReportError when it has none of this kind)."""
    rows = [{"item_id": pk, "dataset": (e or {}).get("dataset"), "valid_key": (e or {}).get("valid_key"),
             "valid_wep": (e or {}).get("valid_wep")} for pk, e in study.main_items().values_list("pk", "extra")]
    items = pd.DataFrame(rows, columns=["item_id", "dataset", "valid_key", "valid_wep"]).dropna()
    if items.empty:
        raise ReportError(f"study {study.slug!r} has no verbalisation items: generate them (generate_items "
                          f"{study.slug} --design wep-reasoning --hops 1) or import triples (import_items)")
    return items


def likelihood_choices(run_ids: list[int]) -> pd.DataFrame:
    """run_id, item_id and choice_<score> per score of the likelihood runs among ``run_ids``."""
    runs = list(ElicitationRun.objects.filter(pk__in=run_ids, mode=ElicitationRun.Mode.LIKELIHOOD)
                .values_list("pk", flat=True))
    rows = []
    for run_id, item_id, detail in (ModelResponse.objects.filter(run_id__in=runs, status__in=["ok", "unparseable"], check_key="")
                                    .values_list("run_id", "item_id", "detail")):
        chosen = (detail or {}).get("choice_by") or {}
        rows.append({"run_id": run_id, "item_id": item_id, **{f"choice_{s}": chosen.get(s) or "" for s in SCORES}})
    return pd.DataFrame(rows, columns=["run_id", "item_id", *(f"choice_{s}" for s in SCORES)])


@dataclass
class SileoSection:
    study: Study
    datasets: list[str]
    table1: pd.DataFrame
    accuracy: pd.DataFrame
    agreement: pd.DataFrame
    likelihood: pd.DataFrame
    correct_weps: pd.DataFrame
    counts: dict[str, int]
    titles: dict[str, str] = field(default_factory=lambda: dict(TITLES))
    grouped: Grouping | None = None  # by participant fields and personas (analysis/reports/grouping.py)

    def __post_init__(self) -> None:
        if self.grouped is not None:
            self.titles = self.titles | self.grouped.titles

    def tables(self) -> dict[str, pd.DataFrame]:
        out = {"sileo_table1": self.table1, "sileo_accuracy": self.accuracy, "sileo_agreement": self.agreement,
               "sileo_likelihood": self.likelihood, "sileo_correct_weps": self.correct_weps}
        return out | (self.grouped.tables() if self.grouped is not None else {})

    def figures(self) -> list[tuple[str, Any]]:
        from families.sileo.figures import accuracy_bars, correct_wep_bars

        figures = [("sileo-correct-weps", correct_wep_bars(self.correct_weps, self.datasets))]
        if not self.accuracy.empty:
            figures.insert(0, ("sileo-accuracy", accuracy_bars(self.accuracy, self.datasets, CHANCE)))
        return figures + (self.grouped.figures(self.study.title) if self.grouped is not None else [])

    def meta(self) -> dict[str, Any]:
        return {"datasets": self.datasets, "chance": CHANCE,
                "agents": sorted(a for a in self.accuracy["agent"].unique() if a != HUMAN_AGENT),
                "likelihood_decides": DECIDING_SCORE,
                "likelihood_note": ("a likelihood agent's answer is the option with the higher length-normalised "
                                    "log-likelihood; sileo_likelihood gives the raw and calibrated scores' accuracy"),
                **self.counts, **({"grouping": self.grouped.meta()} if self.grouped is not None else {})}

    def summary_text(self) -> str:
        return (f"{TITLES['sileo_table1']}\n{self.table1.round(1).to_string(index=False)}\n"
                f"(likelihood agents: decided by the {DECIDING_SCORE} score)")


def build(study: Study) -> SileoSection:
    items = item_table(study)
    datasets = [d for d in DATASETS if d in set(items["dataset"])] + sorted(set(items["dataset"]) - set(DATASETS))
    runs = used_run_ids(choose_runs(study, "nv"))
    models = model_answers(study, runs).merge(items, on="item_id", how="inner")
    humans = human_answers(study).merge(items, on="item_id", how="inner")
    if models.empty and humans.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet: take it as a participant, start a run "
                          "(e.g. elicit … --mode likelihood) or import answers")
    model_acc = accuracy(models)
    human_acc = accuracy(humans.assign(agent=HUMAN_AGENT))
    scored = likelihood_choices(list(runs))
    likelihood = pd.DataFrame()
    if not scored.empty:
        scored = scored.merge(models[["run_id", "item_id", "agent", "dataset", "valid_key"]], on=["run_id", "item_id"])
        likelihood = score_accuracy(scored, SCORES, DECIDING_SCORE)
    counts = {"items": len(items), "model_answers": len(models), "human_answers": len(humans),
              "participants": int(humans["respondent"].nunique()) if not humans.empty else 0,
              "unreadable_model_answers": int(models["choice"].eq("").sum()) if not models.empty else 0}
    return SileoSection(study=study, datasets=datasets, table1=table1(model_acc, human_acc, datasets),
                        accuracy=pd.concat([human_acc, model_acc], ignore_index=True) if not human_acc.empty
                        else model_acc,
                        agreement=annotator_agreement(humans) if not humans.empty
                        else pd.DataFrame(columns=["dataset", "kappa", "items", "annotators"]),
                        likelihood=likelihood, correct_weps=wep_distribution(items), counts=counts,
                        grouped=_grouped(study, humans, models))


def _grouped(study: Study, humans: pd.DataFrame, models: pd.DataFrame) -> Grouping | None:
    """Correctness (0/100 per answer) grouped by the participant fields and personas."""
    both = pd.concat([f for f in (humans, models) if not f.empty], ignore_index=True)
    return grouping(study, "sileo", both.assign(correct=correct(both).astype(float) * 100), "correct",
                    "accuracy (%)")
