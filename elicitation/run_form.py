"""The admin form of an elicitation run: its Items picker lists only the chosen study's main items, each
as the sentence a participant reads (not its key), and refuses items of another study by name."""
from __future__ import annotations

from django import forms
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.db.models import Q, QuerySet
from django.forms.models import ModelChoiceIterator

from surveys.models import Item

from . import preflight
from .models import ElicitationRun

LABEL_CHARS = 180


def item_choice_label(item: Item) -> str:
    """``study: sentence`` with the item's truth value and control mark, shortened to LABEL_CHARS."""
    sentence = " ".join(item.text().split())
    marks = [m for m in (item.truth, "control" if item.is_control else "") if m]
    label = f"{item.study.slug}: {sentence}" + (f" ({', '.join(marks)})" if marks else "")
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


class ShownItemsIterator(ModelChoiceIterator):
    """Choices from the field's ``shown`` queryset rather than the one it validates against."""

    def __init__(self, field: "StudyItemsField"):
        super().__init__(field)
        self.queryset = field.shown


class StudyItemsField(forms.ModelMultipleChoiceField):
    """Accepts any item, so that :meth:`RunForm.clean` can name the ones that are not the study's; lists only
    ``shown`` (set by :meth:`show`)."""

    iterator = ShownItemsIterator

    def __init__(self, **kwargs):
        self.shown: QuerySet[Item] = Item.objects.none()
        super().__init__(queryset=Item.objects.all(), **kwargs)

    def show(self, study_id: int | None, selected: list[int]) -> None:
        """List the main items of ``study_id`` (none without a study) and the ``selected`` ones."""
        wanted = Q(pk__in=selected)
        if study_id is not None:
            wanted |= Q(study_id=study_id, is_demonstration=False)
        self.shown = Item.objects.filter(wanted).select_related("study").order_by("study_id", "id")
        self.widget.choices = self.choices

    def label_from_instance(self, obj: Item) -> str:
        return item_choice_label(obj)


def _ids(values) -> list[int]:
    out = []
    for value in values or []:
        try:
            out.append(int(getattr(value, "pk", value)))
        except (TypeError, ValueError):
            continue
    return out


class RunForm(forms.ModelForm):
    skip_check = forms.BooleanField(
        required=False, label="Create without the pre-flight check",
        help_text="A new run's endpoint is sent one cheap request first; tick to create the draft anyway (it is "
                  "checked again when it starts).")
    items = StudyItemsField(
        required=False, widget=FilteredSelectMultiple("items", is_stacked=False),
        help_text="A subset of the study's main items; leave empty to ask all of them. The list offers the "
                  "chosen study's items (choosing another study reloads it on a new run; on a saved draft, "
                  "save with the new study first).")

    class Meta:
        model = ElicitationRun
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields.get("items")
        if isinstance(field, StudyItemsField):
            field.show(self._study_id(), self._selected())

    def _study_id(self) -> int | None:
        if self.is_bound:
            raw = self.data.get(self.add_prefix("study"))
        elif self.instance.pk:
            raw = self.instance.study_id
        else:
            raw = self.initial.get("study")
        ids = _ids([raw])
        return ids[0] if ids else None

    def _selected(self) -> list[int]:
        if self.is_bound:
            return _ids(self.data.getlist(self.add_prefix("items")) if hasattr(self.data, "getlist")
                        else self.data.get(self.add_prefix("items")))
        if self.instance.pk:
            return list(self.instance.items.values_list("pk", flat=True))
        return _ids(self.initial.get("items"))

    def clean(self):
        data = super().clean()
        study, items = data.get("study"), data.get("items")
        if study is not None and items:
            foreign = [i for i in items if i.study_id != study.pk or i.is_demonstration]
            if foreign:
                named = ", ".join(f"{i.key} ({'a demonstration' if i.study_id == study.pk else 'study ' + i.study.slug})"
                                  for i in foreign[:5])
                self.add_error("items", f"not main items of {study.slug}: {named}"
                                        + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""))
        return data

    def _post_clean(self) -> None:
        """A new run on an endpoint that fails its pre-flight check is not created (elicitation.preflight)."""
        super()._post_clean()
        endpoint = self.cleaned_data.get("endpoint")
        if self.instance.pk is None and endpoint is not None and not self.errors and not self.cleaned_data.get(
                "skip_check"):
            if problem := preflight.problem(endpoint):
                self.add_error("endpoint", f"pre-flight check failed: {problem}")
