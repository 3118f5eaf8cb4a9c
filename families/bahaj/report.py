"""Bahaj et al. report section (``bahaj``): overprecision of interval answers given at an imposed confidence.

Agents: every model configuration (analysis/agents.py: one run per agent; the prompt style is in the name, e.g.
``gemma (sampled T=1, cot)``) and the study's participants (``human``), scored alike. Each item is a question at
one level c (``extra["confidence"]``) with its true answer (``ground_truth``) and its source dataset
(``extra["source"]``); an item's samples are its tries. Tables (formulas in families/bahaj/metrics/overprecision.py,
aggregation.py and draws.py):

- ``overprecision`` (Table 4): per agent and source (and ``all``), hit@95 … hit@60, hit-avg and Pearson r between
  c and the interval length, as the mean and sd over 10 seeded draws of one answer per item;
- ``interval_scores`` (Appendix D): the deviation score DS and the interval length score ILS per level and
  averaged, over all parsed answers (the paper's equations: the authors' code for them is not published);
- ``aggregation_single`` (Table 5) and ``aggregation_mixed`` (Table 6): MIA, LWA, iLWA, (CWA,) Union over 3 answers
  per question and level / 15 (or 9) answers per question across levels, 10 draws;
- ``self_refinement`` (Tables 7–8): every self-refinement run (elicitation/refinement.py, or imported with
  ``import_model_answers --refines RUN``), its chosen and its proposed intervals scored at the item's level,
  with its setting, number of candidates and source run;
- ``reading_cases``: per model agent, how many answers each case of the authors' cleaner touched
  (families/bahaj/reading.py; under ``text`` the answers it would change);
- Figure 2: ``hit_by_scale`` (text reading: the hit rate per band of sign(a)·log10(1 + |a|), and each question's
  hit average against the scale of its answer) or ``answer_histogram`` (authors' reading: per agent, the counts
  of hits and misses by true answer, 49 bins on [−20, 20]).

The study's report options (families/bahaj/report_options.py) say what ran: ``reading`` = ``text`` (the
paper's prose: unparsed answers left out of the scores and counted; hit-avg the mean of the hit@c; draws
without replacement) or ``authors`` (the notebooks: unparsed answers are misses in every denominator, hit-avg
pooled, one try drawn per item among all answers, aggregation draws with replacement and the authors' edge
cases, refinements scored only where both intervals were read, mixed refinements by hit-avg only), and
``mixed_intervals`` (15 or 9). Every table title and the meta name them. Under ``authors`` model answers are
read again from ``raw_output`` with the authors' cleaner (not the stored ``lower``/``upper``), and the authors'
refinement runs are scored from ``detail["chosen"]``/``detail["proposed"]`` (reading.py). Items with hint
conditions (design ``bahaj-hints``) make every table per agent and hint condition (:func:`groups`): no draw or
aggregate mixes conditions. Each agent draws from its own seeded
generator: adding an agent never changes another's figures.

Grouped by participant fields and personas (analysis/reports/grouping.py, when ``[report] group_by`` names
questionnaire fields and model answers carry personas): tables ``bahaj_groups`` and ``bahaj_group_differences``
of each interval's hit, 100 when it holds the true answer, else 0 (NaN when unparsed; the model answers as
read under the report's reading), so a group's mean is its hit rate (%) over respondents.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.agents import ANSWER_STATUSES, choose_runs, used_run_ids
from analysis.dataset import human_answers, model_answers
from analysis.reports import ReportError
from analysis.reports.grouping import Grouping, grouping
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Study

from families.bahaj.authors import NO_HINT
from families.bahaj.instrument import AUTHORS_REFINE
from families.bahaj.metrics.aggregation import mixed_setting, single_setting
from families.bahaj.metrics.draws import resampled
from families.bahaj.metrics.overprecision import (LEVELS, answer_histogram, deviation_table, hit_by_question,
                                                  hit_by_scale, hit_table, scored)
from families.bahaj.reading import CASE_COLUMNS, read_model_answers, refinement_pair
from families.bahaj.report_options import mixed_intervals

DRAWS, SEED = 10, 0
ALL = "all"
READING_NAMES = {"text": "a reading of the paper's text", "authors": "the authors' code"}


def titles(reading: str = "text", mixed: int = 15, hints: bool = False) -> dict[str, str]:
    """The tables' titles, naming the reading, the options that ran and the grouping by hint condition."""
    said = f" — {READING_NAMES[reading]} (report option reading = \"{reading}\")"
    per = " and hint condition (hint0 = Table 4, hint1/3/8 = Table 10; conditions never pooled)" if hints else ""
    unparsed = ("unparsed answers are misses in the denominators, hit-avg pooled over the levels"
                if reading == "authors" else "unparsed answers left out and counted, hit-avg the mean of the hit@c")
    replace = "with" if reading == "authors" else "without"
    mixed_how = ("3 answers per question and level, 15 per question" if mixed == 15
                 else "9 answers per question across levels")
    return {
        "overprecision": "Bahaj et al. Table 4: hit@c% per level, hit average and Pearson r (level, raw interval "
                         f"length) per agent{per} and source; mean and sample sd over 10 draws of one answer per item "
                         f"({unparsed}; r per draw, averaged){said}",
        "interval_scores": f"Appendix D: deviation score (DS) and interval length score (ILS) per agent{per} and "
                           "level, all parsed answers (the paper's Eq. 10–11; the authors' code for them is not published)",
        "aggregation_single": f"Table 5: aggregation in the single-confidence setting, per agent{per} (3 answers "
                              f"per question and level, drawn {replace} replacement), mean and sd over 10 draws{said}",
        "aggregation_mixed": f"Table 6: aggregation in the mixed-confidence setting, per agent{per} ({mixed_how}, drawn {replace} "
                             f"replacement; report option mixed_intervals = \"{mixed}\"), hit rate, mean and sd "
                             f"over 10 draws{said}",
        "self_refinement": f"Tables 7–8: self-refinement runs{per.split(' (')[0]}, chosen vs proposed intervals, "
                           "scored at the item's level"
                           + (" (only answers whose chosen and proposed intervals were both read — for the authors' "
                              "refinement, replies with both as lists of two, reversed or non-numeric bounds scored "
                              "as misses — the others counted in 'dropped'; mixed setting: hit-avg only)"
                              if reading == "authors" else " (each interval scored where read; a reversed one unread)")
                           + "; the authors' mixed refinement (one answer per question): hit-avg only" + said,
        "reading_cases": "The authors' cleaner (protocol §2.2): model answers each of its lossy rules touched, per "
                         "agent" + (" — applied: model answers were read with it" if reading == "authors" else
                                    " — not applied under the text reading (the answers it would change)") + said,
        "hit_by_scale": "Figure 2: hit rate by scale of the true answer, bands of sign(a)·log10(1 + |a|)" + said,
        "answer_histogram": "Figure 2: counts of hits and misses (unparsed answers: misses) by true answer, 49 bins "
                            "on [−20, 20], every answer of each agent" + said,
    }


