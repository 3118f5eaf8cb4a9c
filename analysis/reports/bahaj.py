"""Bahaj et al. report section (``bahaj``): overprecision of interval answers given at an imposed confidence.

Agents: every model configuration (analysis/agents.py: one run per agent; the prompt style is in the name, e.g.
``gemma (sampled T=1, cot)``) and the study's participants (``human``), scored alike. Each item is a question at
one level c (``extra["confidence"]``) with its true answer (``ground_truth``) and its source dataset
(``extra["source"]``). Tables (formulas in analysis/metrics/bahaj_overprecision.py and bahaj_aggregation.py):

- ``overprecision`` (Table 4): per agent and source (and ``all``), hit@95 … hit@60, hit-avg and Pearson r between
  c and the interval length, as the mean and sd over 10 seeded draws of one answer per item;
- ``interval_scores`` (Appendix D): the deviation score DS and the interval length score ILS per level and
  averaged, over all answers;
- ``aggregation_single`` (Table 5) and ``aggregation_mixed`` (Table 6): MIA, LWA, iLWA, (CWA,) Union over 3 answers
  per question and level / 9 answers per question across levels, 10 draws;
- ``self_refinement`` (Tables 7–8): every self-refinement run (elicitation/refinement.py), its chosen and its
  proposed intervals scored at the item's level (hit@c, hit-avg, corr), with its setting and source run;
- ``hit_by_scale`` (Figure 2): the hit rate per band of sign(a)·log10(1 + |a|); the figure also plots each
  question's hit average against the scale of its answer.
Unparseable answers are counted (``unparsed``) and left out of the scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.agents import ANSWER_STATUSES, choose_runs, used_run_ids
from analysis.dataset import human_answers, model_answers
from analysis.metrics.bahaj_aggregation import mixed_setting, single_setting
from analysis.metrics.bahaj_overprecision import (deviation_table, hit_by_question, hit_by_scale, hit_table,
                                                  resampled)
from analysis.reports import ReportError
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Study

DRAWS, SEED = 10, 0
ALL = "all"
TITLES = {
    "overprecision": "Bahaj et al. Table 4: hit@c% per level, hit average and Pearson r (level, interval length) per "
                     "agent and source; mean and sd over 10 draws of one answer per item",
    "interval_scores": "Appendix D: deviation score (DS) and interval length score (ILS) per level, all answers",
    "aggregation_single": "Table 5: aggregation in the single-confidence setting (3 answers per question and level), "
                          "mean and sd over 10 draws",
    "aggregation_mixed": "Table 6: aggregation in the mixed-confidence setting (9 answers per question across "
                         "levels), hit rate, mean and sd over 10 draws",
    "self_refinement": "Tables 7–8: self-refinement runs, chosen vs proposed intervals, scored at the item's level",
    "hit_by_scale": "Figure 2: hit rate by scale of the true answer, bands of sign(a)·log10(1 + |a|)",
}


def item_table(study: Study) -> pd.DataFrame:
    """The study's items with a true answer: question, confidence, truth and source, indexed by item id."""
    rows = [{"item_id": pk, "question": sid, "truth": truth, "confidence": (extra or {}).get("confidence"),
             "source": (extra or {}).get("source") or "-"}
            for pk, sid, truth, extra in study.main_items().values_list("pk", "statement_id", "ground_truth", "extra")]
    table = pd.DataFrame(rows, columns=["item_id", "question", "truth", "confidence", "source"]).set_index("item_id")
    table = table.dropna(subset=["truth", "confidence"])
    if table.empty:
        raise ReportError(f"study {study.slug!r} has no items with a confidence level and a true answer: import "
                          f"questions with import_items {study.slug} FILE.csv")
    table["confidence"] = table["confidence"].astype(int)
    return table


def refinement_runs(study: Study) -> list[ElicitationRun]:
    return list(ElicitationRun.objects.filter(study=study, refines__isnull=False).select_related("endpoint")
                .order_by("pk"))


def answers_table(study: Study, items: pd.DataFrame, skip: set[int]) -> pd.DataFrame:
    """Human and model interval answers (one run per model agent, refinements left out) with the item fields."""
    runs = [r for r in used_run_ids(choose_runs(study, "nv")) if r not in skip]
    frames = [model_answers(study, runs), human_answers(study)]
    frames = [f[["agent", "item_id", "lower", "upper"]] for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["agent", "item_id", "lower", "upper", *items.columns])
    return pd.concat(frames, ignore_index=True).join(items, on="item_id", how="inner")


def refinement_answers(runs: list[ElicitationRun], items: pd.DataFrame) -> pd.DataFrame:
    """One row per refinement answer and kind (chosen, proposed), with the run's description."""
    rows = []
    for run in runs:
        label = (f"run {run.pk}: {run.endpoint.name} ({run.mode}) refining run {run.refines_id} "
                 f"({run.refine_setting}, e={run.refine_shown}, seed {run.refine_seed})")
        answers = (ModelResponse.objects.filter(run=run, status__in=ANSWER_STATUSES)
                   .values_list("item_id", "lower", "upper", "detail"))
        for item_id, lower, upper, detail in answers.iterator():
            chosen = (detail or {}).get("chosen") or [None, None]
            common = {"agent": label, "setting": run.refine_setting, "item_id": item_id}
            rows.append({**common, "kind": "chosen", "lower": chosen[0], "upper": chosen[1]})
            rows.append({**common, "kind": "proposed", "lower": lower, "upper": upper})
    columns = ["agent", "setting", "item_id", "kind", "lower", "upper"]
    table = pd.DataFrame(rows, columns=columns)
    for column in ("lower", "upper"):
        table[column] = table[column].astype(float)
    return table.join(items, on="item_id", how="inner")


