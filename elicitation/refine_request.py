"""Starting a self-refinement (elicitation/refinement.py) from the admin or the API, with the settings of
``manage.py refine``: the admin form and the one function it and the API (``elicitation.api``'s
``RefineSerializer``) call.

A run cannot be refined (:func:`refusal`; the API answers 409) when it is itself a refinement, when its study's
item kind has no refinement (``Instrument.refinement``), or when it has no parsed answer yet; bad settings come back per field (400).
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from . import preflight
from .models import ElicitationRun, ModelEndpoint
from .refinement import create_refinement
from .run_settings import (MAX_SAMPLES, MAX_TEMPERATURE, MAX_TOKENS, REFINE_SETTINGS, SEED_BOUND, is_refinement,
                           refinable_answers)
from .runs import RunStateError, missing_key, start_run

#: creating a run and starting it (the admin's add + change on runs)
REFINE_PERMS = ("elicitation.add_elicitationrun", "elicitation.change_elicitationrun")
MODES = [(m.value, m.label) for m in (ElicitationRun.Mode.GREEDY, ElicitationRun.Mode.SAMPLED)]
#: create_refinement's model fields → the names of the form and the API
FIELD_NAMES = {"refine_shown": "shown", "refine_setting": "setting", "refine_seed": "draw_seed",
               "samples_per_item": "samples"}
NOT_REFINABLE = "refines"  # the model field create_refinement names when the source itself is the problem


def refusal(source: ElicitationRun) -> str:
    """Why ``source`` cannot be refined at all ("" when it can be; its answers may still be missing)."""
    if is_refinement(source):
        return f"run {source.pk} is itself a refinement; refine a run of answers"
    if source.study.kind.refinement_hook() is None:
        return (f"self-refinement needs {refinable_answers()} answers; run {source.pk}'s study asks "
                f"{source.study.instrument} items")
    return ""


def field_errors(exc: ValidationError) -> dict[str, list[str]]:
    """create_refinement's ValidationError with the form's and the API's field names."""
    if not hasattr(exc, "message_dict"):
        return {"__all__": list(exc.messages)}
    return {FIELD_NAMES.get(k, k): list(v) for k, v in exc.message_dict.items()}


def create_and_start(source: ElicitationRun, *, endpoint: ModelEndpoint | None = None,
                     temperature: float | None = None, created_by: Any = None, check: bool = True,
                     **options: Any) -> tuple[ElicitationRun, str]:
    """(run, problem): a refinement of ``source`` (the source's endpoint by default; temperature 1.0 sampled,
    0.0 greedy) created then started, or left a draft with why it could not start. ValidationError names bad
    settings, or the endpoint's failed pre-flight check unless ``check`` is False (nothing is created then)."""
    endpoint = endpoint or source.endpoint
    if problem := missing_key(endpoint):
        raise ValidationError({"endpoint": problem})
    if check and (problem := preflight.problem(endpoint)):
        raise ValidationError({"endpoint": f"pre-flight check failed: {problem}"})
    if temperature is None:
        temperature = 1.0 if options.get("mode") == ElicitationRun.Mode.SAMPLED else 0.0
    run = create_refinement(source, endpoint, temperature=temperature, created_by=created_by, **options)
    try:
        start_run(run)
    except RunStateError as exc:
        return run, str(exc)
    return run, ""


class RefineForm(forms.Form):
    """The admin's "Self-refine this run" form (the options of ``manage.py refine``)."""

    endpoint = forms.ModelChoiceField(ModelEndpoint.objects.order_by("name"), required=False,
                                      empty_label="the source run's endpoint")
    shown = forms.IntegerField(min_value=1, max_value=1000, initial=3, label="answers shown (e)")
    setting = forms.ChoiceField(choices=[(s, s) for s in REFINE_SETTINGS], initial="single",
                                help_text="single: answers at the item's own level; mixed: at every level")
    draw_seed = forms.IntegerField(min_value=-SEED_BOUND, max_value=SEED_BOUND, initial=0,
                                   help_text="seed of the draws of shown answers")
    mode = forms.ChoiceField(choices=MODES, initial=ElicitationRun.Mode.GREEDY)
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=1,
                                 help_text="refinements per item, each with its own draw")
    temperature = forms.FloatField(min_value=0, max_value=MAX_TEMPERATURE, required=False,
                                   help_text="empty: 1.0 when sampled, 0 when greedy")
    seed = forms.IntegerField(min_value=-SEED_BOUND, max_value=SEED_BOUND, required=False,
                              help_text="seed sent where the endpoint takes one (+ sample index)")
    max_tokens = forms.IntegerField(min_value=1, max_value=MAX_TOKENS, initial=256)
    name = forms.CharField(max_length=200, required=False)
    skip_check = forms.BooleanField(required=False, label="Start without the pre-flight check",
                                    help_text="The endpoint is sent one cheap request first; tick to skip it.")

    def add_refinement_errors(self, exc: ValidationError) -> None:
        for field, messages in field_errors(exc).items():
            self.add_error(field if field in self.fields else None, messages)
