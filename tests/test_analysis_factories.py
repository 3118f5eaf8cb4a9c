"""Builders of human and model answers for the analysis tests (rows created directly). No tests here."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from django.utils import timezone

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from families.belem.instrument import EXPRESSIONS
from surveys.models import Assignment, Item, Participant, Response, Study

# A plausible mean answer per label, highest first (roughly the Belem reference).
TYPICAL = dict(zip(EXPRESSIONS, [95, 85, 80, 70, 65, 60, 35, 50, 45, 25, 25, 25, 15, 10])) | {"control": 75}


def add_participant(study: Study, pid: str, answers: Iterable[tuple[Item, float]], *,
                    status: str = Participant.Status.COMPLETED, time_ms: int | None = 1200) -> Participant:
    """A participant of ``study`` with one slot and one response per (item, value)."""
    now = timezone.now()
    participant = Participant.objects.create(study=study, prolific_pid=pid, started_at=now)  # answering
    for position, (item, value) in enumerate(answers, start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, value=value, raw=f"{value:g}",
                                time_taken_ms=time_ms)
    participant.status = status
    participant.completed_at = now if status == Participant.Status.COMPLETED else None
    participant.save(update_fields=["status", "completed_at"])
    return participant


def design(study: Study, rng: random.Random, per_expression: int = 2, controls: int = 2) -> list[Item]:
    """A Belem-like list: ``per_expression`` items per expression (one true and one false in a verifiable
    study) and ``controls`` control items, distinct statements."""
    chosen: list[Item] = []
    used: set[str] = set()
    items = list(study.main_items())
    rng.shuffle(items)
    by_label: dict[str, list[Item]] = {}
    for item in items:
        by_label.setdefault(item.label, []).append(item)
    for label, pool in sorted(by_label.items()):
        want = controls if label == "control" else per_expression
        truths = ["true", "false"] if {i.truth for i in pool} >= {"true", "false"} else [None]
        picked: list[Item] = []
        for k in range(want):
            truth = truths[k % len(truths)]
            for item in pool:
                if item.statement not in used and (truth is None or item.truth == truth) and item not in picked:
                    picked.append(item)
                    used.add(item.statement)
                    break
        chosen += picked
    rng.shuffle(chosen)
    return chosen


def snap(value: float) -> float:
    return float(min(100, max(0, 5 * round(value / 5))))


def attentive(study: Study, pid: str, rng: random.Random, *, noise: float = 8, shift: dict[str, float] | None = None
              ) -> Participant:
    """A participant answering near the typical value of each label (answers snapped to steps of 5)."""
    shift = shift or {}
    answers = [(item, snap(TYPICAL[item.label] + shift.get(item.truth, 0) + rng.gauss(0, noise)))
               for item in design(study, rng)]
    return add_participant(study, pid, answers)


def contrarian(study: Study, pid: str, rng: random.Random) -> Participant:
    """Answers that run against the expressions (100 − typical)."""
    return add_participant(study, pid, [(item, snap(100 - TYPICAL[item.label])) for item in design(study, rng)])


def constant(study: Study, pid: str, rng: random.Random, value: float = 50) -> Participant:
    return add_participant(study, pid, [(item, value) for item in design(study, rng)])


def endpoint(name: str = "stub-model") -> ModelEndpoint:
    return ModelEndpoint.objects.get_or_create(name=name, defaults={"base_url": "http://127.0.0.1:9/v1",
                                                                    "model": name})[0]


def add_run(study: Study, endpoint_name: str, answers: Sequence[tuple], *, mode: str = ElicitationRun.Mode.GREEDY,
            temperature: float = 0.0) -> ElicitationRun:
    """A run of ``study`` with one response per (item, value[, sample_index[, distribution[, status]]]).
    value None → an unparseable answer."""
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint(endpoint_name), mode=mode,
                                        temperature=temperature, status=ElicitationRun.Status.COMPLETED)
    now = timezone.now()
    rows = []
    for entry in answers:
        item, value = entry[0], entry[1]
        sample = entry[2] if len(entry) > 2 else 0
        dist = entry[3] if len(entry) > 3 else None
        status = entry[4] if len(entry) > 4 else (ModelResponse.Status.OK if value is not None or dist
                                                  else ModelResponse.Status.UNPARSEABLE)
        rows.append(ModelResponse(run=run, item=item, sample_index=sample, status=status,
                                  raw_output="no idea" if value is None else f"{value:g}", value=value,
                                  bin=None if value is None else snap(value), distribution=dist,
                                  parse_error="no number in the answer" if value is None and not dist else "",
                                  latency_ms=300, answered_at=now, model_id=endpoint_name))
    ModelResponse.objects.bulk_create(rows)
    return run


# --- a non-verifiable study and its verifiable companion with humans and models -------------------
SHIFT = 10


def model_value(item: Item) -> float:
    """The synthetic model's answer: typical value ± SHIFT on true/false statements."""
    return snap(TYPICAL[item.label] + {"true": SHIFT, "false": -SHIFT}.get(item.truth, 0))


def subset(study: Study, per_label: int = 4) -> list[Item]:
    """``per_label`` items per (label, truth), first by id."""
    chosen, seen = [], Counter()
    for item in study.main_items().order_by("id"):
        key = (item.label, item.truth)
        if seen[key] < per_label:
            chosen.append(item)
            seen[key] += 1
    return chosen


def nv_and_v(nv: Study, belem_dir: Path) -> tuple[Study, Study]:
    """``nv`` (Belem items imported) gets 12 attentive, 1 contrarian and 1 constant participant; a verifiable
    study ``v`` (reference nv) 10 attentive (true +SHIFT, false −SHIFT) and 1 contrarian; a greedy run
    "modelx" on both (one unparseable answer in nv) and a top-logprobs run "logprobs" on nv."""
    from surveys.importers import import_items

    rng = random.Random(3)
    for n in range(12):
        attentive(nv, f"nv{n}", rng)
    contrarian(nv, "nv-spam", rng)
    constant(nv, "nv-flat", rng)
    v = Study.objects.create(slug="v", title="Verifiable", reference_study=nv)
    import_items(v, belem_dir / "verifiable.csv")
    for n in range(10):
        attentive(v, f"v{n}", rng, noise=6, shift={"true": SHIFT, "false": -SHIFT})
    contrarian(v, "v-spam", rng)
    nv_items = subset(nv)
    answers = [(item, model_value(item)) for item in nv_items]
    answers[0] = (answers[0][0], None)  # one unparseable answer, kept and counted
    add_run(nv, "modelx", answers)
    add_run(v, "modelx", [(item, model_value(item)) for item in subset(v, 2)])
    dist = {"50": 0.5, "55": 0.3, "-1": 0.2}
    add_run(nv, "logprobs", [(item, 50.0, 0, dist) for item in nv_items if not item.is_control],
            mode=ElicitationRun.Mode.TOP_LOGPROBS)
    return nv, v