def with_all_sources(df: pd.DataFrame, score, by: list[str]) -> pd.DataFrame:
    """``score(df, by + [source])`` for each source and ``score(df, by)`` labelled source ``all``."""
    per_source = score(df, [*by, "source"])
    overall = score(df, by).assign(source=ALL)
    table = pd.concat([overall, per_source], ignore_index=True)
    return table[[*by, "source", *[c for c in table.columns if c not in (*by, "source")]]]


def generation_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 4: one parsed answer per item drawn ``DRAWS`` times (unparseable answers are never drawn; they are
    counted in ``unparsed`` over all answers)."""
    parsed = df[df["lower"].notna() & df["upper"].notna()]

    def score(data: pd.DataFrame, by: list[str]) -> pd.DataFrame:
        drawn = resampled(parsed.loc[parsed.index.intersection(data.index)], lambda t: hit_table(t, by),
                          keys=[*by, "item_id"], index=by, draws=DRAWS, seed=SEED)
        unparsed = data["lower"].isna().groupby([data[b] for b in by]).sum().rename("unparsed").reset_index()
        return drawn.drop(columns=["unparsed", "unparsed_sd"]).merge(unparsed, on=by, how="right")

    table = with_all_sources(df, score, ["agent"])
    return table.rename(columns={"n": "n_per_draw", "n_sd": "n_per_draw_sd"})


@dataclass
class BahajSection:
    study: Study
    answers: pd.DataFrame
    refinements: pd.DataFrame
    tables_: dict[str, pd.DataFrame]
    titles: dict[str, str] = field(default_factory=lambda: dict(TITLES))

    def tables(self) -> dict[str, pd.DataFrame]:
        return dict(self.tables_)

    def figures(self) -> list[tuple[str, Any]]:
        from analysis.reports.bahaj_figures import hit_scale_figure

        if "hit_by_scale" not in self.tables_:
            return []
        return [("hit-by-scale", hit_scale_figure(hit_by_question(self.answers), self.tables_["hit_by_scale"]))]

    def meta(self) -> dict[str, Any]:
        agents = sorted(self.answers["agent"].unique()) if not self.answers.empty else []
        return {"agents": agents, "answers": int(len(self.answers)),
                "unparsed_answers": int((self.answers["lower"].isna()).sum()) if not self.answers.empty else 0,
                "refinement_runs": sorted(self.refinements["agent"].unique()) if not self.refinements.empty else [],
                "draws": DRAWS, "draw_seed": SEED, "aggregation_k": {"single": 3, "mixed": 9}}

    def summary_text(self) -> str:
        table = self.tables_["overprecision"]
        shown = table[table["source"] == ALL]
        shown = shown[[c for c in ("agent", "hit@95", "hit@90", "hit@80", "hit@70", "hit@60", "hit_avg", "corr",
                                   "unparsed") if c in shown.columns]]
        return "Overprecision (hit %, mean of 10 draws):\n" + shown.round(3).to_string(index=False)


def refinement_table(refined: pd.DataFrame) -> pd.DataFrame:
    columns = ["agent", "setting", "source", "kind", "hit@95", "hit@90", "hit@80", "hit@70", "hit@60", "hit_avg",
               "corr", "n", "unparsed"]
    if refined.empty:
        return pd.DataFrame(columns=columns)
    table = with_all_sources(refined, lambda d, by: hit_table(d, by), ["agent", "setting", "kind"])
    return table[columns]


def build(study: Study) -> BahajSection:
    items = item_table(study)
    refinements = refinement_runs(study)
    answers = answers_table(study, items, {r.pk for r in refinements})
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet: start a run (e.g. elicit {study.slug} --mode "
                          "sampled --samples 5) or let participants answer")
    refined = refinement_answers(refinements, items)
    parsed = answers[answers["lower"].notna()]
    if parsed.empty:  # only unparseable answers so far: the counts, no scores
        unparsed = with_all_sources(answers, lambda d, by: d.groupby(by).size().rename("unparsed").reset_index(),
                                    ["agent"])
        tables = {"overprecision": unparsed, "self_refinement": refinement_table(refined)}
        return BahajSection(study=study, answers=answers, refinements=refined, tables_=tables)
    tables = {
        "overprecision": generation_table(answers),
        "interval_scores": with_all_sources(parsed, lambda d, by: deviation_table(d, by), ["agent"]),
        "aggregation_single": with_all_sources(parsed, lambda d, by: single_setting(d, by, draws=DRAWS, seed=SEED),
                                               ["agent"]),
        "aggregation_mixed": with_all_sources(parsed, lambda d, by: mixed_setting(d, by, draws=DRAWS, seed=SEED),
                                              ["agent"]),
        "self_refinement": refinement_table(refined),
        "hit_by_scale": hit_by_scale(parsed),
    }
    return BahajSection(study=study, answers=answers, refinements=refined, tables_=tables)

