"""Belem et al.'s report section: Belem-shaped tables, the knowledge-bias table, descriptives and figures of
one study (the figures in families/belem/figures.py).

:func:`build` takes a study. A verifiable study (items with a truth value) is reported together
with its ``reference_study``: the reference distribution, the label ranking of the attention filter and
the non-verifiable columns of the tables come from there, ΔPA = PA(verifiable) − PA(non-verifiable). The
attention filter is applied (and stored on the participants) first. The metric formulas live in the pure
modules (families/belem/metrics/tables.py and what it calls); this module gathers the data and shapes the
output: tables, HTML tables and figures (analysis.reports.Report writes them as JSON, CSV, PNG and SVG).

Agents: ``human`` (completed participants; the tables use the attention-filtered ones) and one per model
configuration, named ``endpoint (mode)`` so the same endpoint and mode line up across the two statement sets;
one run per agent and set is used (analysis/agents.py). Rows that were not scored on every expression
(partial runs) are flagged ``comparable: false`` with the expressions they cover.

Grouped by participant fields and personas (analysis/reports/grouping.py, when ``[report] group_by`` names
questionnaire fields and model answers carry personas): tables ``belem_groups`` and ``belem_group_differences``
of the answer on 0–100 (each answer of both statement sets, humans attention-filtered), PA, %PA, W1 and KL on
Belem's 21 bins of the group's pooled answers (not the per-expression average of the summary).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.agents import RunUse, choose_runs, used_run_ids
from analysis.metrics.answers import HUMAN, AnswersError
from analysis.dataset import human_answers, study_answers
from analysis.verifiable import is_verifiable
from families.belem.attention import FilterError, FilterResult, compute_attention_filter
from analysis.metrics.generic import answer_binning
from analysis.metrics.groups import binned_comparison
from analysis.reports import ReportError, shared
from analysis.reports.grouping import Grouping, grouping
from families.belem.metrics.tables import BelemAnalysis, analyse_belem
from surveys.models import Study

SET_NAMES = {"nv": "non-verifiable", "v": "verifiable"}
STATEMENT_SETS = {"nv": "non-verifiable statements", "v": "verifiable statements"}
SUMMARY_COLUMNS = {
    "pa_nv": "PA (NV)", "pct_pa_nv": "%PA (NV)", "mae_nv": "MAE (NV)", "wasserstein_nv": "Wasserstein (NV)",
    "pa_v": "PA (V)", "pct_pa_v": "%PA (V)", "delta_pa": "ΔPA", "mae_v": "MAE (V)", "wasserstein_v": "Wasserstein (V)",
    "expressions_nv": "expressions covered (NV)", "expressions_v": "expressions covered (V)",
    "comparable": "comparable",
}
COVERED_ROW = "Expressions covered"


def set_wording(study: Study, has_verifiable: bool) -> dict[str, str]:
    """How the report names each statement set: "non-verifiable statements" / "verifiable statements" for
    items that are statements, else the instrument's name + "questions" (e.g. "WEP probability questions")."""
    if has_verifiable or study.main_items().exclude(statement="").exists():
        return dict(STATEMENT_SETS)
    name = str(study.kind.label).split(" (")[0]
    return {"nv": f"{name} questions", "v": f"{name} questions"}


