"""Tang et al. RQ1 report section: how each model's probabilities for the 17 WEPs compare with people's.

Per model agent × context setting (CNC, ENC, FCNC, MCNC and the language, from the items the model answered;
"" for items without a context) × WEP: KL divergence on 20 equal bins, Brunner–Munzel θ̂ with its 95% CI and
p-value, and the absolute median difference (families/tang/metrics/divergence.py), as the table ``tang`` and
as heat maps like the paper's Figs. 2–4 (θ̂ and KL per WEP × agent, one panel per setting, stars for the
Brunner–Munzel p-value: * p < 0.1, ** p < 0.05, *** p < 0.01). Beside them, the Mann–Whitney U and
Kolmogorov–Smirnov statistics and p-values the authors publish, and the signed median difference.

Model vs model (table ``tang_pairs``): every two agents in one context setting (GPT-4 vs GPT-3.5; ERNIE vs
GPT in Chinese) and every agent in two settings (she vs he: FCNC vs MCNC; Chinese vs English: CNC (zh) vs
CNC (en)), per WEP, with the same measures. X is the sample named in column ``x``, Y the one in ``y``: by
default the first in sort order, or as the study's report option ``orientation`` names it
(families/tang/orientation.py; the shipped Tang definitions take the authors' orientation), which also
makes a model X against people where a rule says so (column ``x`` of ``tang``: "people" or "model"). KL is given
both ways (``kl`` = D(X‖Y), ``kl_yx`` = D(Y‖X)); every table title says which sample is X.

An agent's answers span its settings: a model imported from one file per setting (``--set context=…``) is one
agent with several settings (analysis/agents.py), so its settings are compared with each other.

The human sample of a WEP is the study's own completed participants (after the study's attention filter, which
is off by default for this kind), or, when the study has none (a study of generated context items answered by
models only), its ``reference_study``'s participants (e.g. the imported Fagen-Ulmschneider survey).

Grouped by participant fields and personas (analysis/reports/grouping.py, when ``[report] group_by`` names
questionnaire fields and model answers carry personas): tables ``tang_rq1_groups`` and
``tang_rq1_group_differences`` of the probability answered (0–100, every WEP and setting pooled), with KL
D(people ‖ model) on the 20 equal bins and Brunner–Munzel θ̂ = P(X>Y) + ½P(X=Y), X = the group's people, Y =
the model's answers under personas of the group.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.agents import choose_runs, used_run_ids
from analysis.dataset import human_answers, study_answers
from analysis.exclusions import attention_outcome
from analysis.metrics.answers import HUMAN
from analysis.metrics.groups import Compare
from analysis.reports import ReportError
from analysis.reports.grouping import Grouping, grouping
from families.tang.metrics.divergence import MEASURES, kl_divergence, pair_table, tang_table
from families.tang.orientation import Sample, first_is_x
from surveys.models import Item, Study

TITLES = {"tang": "Tang et al. RQ1 per model, context setting and WEP — X = people ({humans}), Y = the model "
                  "(the other way round where column x says \"model\", as the report option orientation names): "
                  "KL D(X‖Y) and D(Y‖X) (kl_yx), Brunner–Munzel θ̂ = P(X>Y) + ½P(X=Y) with 95% CI and p, |median X − median Y| (amd) "
                  "and median X − median Y, Mann–Whitney U of X and p, Kolmogorov–Smirnov D and p",
          "tang_pairs": "Tang et al. RQ1 model vs model per WEP (two agents in one context setting, or one agent in "
                        "two settings) — X = the sample in column x, Y = the one in column y (report option "
                        "orientation: {orientation}): KL D(X‖Y) and D(Y‖X) (kl_yx), "
                        "Brunner–Munzel θ̂ = P(X>Y) + ½P(X=Y) with 95% CI and p, median X − median Y beside "
                        "|median X − median Y|, Mann–Whitney U of X and p, Kolmogorov–Smirnov D and p"}


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
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    grouped: Grouping | None = None  # by participant fields and personas (analysis/reports/grouping.py)

    def tables(self) -> dict[str, pd.DataFrame]:
        out = {"tang": self.table, "tang_pairs": self.pairs}
        return out | (self.grouped.tables() if self.grouped is not None else {})

    def figures(self) -> list[tuple[str, Any]]:
        """Heat maps of θ̂ and of the KL divergence: one panel per context setting, WEPs × agents, stars for
        the Brunner–Munzel p-value."""
        grouped = self.grouped.figures(self.study.title) if self.grouped is not None else []
        if self.table.empty:
            return grouped
        from families.tang.figures_rq1 import divergence_heatmaps

        panels = {setting or "no context": group.set_index(["agent", "label"])
                  for setting, group in self.table.groupby("setting", sort=True)}
        return [("tang-rq1-theta", divergence_heatmaps(panels, value="theta", cmap="RdBu_r")),
                ("tang-rq1-kl", divergence_heatmaps(panels, value="kl")), *grouped]

    def meta(self) -> dict[str, Any]:
        return {"human_sample": self.humans_from, "humans": self.n_humans,
                "settings": sorted(s for s in self.table["setting"].unique() if s) if not self.table.empty else [],
                "model_pairs": int(self.pairs[["x", "y"]].drop_duplicates().shape[0]) if not self.pairs.empty else 0,
                **({"grouping": self.grouped.meta()} if self.grouped is not None else {})}


def build(study: Study) -> TangRQ1Section:
    """The RQ1 comparison of ``study``'s model runs (one run per agent, as the other sections) with people."""
    source = study
    if human_answers(study).empty and study.reference_study is not None:
        source = study.reference_study
    if human_answers(source).empty:
        raise ReportError(f"study {study.slug!r} has no human answers to compare the models with: import the "
                          "Fagen-Ulmschneider survey into it, or set its reference study to one that has them")
    try:
        decisions = attention_outcome(source).decisions
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    humans = human_answers(source)
    included = humans["participant_id"].map(lambda pk: decisions.get(pk, (None, True))[1])
    humans = humans[included.astype(bool).to_numpy()]
    if humans.empty:
        raise ReportError(f"study {study.slug!r} has no human answers to compare the models with: import the "
                          "Fagen-Ulmschneider survey into it, or set its reference study to one that has them")
    runs = used_run_ids(choose_runs(study, "nv"))
    models = study_answers(study, runs)
    models = models[models["agent"] != HUMAN]
    values = list(Item.objects.filter(study=study).values_list("pk", "context", "language"))
    contexts = {pk: setting_label(c, lang) for pk, c, lang in values}
    parts_of = {setting_label(c, lang): (c or "", lang or "") for _, c, lang in values}
    models = models.assign(setting=models["item_id"].map(contexts).fillna(""))
    orientation = study.report_option("orientation")
    parts = []
    for setting, group in models.groupby("setting", sort=True):
        both = pd.concat([humans.assign(setting=setting), group], ignore_index=True)
        context, language = parts_of.get(setting, ("", ""))
        table = tang_table(both, model_x=lambda agent: first_is_x(
            Sample(agent, context, language), Sample(""), orientation) is True)
        if not table.empty:
            parts.append(table.reset_index().assign(setting=setting))
    columns = ["agent", "setting", "label", *MEASURES, "n_human", "n_model", "note", "x"]
    table = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    who = f"{humans['respondent'].nunique()} participants of {source.slug}"
    grouped = grouping(study, "tang_rq1", pd.concat([humans, models], ignore_index=True), "value",
                       "probability (0–100)", TANG_COMPARE)
    titles = {name: title.format(humans=who, orientation=repr(orientation) if orientation else "sort order")
              for name, title in TITLES.items()}
    return TangRQ1Section(study=study, table=table, humans_from=source.slug, n_humans=humans["respondent"].nunique(),
                          titles=titles | (grouped.titles if grouped is not None else {}),
                          pairs=model_pairs(models, orientation, parts_of), grouped=grouped)