TITLES = titles()


def item_table(study: Study) -> pd.DataFrame:
    """The study's items with a true answer: question, confidence, truth and source, indexed by item id."""
    rows = [{"item_id": pk, "question": sid, "truth": truth, "confidence": (extra or {}).get("confidence"),
             "source": (extra or {}).get("source") or "-", "hint": (extra or {}).get("hint") or NO_HINT}
            for pk, sid, truth, extra in study.main_items().values_list("pk", "statement_id", "ground_truth", "extra")]
    columns = ["item_id", "question", "truth", "confidence", "source", "hint"]
    table = pd.DataFrame(rows, columns=columns).set_index("item_id")
    table = table.dropna(subset=["truth", "confidence"])
    if table.empty:
        raise ReportError(f"study {study.slug!r} has no items with a confidence level and a true answer: import "
                          f"questions with import_items {study.slug} FILE.csv")
    table["confidence"] = table["confidence"].astype(int)
    return table


def groups(items: pd.DataFrame) -> list[str]:
    """The grouping of every table: per agent, and per hint condition when the study's items have hint
    conditions (design ``bahaj-hints``; the authors report each hint condition apart, Tables 4 and 10)."""
    return ["agent", "hint"] if (items["hint"] != NO_HINT).any() else ["agent"]


def refinement_runs(study: Study) -> list[ElicitationRun]:
    return list(ElicitationRun.objects.filter(study=study, refines__isnull=False).select_related("endpoint")
                .order_by("pk"))


ANSWER_COLUMNS = ["agent", "run_id", "item_id", "sample_index", "lower", "upper", "respondent", "persona"]


