"""Reports cached by the data they were computed from (issue 23, point 14).

A report is built once per *data version* (:func:`data_version`: a digest of the study and its reference
study: their settings, items, participants' statuses, the count and last id of the human answers, the runs
and their endpoints, and aggregates of the model answers) and kept in Django's cache; a new answer, a
finished run, a withdrawn participant or a changed setting gives a new version, so nothing is ever served
stale and nothing has to be invalidated by hand. Its figures are rendered once per version and format.
Reading a report writes nothing to the database (point 3 of issue 24); only the cache is filled.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, Sum

from analysis import reports
from analysis.figure_cache import TIMEOUT
from config.registry import registry

_CODE = Path(__file__).resolve().parent


def _package_dirs(module: str) -> list[Path]:
    """The folders of the package ``module`` (an installed family's); none when it cannot be found."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    return [Path(d) for d in (spec.submodule_search_locations or [])] if spec is not None else []


@functools.cache
def code_stamp() -> str:
    """The last change of the code a report runs: the analysis package and every installed family's package
    (its sections, metrics and figures): a deployment of new report code builds reports anew."""
    folders = [_CODE, *(d for _, origin in registry().families.values() for d in _package_dirs(origin.module))]
    return str(max(p.stat().st_mtime_ns for folder in folders for p in folder.rglob("*.py")))


def _concrete(model) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


def data_version(study) -> str:
    """A digest of everything ``study``'s report reads (see the module docstring)."""
    from analysis.agents import ANSWER_STATUSES
    from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
    from surveys.models import Item, Participant, Response, Study

    ids = [study.pk] + ([study.reference_study_id] if study.reference_study_id else [])
    parts: list[Any] = [code_stamp()]
    parts += list(Study.objects.filter(pk__in=ids).order_by("pk").values_list(*_concrete(Study)))
    parts += list(Item.objects.filter(study__in=ids).order_by("pk").values_list(*_concrete(Item)))
    parts += list(Participant.objects.filter(study__in=ids).order_by("pk")
                  .values_list("pk", "status", "is_test", "status_changed_at", "study_version_id"))
    parts.append(Response.objects.filter(item__study__in=ids).aggregate(n=Count("pk"), last=Max("pk")))
    runs = ElicitationRun.objects.filter(study__in=ids).order_by("pk")
    parts += list(runs.values_list(*_concrete(ElicitationRun)))
    parts += list(ModelEndpoint.objects.filter(runs__in=runs).distinct().order_by("pk").values_list("pk", "name", "model"))
    parts.append(ModelResponse.objects.filter(run__in=runs).aggregate(
        n=Count("pk"), answers=Count("pk", filter=Q(status__in=ANSWER_STATUSES)), last=Max("pk"),
        answered=Max("answered_at"), value=Sum("value"), lower=Sum("lower"), upper=Sum("upper"),
        choices=Count("pk", filter=~Q(choice=""))))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def cached_report(study, pool_versions: bool = False):
    """The report of ``study`` for its current data version (answers of several definition versions pooled only
    with ``pool_versions``): from the cache, or built and cached. ReportError (also remembered for the version)
    when it cannot be built yet."""
    key = f"hedgelab.report.{study.pk}.{data_version(study)}{'.pooled' if pool_versions else ''}"
    hit = cache.get(key)
    if hit is None:
        try:
            hit = reports.build_report(study, pool_versions=pool_versions)
        except reports.ReportError as exc:
            hit = exc
        hit.cache_key = key
        cache.set(key, hit, TIMEOUT)
    if isinstance(hit, reports.ReportError):
        raise hit
    return hit


def asked(value: str | None) -> bool:
    """A yes/no query parameter (``1``, ``true``, ``on``, ``yes``) as a bool (``?pool_versions=1``)."""
    return str(value or "").lower() in ("1", "true", "on", "yes")
