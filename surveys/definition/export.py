"""A study back to its definition file (``manage.py export_study``, the API, the admin's download).

The file is the study's stored definition with the columns the admin edits written back into it, its items in
``items.jsonl`` beside it (every item's fields, so any kind round-trips; demonstrations stay in
``[[demonstrations]]``). Loading the pair into an empty database gives the same study: same items, pages and
prompt hashes, and the same content hash (surveys/definition/versions.py leaves the item source out).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import tomli_w

from surveys.models import Item, Study

from .schema import Definition
from .study_fields import CODE_FIELDS, ITEM_COLUMNS, STUDY_FIELDS

ITEMS_FILE = "items.jsonl"


def definition_of(study: Study) -> dict[str, Any]:
    """``study``'s definition as it stands: the stored one (or a minimal one for a study created without a
    file) with the study's editable columns written into it."""
    from surveys.instruments import get_instrument

    # A study created without a file words itself by its kind's shipped definition (Instrument.wording), the one
    # of the study's language where a kind ships one per language.
    base = copy.deepcopy(dict(study.definition or get_instrument(study.instrument).wording(study)))
    base.setdefault("study", {}).update(slug=study.slug, title=study.title or study.slug, kind=study.instrument)
    dump = Definition.model_validate(base).model_dump(mode="json")
    dump["study"]["slug"] = study.slug
    if study.pk is not None:
        demos = study.items.filter(is_demonstration=True).order_by("demo_order", "id")
        dump["demonstrations"] = [demonstration_entry(d) for d in demos]
    for (table, key), name in STUDY_FIELDS.items():
        dump[table][key] = getattr(study, name)
    for name in CODE_FIELDS:
        dump["prolific"][name] = getattr(study, name)
    dump["study"]["reference"] = study.reference_study.slug if study.reference_study_id else ""
    return dump


def item_row(item: Item) -> dict[str, Any]:
    """One item's fields as a JSONL object: its non-empty columns and ``extra``."""
    row: dict[str, Any] = {"key": item.key}
    for name in ITEM_COLUMNS:
        if name in ("key", "is_demonstration", "demo_order", "demo_answer"):
            continue
        value = getattr(item, name)
        default = Item._meta.get_field(name).get_default()
        if value != default and not (name == "extra" and not value):
            row[name] = value
    return row


def demonstration_entry(item: Item) -> dict[str, Any]:
    """A demonstration as a ``[[demonstrations]]`` table."""
    row = item_row(item)
    extra = dict(row.pop("extra", {}) or {})
    answer = extra.pop("demo_choice", None) if item.demo_answer is None else item.demo_answer
    if extra:
        row["extra"] = extra
    row["demo_order"] = item.demo_order
    row["answer"] = answer if answer is not None else ""
    return row


def _without_none(value: Any, top: bool = True) -> Any:
    """TOML has no null: unset keys are left out (they take their defaults when loaded again), and so are
    empty texts, lists and tables, for a file a person reads."""
    if isinstance(value, dict):
        out = {k: _without_none(v, False) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and (top or v not in ("", [], {}))}
    if isinstance(value, list):
        return [_without_none(v, False) for v in value]
    return value


def unused_settings(study: Study) -> list[str]:
    """The ``[participants]`` keys of the expression-and-controls draw that ``study`` has no use
    for and leaves at their defaults: no item has an expression, none is a control, the kind draws no speaker
    names. An exported file leaves them out (loaded again they take the same defaults, so the same hash)."""
    from .schema import ParticipantsTable

    items = study.main_items()
    unused = {"items_per_expression": not items.filter(is_control=False).exclude(expression="").exists(),
              "controls_per_participant": not items.filter(is_control=True).exists(),
              "draw_speaker_names": not getattr(study.kind, "names", None)}
    defaults = ParticipantsTable()
    return [key for key, idle in unused.items() if idle and getattr(study, key) == getattr(defaults, key)]


def export(study: Study) -> tuple[str, str]:
    """(definition TOML text, items JSONL text) of ``study``."""
    dump = definition_of(study)
    for key in unused_settings(study):
        dump["participants"].pop(key, None)
    items = list(study.items.filter(is_demonstration=False).order_by("id"))
    generated = dump["design"].get("generator")
    dump["design"] = {"items": ITEMS_FILE, "key": "key", "options": {},
                      "generated_by": generated or dump["design"].get("generated_by", "")}
    if not items:
        dump["design"]["items"] = None
    if not dump.get("checks"):  # a study without checks: no [check_failures] to read either
        dump.pop("checks", None)
        dump.pop("check_failures", None)
    if not dump.get("exclusions"):
        dump.pop("exclusions", None)
    text = tomli_w.dumps(_without_none(dump), multiline_strings=True)
    lines = "".join(json.dumps(item_row(i), ensure_ascii=False, sort_keys=True) + "\n" for i in items)
    return text, lines


def export_to(study: Study, folder: str | Path) -> list[Path]:
    """Write ``study.toml`` (and ``items.jsonl``) into ``folder``; the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text, lines = export(study)
    written = [folder / "study.toml"]
    written[0].write_text(text, encoding="utf-8")
    if lines:
        (folder / ITEMS_FILE).write_text(lines, encoding="utf-8")
        written.append(folder / ITEMS_FILE)
    return written