@dataclass
class StudyReport:
    study: Study
    nv_study: Study
    v_study: Study | None
    analysis: BelemAnalysis
    nv_answers: pd.DataFrame
    v_answers: pd.DataFrame | None
    attention: list[FilterResult]
    descriptives: pd.DataFrame
    truth_means: pd.DataFrame | None
    runs: list[RunUse] = field(default_factory=list)
    sets: dict[str, str] = field(default_factory=lambda: dict(STATEMENT_SETS))
    generated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    raw_ids: bool = False  # the attention table names PROLIFIC_PIDs (Report.seen_by sets it)
    grouped: Grouping | None = None  # by participant fields and personas (analysis/reports/grouping.py)

    # --- tables ----------------------------------------------------------------------------------
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name, in display order (index reset, so each is flat)."""
        a = self.analysis
        out: dict[str, pd.DataFrame] = {"summary": self.summary_table()}
        out["pa_per_expression_nv"] = _flat(self._with_coverage(a.nv.pa_per_expression, "nv"), "expression")
        out["by_expression_nv"] = _flat(a.nv.by_expression)
        if a.v is not None:
            out["pa_per_expression_v"] = _flat(self._with_coverage(a.v.pa_per_expression, "v"), "expression")
            out["by_expression_v"] = _flat(a.v.by_expression)
        if a.knowledge_bias is not None:
            out["knowledge_bias"] = _flat(a.knowledge_bias)
        if self.truth_means is not None:
            out["truth_means"] = _flat(self.truth_means)
        out["descriptives"] = _flat(self.descriptives)
        out["reference"] = _flat(a.reference, "expression")
        out["ranking"] = _flat(a.ranking, "label")
        out["attention"] = self.attention_table()
        out["runs"] = self.runs_table()
        if self.grouped is not None:
            out.update(self.grouped.tables())
        return out

    def summary_table(self) -> pd.DataFrame:
        """The summary with each row's coverage: ``expressions_nv`` (``expressions_v``), ``expressions_total``
        and ``comparable`` (False: the row's averages are over fewer expressions than the others')."""
        return _flat(self.analysis.summary.join(self.analysis.coverage), "agent")

    def _with_coverage(self, per_expression: pd.DataFrame, set_name: str) -> pd.DataFrame:
        """Table 6/7 with a second row: how many expressions each column's Avg PA is over."""
        covered = self.analysis.coverage[f"expressions_{set_name}"].reindex(per_expression.columns)
        row = pd.DataFrame([covered.astype(float)], index=[COVERED_ROW])
        return pd.concat([per_expression.iloc[:1], row, per_expression.iloc[1:]])

    def not_comparable(self) -> dict[str, str]:
        """Agent → why its row is not comparable (expressions covered per set), for rows that are not."""
        cov = self.analysis.coverage
        out = {}
        for agent, row in cov[~cov["comparable"]].iterrows():
            parts = [f"{int(row[f'expressions_{s}'])}/{int(row['expressions_total'])} expressions ({self.sets[s]})"
                     for s in ("nv", "v") if f"expressions_{s}" in cov.columns and not pd.isna(row[f"expressions_{s}"])
                     and row[f"expressions_{s}"] < row["expressions_total"]]
            out[str(agent)] = "covers " + ", ".join(parts)
        return out

    def runs_table(self) -> pd.DataFrame:
        """Every model run of the studies: its agent, what it covers, whether the report uses it and why not."""
        columns = list(RunUse.__dataclass_fields__)
        return pd.DataFrame([u.as_dict() for u in self.runs], columns=columns)

    def attention_table(self) -> pd.DataFrame:
        """One row per excluded participant of each filtered study: the salted ``respondent_id``, and the raw
        PROLIFIC_PID only when ``raw_ids``."""
        rows = [{"study": r.study, **e.as_dict(self.raw_ids)} for r in self.attention for e in r.excluded]
        columns = ["study", "participant_id", "respondent_id"] + (["prolific_pid"] if self.raw_ids else [])
        return pd.DataFrame(rows, columns=columns + ["rho", "n_answers"])

    def meta(self) -> dict[str, Any]:
        filters = {r.study: {"threshold": r.threshold, "applied": r.applied, "filter": r.describe(),
                             "ranking_study": r.ranking_study, "evaluated": r.evaluated,
                             "included": r.included, "excluded": len(r.excluded)} for r in self.attention}
        agents = sorted(set(self.nv_answers["agent"]) | set(self.v_answers["agent"] if self.v_answers is not None else []))
        return {
            "study": self.study.slug, "title": self.study.title, "instrument": self.study.instrument,
            "non_verifiable_study": self.nv_study.slug,
            "verifiable_study": self.v_study.slug if self.v_study else None,
            "generated_at": self.generated_at.isoformat(timespec="seconds"),
            "agents": agents, "attention_filter": filters, "statement_sets": self.sets,
            "not_comparable": self.not_comparable(),
            **({"grouping": self.grouped.meta()} if self.grouped is not None else {}),
        }

    @property
    def titles(self) -> dict[str, str]:
        titles = {name: title.format(**self.sets) for name, title in TITLES.items()}
        return titles | (self.grouped.titles if self.grouped is not None else {})

    def figures(self) -> list[tuple[str, Any]]:
        from families.belem.figures import report_figures

        figures = list(report_figures(self))
        if self.grouped is not None:
            figures += self.grouped.figures(self.study.title)
        return figures

    def html_tables(self) -> list[dict[str, str]]:
        return html_tables(self)

    def summary_text(self) -> str:
        return self.analysis.summary.round(2).to_string()


def _flat(df: pd.DataFrame, index_name: str | None = None) -> pd.DataFrame:
    out = df.copy()
    if index_name and out.index.name is None and not isinstance(out.index, pd.MultiIndex):
        out.index.name = index_name
    out.columns = [str(c) for c in out.columns]
    return out.reset_index()


