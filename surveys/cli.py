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


def get_study(slug: str, user=None) -> Study:
    """The study with ``slug`` (among ``user``'s own and shared ones with ``--as``; access.cli), or a
    CommandError naming the known slugs."""
    from access.cli import scoped

    return lookup(scoped(Study.objects.all(), user), "slug", slug, "study")