def _tang_compare(model, human) -> dict[str, float]:
    """KL D(people ‖ model) on the 20 equal bins; θ̂ = P(X>Y) + ½P(X=Y) over every pair (people = X), the
    Brunner–Munzel estimate (its test needs two answers a side, the estimate does not)."""
    x, y = np.asarray(human, dtype=float)[:, None], np.asarray(model, dtype=float)[None, :]
    return {"kl": kl_divergence(human, model), "theta": float(((x > y) + 0.5 * (x == y)).mean())}


#: the grouped comparison of a model's answers with the group's people
TANG_COMPARE = Compare(("kl", "theta"), _tang_compare)


def sample_name(agent: str, setting: str) -> str:
    """How a model's sample is named in ``tang_pairs``: ``gpt-4 (greedy) · CNC (en)``."""
    return f"{agent} · {setting or 'no context'}"


def setting_parts(setting: str) -> tuple[str, str]:
    """(context, language) of a setting label such as ``CNC (zh)`` (inverse of :func:`setting_label`)."""
    match = re.fullmatch(r"(.+) \((\w[\w-]*)\)", setting or "")
    return (match.group(1), match.group(2)) if match else ("", "")


def model_pairs(models: pd.DataFrame, orientation: str = "",
                settings: dict[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """Every two samples of one setting (two agents) or of one agent (two settings): X first in sort order, or
    as ``orientation`` (the report option's rules, families/tang/orientation.py) orients the pair.
    ``settings``: setting label → (context, language) (default: read from the label)."""
    keys = sorted((agent, setting) for agent, setting in models[["agent", "setting"]].drop_duplicates().itertuples(index=False))
    samples = {sample_name(a, s): g[["label", "value"]] for (a, s), g in models.groupby(["agent", "setting"], sort=True)}

    def sample(key: tuple[str, str]) -> Sample:
        return Sample(key[0], *((settings or {}).get(key[1]) or setting_parts(key[1])))

    pairs = []
    for i, x in enumerate(keys):
        for y in keys[i + 1:]:
            if x[0] == y[0] or x[1] == y[1]:
                flip = orientation and first_is_x(sample(x), sample(y), orientation) is False
                pairs.append((sample_name(*y), sample_name(*x)) if flip else (sample_name(*x), sample_name(*y)))
    return pair_table(samples, pairs)
