"""A study's data as JSON lines for its replication package, and the field lists loading reads back.

Participants are named by their salted ``respondent_id`` only (surveys/respondent_ids.py): their PROLIFIC_PID,
Prolific study and session ids, user agent and completion code are never written. Items are named by key, runs
and participants keep their database ids (the report names them), prompts are named by their SHA-256, versions
by number.
"""
from __future__ import annotations

import datetime
import decimal
import json
import uuid
from typing import Any, Iterable

from surveys.respondent_ids import hashed_id

#: Participant columns never packaged (raw ids, and what could identify a person)
PARTICIPANT_SECRET = frozenset({"prolific_pid", "prolific_study_id", "prolific_session_id", "user_agent",
                                "completion_code", "public_id"})
#: columns of every model left out: keys rewritten by name, bookkeeping of workers and of the API
SKIPPED = frozenset({"study", "study_version", "item", "participant", "assignment", "run", "prompt", "channel",
                     "endpoint", "refines", "created_by", "lease_owner", "lease_until", "idempotency_key",
                     "idempotency_fingerprint", "owner"})


def jsonable(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def jsonl(rows: Iterable[dict[str, Any]]) -> bytes:
    """Rows as JSON lines, keys sorted: the same data gives the same bytes."""
    return "".join(json.dumps(r, default=jsonable, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
                   for r in rows).encode("utf-8")


def read_jsonl(data: bytes, name: str) -> list[dict[str, Any]]:
    """JSON lines back to rows; ValueError naming the file and line of one that is not a JSON object."""
    rows = []
    for n, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{name} line {n}: not a JSON object")
        rows.append(row)
    return rows


def columns(obj: Any, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``obj``'s own columns (no foreign keys but its id), minus ``skip``."""
    out = {}
    for f in obj._meta.concrete_fields:
        if f.name in SKIPPED or f.name in skip or f.is_relation:
            continue
        out["id" if f.primary_key else f.name] = getattr(obj, f.attname)
    return out


def _version(obj: Any) -> int | None:
    return obj.study_version.number if obj.study_version_id else None


def item_id_rows(study: Any) -> list[dict[str, Any]]:
    """Each item's database id by key (some report tables name items by id)."""
    return [{"key": key, "id": pk} for pk, key in study.items.order_by("pk").values_list("pk", "key")]


def version_rows(study: Any) -> list[dict[str, Any]]:
    return [{"number": v.number, "sha256": v.sha256, "definition": v.definition, "created_at": v.created_at,
             "current_since": v.current_since} for v in study.versions.order_by("number")]


def channel_rows(study: Any) -> list[dict[str, Any]]:
    return [columns(c) for c in study.channels.order_by("pk")]


def participant_rows(study: Any) -> list[dict[str, Any]]:
    """Every participant (test ones too, flagged ``is_test``) with their salted id, status, timings and
    questionnaire answers."""
    rows = []
    for p in study.participants.select_related("study_version", "channel").order_by("pk"):
        row = columns(p, PARTICIPANT_SECRET)
        row.update(respondent_id=hashed_id(p.prolific_pid), study_version=_version(p),
                   channel=p.channel.name if p.channel_id else None)
        rows.append(row)
    return rows


def human_answer_rows(study: Any) -> list[dict[str, Any]]:
    """Every answer of a person, with the slot it answered (position, speaker, option order, first shown)."""
    from surveys.models import Response

    rows = []
    answers = (Response.objects.filter(item__study=study).select_related("assignment", "item", "participant")
               .order_by("pk"))
    for r in answers:
        row = columns(r)
        slot = columns(r.assignment)
        row.update(participant=r.participant_id, respondent_id=hashed_id(r.participant.prolific_pid),
                   item=r.item.key, slot={k: v for k, v in slot.items() if k != "id"}, slot_id=slot["id"])
        rows.append(row)
    return rows


def unanswered_slot_rows(study: Any) -> list[dict[str, Any]]:
    """Items assigned to a person and not answered (yet): what they were shown counts for participation."""
    from surveys.models import Assignment

    rows = []
    for a in (Assignment.objects.filter(item__study=study, response__isnull=True).select_related("item")
              .order_by("pk")):
        row = columns(a)
        row.update(participant=a.participant_id, item=a.item.key)
        rows.append(row)
    return rows


def run_rows(study: Any) -> list[dict[str, Any]]:
    """Every run with all its settings (mode, temperature, max tokens, seed, prompt version and style, agent,
    agent settings, personas, …), its endpoint (name, model, URL, API style, seed support; never its key),
    its item subset by key, the run it refines, and for an imported run its source file and SHA-256."""
    from elicitation.personas import unshown_free_text, without

    rows = []
    for run in study.runs.select_related("endpoint", "study_version").order_by("pk"):
        row = columns(run)
        dropped = unshown_free_text(study, run.agent_settings)  # people's comments its personas never showed
        row["personas"] = [dict(p, fields=without(p.get("fields"), dropped)) for p in run.personas or []]
        e = run.endpoint
        row.update(study_version=_version(run), refines=run.refines_id,
                   items=sorted(run.items.values_list("key", flat=True)),
                   endpoint={"name": e.name, "model": e.model, "base_url": e.base_url, "api_style": e.api_style,
                             "supports_seed": e.supports_seed})
        rows.append(row)
    return rows


def model_answer_rows(study: Any) -> list[dict[str, Any]]:
    """Every model response: raw output, parsed columns, status, persona, parameters sent, prompt hash."""
    from elicitation.models import ModelResponse
    from elicitation.personas import unshown_free_text, without

    dropped = {run.pk: unshown_free_text(study, run.agent_settings) for run in study.runs.all()}
    rows = []
    for m in ModelResponse.objects.filter(run__study=study).select_related("item", "prompt").order_by("pk"):
        row = columns(m)
        row.update(run=m.run_id, item=m.item.key if m.item_id else None, prompt=m.prompt.sha256 if m.prompt_id else None,
                   persona=without(m.persona, dropped[m.run_id]))
        rows.append(row)
    return rows


def prompt_rows(study: Any) -> list[dict[str, Any]]:
    """Every stored prompt the study's model answers used, by hash, exactly as sent."""
    from elicitation.models import ModelResponse, StoredPrompt

    used = ModelResponse.objects.filter(run__study=study, prompt__isnull=False).values("prompt")
    return [{"sha256": p.sha256, "api_style": p.api_style, "content": p.content}
            for p in StoredPrompt.objects.filter(pk__in=used).order_by("sha256")]
