"""Personas of a declared agent (``[agents.persona]``): who they are.

A run's personas are fixed when it is created (``ElicitationRun.personas``: ``[{"fields": {...}, "source":
"..."}]``): the ``people`` the file writes, or the study's completed, non-test, non-withdrawn participants'
questionnaire answers (all, or a stratified ``sample``, elicitation/persona_sample.py), each with the
participant's salted respondent id as its source (never the PROLIFIC_PID). The preamble each prompt gets:
elicitation/persona_prompts.py.
"""
from __future__ import annotations

import random
from typing import Any, Mapping

from surveys.definition.templates import template_fields
from surveys.models import Participant, Study, Withdrawal
from surveys.respondent_ids import hashed_id

from .persona_sample import stratified_sample


class PersonaError(ValueError):
    """The personas cannot be had (e.g. none from participants yet); the message names the agent."""


def personas_for(study: Study, agent: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int | None]:
    """(personas, seed of the draw) of the declared ``agent`` now: ([], None) without persona settings."""
    persona = agent.get("persona") or {}
    if not persona:
        return [], None
    if persona.get("people"):
        return [{"fields": dict(p), "source": f"definition:people[{i}]"}
                for i, p in enumerate(persona["people"])], None
    people, sources = participant_fields(study, template_fields(persona["template"]))
    if not people:
        raise PersonaError(f"agent {agent['name']!r}: its personas come from the participants, and study "
                           f"{study.slug!r} has no completed (non-test) participant with the questionnaire "
                           "answers its template names yet: run it once participants have taken part, or write "
                           "the personas in the file (persona.people)")
    size = persona.get("sample")
    if size is None:
        return [{"fields": f, "source": s} for f, s in zip(people, sources)], None
    seed = persona.get("seed")
    if seed is None:
        seed = agent.get("seed")
    if seed is None:
        seed = random.SystemRandom().randrange(2 ** 31)
    chosen = stratified_sample(people, size, sorted(template_fields(persona["template"])), int(seed))
    return [{"fields": people[i], "source": sources[i]} for i in chosen], int(seed)


def participant_fields(study: Study, needed: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """(questionnaire answers, salted respondent ids) of ``study``'s completed, non-test participants who did
    not withdraw and answered every field in ``needed``, in the order they joined."""
    from analysis.questionnaire import study_fields, typed_values  # pyarrow: only when personas are drawn

    fields = study_fields(study)
    names = [f.name for f in fields]
    withdrawn = set(Withdrawal.objects.filter(study=study, reason=Withdrawal.Reason.WITHDRAWN)
                    .values_list("respondent_id", flat=True))
    rows = (Participant.objects.filter(study=study, status=Participant.Status.COMPLETED, is_test=False)
            .order_by("pk").values_list("prolific_pid", "questionnaire"))
    people, sources = [], []
    for pid, stored in rows:
        respondent = hashed_id(pid)
        values = dict(zip(names, typed_values(fields, stored)))
        if respondent in withdrawn or any(values.get(name) is None for name in needed):
            continue
        people.append(values)
        sources.append(respondent)
    return people, sources
