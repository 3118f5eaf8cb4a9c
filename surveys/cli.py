"""Helpers shared by the management commands of every app."""
from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Model, QuerySet

from .models import Study

KNOWN_SHOWN = 20


def lookup(queryset: QuerySet, field: str, value: str, what: str) -> Model:
    """The row of ``queryset`` whose ``field`` is ``value``, or a CommandError naming the known values."""
    found = queryset.filter(**{field: value}).first()
    if found is None:
        known = ", ".join(str(v) for v in queryset.order_by(field).values_list(field, flat=True)[:KNOWN_SHOWN])
        raise CommandError(f"no {what} with {field} {value!r} (known: {known or 'none'})")
    return found


def get_study(slug: str) -> Study:
    """The study with ``slug``, or a CommandError naming the known slugs."""
    return lookup(Study.objects.all(), "slug", slug, "study")
