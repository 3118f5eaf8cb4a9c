"""The admin form of a model endpoint: the model's checks, then the pre-flight check (elicitation.preflight)
unless "save without the pre-flight check" is ticked."""
from __future__ import annotations

from django import forms
from django.db import models

from . import preflight
from .models import ModelEndpoint

SKIP_HELP = "Tick to save an endpoint that is not up yet; runs on it are checked again when they start."


#: A base URL typed without its scheme is read as https:// (Django 6's default; said here, so that Django 5 does
#: not warn about the change on every command that builds this form, `make docs` among them).
URL_FIELD_OPTIONS = {"assume_scheme": "https"}


def endpoint_formfield(field: models.Field, **kwargs) -> forms.Field | None:
    if isinstance(field, models.URLField):
        kwargs = {**URL_FIELD_OPTIONS, **kwargs}
    return field.formfield(**kwargs)


class EndpointForm(forms.ModelForm):
    skip_check = forms.BooleanField(required=False, label="Save without the pre-flight check", help_text=SKIP_HELP)

    class Meta:
        model = ModelEndpoint
        fields = "__all__"
        formfield_callback = endpoint_formfield

    def _post_clean(self) -> None:
        super()._post_clean()  # builds the instance and runs the model's own checks
        if not self.errors and not self.cleaned_data.get("skip_check"):
            if problem := preflight.problem(self.instance):
                self.add_error(None, f"pre-flight check failed: {problem}")
