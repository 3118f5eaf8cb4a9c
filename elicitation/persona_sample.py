"""A stratified draw of personas from participants that keeps the participants' marginals (pure: no Django).

Given n participants, each a mapping of field → value, a sample size N ≤ n, the stratification fields F and a
seed, the draw picks N participants so that for every field f and every stratum v of f the sample's count
c_f(v) stays as close as it can to the target

    t_f(v) = N · n_f(v) / n        (n_f(v): participants in stratum v of field f)

It is greedy on the squared distance L = Σ_f Σ_v (c_f(v) − t_f(v))²: the participants are shuffled with
``random.Random(seed)``, then N times the one whose addition lowers L most is taken, i.e. the one with the
smallest

    Δ(x) = Σ_f [2 · (c_f(x_f) − t_f(x_f)) + 1]

(the first such in the shuffled order; the seed decides ties, so the same seed gives the same draw). Where the
targets are whole numbers for one field alone, the sample's counts equal them; with several fields each count
is within about one of its target.

Strata: a text or choice value is its own stratum; a number is put in one of ``NUMBER_BINS`` bins cut at the
participants' quantiles (k/B for k = 1 … B−1, bin = how many cut points lie at or below the value), so age
groups rather than single ages are kept; a missing value (None) is a stratum of its own.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, Hashable, Mapping, Sequence

NUMBER_BINS = 4


def strata(people: Sequence[Mapping[str, Any]], field: str, bins: int = NUMBER_BINS) -> list[Hashable]:
    """Each person's stratum of ``field``: the value itself, or for numbers a quantile bin ``("bin", k)``."""
    values = [person.get(field) for person in people]
    numbers = sorted(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    if not numbers:
        return values
    cuts = [numbers[min(len(numbers) - 1, (len(numbers) * k) // bins)] for k in range(1, bins)]

    def stratum(value: Any) -> Hashable:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return ("bin", sum(1 for cut in cuts if value >= cut))
        return value
    return [stratum(v) for v in values]


def stratified_sample(people: Sequence[Mapping[str, Any]], size: int, fields: Sequence[str],
                      seed: int) -> list[int]:
    """The indices (into ``people``) of ``size`` people drawn so that each field's strata keep their shares
    (module docstring), in the order drawn. All of them (shuffled) when ``size`` ≥ len(people)."""
    order = list(range(len(people)))
    random.Random(seed).shuffle(order)
    if size >= len(people):
        return order
    n = len(people)
    labels = {f: strata(people, f) for f in fields}
    targets = {f: {v: size * c / n for v, c in Counter(labels[f]).items()} for f in fields}
    counts: dict[str, Counter] = {f: Counter() for f in fields}
    chosen: list[int] = []
    left = order
    for _ in range(size):
        best, best_delta = 0, None
        for position, index in enumerate(left):
            delta = sum(2 * (counts[f][labels[f][index]] - targets[f][labels[f][index]]) + 1 for f in fields)
            if best_delta is None or delta < best_delta:
                best, best_delta = position, delta
        index = left.pop(best)
        chosen.append(index)
        for f in fields:
            counts[f][labels[f][index]] += 1
    return chosen
