"""Participants' questionnaire answers (surveys/questionnaire.py) as typed columns: for the combined export (one
column per field, named by the field) and for the report (analysis/questionnaire_frame.py, to group answers by).

Types follow the field's declaration: a ``number`` is a float (an ``integer`` one a nullable integer), a
``choice`` its key (in the frame a categorical whose categories are the declared keys, in their order), ``text``
a string; an unanswered optional field is null. A stored value that no longer fits its field (the definition
changed its type) is null. Model rows have no questionnaire answers (a later issue gives models personas over the
same fields).
"""
from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa

from surveys.definition.schema import QuestionnaireField
from surveys.questionnaire import study_fields, typed_value, typed_values

__all__ = ["column_types", "typed_value", "typed_values", "participant_values", "study_fields"]


def column_types(fields: Sequence[QuestionnaireField]) -> dict[str, tuple[pa.DataType, str]]:
    """Field name → (pyarrow type, pandas dtype) of its export column, in the declared order."""
    out: dict[str, tuple[pa.DataType, str]] = {}
    for field in fields:
        if field.type == "number":
            out[field.name] = (pa.int64(), "Int64") if field.integer else (pa.float64(), "float64")
        else:
            out[field.name] = (pa.string(), "str")
    return out


def participant_values(study, fields: Sequence[QuestionnaireField]) -> dict[int, tuple]:
    """Participant id → their typed answers, for every participant of ``study`` (one query; none without
    fields)."""
    from surveys.models import Participant

    if not fields:
        return {}
    rows = Participant.objects.filter(study=study).order_by().values_list("pk", "questionnaire")
    return {pk: typed_values(fields, stored) for pk, stored in rows.iterator(chunk_size=5000)}
