"""A study definition's content hash and the study's versions.

The hash covers what participants and models are given: the definition without where its items came from
(``[design]`` source, ``study.slug``) and every item's fields. So a study exported and loaded again (items now
in ``items.jsonl``) has the same hash, and a changed word anywhere gives a new one.
"""
from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Iterable, Mapping

from django.db.models import Max

from surveys.models import Response, Study, StudyVersion

SOURCE_KEYS = ("items", "generator", "options", "generated_by", "key")


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _item_content(item: Mapping[str, Any]) -> dict[str, Any]:
    """An item's fields with every column present (unset ones at their defaults), bookkeeping left out."""
    from surveys.models import Item

    row = {}
    for field in Item._meta.concrete_fields:
        if field.name in ("id", "study", "source_row"):
            continue
        row[field.name] = item.get(field.name, field.get_default())
    return row


def content_hash(definition: Mapping[str, Any], items: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 of the definition (its item source, slug and Prolific codes left out) and its items' fields
    (every column, sorted by key; ``source_row`` left out), as compact, key-sorted JSON."""
    wording = copy.deepcopy(dict(definition))
    wording.get("study", {}).pop("slug", None)
    wording.pop("prolific", None)
    wording.pop("demonstrations", None)  # they are among the items
    for key in SOURCE_KEYS:
        wording.get("design", {}).pop(key, None)
    rows = sorted((_item_content(item) for item in items), key=lambda row: row["key"])
    blob = json.dumps({"definition": _jsonable(wording), "items": _jsonable(rows)}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def current_version(study: Study) -> StudyVersion | None:
    """The study's newest version (None for a study never loaded from a definition)."""
    return study.versions.order_by("-number").first()


def has_answers(study: Study) -> bool:
    """Whether any human or model answer of ``study`` is stored."""
    from elicitation.models import ModelResponse

    return (Response.objects.filter(participant__study=study).exists()
            or ModelResponse.objects.filter(run__study=study).exists())


def add_version(study: Study, sha256: str, definition: Mapping[str, Any]) -> StudyVersion:
    """A new version of ``study`` (number one above its newest)."""
    top = study.versions.aggregate(top=Max("number"))["top"] or 0
    return StudyVersion.objects.create(study=study, number=top + 1, sha256=sha256, definition=dict(definition))
