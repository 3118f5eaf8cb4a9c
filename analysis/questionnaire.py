"""Participants' questionnaire answers (surveys/questionnaire.py) as typed columns: for the combined export (one
column per field, named by the field) and for the report (:func:`questionnaire_frame`, to group answers by).

Types follow the field's declaration: a ``number`` is a float (an ``integer`` one a nullable integer), a
``choice`` its key (in the frame a categorical whose categories are the declared keys, in their order), ``text``
a string; an unanswered optional field is null. A stored value that no longer fits its field (the definition
changed its type) is null. Model rows have no questionnaire answers (a later issue gives models personas over the
same fields).
"""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import pyarrow as pa

from surveys.definition.schema import QuestionnaireField
from surveys.questionnaire import study_fields

__all__ = ["column_types", "typed_value", "typed_values", "participant_values", "questionnaire_frame",
           "study_fields"]


def column_types(fields: Sequence[QuestionnaireField]) -> dict[str, tuple[pa.DataType, str]]:
    """Field name → (pyarrow type, pandas dtype) of its export column, in the declared order."""
    out: dict[str, tuple[pa.DataType, str]] = {}
    for field in fields:
        if field.type == "number":
            out[field.name] = (pa.int64(), "Int64") if field.integer else (pa.float64(), "float64")
        else:
            out[field.name] = (pa.string(), "str")
    return out


def typed_value(field: QuestionnaireField, value: Any) -> int | float | str | None:
    """A stored answer as its field's type; None when unanswered or when it does not fit the field."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if field.type != "number":
        return value if isinstance(value, str) else str(value)
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if field.integer:
        return int(number) if number.is_integer() else None
    return number


def typed_values(fields: Sequence[QuestionnaireField], stored: dict[str, Any] | None) -> tuple:
    """One participant's answers in ``fields`` order, typed (the export row's questionnaire cells)."""
    stored = stored or {}
    return tuple(typed_value(field, stored.get(field.name)) for field in fields)


def participant_values(study, fields: Sequence[QuestionnaireField]) -> dict[int, tuple]:
    """Participant id → their typed answers, for every participant of ``study`` (one query; none without
    fields)."""
    from surveys.models import Participant

    if not fields:
        return {}
    rows = Participant.objects.filter(study=study).order_by().values_list("pk", "questionnaire")
    return {pk: typed_values(fields, stored) for pk, stored in rows.iterator(chunk_size=5000)}


def questionnaire_frame(study, *, include_test: bool = False, completed_only: bool = True) -> pd.DataFrame:
    """The study's participants' questionnaire answers, one row per participant, one typed column per field
    (declared order), for the report to group answers by.

    Indexed by ``respondent``, the participant's id in the report's answer table (analysis.dataset:
    ``p<id>``, never the PROLIFIC_PID), so ``answers.join(frame, on="respondent")`` puts each answer beside its
    participant's fields; ``respondent_id`` is the combined export's salted id of the same person. Like the
    report, only completed participants (``completed_only``) and no test participants (``include_test``).
    A study without a questionnaire gives an empty frame with only ``respondent_id``.
    """
    from analysis.dataset import human_respondent
    from analysis.exports import hashed_id
    from surveys.models import Participant

    fields = study_fields(study)
    participants = Participant.objects.filter(study=study).order_by("pk")
    if completed_only:
        participants = participants.filter(status=Participant.Status.COMPLETED)
    if not include_test:
        participants = participants.filter(is_test=False)
    rows = [(human_respondent(pk), hashed_id(pid), *typed_values(fields, stored))
            for pk, pid, stored in participants.values_list("pk", "prolific_pid", "questionnaire")]
    columns = ["respondent", "respondent_id", *(f.name for f in fields)]
    frame = pd.DataFrame.from_records(rows, columns=columns).set_index("respondent")
    frame["respondent_id"] = frame["respondent_id"].astype("str")
    types = column_types(fields)
    for field in fields:
        if field.type == "choice":
            keys = [c.key for c in field.choices]
            frame[field.name] = pd.Categorical(frame[field.name], categories=keys)
        else:
            frame[field.name] = frame[field.name].astype(types[field.name][1])
    return frame
