"""Blocks within subjects (``[blocks]``): a participant's items grouped by an item field, the blocks in an order
counterbalanced across participants, the items within a block in random or fixed (item file) order.

The orders (:func:`orders`): ``counterbalanced`` uses every permutation of the blocks when there are at most
four (24 orders), else the rows of a balanced Latin square (Williams 1949: each block appears once in each
position and follows every other block once; 2n rows for an odd number n of blocks); each new participant gets
the order used least so far (counting participants as the cells do, surveys/conditions.py: completed, or in
progress within the time limit; ties at random, and within the participant's cell when the study has factors,
so that orders are balanced in every cell). ``fixed``: the ``sequence`` as declared; ``random``: a random order.

The draw (surveys/assignment.py) chooses which items; :func:`arrange` only orders them, under the same lock, and
the order is stored on the participant (``Participant.block_order``) and in the export.
"""
from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any, Mapping, Sequence

from .condition_context import factors_of
from .conditions import counting
from .definition.wording import item_fields
from .models import Item, Participant, Study

PERMUTE_UP_TO = 4


def settings_of(definition: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ``[blocks]`` table of a dumped definition (None when it declares none)."""
    return (definition or {}).get("blocks") or None


def block_of(item: Item, field: str) -> str:
    value = item_fields(item).get(field)
    return "" if value is None else str(value)


def block_names(study: Study) -> list[str]:
    """The study's blocks in their base order: ``sequence``, else the field's values sorted."""
    blocks = settings_of(study.definition)
    if not blocks:
        return []
    if blocks.get("sequence"):
        return list(blocks["sequence"])
    return sorted({block_of(item, blocks["field"]) for item in study.main_items()})


def latin_square(n: int) -> list[list[int]]:
    """A balanced Latin square (Williams design) of ``n`` treatments: n rows for an even n, 2n for an odd n."""
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(x + r) % n for x in first] for r in range(n)]
    if n % 2:
        rows += [list(reversed(row)) for row in rows]
    return rows


def orders(names: Sequence[str]) -> list[list[str]]:
    """The counterbalanced orders of ``names``: every permutation up to four blocks, else a balanced Latin
    square's rows."""
    if len(names) <= PERMUTE_UP_TO:
        return [list(p) for p in itertools.permutations(names)]
    return [[names[i] for i in row] for row in latin_square(len(names))]


def choose_order(study: Study, participant: Participant, names: list[str], rng: random.Random) -> list[str]:
    """The block order of a new participant (call under the study's row lock, as the draw does)."""
    mode = (settings_of(study.definition) or {}).get("order") or "counterbalanced"
    if mode == "fixed":
        return list(names)
    if mode == "random":
        shuffled = list(names)
        rng.shuffle(shuffled)
        return shuffled
    candidates = orders(names)
    others = Participant.objects.filter(counting(study), study=study)  # counted as the cells count.exclude(pk=participant.pk)
    if factors_of(study.definition):
        others = others.filter(condition=participant.condition)
    used = Counter(tuple(order) for order in others.values_list("block_order", flat=True) if order)
    least = min(used.get(tuple(order), 0) for order in candidates)
    return rng.choice([order for order in candidates if used.get(tuple(order), 0) == least])


def arrange(study: Study, participant: Participant, items: list[Item],
            rng: random.Random) -> tuple[list[Item], list[str]]:
    """``items`` ordered block by block (the participant's block order) and within a block as ``within`` says;
    (items, block order). Items as they are, and [], for a study without blocks."""
    blocks = settings_of(study.definition)
    if not blocks:
        return items, []
    field = blocks["field"]
    names = block_names(study)
    order = choose_order(study, participant, names, rng)
    groups: dict[str, list[Item]] = {name: [] for name in order}
    for item in items:
        groups.setdefault(block_of(item, field), []).append(item)
    arranged: list[Item] = []
    for name, group in groups.items():
        if blocks.get("within", "random") == "fixed":
            group.sort(key=lambda i: (i.source_row if i.source_row is not None else 1 << 30, i.pk))
        else:
            rng.shuffle(group)
        arranged += group
    return arranged, order
