"""Tang et al. RQ1 report section: how each model's probabilities for the 17 WEPs compare with people's.

Per model agent × context setting (CNC, ENC, FCNC, MCNC and the language, from the items the model answered;
"" for items without a context) × WEP: KL divergence on 20 equal bins, Brunner–Munzel θ̂ with its 95% CI and
p-value, and the absolute median difference (analysis/metrics/tang_divergence.py), as the table ``tang`` and
as heat maps like the paper's Figs. 2–4 (θ̂ and KL per WEP × agent, one panel per setting, stars for the
Brunner–Munzel p-value: * p < 0.1, ** p < 0.05, *** p < 0.01).

The human sample of a WEP is the study's own completed participants (after the study's attention filter, which
is off by default for this kind), or, when the study has none (a study of generated context items answered by
models only), its ``reference_study``'s participants (e.g. the imported Fagen-Ulmschneider survey).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.agents import choose_runs, used_run_ids
from analysis.dataset import human_answers, study_answers
from analysis.filtering import apply_attention_filter
from analysis.metrics.answers import HUMAN
from analysis.metrics.tang_divergence import tang_table
from analysis.reports import ReportError
from surveys.models import Item, Study

TITLES = {"tang": "Tang et al. RQ1 per model, context setting and WEP: KL divergence, Brunner–Munzel θ̂ with 95% CI "
                  "and p, |median difference| (human sample: {humans})"}


def setting_label(context: str, language: str) -> str:
    """How a context setting is named in the table: ``CNC (en)``, or "" for items without one."""
    return f"{context} ({language or 'en'})" if context else ""


@dataclass
class TangRQ1Section:
    study: Study
    table: pd.DataFrame
    humans_from: str
    n_humans: int
    titles: dict[str, str] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"tang": self.table}

    def figures(self) -> list[tuple[str, Any]]:
        """Heat maps of θ̂ and of the KL divergence: one panel per context setting, WEPs × agents, stars for
        the Brunner–Munzel p-value."""
        if self.table.empty:
            return []
        from analysis.reports.tang_rq1_figures import divergence_heatmaps

        panels = {setting or "no context": group.set_index(["agent", "label"])
                  for setting, group in self.table.groupby("setting", sort=True)}
        return [("tang-rq1-theta", divergence_heatmaps(panels, value="theta", cmap="RdBu_r")),
                ("tang-rq1-kl", divergence_heatmaps(panels, value="kl"))]

    def meta(self) -> dict[str, Any]:
        return {"human_sample": self.humans_from, "humans": self.n_humans,
                "settings": sorted(s for s in self.table["setting"].unique() if s) if not self.table.empty else []}


def build(study: Study) -> TangRQ1Section:
    """The RQ1 comparison of ``study``'s model runs (one run per agent, as the other sections) with people."""
    source = study
    if human_answers(study).empty and study.reference_study is not None:
        source = study.reference_study
    if human_answers(source).empty:
        raise ReportError(f"study {study.slug!r} has no human answers to compare the models with: import the "
                          "Fagen-Ulmschneider survey into it, or set its reference study to one that has them")
    try:
        apply_attention_filter(source)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    humans = human_answers(source)
    humans = humans[humans["included"].fillna(True).astype(bool)]
    if humans.empty:
        raise ReportError(f"study {study.slug!r} has no human answers to compare the models with: import the "
                          "Fagen-Ulmschneider survey into it, or set its reference study to one that has them")
    runs = used_run_ids(choose_runs(study, "nv"))
    models = study_answers(study, runs)
    models = models[models["agent"] != HUMAN]
    contexts = dict((pk, setting_label(c, lang)) for pk, c, lang in
                    Item.objects.filter(study=study).values_list("pk", "context", "language"))
    models = models.assign(setting=models["item_id"].map(contexts).fillna(""))
    parts = []
    for setting, group in models.groupby("setting", sort=True):
        both = pd.concat([humans.assign(setting=setting), group], ignore_index=True)
        table = tang_table(both)
        if not table.empty:
            parts.append(table.reset_index().assign(setting=setting))
    columns = ["agent", "setting", "label", "kl", "theta", "ci_low", "ci_high", "p_value", "amd", "n_human", "n_model"]
    table = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    who = f"{humans['respondent'].nunique()} participants of {source.slug}"
    return TangRQ1Section(study=study, table=table, humans_from=source.slug, n_humans=humans["respondent"].nunique(),
                          titles={name: title.format(humans=who) for name, title in TITLES.items()})
