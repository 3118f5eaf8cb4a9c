"""Tang et al. RQ2 report section: how consistently each model maps statistical uncertainty to WEP choices.

Per model agent (one run each, e.g. ``gpt4 (greedy)`` and ``gpt4 (greedy, cot)`` for the standard and the
chain-of-thought prompt): the four consistency metrics of families/tang/metrics/consistency.py overall and per
scenario, choice set and number set, each beside the random responder's score (10 seeded draws, mean and sd)
— table ``consistency`` (written as consistency.csv); paired comparisons — table ``consistency_tests``
(consistency_tests.csv): every two agents that differ only in their prompt style, per scenario and metric,
and the control comparisons 5 vs 3 choices and narrow vs wide numbers (agents pooled); and a bar chart per
agent × scenario with the random baseline (the paper's Figs. 5–6).

The study's report option ``reading`` (surveys/report_options.py) says how answers are read and the
pair-wise metric scored: "text" (the Methods; default for new studies) or "authors" (the authors' code;
families/tang/metrics/reading.py). The report names the reading in its tables' titles and in its meta
(``reading``, ``reading_rules``: how many answers — pair-wise units for the order rule — each of the
authors' rules touched; under the text reading the counts say what the authors' reading would change).

Participants' answers are kept in the export but not scored here: the paper reports no human baseline for
these metrics, and one participant answers only part of the 360 prompts.

Grouped by personas (analysis/reports/grouping.py, when ``[report] group_by`` names questionnaire fields and model
answers carry personas; this section has no human answers): tables ``tang_rq2_groups`` and
``tang_rq2_group_differences`` of the empirical score of each answer, 100 when it is the ground-truth letter
(``truth_choice``), else 0 (an unparsed answer scores 0, as in the consistency metrics), per persona group and
the differences between groups.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.agents import ANSWER_STATUSES, choose_runs, used_run_ids
from analysis.dataset import model_answers
from analysis.metrics.answers import AnswersError
from analysis.reports import ReportError
from analysis.reports.grouping import Grouping, grouping
from elicitation.models import ElicitationRun, ModelResponse
from families.tang.metrics.consistency import (compare_agents, compare_conditions, consistency_scores,
                                               random_baseline, reversed_pairs)
from families.tang.metrics.reading import RULES, authors_choices
from surveys.models import Study

DESIGN_FIELDS = ("scenario", "choices", "numbers", "confidence", "interval", "truth_choice")
SCOPES = (None, "scenario", "choices", "numbers")
TITLES = {
    "consistency": "Tang et al. RQ2: consistency (0–100) per agent, overall and per scenario, choice set and number "
                   "set, with the random baseline (10 draws)",
    "consistency_tests": "Paired comparisons: agents differing only in prompt style (per scenario and metric), "
                         "5 vs 3 choices and narrow vs wide numbers (agents pooled): paired t, df, p, Cohen's d_av = "
                         "(mean a − mean b) / ((sd a + sd b)/2); positive: a more consistent",
}


def design_table(study: Study) -> pd.DataFrame:
    """The study's items with their design fields (from ``extra``), indexed by item id."""
    rows = [{"item_id": pk, **{f: (extra or {}).get(f) for f in DESIGN_FIELDS}}
            for pk, extra in study.main_items().values_list("pk", "extra")]
    table = pd.DataFrame(rows, columns=["item_id", *DESIGN_FIELDS]).set_index("item_id")
    missing = table[list(DESIGN_FIELDS)].isna().any(axis=1)
    if table.empty or missing.all():
        raise ReportError(f"study {study.slug!r} has no items of the tang-rq2 design: generate them with "
                          f"generate_items {study.slug} --design tang-rq2")
    return table[~missing]


READING_NAMES = {"text": "the Methods' text", "authors": "the authors' code"}


def scope_scores(answers: pd.DataFrame, items: pd.DataFrame,
                 reading: str = "text") -> dict[str | None, tuple[pd.DataFrame, pd.DataFrame]]:
    """Per scope (None = overall, scenario, choices, numbers): (agents' scores, random baseline)."""
    return {by: (consistency_scores(answers, by, reading), random_baseline(items, by, reading=reading))
            for by in SCOPES}


