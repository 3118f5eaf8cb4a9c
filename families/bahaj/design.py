"""Bahaj et al.: the misleading-hint conditions as conditions of the design (the authors' §1.3).

The authors ran every question × level × try once without a hint (hint0) and once under each of the hints
hint1, hint3 and hint8: four full runs, not a sampling step. Here a study's items (question × level, imported
from the question file) are the hint0 condition; this design adds, for every one of them, one item per hint
condition (key ``<item key>|<hint>``, ``extra["hint"]`` = the condition, everything else copied), so a run
asks every question × level × try under each. The hint's bounds are drawn per try when the prompt is built
(the ``authors-vanilla`` / ``authors-cot`` prompt styles, families/bahaj/authors.py) and stored with the answer.
"""
from __future__ import annotations

from typing import Any, Sequence

from families.bahaj.authors import HINT_CONDITIONS, NO_HINT
from surveys.designs.design import CliOption, Design

HINTED = tuple(h for h in HINT_CONDITIONS if h != NO_HINT)
DESIGN = Design("bahaj-hints", __name__, "interval_confidence",
                "Bahaj et al.: every question × level of the study also under the hint conditions hint1, hint3, hint8",
                cli=(CliOption("--hints", "hint conditions, comma-separated (hint1,hint3,hint8; default all three)",
                               case="lower"),))


def report_defaults(**_: Any) -> dict[str, str]:
    """A study run under the authors' hint conditions reads answers the authors' way unless it says otherwise."""
    return {"reading": "authors"}


def generate(study: Any = None, hints: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The hinted copies of ``study``'s unhinted main items, one per condition in ``hints`` (default hint1,
    hint3, hint8)."""
    if isinstance(hints, str):  # "hint1,hint8" (the API and the command line)
        hints = [h.strip().lower() for h in hints.split(",") if h.strip()]
    chosen = list(hints) if hints else list(HINTED)
    unknown = [h for h in chosen if h not in HINTED]
    if unknown:
        raise ValueError(f"unknown hint condition {', '.join(map(repr, unknown))} (known: {', '.join(HINTED)}; "
                         f"{NO_HINT} is the study's own items)")
    if len(set(chosen)) != len(chosen):
        raise ValueError("a hint condition is named twice")
    base = [item for item in study.main_items().order_by("id") if (item.extra or {}).get("hint", NO_HINT) == NO_HINT]
    if not base:
        raise ValueError(f"study {study.slug!r} has no items to add hint conditions to: import its questions first")
    return [{"key": f"{item.key}|{hint}", "statement": item.statement, "statement_id": item.statement_id,
             "ground_truth": item.ground_truth, "language": item.language,
             "extra": {**(item.extra or {}), "hint": hint}}
            for hint in chosen for item in base]
