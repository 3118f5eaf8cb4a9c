"""Item designs: code that generates a study's items from a paper's design.

A design is a module of this package with ``generate(study, **options) -> list[dict]``: one dict of ``Item``
fields per item (``key``; kind-specific fields in ``extra``). :data:`DESIGNS` names each design, the module
that holds it and the instrument its items are for; :func:`generate_items` runs one and stores its items,
all or nothing. ``python manage.py generate_items <study> --design <name> [options]`` and the REST API call it.
Options are values (numbers, names, lists), never server paths: the command line reads a file itself and
passes its values, so nothing a web request sends opens a file on the server.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from django.db import transaction


@dataclass(frozen=True)
class Design:
    name: str
    module: str
    instrument: str
    summary: str

    def function(self) -> Callable[..., list[dict[str, Any]]]:
        return importlib.import_module(self.module).generate

    def report_defaults(self, options: dict[str, Any]) -> dict[str, str]:
        """Report options a study generated with ``options`` takes unless it sets them itself (a module's
        optional ``report_defaults(**options)``; e.g. the paper's numbers → the authors' reading)."""
        hook = getattr(importlib.import_module(self.module), "report_defaults", None)
        return hook(**options) if hook else {}

    def notes(self, items: list) -> list[str]:
        """What the researcher should know about the generated ``items`` (the module's ``notes(items)``, if
        it has one), e.g. numbers changed to fit a quantity; empty by default."""
        notes = getattr(importlib.import_module(self.module), "notes", None)
        return notes(items) if notes else []

    def options(self) -> list[str]:
        """The keyword options ``generate`` takes (besides the study)."""
        params = list(inspect.signature(self.function()).parameters.values())[1:]
        return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


DESIGNS: dict[str, Design] = {d.name: d for d in (
    Design("tang-rq1", "surveys.designs.tang_rq1", "wep_probability",
           "Tang et al. RQ1: the 17 WEPs in context settings CNC/ENC/FCNC/MCNC, English or Chinese"),
    Design("tang-rq2", "surveys.designs.tang_rq2", "wep_choice",
           "Tang et al. RQ2: 360 WEP-choice items (scenario × choices × numbers × confidence × interval)"),
    Design("bahaj-hints", "surveys.designs.bahaj_hints", "interval_confidence",
           "Bahaj et al.: every question × level of the study also under the hint conditions hint1, hint3, hint8"),
    Design("wep-reasoning", "surveys.designs.wep_reasoning", "verbalisation_choice",
           "Sileo & Moens: WEP-Reasoning items, 1 or 2 hops, exact probabilities with ProbLog"),
)}


class DesignError(ValueError):
    """The design cannot generate items for this study; the message says why."""


def get_design(name: str) -> Design:
    try:
        return DESIGNS[name]
    except KeyError:
        raise DesignError(f"unknown design {name!r} (known: {', '.join(sorted(DESIGNS))})") from None


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