def read_answers(answers: pd.DataFrame, reading: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """The answers with ``choice`` under ``reading`` and the number of answers each authors' rule touched
    (under the text reading: the number it would touch). ``answers`` has run_id, item_id, sample_index,
    choices and the text reading's ``choice``."""
    runs = answers["run_id"].unique().tolist()
    raw = pd.DataFrame(list(ModelResponse.objects.filter(run_id__in=runs, status__in=ANSWER_STATUSES, check_key="")
                            .values_list("run_id", "item_id", "sample_index", "raw_output")),
                       columns=["run_id", "item_id", "sample_index", "raw_output"])
    styles = dict(ElicitationRun.objects.filter(pk__in=runs).values_list("pk", "prompt_style"))
    merged = answers.merge(raw, on=["run_id", "item_id", "sample_index"], how="left")
    authors = authors_choices(merged["raw_output"].fillna(""), merged["run_id"].map(styles),
                              merged["choices"], merged["choice"])
    counts = dict(authors.counts)
    if reading == "authors":
        merged["choice"] = authors.choice
    counts["pair_order"] = reversed_pairs(merged)
    return merged.drop(columns="raw_output"), counts


def scores_table(scopes: dict[str | None, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """Scores of every agent beside the random baseline, one row per agent × scope × level × metric."""
    parts = []
    for by, (scores, baseline) in scopes.items():
        scores = scores.reset_index()
        baseline = baseline.reset_index().drop(columns="agent")
        keys = [by, "metric"] if by else ["metric"]
        scores = scores.merge(baseline.rename(columns={"score": "random", "sd": "random_sd", "n": "random_n"}),
                              on=keys, how="left")
        scores.insert(1, "scope", "overall" if by is None else by)
        scores.insert(2, "level", "" if by is None else scores.pop(by).astype(str))
        parts.append(scores.drop(columns="random_n"))
    return pd.concat(parts, ignore_index=True)


def style_pairs(agents: list[str]) -> list[tuple[str, str]]:
    """Pairs of agents whose names differ only by a trailing prompt style (``x (greedy)``, ``x (greedy, cot)``)."""
    pairs = []
    for agent in agents:
        match = re.fullmatch(r"(.*), (\w+)\)", agent)
        if match and f"{match.group(1)})" in agents:
            pairs.append((f"{match.group(1)})", agent))
    return pairs


def tests_table(answers: pd.DataFrame, reading: str = "text") -> pd.DataFrame:
    parts = []
    for a, b in style_pairs(sorted(answers["agent"].unique())):
        table = compare_agents(answers, a, b, by="scenario", reading=reading).reset_index()
        parts.append(table.assign(comparison=f"{a} vs {b}"))
    for factor in ("choices", "numbers"):
        try:
            table = compare_conditions(answers, factor, reading=reading).reset_index()
        except AnswersError:
            continue  # only one level answered
        parts.append(table.assign(comparison=f"{factor}: " + table.pop("levels"), scenario="all"))
    columns = ["comparison", "scenario", "metric", "mean_a", "mean_b", "t", "df", "p", "d", "n"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


@dataclass
class TangRQ2Section:
    study: Study
    consistency: pd.DataFrame
    consistency_tests: pd.DataFrame
    scopes: dict
    answers: int
    unparsed: int
    reading: str = "text"
    reading_rules: dict[str, int] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=lambda: dict(TITLES))
    grouped: Grouping | None = None  # by personas (analysis/reports/grouping.py)

    def __post_init__(self) -> None:
        said = f" — answers read as {READING_NAMES[self.reading]} (report option reading = \"{self.reading}\")"
        self.titles = {name: title + said for name, title in self.titles.items()}
        if self.grouped is not None:
            self.titles |= self.grouped.titles

    def tables(self) -> dict[str, pd.DataFrame]:
        out = {"consistency": self.consistency, "consistency_tests": self.consistency_tests}
        return out | (self.grouped.tables() if self.grouped is not None else {})

    def figures(self) -> list[tuple[str, Any]]:
        """Bars per agent with the random baseline: by scenario (Fig. 5), by choice set and number set (Fig. 6)."""
        from families.tang.figures_rq2 import consistency_bars

        return [(f"consistency-by-{by}", consistency_bars(*self.scopes[by], by=by))
                for by in ("scenario", "choices", "numbers")] + (
            self.grouped.figures(self.study.title) if self.grouped is not None else [])

    def summary_text(self) -> str:
        """What the ``report`` command prints: the reading, what its rules touched, then the scores."""
        rules = "; ".join(f"{RULES[k]}: {v}" for k, v in self.reading_rules.items())
        head = f"Tang RQ2 reading: {self.reading} ({READING_NAMES[self.reading]}); {rules}"
        return f"{head}\n{self.consistency.round(3).to_string(index=False)}"

    def meta(self) -> dict[str, Any]:
        agents = sorted(a for a in self.consistency["agent"].unique()) if not self.consistency.empty else []
        return {"agents": agents, "model_answers": self.answers, "unparsed_answers": self.unparsed,
                "random_draws": 10, "reading": self.reading,
                "reading_rules": {RULES[k]: v for k, v in self.reading_rules.items()},
                **({"grouping": self.grouped.meta()} if self.grouped is not None else {})}


def build(study: Study) -> TangRQ2Section:
    items = design_table(study)
    runs = used_run_ids(choose_runs(study, "nv"))
    answers = model_answers(study, runs)
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no model answers yet: start a run (standard and/or CoT "
                          "prompt style) or import model answers")
    answers = answers.join(items, on="item_id", how="inner")
    answers["choice"] = answers["choice"].where(answers["choice"] != "")
    reading = study.report_option("reading")
    try:
        answers, rules = read_answers(answers, reading)
        scopes = scope_scores(answers, items.reset_index(), reading)
        consistency = scores_table(scopes)
        tests = tests_table(answers, reading)
    except AnswersError as exc:
        raise ReportError(str(exc)) from None
    return TangRQ2Section(study=study, consistency=consistency, consistency_tests=tests, scopes=scopes,
                          answers=len(answers), unparsed=int(answers["choice"].isna().sum()),
                          reading=reading, reading_rules=rules,
                          grouped=grouping(study, "tang_rq2", answers.assign(
                              empirical=(answers["choice"] == answers["truth_choice"]).astype(float) * 100),
                              "empirical", "empirical score (0–100)"))
