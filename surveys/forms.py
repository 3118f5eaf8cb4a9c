"""Forms of the participant pages. They check the shape of a POST; surveys.flow decides what it means."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class ConsentForm(forms.Form):
    """Two submit buttons named ``choice``: agree or decline."""

    choice = forms.ChoiceField(choices=[("agree", _("I agree")), ("decline", _("I do not agree"))],
                               error_messages={"required": _("Please choose whether you agree to take part.")})

    @property
    def agreed(self) -> bool:
        return self.cleaned_data.get("choice") == "agree"


class PledgeForm(forms.Form):
    """The integrity pledge: a checkbox that must be ticked."""

    pledge = forms.BooleanField(
        required=True,
        label=_("I pledge to answer every question carefully and to the best of my ability."),
        error_messages={"required": _("Please tick the box to confirm the pledge before you start.")},
    )


class AnswerForm(forms.Form):
    """One item page. ``position`` and ``item`` say which slot the page showed and ``token`` signs them for the
    participant (surveys.page_tokens; a preview has none); ``value`` is the answer, checked by the instrument
    (surveys.flow.submit_answer); ``client_time_ms`` is measured by the page."""

    position = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    item = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    token = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    # Neither limits the length: a bad value is the instrument's to reject (the page asks again), and a bad
    # client time is dropped (surveys.flow.parse_client_ms); neither may make the answer look tampered.
    value = forms.CharField(required=False)
    client_time_ms = forms.CharField(required=False, widget=forms.HiddenInput)
