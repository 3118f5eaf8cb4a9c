"""Helpers shared by the analysis management commands."""
from __future__ import annotations

from django.core.management.base import CommandError

from surveys.models import Study


def get_study(slug: str) -> Study:
    """The study with ``slug``, or a CommandError naming the known slugs."""
    try:
        return Study.objects.get(slug=slug)
    except Study.DoesNotExist:
        known = ", ".join(Study.objects.values_list("slug", flat=True)[:20]) or "none"
        raise CommandError(f"no study with slug {slug!r} (known: {known})") from None
