"""A study's participants and their questionnaire answers as one typed table, for the report to group answers by
questionnaire fields (``[report] group_by``): :func:`questionnaire_frame`; the same fields beside every answer,
from a model's persona too: :func:`with_fields`."""
from __future__ import annotations

import pandas as pd

from analysis.dataset import human_respondent
from analysis.questionnaire import column_types, study_fields, typed_value, typed_values
from surveys.models import Participant
from surveys.respondent_ids import hashed_id


def questionnaire_frame(study, *, include_test: bool = False, completed_only: bool = True) -> pd.DataFrame:
    """The study's participants' questionnaire answers, one row per participant, one typed column per field
    (declared order), for the report to group answers by.

    Indexed by ``respondent``, the participant's id in the report's answer table (analysis.dataset:
    ``p<id>``, never the PROLIFIC_PID), so ``answers.join(frame, on="respondent")`` puts each answer beside its
    participant's fields; ``respondent_id`` is the combined export's salted id of the same person. Like the
    report, only completed participants (``completed_only``) and no test participants (``include_test``).
    A study without a questionnaire gives an empty frame with only ``respondent_id``.
    """
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
            known = frame[field.name].where(frame[field.name].isin(keys))  # a key no longer offered: missing
            frame[field.name] = pd.Categorical(known, categories=keys)
        else:
            frame[field.name] = frame[field.name].astype(types[field.name][1])
    return frame


def with_fields(answers: pd.DataFrame, studies, names: list[str] | None = None, prefix: str = "") -> pd.DataFrame:
    """``answers`` (the report's answer table, analysis.dataset) with one column per questionnaire field
    (``names``, else every field of the first study; named ``prefix`` + field): a human's answer from their
    questionnaire (the participants of ``studies``: a study and its reference study), a model's from the persona
    it was asked under (``persona``), typed alike (analysis/questionnaire.py: a number as a number, a choice as
    its key), so that ``groupby(field)`` compares like with like. None where a person left the field empty, and
    for a model answer without a persona."""
    studies = [s for s in (studies if isinstance(studies, (list, tuple)) else [studies]) if s is not None]
    declared = {f.name: f for s in reversed(studies) for f in study_fields(s)}
    names = list(names) if names is not None else [f.name for f in study_fields(studies[0])] if studies else []
    frames = [questionnaire_frame(s) for s in studies]
    people = pd.concat(frames) if frames else pd.DataFrame()
    out = answers.copy()
    is_model = out["persona"].notna() if "persona" in out.columns else pd.Series(False, index=out.index)
    for name in names:
        field = declared.get(name)
        human = (out["respondent"].map(people[name].astype(object)) if name in people.columns
                 else pd.Series(None, index=out.index, dtype=object))
        if field is not None and is_model.any():
            persona = out.loc[is_model, "persona"].map(
                lambda p: typed_value(field, p.get(name)) if isinstance(p, dict) else None)
            human = human.astype(object)
            human.loc[is_model] = persona
        out[prefix + name] = human.astype(object).where(human.notna(), None)
    return out
