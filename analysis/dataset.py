"""A study's answers from the database as the tidy table the metric functions take (analysis/metrics/answers.py).

One row per answer. Columns shared by humans and models: ``respondent``, ``agent``, ``label``, ``value``,
``truth``, ``item_id``, ``statement_id`` and the other typed answer columns ``choice`` (an option's key, "" when
the kind has none), ``lower`` and ``upper`` (an interval's bounds, NaN otherwise) and ``question`` (the key of the
question answered: "" for a study's only question, else one of its ``[[questions]]``). Humans add ``participant_id``, ``included`` (the stored attention
filter decision) and ``time_taken_ms``; models add ``run_id``, ``mode``, ``sample_index``, ``status``,
``dist`` (the stored distribution mapping, or None for a single-value answer) and ``persona`` (the persona's
field values the answer was asked under, a dict, or None). :func:`with_fields` puts a questionnaire field's typed
value beside every answer, the participant's for humans and the persona's for models.

Only completed participants' answers count (imported participants are completed); test participants
(``Participant.is_test``, surveys.test_mode) never do. Of model responses,
parsed (``ok``) and unparseable ones are answers (an unparseable answer has NaN and is counted as such);
pending and failed requests are not answers and are left out.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from analysis.agents import ANSWER_STATUSES, agent_names
from analysis.metrics.answers import CONTROL, HUMAN
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Participant, Response, Study

HUMAN_COLUMNS = ["respondent", "agent", "label", "value", "truth", "item_id", "statement_id",
                 "participant_id", "included", "time_taken_ms", "choice", "lower", "upper", "question"]
MODEL_COLUMNS = ["respondent", "agent", "label", "value", "truth", "item_id", "statement_id",
                 "run_id", "mode", "sample_index", "status", "dist", "choice", "lower", "upper", "persona", "question"]


def human_respondent(participant_id: int) -> str:
    """The ``respondent`` id of a participant in analysis tables (never the PROLIFIC_PID)."""
    return f"p{participant_id}"


def run_respondent(run_id: int) -> str:
    """The ``respondent`` id of a model run in analysis tables."""
    return f"run-{run_id}"


def _label(expression: str, is_control: bool) -> str:
    return CONTROL if is_control else expression


def human_answers(study: Study) -> pd.DataFrame:
    """Every answer of the study's completed participants, test participants left out (columns
    :data:`HUMAN_COLUMNS`)."""
    rows = (Response.objects
            .filter(item__study=study, participant__status=Participant.Status.COMPLETED, participant__is_test=False)
            .order_by("participant_id", "assignment__position")
            .values_list("participant_id", "item__expression", "item__is_control", "value", "item__truth",
                         "item_id", "item__statement_id", "participant__attention_included", "time_taken_ms",
                         "choice", "lower", "upper", "question"))
    records = [(human_respondent(pid), HUMAN, _label(expr, ctl), value, truth, item, sid, pid, inc, ms, *typed)
               for pid, expr, ctl, value, truth, item, sid, inc, ms, *typed in rows.iterator(chunk_size=5000)]
    df = _typed(pd.DataFrame.from_records(records, columns=HUMAN_COLUMNS))
    df["included"] = df["included"].astype("boolean")
    df["time_taken_ms"] = df["time_taken_ms"].astype("Int64")
    return df


def model_answers(study: Study, run_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """Every model answer of the study's runs, or of the runs ``run_ids`` only (columns
    :data:`MODEL_COLUMNS`; ``agent`` is :func:`analysis.agents.agent_name`)."""
    runs = ElicitationRun.objects.filter(study=study).select_related("endpoint")
    responses = ModelResponse.objects.filter(run__study=study, status__in=ANSWER_STATUSES, check_key="")
    if run_ids is not None:
        run_ids = list(run_ids)
        runs, responses = runs.filter(pk__in=run_ids), responses.filter(run_id__in=run_ids)
    runs = list(runs)
    names = agent_names(runs)
    modes = {run.pk: run.mode for run in runs}
    rows = (responses
            .order_by("run_id", "item_id", "sample_index", "question")
            .values_list("run_id", "item__expression", "item__is_control", "value", "item__truth", "item_id",
                         "item__statement_id", "sample_index", "status", "distribution", "choice", "lower",
                         "upper", "persona", "question"))
    records = [(run_respondent(run), names[run], _label(expr, ctl), np.nan if value is None else value, truth,
                item, sid, run, modes[run], sample, status, dist or None, *typed, persona or None, question)
               for run, expr, ctl, value, truth, item, sid, sample, status, dist, *typed, persona, question
               in rows.iterator(chunk_size=5000)]
    return _typed(pd.DataFrame.from_records(records, columns=MODEL_COLUMNS))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Numbers as floats (a missing one NaN), ``choice`` as text ("" when none)."""
    for column in ("value", "lower", "upper"):
        df[column] = df[column].astype(float)
    df["choice"] = df["choice"].fillna("").astype(str)
    df["question"] = df["question"].fillna("").astype(str)
    return df


def study_answers(study: Study, run_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """Humans and models (all runs, or ``run_ids``) of one study in one table (model-only columns are empty
    for humans)."""
    humans, models = human_answers(study), model_answers(study, run_ids)
    if humans.empty:
        return models.reindex(columns=list(dict.fromkeys(MODEL_COLUMNS + HUMAN_COLUMNS)))
    if models.empty:
        return humans.reindex(columns=list(dict.fromkeys(HUMAN_COLUMNS + MODEL_COLUMNS)))
    return pd.concat([humans, models], ignore_index=True)
