"""Between-subjects cells in the report (issue 31): people and models side by side, cell by cell.

For a study with ``[[factors]]`` the generic section (analysis/reports/generic.py) groups every table by the cell
first (``condition``, then the ``[report] group_by`` item fields): a person's answers are in their cell
(``Participant.condition``), a model's in its run's (``ElicitationRun.condition``, one run per agent and cell,
elicitation/declared_agents.py). :func:`cell_table` is the section's ``generic_cells`` table: per cell and
respondent group (the humans, then each agent), the cell's levels, how many respondents (completed people, or
the runs' personas), their answers and, for a scale, the mean and median answer. A study without factors gets
none of this: its report is as before.
"""
from __future__ import annotations

import pandas as pd
from django.db.models import Count

from analysis.metrics.answers import HUMAN
from elicitation.models import ElicitationRun
from surveys.condition_context import cells_of, factors_of, levels_of
from surveys.models import Participant, Study

CONDITION = "condition"
NO_CELL = "(no cell)"


def has_cells(study: Study) -> bool:
    return bool(factors_of(study.definition))


def answer_cells(study: Study, answers: pd.DataFrame) -> pd.Series:
    """Each answer's cell: the participant's for humans, the run's for models ("(no cell)" when unknown)."""
    people = dict(Participant.objects.filter(study=study).values_list("pk", "condition"))
    runs = dict(ElicitationRun.objects.filter(study=study).values_list("pk", "condition"))
    human = answers["agent"] == HUMAN
    cells = pd.Series(NO_CELL, index=answers.index, dtype=object)
    if "participant_id" in answers.columns:
        cells[human] = answers.loc[human, "participant_id"].map(people)
    if "run_id" in answers.columns:
        cells[~human] = answers.loc[~human, "run_id"].map(runs)
    return cells.fillna(NO_CELL).replace("", NO_CELL)


def people_per_cell(study: Study) -> dict[str, dict[str, int]]:
    """Per cell, the study's (non-test) participants by status (one grouped query)."""
    out: dict[str, dict[str, int]] = {cell: {} for cell in cells_of(study.definition)}
    rows = (Participant.objects.filter(study=study, is_test=False).values("condition", "status")
            .annotate(n=Count("pk")).values_list("condition", "status", "n"))
    for cell, status, n in rows:
        out.setdefault(cell or NO_CELL, {})[status] = n
    return out


def cell_table(study: Study, answers: pd.DataFrame, scale: bool) -> pd.DataFrame:
    """``generic_cells``: one row per cell × respondent group (humans first, then the agents), every declared cell
    listed even before anyone answered in it."""
    factors = [f["name"] for f in factors_of(study.definition)]
    agents = [HUMAN] + sorted(set(answers["agent"].astype(str)) - {HUMAN})
    people = people_per_cell(study)
    rows = []
    for cell in cells_of(study.definition):
        levels = levels_of(study.definition, cell)
        for agent in agents:
            part = answers[(answers[CONDITION] == cell) & (answers["agent"].astype(str) == agent)]
            if agent == HUMAN:
                respondents = int(part["participant_id"].nunique()) if len(part) else 0
            else:
                personas = part["persona"].map(lambda p: repr(sorted(p.items())) if isinstance(p, dict) else "")
                respondents = int(personas.nunique()) if len(part) else 0
            row = {CONDITION: cell, **{f: levels[f] for f in factors}, "agent": agent,
                   "participants_entered": sum(people.get(cell, {}).values()) if agent == HUMAN else None,
                   "respondents": respondents, "answers": int(len(part))}
            if scale:
                values = part["value"].astype(float)
                row["mean"] = float(values.mean()) if values.notna().any() else None
                row["median"] = float(values.median()) if values.notna().any() else None
            rows.append(row)
    return pd.DataFrame(rows)
