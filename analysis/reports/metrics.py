"""The ``metrics`` report section: the metrics a study file names (``[report] metrics``), one column each, one
row per agent (people first, then each model agent as the generic section names it).

The metrics are looked up by name among the installed families' contributions (config.registry, kind
``metrics``; the contract in analysis/metrics/named.py) and computed on the answers the generic section reads:
the same runs and the people the study's exclusion rules keep. A study that names metrics gets this section
before the generic one (analysis.reports.section_names).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.agents import choose_runs, used_run_ids
from analysis.dataset import study_answers
from analysis.verifiable import is_verifiable
from analysis.metrics.answers import HUMAN
from analysis.reports import ReportError, shared
from analysis.reports.generic import attention_kept
from config import registry


def named_metrics(study: Any) -> list[str]:
    """The metrics ``study``'s definition names in ``[report] metrics`` (none for a study created otherwise)."""
    return [str(n) for n in ((getattr(study, "definition", None) or {}).get("report") or {}).get("metrics") or []]


@dataclass
class MetricsSection:
    study: Any
    table: pd.DataFrame
    metrics: list[str]
    families: dict[str, str] = field(default_factory=dict)  # metric → the family that contributes it
    titles: dict[str, str] = field(default_factory=lambda: {"metrics": "Named metrics, per agent"})

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"metrics": self.table}

    def figures(self) -> list:
        return []

    def meta(self) -> dict[str, Any]:
        return {"metrics": {name: self.families[name] for name in self.metrics}}


def metric_table(answers: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """One row per agent (people first, then in order of appearance), one column per metric."""
    agents = list(dict.fromkeys([HUMAN] * bool((answers["agent"] == HUMAN).any()) + list(answers["agent"])))
    table = pd.DataFrame({"agent": agents})
    for name in metrics:
        values = registry.get("metrics", name)(answers)
        table[name] = [float(values.get(agent, math.nan)) for agent in agents]
    return table


def build(study: Any) -> MetricsSection:
    """The section of ``study``'s named metrics; ReportError when it names none or has no answers yet."""
    metrics = named_metrics(study)
    if not metrics:
        raise ReportError(f"study {study.slug!r} names no metrics ([report] metrics)")
    set_name = "v" if is_verifiable(study) else "nv"
    runs = shared(("runs", study.pk, set_name), lambda: choose_runs(study, set_name))
    run_ids = used_run_ids(runs)
    answers = shared(("answers", study.pk, tuple(run_ids)), lambda: study_answers(study, run_ids))
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet (no completed participant, no model answer)")
    answers, _, _ = attention_kept(study, answers)
    return MetricsSection(study=study, table=metric_table(answers, metrics), metrics=metrics,
                          families={name: registry.registry().family_of("metrics", name) for name in metrics})
