"""Drawing a participant's items: balanced over participants (each expression equally often).

Each participant gets ``items_per_expression`` statements per expression (for a verifiable set:
half true, half false), plus ``controls_per_participant`` control items, each from a different
statement (by text) where possible, in random order. Items are chosen least-used first, where an item's use
counts the slots of started and completed participants and the answered slots of everyone else
(so a participant who returns the study or times out gives their unanswered slots back); test participants
(surveys.test_mode) are not counted.

Each draw is a small integer program (scipy's milp): no statement more than ⌈items / statements⌉ times
in one list (the demo: 30 items over 20 statements → at most twice); then least-used items first, so that
over completed participants the use of any two items of a pool differs by at most one; then repeats as even
as possible (each further appearance of a statement costs more than the one before, so ten statements seen
twice beat one statement seen eleven times); then statements that still have many least-used items, so that
the last participant of a round is not forced to see a statement twice.

The order is random, but the appearances of a repeated statement are spread apart (``spread_order``): with
at most c appearances per statement the list is cut into c blocks and a statement keeps the same place in
each block, so its appearances are a block length apart (15 positions in the demo).

The cost of a draw is capped so that a large study does not hold its row lock for seconds: the items are
read before the lock is taken, and each pool's program sees at most ``CANDIDATES_PER_POOL`` candidates —
its least-used items first (by chance among equally used ones) — which keeps balance and, with 64 per pool,
leaves plenty of statements to avoid repeats.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Iterable

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from . import blocks
from .models import Assignment, Item, Participant, Study


def release_idle(study: Study, now: datetime | None = None, exclude: int | None = None) -> int:
    """Mark timed out the participants of ``study`` who pledged more than ``study.idle_timeout_minutes``
    ago and have answered nothing, so that their slots go back to the draw (none when the study sets no
    timeout). Returns how many."""
    if not study.idle_timeout_minutes:
        return 0
    now = now or timezone.now()
    idle = Participant.objects.filter(study=study, status=Participant.Status.STARTED, responses__isnull=True,
                                      pledged_at__lt=now - timedelta(minutes=study.idle_timeout_minutes)
                                      ).exclude(pk=exclude)
    return Participant.objects.filter(pk__in=list(idle.values_list("pk", flat=True))).update(
        status=Participant.Status.TIMED_OUT, status_changed_at=now)


def item_usage(study: Study) -> dict[int, int]:
    """How often each main item of ``study`` is taken, for balancing."""
    counted = ((Q(assignments__participant__status__in=Participant.ACTIVE) | Q(assignments__response__isnull=False))
               & Q(assignments__participant__is_test=False))  # test participants do not use up items
    rows = study.main_items().annotate(used=Count("assignments", filter=counted, distinct=True))
    return dict(rows.values_list("id", "used"))


# Costs of the per-participant choice, in order of priority: no statement above the cap, balance, repeats
# (the m-th extra appearance of a statement costs m times _REPEAT: convex, so repeats are spread over
# statements), then statements that still have many least-used items, then chance.
_OVERCAP = 100_000_000.0  # per appearance of a statement above ⌈items / statements⌉ (times its level)
_OVERUSE = 1_000_000.0  # per use above the least-used item of the slot's pool
_REPEAT = 10_000.0  # times m, for the m-th extra appearance of a statement in one participant's list
_PRESSURE = 10.0  # bonus per least-used item of the statement (so none is left over at the end of a round)
CANDIDATES_PER_POOL = 64  # items of a pool the program sees: the least used first (a 40,000-item study: ~0.2 s)
_FIELDS = ("id", "study", "expression", "truth", "is_control", "statement")  # what the draw reads of an item


def repeat_cap(pools: list[tuple[int, list[Item]]]) -> int:
    """The most times one statement may appear in a list: ⌈items drawn / distinct statements⌉."""
    total = sum(k for k, _ in pools)
    statements = {item.statement for _, pool in pools for item in pool}
    return max(1, math.ceil(total / len(statements))) if statements else 1


CONTROLS = "\x00control"  # the controls' pool (sorts before every expression and the no-expression pool)


def _pools(study: Study, rng: random.Random) -> list[tuple[int, list[Item]]]:
    """(how many to take, candidate items) per pool: each expression (split into true and false for
    a verifiable set, the odd one out drawn at random), the controls, and the items without an expression
    of the kinds that have none (``items_per_participant`` of them, all when it is empty)."""
    by_label: dict[str, list[Item]] = defaultdict(list)
    for item in study.main_items().only(*_FIELDS).order_by("id"):
        by_label[CONTROLS if item.is_control else item.expression].append(item)
    pools: list[tuple[int, list[Item]]] = []
    for label in sorted(by_label):
        pool = by_label[label]
        if label == CONTROLS:
            k = study.controls_per_participant
        elif not label:
            k = study.items_per_participant or len(pool)
        else:
            k = study.items_per_expression
        truths = sorted({i.truth for i in pool if i.truth})
        if label not in ("", CONTROLS) and truths == ["false", "true"]:
            # one true and one false statement per expression (paired knowledge-bias design)
            odd_one = rng.choice(truths)
            for truth in truths:
                part = [i for i in pool if i.truth == truth]
                pools.append((min(k // 2 + (k % 2 if truth == odd_one else 0), len(part)), part))
        else:
            pools.append((min(k, len(pool)), pool))
    return [(k, pool) for k, pool in pools if k]


def milp(*args, **kwargs):
    """``scipy.optimize.milp``, imported on the first draw: scipy takes a second to import, and a process that
    serves pages or runs a command without drawing items should not pay for it."""
    from scipy.optimize import milp as scipy_milp

    return scipy_milp(*args, **kwargs)


def _choose(pools: list[tuple[int, list[Item]]], usage: dict[int, int], rng: random.Random) -> list[Item]:
    """Take k items from each pool at least cost: a small integer program (scipy's milp / HiGHS).

    No statement above :func:`repeat_cap`; least-used items first (so max − min use within a pool stays
    ≤ 1 over completed participants); repeats as even as possible; statements with many least-used items left.
    """
    import numpy as np  # here, like scipy: a command that draws nothing does not import them
    from scipy.optimize import Bounds, LinearConstraint  # here: scipy takes a second to import
    from scipy.sparse import lil_matrix

    cap = repeat_cap(pools)  # from the whole pools: the design's cap, whatever the short lists hold
    floors = [min(usage.get(i.id, 0) for i in pool) for _, pool in pools]
    pressure: dict[str, int] = defaultdict(int)
    for floor, (_, pool) in zip(floors, pools):
        for item in pool:
            pressure[item.statement] += usage.get(item.id, 0) == floor
    pools = [(k, _shortlist(k, pool, usage, rng)) for k, pool in pools]
    items = [item for _, pool in pools for item in pool]
    if not items:
        return []
    members: dict[str, int] = defaultdict(int)  # how many candidate items each statement has
    for item in items:
        members[item.statement] += 1
    statements = sorted(members)

    # variables: one 0/1 per item, then per statement one 0/1 per possible extra appearance (level m = 1, 2, …)
    levels = [(text, m) for text in statements for m in range(1, members[text])]
    n = len(items) + len(levels)
    cost = np.zeros(n)
    rows = lil_matrix((len(pools) + len(statements), n))
    statement_row = {text: len(pools) + j for j, text in enumerate(statements)}
    lower_bounds, upper_bounds = [], []
    index = 0
    for row, (floor, (k, pool)) in enumerate(zip(floors, pools)):
        for item in pool:
            cost[index] = (_OVERUSE * (usage.get(item.id, 0) - floor) - _PRESSURE * pressure[item.statement]
                           + rng.random())
            rows[row, index] = 1  # exactly k from this pool
            rows[statement_row[item.statement], index] = 1
            index += 1
        lower_bounds.append(k)
        upper_bounds.append(k)
    for offset, (text, m) in enumerate(levels, start=len(items)):
        rows[statement_row[text], offset] = -1  # appearances − extras ≤ 1
        cost[offset] = m * (_OVERCAP if m + 1 > cap else _REPEAT)
    lower_bounds += [-np.inf] * len(statements)
    upper_bounds += [1] * len(statements)
    result = milp(cost, constraints=LinearConstraint(rows.tocsr(), lower_bounds, upper_bounds),
                  integrality=np.ones(n), bounds=Bounds(np.zeros(n), np.ones(n)),
                  options={"mip_rel_gap": 0})
    if result.x is None:  # cannot happen (k ≤ pool size); fail loudly rather than draw badly
        raise RuntimeError(f"no assignment found: {result.message}")
    return [item for item, taken in zip(items, result.x[:len(items)]) if taken > 0.5]


def spread_order(items: list[Item], rng: random.Random) -> list[Item]:
    """A random order in which the appearances of a repeated statement are as far apart as a simple layout
    allows: with at most c appearances per statement, the list is cut into c blocks of ⌈n / c⌉ places and
    each statement keeps one place (column) in the blocks it appears in, so its appearances are a block
    length apart. Which statements share a column, the column order and which item goes into which block
    are random. Falls back to a plain shuffle if the statements do not pack (cannot happen for c ≤ 2)."""
    n = len(items)
    by_statement: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_statement[item.statement].append(item)
    groups = list(by_statement.values())
    most = max((len(g) for g in groups), default=0)
    order = items[:]
    rng.shuffle(order)
    if most <= 1:
        return order
    width = math.ceil(n / most)
    # column c has room in blocks 0 … depth(c) − 1 (the last block may be shorter)
    room = [sum(1 for b in range(most) if b * width + c < n) for c in range(width)]
    filled = [0] * width
    columns: list[list[Item]] = [[] for _ in range(width)]
    rng.shuffle(groups)
    groups.sort(key=len, reverse=True)  # stable: random among equal sizes
    for group in groups:
        rng.shuffle(group)
        fits = [c for c in range(width) if room[c] - filled[c] >= len(group)]
        if not fits:
            return order
        best = min(room[c] - filled[c] for c in fits)  # tightest fit keeps the deep columns for big groups
        column = rng.choice([c for c in fits if room[c] - filled[c] == best])
        columns[column] += group
        filled[column] += len(group)
    placed: list[Item | None] = [None] * n
    for c, stack in enumerate(columns):
        for b, item in enumerate(stack):
            placed[b * width + c] = item
    return [item for item in placed if item is not None]


def _shortlist(k: int, pool: list[Item], usage: dict[int, int], rng: random.Random) -> list[Item]:
    """At most CANDIDATES_PER_POOL (and at least k) of the pool: least used first, by chance within the same
    use (so that the pools' short lists offer different statements and repeats stay avoidable). Balance is
    kept: the program takes least-used items first and the short list holds them first."""
    if len(pool) <= CANDIDATES_PER_POOL:
        return pool
    ranked = sorted(pool, key=lambda i: (usage.get(i.id, 0), rng.random()))
    return ranked[:max(k, CANDIDATES_PER_POOL)]


def _draw(study: Study, pools: list[tuple[int, list[Item]]], rng: random.Random) -> list[Item]:
    """The chosen items in presentation order (a repeated statement's appearances spread apart), whole."""
    chosen = spread_order(_choose(pools, item_usage(study), rng), rng)
    full = Item.objects.in_bulk([i.id for i in chosen])  # the draw read only a few fields
    return [full[i.id] for i in chosen]


def draw_items(study: Study, rng: random.Random) -> list[Item]:
    """The items for one new participant, in presentation order (not yet saved)."""
    return _draw(study, _pools(study, rng), rng)


def draw_speakers(study: Study, count: int, rng: random.Random) -> list[tuple[str, str] | None]:
    """Speakers for ``count`` slots: genders balanced, names drawn from the instrument's list."""
    names: dict[str, Iterable[str]] | None = getattr(study.kind, "names", None)
    if not study.draw_speaker_names or not names:
        return [None] * count
    genders = sorted(names)
    sequence = [genders[i % len(genders)] for i in range(count)]
    rng.shuffle(sequence)
    return [(rng.choice(list(names[g])), g) for g in sequence]


def option_seed(participant: Participant, item: Item) -> str:
    """The seed of the option order a participant's slot shows (choices randomised per participant): the
    same participant and item always draw the same order."""
    return f"{participant.study.slug}:{participant.pk}:{item.key}"


def assign(participant: Participant, rng: random.Random | None = None) -> list[Assignment]:
    """Create the participant's slots (once). The study row is locked so concurrent entries balance."""
    rng = rng or random.Random()
    existing = list(participant.assignments.all())
    if existing:
        return existing
    pools = _pools(participant.study, rng)  # the items, read before the lock (the slow part on big studies)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=participant.study_id).first()
        existing = list(participant.assignments.all())
        if existing:
            return existing
        release_idle(participant.study, exclude=participant.pk)
        items = _draw(participant.study, pools, rng)
        items, order = blocks.arrange(participant.study, participant, items, rng)  # [blocks]: their order
        if order:
            Participant.objects.filter(pk=participant.pk).update(block_order=order)
            participant.block_order = order
        speakers = draw_speakers(participant.study, len(items), rng)
        kind = participant.study.kind
        slots = [
            Assignment(participant=participant, item=item, position=pos,
                       speaker_name=(spk or ("", ""))[0], speaker_gender=(spk or ("", ""))[1],
                       option_order=kind.option_order(item, option_seed(participant, item)))
            for pos, (item, spk) in enumerate(zip(items, speakers), start=1)
        ]
        made = Assignment.objects.bulk_create(slots)
        if participant.study.definition.get("checks"):  # [[checks]]: every participant gets every check
            from .checks import place

            place(participant, len(made), rng)
        return made
