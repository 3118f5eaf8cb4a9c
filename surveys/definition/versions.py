"""A study definition's content hash and the study's versions.

The hash covers what participants and models are given: texts, page and prompt wording, answer shape,
questionnaire, demonstrations, every item's fields and how items are drawn. It leaves out where the items came
from (``[design]`` source), the slug, the titles (``title``, ``participant_title``) and description, the Prolific
codes, the report, the declared agents (``[[agents]]``: who is asked, not what; adding one after answers needs no
new version) and the analysis settings (attention filter and threshold, idle timeout, ``[[exclusions]]``): changing those needs no
new version. So a study exported and loaded again (items now in ``items.jsonl``) has the same hash, and a changed
word anywhere gives a new one.
"""
from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Iterable, Mapping

from django.db.models import Max

from surveys.models import Response, Study, StudyVersion

SOURCE_KEYS = ("items", "generator", "options", "generated_by", "key")
# Settings of the analysis and of the study's running, not of what participants and models are given.
ANALYSIS_SETTINGS = ("attention_filter", "attention_threshold", "idle_timeout_minutes")
# Settings of how many people a cell admits ([conditions]), not of what they are given.
RUNNING_SETTINGS = ("cap", "caps", "in_progress_minutes")


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
    for key in ("slug", "title", "participant_title", "description", "reference"):
        wording.get("study", {}).pop(key, None)
    for key in ANALYSIS_SETTINGS:
        wording.get("participants", {}).pop(key, None)
    for key in RUNNING_SETTINGS:  # a study with [[factors]]: raising a cap is not new content
        (wording.get("conditions") or {}).pop(key, None)
    wording.pop("prolific", None)
    wording.pop("report", None)
    wording.pop("agents", None)  # model configurations: declaring one after answers needs no new version
    wording.pop("exclusions", None)  # the report's exclusion rules: analysis settings
    if not wording.get("checks"):  # a study without checks hashes as it did before checks existed
        wording.pop("checks", None)
        wording.pop("check_failures", None)
    wording.pop("demonstrations", None)  # they are among the items
    for key in SOURCE_KEYS:
        wording.get("design", {}).pop(key, None)
    rows = sorted((_item_content(item) for item in items), key=lambda row: row["key"])
    blob = json.dumps({"definition": _jsonable(wording), "items": _jsonable(rows)}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def current_version(study: Study) -> StudyVersion | None:
    """The study's current version: the one made or returned to last (None for a study never loaded from a
    definition)."""
    return study.current_version()


def earlier_version(study: Study, sha256: str) -> StudyVersion | None:
    """The version of ``study`` whose content hash is ``sha256`` (a file that returns to it), or None."""
    return study.versions.filter(sha256=sha256).first()


def make_current(version: StudyVersion) -> StudyVersion:
    """Return ``version``'s study to it: it becomes current again, keeping its number, its stored definition
    and its answers; the versions made since stay as they were (the history of what answers saw)."""
    from django.utils import timezone

    version.current_since = timezone.now()
    version.save(update_fields=["current_since"])
    return version


def has_answers(study: Study) -> bool:
    """Whether any human or model answer of ``study`` is stored (model answers through the reverse relations
    elicitation declares, ``study.runs`` and ``run.responses``: no import of the layer above)."""
    return (Response.objects.filter(participant__study=study).exists()
            or study.runs.filter(responses__isnull=False).exists())


def add_version(study: Study, sha256: str, definition: Mapping[str, Any]) -> StudyVersion:
    """A new version of ``study`` (number one above its newest), or the earlier version with this content made
    current again (a content has one version: the answers given under it stay together)."""
    if (earlier := earlier_version(study, sha256)) is not None:
        return make_current(earlier)
    top = study.versions.aggregate(top=Max("number"))["top"] or 0
    return StudyVersion.objects.create(study=study, number=top + 1, sha256=sha256, definition=dict(definition))


def stored_items(study: Study) -> list[dict[str, Any]]:
    """The study's items (demonstrations included) as field dicts, as content_hash takes them."""
    from surveys.models import Item

    names = [f.name for f in Item._meta.concrete_fields if f.name not in ("id", "study", "source_row")]
    return [{name: getattr(item, name) for name in names} for item in study.items.all()]


def pending_hash(study: Study) -> str:
    """The content hash of ``study`` as it stands now (columns edited in the admin or the API included)."""
    from .export import definition_of

    return content_hash(definition_of(study), stored_items(study))


def sync(study: Study) -> StudyVersion | None:
    """After an edit outside a definition file (admin, API): store the study's definition as it now stands and,
    when its content changed, add a version. The new version, or None when nothing changed."""
    from .export import definition_of

    definition = definition_of(study)
    sha = content_hash(definition, stored_items(study))
    current = current_version(study)
    Study.objects.filter(pk=study.pk).update(definition=definition)
    study.definition = definition
    if current is not None and current.sha256 == sha:
        return None
    if current is not None and not has_answers(study) and not study.versions.filter(sha256=sha).exists():
        # nobody has been given this version yet: it is updated in place (a version marks what answers saw)
        StudyVersion.objects.filter(pk=current.pk).update(sha256=sha, definition=definition)
        return None
    return add_version(study, sha, definition)


def ensure_first_version(study: Study) -> StudyVersion | None:
    """A study made before versions gets its version 1 from its state now (before an edit changes it), and its
    earlier participants and runs are attached to it. None when the study already has versions."""
    from surveys.models import Participant

    if study.pk is None or study.versions.exists():
        return None
    from .export import definition_of

    definition = definition_of(study)
    first = add_version(study, content_hash(definition, stored_items(study)), definition)
    Participant.objects.filter(study=study, study_version__isnull=True).update(study_version=first)
    study.runs.filter(study_version__isnull=True).update(study_version=first)  # elicitation's runs
    return first
