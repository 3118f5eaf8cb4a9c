"""Item designs: code that generates a study's items from a paper's design.

A design is a module of this package with ``generate(study, **options) -> list[dict]``: one dict of ``Item``
fields per item (``key``; kind-specific fields in ``extra``). The installed families contribute the designs
(config.registry, kind ``designs``: a :class:`Design` names the module that holds it and the instrument its items
are for); :func:`generate_items` runs one and stores its items,
all or nothing. ``python manage.py generate_items <study> --design <name> [options]`` and the REST API call it.
Options are values (numbers, names, lists), never server paths: the command line reads a file itself and
passes its values, so nothing a web request sends opens a file on the server.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction

from config import registry

from .design import Design


class DesignError(ValueError):
    """The design cannot generate items for this study; the message says why."""


def designs() -> dict[str, Design]:
    """Every installed family's designs by name (config.registry, kind ``designs``), in the families' order."""
    return {name: registry.get("designs", name) for name in registry.names("designs")}


def get_design(name: str) -> Design:
    if name not in registry.names("designs"):
        raise DesignError(f"unknown design {name!r} (known: {', '.join(sorted(registry.names('designs')))})")
    return registry.get("designs", name)


def generate_items(study, design_name: str, **options: Any) -> list:
    """Generate ``design_name``'s items for ``study`` and store them, all or nothing, with the design's report
    defaults for options the study does not set. Options the design does not take, a study of another
    instrument, or keys the study already has are refused with a DesignError."""
    from surveys.models import Item

    design = get_design(design_name)
    if study.instrument != design.instrument:
        raise DesignError(f"design {design.name!r} makes {design.instrument} items, but study {study.slug!r} "
                          f"uses {study.instrument}")
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(design.options()))
    if unknown:
        raise DesignError(f"design {design.name!r} takes no option {', '.join(unknown)} "
                          f"(its options: {', '.join(design.options()) or 'none'})")
    try:
        fields = design.function()(study, **given)
    except ValueError as exc:
        raise DesignError(str(exc)) from None
    keys = [f["key"] for f in fields]
    if len(set(keys)) != len(keys):
        raise DesignError(f"design {design.name!r} generated a key twice")
    taken = set(study.items.filter(key__in=keys).values_list("key", flat=True))
    if taken:
        raise DesignError(f"study {study.slug!r} already has {len(taken)} of these items (e.g. {sorted(taken)[0]!r}); "
                          "generate into a new study, or with other options (e.g. another --start or --settings)")
    defaults = {k: v for k, v in design.report_defaults(given).items() if k not in (study.report_options or {})}
    with transaction.atomic():
        items = Item.objects.bulk_create([Item(study=study, **f) for f in fields])
        if defaults:
            study.report_options = {**(study.report_options or {}), **defaults}
            study.save(update_fields=["report_options"])
        if study.versions.exists():  # a study loaded from a definition: its items are part of its content
            from surveys.definition.versions import sync

            sync(study)
        return items
