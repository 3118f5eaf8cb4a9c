"""The answers to one item, human and model, counted by its answer shape (the admin's per-item answers page)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from surveys.instruments import Answer, Instrument


def _key(text: str) -> str:
    """A distribution's key as a category key (``"50.0"`` → ``"50"``; option keys as they are)."""
    try:
        return f"{float(text):g}"
    except ValueError:
        return text


def answer_of(kind: Instrument, row: Any) -> Answer:
    """The typed answer held in a stored row (Response or ModelResponse)."""
    return kind.shape.from_columns({c: getattr(row, c) for c in ("value", "choice", "lower", "upper", "text")})


def category_shares(kind: Instrument, item: Any, humans: Iterable[Any], models: Iterable[Any]) -> list[dict[str, Any]]:
    """One row per category of the item's answer shape (scale bins, options; none for intervals): the number
    and share of human answers in it and the share of model answers (a distribution-mode answer counts with
    its whole distribution, the ``-1`` non-answer mass left out)."""
    categories = kind.shape.categories(kind, item)
    if not categories:
        return []
    humans = list(humans)
    human_counts = Counter(kind.shape.category(kind, answer_of(kind, r)) for r in humans)
    model_counts: Counter = Counter()
    for r in models:
        if r.distribution:
            for key, p in r.distribution.items():
                if key != "-1":
                    model_counts[_key(key)] += p
        else:
            key = kind.shape.category(kind, answer_of(kind, r))
            if key is not None:
                model_counts[key] += 1
    model_total = sum(model_counts.values()) or 1
    return [{"bin": label, "humans": human_counts.get(key, 0),
             "human_share": human_counts.get(key, 0) / (len(humans) or 1),
             "model_share": model_counts.get(key, 0) / model_total}
            for key, label in categories]


def mean_text(kind: Instrument, rows: Iterable[Any]) -> str | None:
    """The mean of the answers held in ``rows`` as the shape writes it, or None (no answer, or a choice)."""
    return kind.shape.mean_text([answer_of(kind, r) for r in rows])