# --- building -------------------------------------------------------------------------------------
def kept(df: pd.DataFrame, filter_table: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the humans the report's attention filter (``filter_table``) excludes."""
    included = filter_table.index[filter_table["included"].to_numpy(dtype=bool)]
    return df[(df["agent"] != HUMAN) | df["respondent"].isin(included)]


def describe(data: pd.DataFrame, set_name: str) -> pd.DataFrame:
    """Per agent × label of filtered answers: answers, unparsed, mean, median, sd."""
    grouped = data.groupby(["agent", "label"], sort=True)["value"]
    table = pd.DataFrame({"answers": grouped.size(), "unparsed": grouped.apply(lambda s: int(s.isna().sum())),
                          "mean": grouped.mean(), "median": grouped.median(), "sd": grouped.std(ddof=1)})
    table.insert(0, "set", SET_NAMES[set_name])
    return table


def mean_with_ci(values: pd.Series, level: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, CI low, CI high, n) of a sample with a t interval (the plotted CIs of Fig. 6/14)."""
    x = values.dropna().to_numpy(dtype=float)
    n = len(x)
    if n == 0:
        return (math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return (mean, math.nan, math.nan, n)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return (mean, mean - half, mean + half, n)


def truth_means(nv: pd.DataFrame, v: pd.DataFrame) -> pd.DataFrame:
    """Mean answer with a 95% t interval per agent × (overall, expression) × statement kind (true, false,
    and non-verifiable): the numbers of the true/false figures. Pass attention-filtered answers."""
    parts = []
    for source, frame in (("non-verifiable", nv[nv["label"] != "control"]), ("verifiable", v[v["label"] != "control"])):
        if source == "verifiable":
            frame = frame[frame["truth"].isin(["true", "false"])]
            kinds = frame["truth"].astype(str)
        else:
            kinds = pd.Series("non-verifiable", index=frame.index)
        frame = frame.assign(statements=kinds.to_numpy())
        for (agent, statements), group in frame.groupby(["agent", "statements"], sort=True):
            parts.append((agent, "overall", statements, *mean_with_ci(group["value"])))
            for label, sub in group.groupby("label", sort=True):
                parts.append((agent, label, statements, *mean_with_ci(sub["value"])))
    table = pd.DataFrame(parts, columns=["agent", "label", "statements", "mean", "ci_low", "ci_high", "n"])
    return table.set_index(["agent", "label", "statements"])


def answers_of(study: Study, run_ids: list[int]) -> pd.DataFrame:
    """study_answers of ``study`` and the runs ``run_ids``, read once per report (analysis.reports.shared)."""
    return shared(("answers", study.pk, tuple(run_ids)), lambda: study_answers(study, run_ids))


def _all_excluded(nv: pd.DataFrame, threshold: float | None, exc: AnswersError) -> str:
    """The reason of ``exc``; when there is no reference distribution although people completed the study,
    that the attention filter left none of them."""
    humans = nv.loc[nv["agent"] == HUMAN, "participant_id"].nunique()
    if threshold is None or not humans or "reference distribution" not in str(exc):
        return str(exc)
    return (f"no human answers to build the reference distribution from: the attention filter excluded all "
            f"{humans} completed participant(s) (none reached ρ ≥ {threshold:g})")


def build(study: Study) -> StudyReport:
    """The report of ``study`` (and its reference study when it is a verifiable set). ReportError when the
    data are not there yet."""
    try:
        verifiable = is_verifiable(study)
        if verifiable and study.reference_study is None:
            raise ReportError(f"study {study.slug!r} has verifiable items but no reference_study: set its "
                              "non-verifiable companion (its humans give the reference distribution)")
        nv_study = study.reference_study if verifiable else study
        v_study = study if verifiable else None
        if shared(("human_answers", nv_study.pk), lambda: human_answers(nv_study)).empty:
            raise ReportError(f"study {nv_study.slug!r} has no completed human participants yet: the Belem tables "
                              "compare the models with people's answers (their reference distribution)")
        attention = [shared(("attention", nv_study.pk), lambda: compute_attention_filter(nv_study))]
        if v_study is not None:
            attention.append(shared(("attention", v_study.pk), lambda: compute_attention_filter(v_study)))
    except FilterError as exc:
        raise ReportError(str(exc)) from None
    except AnswersError as exc:
        raise ReportError(f"the attention filter cannot run: {exc}") from None
    runs = (shared(("runs", nv_study.pk, "nv"), lambda: choose_runs(nv_study, "nv"))
            + (shared(("runs", v_study.pk, "v"), lambda: choose_runs(v_study, "v")) if v_study is not None else []))
    nv = answers_of(nv_study, used_run_ids(u for u in runs if u.set == "nv"))
    v = answers_of(v_study, used_run_ids(u for u in runs if u.set == "v")) if v_study is not None else None
    if nv.empty or not (nv["agent"] == HUMAN).any():
        raise ReportError(f"study {nv_study.slug!r} has no completed participants yet: the report needs their "
                          "answers for the reference distribution")
    order = nv_study.kind.canonical_order() or None
    try:
        threshold = nv_study.attention_filter_threshold
        analysis = analyse_belem(nv, v, threshold=threshold, order=order)
    except AnswersError as exc:
        raise ReportError(_all_excluded(nv, threshold, exc)) from None
    nv_kept = kept(nv, analysis.nv.filter)
    v_kept = kept(v, analysis.v.filter) if v is not None and analysis.v is not None else None
    descriptives = describe(nv_kept, "nv")
    if v_kept is not None and not v_kept.empty:
        descriptives = pd.concat([descriptives, describe(v_kept, "v")])
    shown = list(analysis.reference.index) + ["control"]
    rank = {u: i for i, u in enumerate(shown)}
    descriptives = descriptives.sort_index(
        key=lambda idx: idx.map(lambda u: rank.get(u, len(rank))) if idx.name == "label" else idx, kind="stable")
    descriptives = descriptives.sort_values("set", kind="stable")
    return StudyReport(study=study, nv_study=nv_study, v_study=v_study, analysis=analysis, nv_answers=nv_kept,
                       v_answers=v_kept, attention=attention, descriptives=descriptives,
                       truth_means=truth_means(nv_kept, v_kept) if v_kept is not None and not v_kept.empty else None,
                       runs=runs, sets=set_wording(nv_study, v_study is not None),
                       grouped=grouping(study, "belem", pd.concat([nv_kept, v_kept]) if v_kept is not None else nv_kept,
                                        "value", "answer (0–100)", binned_comparison(answer_binning())))


# --- HTML (admin page) ------------------------------------------------------------------------------
TITLES = {
    "summary": "Summary (Belem Tables 1, 2 and 5): PA, %PA, ΔPA, MAE and Wasserstein-1 against the {nv} human reference",
    "pa_per_expression_nv": "PA per expression, {nv} (Table 6)",
    "pa_per_expression_v": "PA per expression, {v} (Table 7)",
    "by_expression_nv": "All metrics per model and expression, {nv}",
    "by_expression_v": "All metrics per model and expression, {v}",
    "knowledge_bias": "Knowledge bias: mean answer on true − false statements, with 95% CI (humans paired, models Welch)",
    "truth_means": "Mean answer per statement kind with 95% CI (the figures' numbers)",
    "descriptives": "Answers per agent and expression (humans: attention-filtered)",
    "reference": "Reference distribution P(k|u) (filtered humans, {nv}), shares per bin",
    "ranking": "Label ranking of the attention filter (mean answer of all participants, before filtering)",
    "attention": "Participants excluded by the attention filter (kept in the database)",
    "runs": "Model runs: the one run used per agent and set, and why the others are not",
}


def html_tables(report: StudyReport) -> list[dict[str, str]]:
    """Each table as {"name", "title", "html"} for the admin page (numbers rounded for reading; coverage as
    "covered/total")."""
    out = []
    for name, table in report.tables().items():
        shown = table.copy()
        if name == "summary":
            for col in [c for c in shown.columns if c.startswith("expressions_") and c != "expressions_total"]:
                shown[col] = ["" if pd.isna(n) else f"{n}/{t}" for n, t in zip(shown[col], shown["expressions_total"])]
            shown["comparable"] = shown["comparable"].map({True: "yes", False: "no: fewer expressions"})
            shown = shown.drop(columns="expressions_total").rename(columns=SUMMARY_COLUMNS)
        counts = shown.index[shown.iloc[:, 0] == COVERED_ROW] if name.startswith("pa_per_expression") else []
        for col in shown.columns:
            if pd.api.types.is_float_dtype(shown[col]):
                digits = 3 if col in ("rho", "p_value", "theta", "kl") or name == "reference" else 2
                text = shown[col].map(lambda x, d=digits: "" if pd.isna(x) else f"{x:.{d}f}")
                if len(counts):
                    text[counts] = shown.loc[counts, col].map(lambda x: "" if pd.isna(x) else f"{x:.0f}")
                shown[col] = text
        html = shown.to_html(index=False, border=0, classes="report-table", na_rep="", escape=True)
        out.append({"name": name, "title": report.titles.get(name, name), "html": html})
    return out