def answers_table(study: Study, items: pd.DataFrame, skip: set[int],
                  reading: str = "text") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human and model interval answers (one run per model agent, refinements left out) with the item fields,
    model answers read under ``reading`` (families/bahaj/reading.py), and the table of the authors'
    cleaner's cases per model agent."""
    runs = [r for r in used_run_ids(choose_runs(study, "nv")) if r not in skip]
    frames = [model_answers(study, runs), human_answers(study)]
    frames = [f.reindex(columns=ANSWER_COLUMNS) for f in frames if not f.empty]
    if not frames:
        return (pd.DataFrame(columns=[*ANSWER_COLUMNS, *items.columns]), pd.DataFrame(columns=CASE_COLUMNS))
    answers = pd.concat(frames, ignore_index=True).join(items, on="item_id", how="inner")
    return read_model_answers(answers, reading)


def refinement_label(run: ElicitationRun) -> str:
    """How the self-refinement table names a refinement run."""
    how = (f"imported from {run.source_file}" if run.source == ElicitationRun.Source.IMPORTED
           else f"seed {run.refine_seed}")
    return (f"run {run.pk}: {run.endpoint.name} ({run.mode}) refining run {run.refines_id} "
            f"({run.refine_setting}, e={run.refine_shown}, {how})")


def per_question(run: ElicitationRun) -> bool:
    """The authors' mixed refinement: one answer per question (× hint condition), asked on its first item, so
    the item's level plays no part: scored by hit-avg only (protocol §5.6)."""
    return run.prompt_style == AUTHORS_REFINE and run.refine_setting == "mixed"


def refinement_answers(runs: list[ElicitationRun], items: pd.DataFrame, reading: str = "text") -> pd.DataFrame:
    """One row per refinement answer and kind (chosen, proposed), with the run's description, read under
    ``reading`` (:func:`families.bahaj.reading.refinement_pair`); ``both_read`` says whether the answer
    is kept by the authors' scoring; ``per_question`` marks the authors' mixed refinements."""
    rows = []
    for run in runs:
        label = refinement_label(run)
        answers = (ModelResponse.objects.filter(run=run, status__in=ANSWER_STATUSES, check_key="")
                   .order_by("item_id", "sample_index").values_list("item_id", "lower", "upper", "detail"))
        for item_id, lower, upper, detail in answers.iterator():
            chosen, proposed, kept = refinement_pair(run.prompt_style, lower, upper, detail, reading)
            common = {"agent": label, "setting": run.refine_setting, "candidates": run.refine_shown,
                      "item_id": item_id, "both_read": kept, "per_question": per_question(run)}
            rows.append({**common, "kind": "chosen", "lower": chosen[0], "upper": chosen[1]})
            rows.append({**common, "kind": "proposed", "lower": proposed[0], "upper": proposed[1]})
    columns = ["agent", "setting", "candidates", "item_id", "both_read", "per_question", "kind", "lower", "upper"]
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


def drawn_answers(df: pd.DataFrame, reading: str) -> pd.DataFrame:
    """The answers the draws pick from: every answer (authors) or the parsed ones (text)."""
    return df if reading == "authors" else df[df["lower"].notna() & df["upper"].notna()]


def generation_table(df: pd.DataFrame, reading: str = "text", by: list[str] | None = None) -> pd.DataFrame:
    """Table 4 (and Table 10, per hint condition): one answer per item drawn ``DRAWS`` times among the parsed
    answers (text) or among all of them (authors), per group of ``by``; ``unparsed`` counts every unparsed
    answer."""
    pool = drawn_answers(df, reading)

    def score(data: pd.DataFrame, by: list[str]) -> pd.DataFrame:
        drawn = resampled(pool.loc[pool.index.intersection(data.index)], lambda t: hit_table(t, by, reading=reading),
                          keys=[*by, "item_id"], index=by, draws=DRAWS, seed=SEED)
        unparsed = data["lower"].isna().groupby([data[b] for b in by]).sum().rename("unparsed").reset_index()
        return drawn.drop(columns=["unparsed", "unparsed_sd"]).merge(unparsed, on=by, how="right")

    table = with_all_sources(df, score, list(by or ["agent"]))
    return table.rename(columns={"n": "n_per_draw", "n_sd": "n_per_draw_sd"})


