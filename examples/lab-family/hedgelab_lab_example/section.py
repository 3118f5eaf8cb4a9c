"""The lab's report section ``lab_spread``: per agent, the number of readable answers, their median and their
interquartile range (the ``iqr`` metric), on the answers the core's sections read."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.dataset import study_answers
from analysis.reports import ReportError
from hedgelab_lab_example.metrics import iqr


@dataclass
class SpreadSection:
    study: Any
    table: pd.DataFrame
    titles: dict[str, str] = field(default_factory=lambda: {"lab_spread": "Spread of the answers per agent (lab)"})

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"lab_spread": self.table}

    def figures(self) -> list:
        return []

    def meta(self) -> dict[str, Any]:
        return {"title": self.study.title, "lab_spread": {"agents": len(self.table)}}


def build(study: Any) -> SpreadSection:
    """The section; ReportError (the report then says what is missing) while the study has no answers."""
    answers = study_answers(study)
    if answers.empty:
        raise ReportError(f"study {study.slug!r} has no answers yet")
    values = pd.to_numeric(answers["value"], errors="coerce")
    spread = iqr(answers)
    rows = [{"agent": agent, "answers": int(group.notna().sum()), "median": float(group.median()),
             "iqr": spread[str(agent)]}
            for agent, group in values.groupby(answers["agent"], sort=False)]
    return SpreadSection(study=study, table=pd.DataFrame(rows, columns=["agent", "answers", "median", "iqr"]))
