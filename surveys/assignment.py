"""Drawing a participant's items: balanced over participants, as in Belem et al.

Each participant gets ``items_per_expression`` statements per expression (for a verifiable set:
half true, half false), plus ``controls_per_participant`` control items, each from a different
statement (by text) where possible, in random order. Items are chosen least-used first, where an item's use
counts the slots of started and completed participants and the answered slots of everyone else
(so a participant who returns the study or times out gives their unanswered slots back).
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Iterable

from django.db import transaction
from django.db.models import Count, Q

from .models import Assignment, Item, Participant, Study


def item_usage(study: Study) -> dict[int, int]:
    """How often each main item of ``study`` is taken, for balancing."""
    counted = Q(assignments__participant__status__in=Participant.ACTIVE) | Q(assignments__response__isnull=False)
    rows = study.main_items().annotate(used=Count("assignments", filter=counted, distinct=True))
    return {row.id: row.used for row in rows.only("id")}


def _least_used(candidates: list[Item], k: int, usage: dict[int, int], rng: random.Random,
                avoid_statements: set[str]) -> list[Item]:
    """Up to ``k`` of ``candidates``, least used first, preferring statements not yet chosen."""
    order = sorted(candidates, key=lambda i: (i.statement in avoid_statements, usage.get(i.id, 0), rng.random()))
    chosen: list[Item] = []
    for item in order:
        if len(chosen) == k:
            break
        if any(c.statement == item.statement for c in chosen):
            continue
        chosen.append(item)
    return chosen


def draw_items(study: Study, rng: random.Random) -> list[Item]:
    """The items for one new participant, in presentation order (not yet saved)."""
    usage = item_usage(study)
    by_expression: dict[str, list[Item]] = defaultdict(list)
    controls: list[Item] = []
    for item in study.main_items():
        (controls if item.is_control else by_expression[item.expression]).append(item)
    used_statements: set[str] = set()
    chosen: list[Item] = []
    expressions = sorted(by_expression)
    rng.shuffle(expressions)
    per = study.items_per_expression
    for expression in expressions:
        pool = by_expression[expression]
        truths = sorted({i.truth for i in pool if i.truth})
        if truths == ["false", "true"]:
            # one true and one false statement per expression (paired knowledge-bias design)
            odd_one = rng.choice(truths)
            halves = [per // 2 + (per % 2 if t == odd_one else 0) for t in truths]
            picked = []
            for truth, k in zip(truths, halves):
                picked += _least_used([i for i in pool if i.truth == truth], k, usage, rng, used_statements)
        else:
            picked = _least_used(pool, per, usage, rng, used_statements)
        chosen += picked
        used_statements.update(i.statement for i in picked)
    chosen += _least_used(controls, study.controls_per_participant, usage, rng, used_statements)
    rng.shuffle(chosen)
    return chosen


def draw_speakers(study: Study, count: int, rng: random.Random) -> list[tuple[str, str] | None]:
    """Speakers for ``count`` slots: genders balanced, names drawn from the instrument's list."""
    names: dict[str, Iterable[str]] | None = getattr(study.kind, "names", None)
    if not study.draw_speaker_names or not names:
        return [None] * count
    genders = sorted(names)
    sequence = [genders[i % len(genders)] for i in range(count)]
    rng.shuffle(sequence)
    return [(rng.choice(list(names[g])), g) for g in sequence]


def assign(participant: Participant, rng: random.Random | None = None) -> list[Assignment]:
    """Create the participant's slots (once). The study row is locked so concurrent entries balance."""
    rng = rng or random.Random()
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=participant.study_id).first()
        existing = list(participant.assignments.all())
        if existing:
            return existing
        items = draw_items(participant.study, rng)
        speakers = draw_speakers(participant.study, len(items), rng)
        slots = [
            Assignment(participant=participant, item=item, position=pos,
                       speaker_name=(spk or ("", ""))[0], speaker_gender=(spk or ("", ""))[1])
            for pos, (item, spk) in enumerate(zip(items, speakers), start=1)
        ]
        return Assignment.objects.bulk_create(slots)
