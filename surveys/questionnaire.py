"""The participant questionnaire (``[[questionnaire]]`` of a study's definition): its fields, the form a
participant fills in, and storing the answers once.

A study's fields are ``study.definition["questionnaire"]`` (dumps of ``surveys.definition.schema.
QuestionnaireField``); each is asked ``before`` the items (a page right after consent) or ``after`` them (a page
after the last item, before completion). Answers live in ``Participant.questionnaire``: field name → typed value
(a number as int or float, a choice as its key, text as a string, an optional field left empty as None). A step
is answered when every one of its fields has a key there: the page stores all of them at once, so a participant
who skipped every optional field has still answered. Stored answers are never changed (``store``);
``typed_values`` reads them back as their fields' types (the export, the report's groups, model personas).

The labels and choices are the researcher's, shown as written; the messages and buttons are translated.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Literal, Sequence

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .definition.schema import QuestionnaireField
from .models import Participant, Study

When = Literal["before", "after"]


class AlreadyAnswered(Exception):
    """The participant's answers for this step were already stored; they are not changed."""


# --- the fields -----------------------------------------------------------------------------------
def study_fields(study: Study, when: When | None = None) -> list[QuestionnaireField]:
    """The study's questionnaire fields in the order declared (only those asked ``when``, if given)."""
    declared = (study.definition or {}).get("questionnaire") or []
    fields = [QuestionnaireField.model_validate(field) for field in declared]
    return [f for f in fields if when is None or f.when == when]


def has_questionnaire(study: Study) -> bool:
    """Whether the study declares any questionnaire field (costs no query)."""
    return bool((study.definition or {}).get("questionnaire"))


def pending(participant: Participant, when: When) -> bool:
    """Whether the participant still has to answer the ``when`` page: the study asks fields then and not all
    of them have a stored answer. No query: reads the participant's row and its (cached) study."""
    declared = (participant.study.definition or {}).get("questionnaire") or []
    names = [f["name"] for f in declared if f.get("when", "before") == when]
    stored = participant.questionnaire or {}
    return any(name not in stored for name in names)


# --- the form -------------------------------------------------------------------------------------
REQUIRED = _("Please answer this question.")
CHOOSE = _("Please choose one of the options shown.")
NUMBER = _("Please enter a number (for example 42).")
WHOLE = _("Please enter a whole number (for example 42).")
RANGE = _("Please enter a number from %(min)s to %(max)s.")
AT_LEAST = _("Please enter a number of at least %(min)s.")
AT_MOST = _("Please enter a number of at most %(max)s.")
TOO_LONG = _("Please keep your answer to at most %(limit_value)d characters (it has %(show_value)d).")


def _number(value: float) -> str:
    return f"{value:g}"


class NumberField(forms.FloatField):
    """A number within the field's range, stored as an int when it is whole (always, for ``integer``)."""

    def __init__(self, spec: QuestionnaireField, **kwargs: Any):
        self.spec = spec
        attrs = {"step": "1" if spec.integer else "any", "inputmode": "numeric" if spec.integer else "decimal"}
        if spec.min is not None:
            attrs["min"] = _number(spec.min)
        if spec.max is not None:
            attrs["max"] = _number(spec.max)
        super().__init__(widget=forms.NumberInput(attrs=attrs), **kwargs)

    def to_python(self, value: Any) -> int | float | None:
        number = super().to_python(value)
        if number is None:
            return None
        if not math.isfinite(number):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        if self.spec.integer and not number.is_integer():
            raise ValidationError(WHOLE, code="whole")
        return int(number) if number.is_integer() else number

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value is None:
            return
        low, high = self.spec.min, self.spec.max
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                raise ValidationError(RANGE, code="range", params={"min": _number(low), "max": _number(high)})
            if low is not None:
                raise ValidationError(AT_LEAST, code="range", params={"min": _number(low)})
            raise ValidationError(AT_MOST, code="range", params={"max": _number(high)})


def form_field(spec: QuestionnaireField) -> forms.Field:
    """The Django form field of one questionnaire field: radio buttons, a number input or a text input."""
    common = {"label": spec.label, "required": spec.required}
    if spec.type == "choice":
        return forms.ChoiceField(choices=[(c.key, c.label) for c in spec.choices], widget=forms.RadioSelect,
                                 error_messages={"required": REQUIRED, "invalid_choice": CHOOSE}, **common)
    if spec.type == "number":
        invalid = WHOLE if spec.integer else NUMBER
        return NumberField(spec, error_messages={"required": REQUIRED, "invalid": invalid}, **common)
    return forms.CharField(max_length=spec.max_length, widget=forms.TextInput(attrs={"autocomplete": "off"}),
                           error_messages={"required": REQUIRED, "max_length": TOO_LONG}, **common)


class QuestionnaireForm(forms.Form):
    """The fields of one questionnaire page; a bound form that is not valid keeps what was entered."""

    def __init__(self, specs: Iterable[QuestionnaireField], data: Any = None):
        super().__init__(data, prefix="q")
        self.specs = list(specs)
        for spec in self.specs:
            self.fields[spec.name] = form_field(spec)

    def full_clean(self) -> None:
        super().full_clean()
        for name in self.errors:  # the input names its message for screen readers
            if name in self.fields:
                self.fields[name].widget.attrs["aria-describedby"] = f"{self[name].auto_id}-error"

    def answers(self) -> dict[str, Any]:
        """The typed answers of a valid form: every field of the page, an empty optional one as None.
        ValueError when the form is not valid."""
        if not self.is_valid():
            raise ValueError(f"the questionnaire form is not valid: {self.errors.as_data()}")
        out: dict[str, Any] = {}
        for spec in self.specs:
            value = self.cleaned_data.get(spec.name)
            out[spec.name] = None if value in (None, "") else value
        return out


def questionnaire_form(study: Study, when: When, data: Any = None) -> QuestionnaireForm:
    """The form of the study's ``when`` page, bound to ``data`` (a POST) when given."""
    return QuestionnaireForm(study_fields(study, when), data)


# --- storing --------------------------------------------------------------------------------------
def store(locked: Participant, answers: dict[str, Any]) -> None:
    """Add ``answers`` to the participant's stored questionnaire, inside the caller's transaction on a row it
    has locked (surveys.flow.record_questionnaire). AlreadyAnswered, and nothing written, when any of these
    fields already has an answer: stored answers are never overwritten."""
    stored = dict(locked.questionnaire or {})
    again = sorted(set(answers) & set(stored))
    if again:
        raise AlreadyAnswered(", ".join(again))
    locked.questionnaire = stored | answers
    locked.save(update_fields=["questionnaire"])


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
