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
from surveys.questionnaire import study_fields, typed_values
from surveys.respondent_ids import hashed_id

from .persona_sample import stratified_sample


def from_participants(agent_settings: Mapping[str, Any] | None) -> bool:
    """Whether a run's personas were drawn from the study's participants (not written in the file)."""
    persona = (agent_settings or {}).get("persona") or {}
    return bool(persona) and not persona.get("people")


def free_text_fields(study: Study) -> frozenset[str]:
    """The study's free-text questionnaire fields (``type = "text"``): people's own words."""
    return frozenset(f["name"] for f in (study.definition or {}).get("questionnaire") or [] if f.get("type") == "text")


def unshown_free_text(study: Study, agent_settings: Mapping[str, Any] | None) -> frozenset[str]:
    """The free-text fields a run's personas drawn from participants must not carry: those its persona template
    does not name (a participant's comment is no part of a persona its prompt never shows)."""
    if not from_participants(agent_settings):
        return frozenset()
    template = ((agent_settings or {}).get("persona") or {}).get("template") or ""
    return free_text_fields(study) - (template_fields(template) if template else set())


def without(fields: Mapping[str, Any] | None, names: frozenset[str]) -> dict[str, Any] | None:
    """``fields`` less ``names`` (None stays None)."""
    return None if fields is None else {k: v for k, v in fields.items() if k not in names}


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
    dropped = unshown_free_text(study, agent)  # people's comments are not copied into personas
    people = [without(p, dropped) for p in people]
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