def panels(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """``df`` with one figure panel per group of ``by``: the hint condition joined to the agent's name."""
    if "hint" not in by or df.empty:
        return df
    return df.assign(agent=df["agent"].astype(str) + " · " + df["hint"].astype(str))


@dataclass
class BahajSection:
    study: Study
    answers: pd.DataFrame
    refinements: pd.DataFrame
    tables_: dict[str, pd.DataFrame]
    reading: str = "text"
    mixed: int = 15
    by: list[str] = field(default_factory=lambda: ["agent"])
    titles: dict[str, str] = field(default_factory=lambda: dict(TITLES))
    grouped: Grouping | None = None  # by participant fields and personas (analysis/reports/grouping.py)

    def __post_init__(self) -> None:
        self.titles = titles(self.reading, self.mixed, "hint" in self.by)
        if self.grouped is not None:
            self.titles |= self.grouped.titles

    def tables(self) -> dict[str, pd.DataFrame]:
        return dict(self.tables_) | (self.grouped.tables() if self.grouped is not None else {})

    def figures(self) -> list[tuple[str, Any]]:
        grouped = self.grouped.figures(self.study.title) if self.grouped is not None else []
        return self._figures() + grouped

    def _figures(self) -> list[tuple[str, Any]]:
        from families.bahaj.figures import answer_histogram_figure, hit_scale_figure

        if "answer_histogram" in self.tables_:
            return [("answer-histogram", answer_histogram_figure(panels(self.tables_["answer_histogram"], self.by)))]
        if "hit_by_scale" not in self.tables_:
            return []
        per_question = hit_by_question(panels(self.answers, self.by))
        return [("hit-by-scale", hit_scale_figure(per_question, panels(self.tables_["hit_by_scale"], self.by)))]

    def meta(self) -> dict[str, Any]:
        agents = sorted(self.answers["agent"].unique()) if not self.answers.empty else []
        cases = self.tables_.get("reading_cases", pd.DataFrame(columns=CASE_COLUMNS))
        return {"agents": agents, "answers": int(len(self.answers)),
                "unparsed_answers": int((self.answers["lower"].isna()).sum()) if not self.answers.empty else 0,
                "refinement_runs": sorted(self.refinements["agent"].unique()) if not self.refinements.empty else [],
                "reading": self.reading, "reading_means": READING_NAMES[self.reading],
                "reading_cases": {str(k): int(v) for k, v in cases.groupby("case", sort=False)["answers"].sum().items()},
                "hint_conditions": sorted(self.answers["hint"].unique()) if "hint" in self.by else [],
                "mixed_intervals": self.mixed,
                "draws": DRAWS, "draw_seed": SEED, "draw_streams": "one generator per agent: seed and SHA-256 of its name",
                "aggregation_k": {"single": 3, "mixed": self.mixed},
                "aggregation_replacement": self.reading == "authors",
                **({"grouping": self.grouped.meta()} if self.grouped is not None else {})}

    def summary_text(self) -> str:
        table = self.tables_["overprecision"]
        shown = table[table["source"] == ALL]
        shown = shown[[c for c in ("agent", "hint", "hit@95", "hit@90", "hit@80", "hit@70", "hit@60", "hit_avg",
                                   "corr", "unparsed") if c in shown.columns]]
        head = (f"Bahaj reading: {self.reading} ({READING_NAMES[self.reading]}); mixed_intervals: {self.mixed}\n")
        cases = self.tables_.get("reading_cases")
        if cases is not None and not cases.empty:
            counts = cases.groupby("case", sort=False)["answers"].sum()
            head += ("Answers each rule of the authors' cleaner touched"
                     + ("" if self.reading == "authors" else " (would touch; not applied under the text reading)")
                     + ": " + "; ".join(f"{case}: {n}" for case, n in counts.items()) + "\n")
        return head + "Overprecision (hit %, mean of 10 draws):\n" + shown.round(3).to_string(index=False)


REFINEMENT_COLUMNS = ["agent", "setting", "candidates", "source", "kind", "hit@95", "hit@90", "hit@80", "hit@70",
                      "hit@60", "hit_avg", "corr", "n", "unparsed", "dropped"]
PER_QUESTION_LEVEL = LEVELS[-1]  # a common placeholder level: hit-avg of per-question refinements is then pooled


def refinement_table(refined: pd.DataFrame, reading: str = "text", hints: bool = False) -> pd.DataFrame:
    """Tables 7–8 (per hint condition when ``hints``). Text reading: each kind scored over its read intervals
    (unread ones counted in ``unparsed``). Authors' reading: only the answers the authors' scoring keeps (both
    intervals read; for the authors' refinement, both replies lists of two; the others counted in ``dropped``);
    the mixed setting gets hit-avg only. The authors' mixed refinements (one answer per question, rows
    ``per_question``) get hit-avg only under both readings."""
    columns = [*REFINEMENT_COLUMNS[:3], *(["hint"] if hints else []), *REFINEMENT_COLUMNS[3:]]
    if refined.empty:
        return pd.DataFrame(columns=columns)
    by = ["agent", "setting", "candidates", *(["hint"] if hints else []), "kind"]
    per_q = refined.get("per_question", pd.Series(False, index=refined.index)).astype(bool)
    refined = refined.assign(confidence=refined["confidence"].where(~per_q, PER_QUESTION_LEVEL))
    only_avg = set(refined.loc[per_q, "agent"])
    if reading == "text":  # an unread interval is counted in ``unparsed``, nothing is dropped
        table = with_all_sources(refined, lambda d, b: hit_table(d, b), by).assign(dropped=0)
        mask = table["agent"].isin(only_avg)
    else:
        kept = refined[refined["both_read"]]
        dropped = (~refined["both_read"]).groupby([refined[b] for b in by]).sum().rename("dropped").reset_index()
        table = (with_all_sources(kept, lambda d, b: hit_table(d, b, reading="authors"), by) if not kept.empty
                 else pd.DataFrame(columns=[*by, "source"]))
        table = table.merge(dropped.assign(source=ALL), on=[*by, "source"], how="outer")  # all dropped: a row still
        mask = (table["setting"] == "mixed") | table["agent"].isin(only_avg)
    table.loc[mask, [f"hit@{c}" for c in LEVELS] + ["corr"]] = np.nan
    table = table.reindex(columns=columns)
    order = {s: i for i, s in enumerate([ALL, *sorted(set(table["source"]) - {ALL})])}
    sort = ["agent", *(["hint"] if hints else []), "kind", "source"]
    return table.sort_values(sort, key=lambda col: col.map(order) if col.name == "source" else col,
                             kind="stable").reset_index(drop=True)


def build(study: Study) -> BahajSection:
    reading = study.report_option("reading")
    mixed = mixed_intervals(reading, study.report_option("mixed_intervals"))
    items = item_table(study)
    by = groups(items)
    refinements = refinement_runs(study)
    answers, cases = answers_table(study, items, {r.pk for r in refinements}, reading)
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet: start a run (e.g. elicit {study.slug} --mode "
                          "sampled --samples 5) or let participants answer")
    refined = refinement_answers(refinements, items, reading)
    section = dict(study=study, answers=answers, refinements=refined, reading=reading, mixed=mixed, by=by,
                   grouped=grouping(study, "bahaj", scored(answers).assign(hit=lambda d: d["hit"] * 100), "hit",
                                    "hit rate (%)") if not answers.empty else None)
    hints = "hint" in by
    parsed = answers[answers["lower"].notna() & answers["upper"].notna()]
    if parsed.empty and reading == "text":  # only unparsed answers so far: the counts, no scores
        unparsed = with_all_sources(answers, lambda d, b: d.groupby(b).size().rename("unparsed").reset_index(), by)
        tables = {"overprecision": unparsed, "reading_cases": cases,
                  "self_refinement": refinement_table(refined, reading, hints)}
        return BahajSection(tables_=tables, **section)
    pool = drawn_answers(answers, reading)
    tables = {"overprecision": generation_table(answers, reading, by), "reading_cases": cases}
    if not parsed.empty:
        tables["interval_scores"] = with_all_sources(parsed, lambda d, b: deviation_table(d, b), by)
    tables["aggregation_single"] = with_all_sources(
        pool, lambda d, b: single_setting(d, b, draws=DRAWS, seed=SEED, reading=reading), by)
    tables["aggregation_mixed"] = with_all_sources(
        pool, lambda d, b: mixed_setting(d, b, draws=DRAWS, seed=SEED, reading=reading, mixed=mixed), by)
    tables["self_refinement"] = refinement_table(refined, reading, hints)
    if reading == "authors":
        tables["answer_histogram"] = answer_histogram(answers, by)
    else:
        tables["hit_by_scale"] = hit_by_scale(parsed, by)
    return BahajSection(tables_=tables, **section)
