"""Query filters of the API lists (django-filter; drf-spectacular documents each FilterSet's parameters).

A list route's viewset names its ``filterset_class``. :class:`ChoiceFilter` refuses a value outside its
choices with a 400 that names the allowed ones (the schema lists them as an enum), :class:`IdFilter` takes a
row id (a whole number a database column can hold) and :class:`SlugFilter` a study's or endpoint's name.
"""
from __future__ import annotations

from collections.abc import Iterable

import django_filters
from django import forms
from drf_spectacular.utils import extend_schema_field

#: The largest id a database column holds (bigint on PostgreSQL, INTEGER on SQLite).
MAX_ID = 2**63 - 1


class ChoiceFilter(django_filters.ChoiceFilter):
    """Exact match on one of ``choices``; any other value is a 400 naming the allowed values."""

    def __init__(self, field_name: str, choices: Iterable[tuple[str, str]], **kwargs):
        choices = [(value, label) for value, label in choices if value]  # an empty ?status= filters nothing
        allowed = ", ".join(value for value, _ in choices)
        super().__init__(field_name=field_name, choices=choices,
                         error_messages={"invalid_choice": f"%(value)s is not one of: {allowed}"}, **kwargs)


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number from 1 to MAX_ID (anything else is a 400, never a database error)."""

    field_class = forms.IntegerField

    def __init__(self, field_name: str, **kwargs):
        super().__init__(field_name=field_name, min_value=1, max_value=MAX_ID, **kwargs)


class SlugFilter(django_filters.CharFilter):
    """Exact match on a slug or a name."""

    def __init__(self, field_name: str, **kwargs):
        super().__init__(field_name=field_name, lookup_expr="exact", **kwargs)


class StudyFilter(SlugFilter):
    """?study=<slug>: ``field_name`` leads to the study's slug (e.g. ``item__study__slug``)."""

    def __init__(self, field_name: str, **kwargs):
        super().__init__(field_name, help_text="a study's slug", **kwargs)


def study_filterset(model: type, lookup: str) -> type[django_filters.FilterSet]:
    """The FilterSet of a list filtered by study only (``lookup`` leads to the study's slug)."""
    meta = type("Meta", (), {"model": model, "fields": ["study"]})
    return type(f"{model.__name__}Filter", (django_filters.FilterSet,), {"study": StudyFilter(lookup), "Meta": meta})
