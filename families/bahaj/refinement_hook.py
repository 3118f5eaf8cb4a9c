"""The interval-at-confidence kind's self-refinement hook (``IntervalConfidence.refinement``): what the core's
refinement runs (elicitation/refinement.py) and ``import_model_answers --refines`` ask of the kind, answered by
families/bahaj/refinement.py (live runs: Table 2's and the authors' refinement) and
families/bahaj/refinement_import.py (refinement answers made elsewhere, the authors' selfrefine records).
"""
from __future__ import annotations

from typing import Any, Mapping

from elicitation.models import ElicitationRun, ModelEndpoint
from elicitation.outcomes import Outcome
from elicitation.refinement import Refinement
from elicitation.run_settings import REFINE_STYLE
from surveys.instruments import Instrument, Prompt
from families.bahaj.instrument import AUTHORS_REFINE, AUTHORS_STYLES
from surveys.models import Item

from . import refinement, refinement_import


class IntervalRefinement(Refinement):
    """The interval-at-confidence kind's self-refinement (module docstring): Table 2's, or the authors' for a
    source asked with the authors' prompts."""

    styles = (REFINE_STYLE, AUTHORS_REFINE)
    reply_columns = refinement_import.REPLY_KEYS

    def style(self, source: ElicitationRun) -> str:
        return AUTHORS_REFINE if source.prompt_style in AUTHORS_STYLES else REFINE_STYLE

    def refinable_items(self, source: ElicitationRun, setting: str, style: str) -> list[Item]:
        return refinement.refinable_items(source, setting, authors=style == AUTHORS_REFINE)

    def nothing_to_refine(self, source: ElicitationRun) -> str:
        return f"run {source.pk} has no parsed interval to refine"

    def prompt(self, run: ElicitationRun, item: Item, sample_index: int) -> Prompt:
        return refinement.refinement_prompt(run, item, sample_index)

    def ask(self, run: ElicitationRun, client: Any, endpoint: ModelEndpoint, content: Any,
            params: dict[str, Any]) -> Any:
        return refinement.ask(run, client, endpoint, content, params)

    def outcome(self, kind: Instrument, answer: Any) -> Outcome:
        return refinement.refinement_outcome(kind, answer)

    def composed_reply(self, row: Mapping[str, str]) -> str:
        return refinement_import.composed_reply(row)

    def is_record(self, row: Mapping[str, str]) -> bool:
        return refinement_import.is_authors_record(row)

    def record_item(self, items: list[Item], row: Mapping[str, str], setting: str) -> Item:
        return refinement_import.authors_record_item(items, row, setting)

    def imported_outcome(self, kind: Instrument, raw: str, style: str) -> Outcome:
        return refinement_import.refinement_answer(kind, raw, style)


REFINEMENT = IntervalRefinement()
