"""The combined export's design columns (issue 31): a study with ``[[factors]]`` adds ``condition`` (the cell) and
``condition_<factor>`` (the level's key of each factor: ``condition_speaker``, ``condition_framing``), named so as
never to meet an item field or a questionnaire field of the same name; a study with ``[blocks]`` adds
``block_order`` (the blocks in the order the participant saw them, joined by ``|``: ``health|money``). A person's
rows carry their cell and block order, a model's rows its run's cell (models see no blocks). A study without
them has none of these columns."""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from surveys.condition_context import factors_of, levels_of

NOT_GIVEN: tuple = ()


def _factors(study: Any) -> list[str]:
    return [f["name"] for f in factors_of(study.definition)]


def _blocks(study: Any) -> bool:
    return bool((study.definition or {}).get("blocks"))


def design_types(study: Any) -> dict[str, tuple[pa.DataType, str]]:
    """Column name → (pyarrow type, pandas dtype) of the study's design columns, in order ({}: none)."""
    out: dict[str, tuple[pa.DataType, str]] = {}
    factors = _factors(study)
    if factors:
        out["condition"] = (pa.string(), "str")
        out.update({f"condition_{name}": (pa.string(), "str") for name in factors})
    if _blocks(study):
        out["block_order"] = (pa.string(), "str")
    return out


def _cell_values(study: Any, cell: str, factors: list[str]) -> tuple:
    if not factors:
        return ()
    try:
        levels = levels_of(study.definition, cell)
    except KeyError:
        return (cell or None, *(None for _ in factors))
    return (cell, *(levels[name] for name in factors))


def participant_design(study: Any) -> tuple[dict[int, tuple], tuple]:
    """(participant id → their design values, the values of a row without a participant's)."""
    from surveys.models import Participant

    factors, blocks = _factors(study), _blocks(study)
    empty = (None,) * (len(design_types(study)))
    if not empty:
        return {}, NOT_GIVEN
    rows = Participant.objects.filter(study=study).order_by().values_list("pk", "condition", "block_order")
    return {pk: (*_cell_values(study, cell, factors), *(("|".join(order) if order else None,) if blocks else ()))
            for pk, cell, order in rows.iterator(chunk_size=5000)}, empty


def run_design(study: Any) -> tuple[dict[int, tuple], tuple]:
    """(run id → its design values: the run's cell, no block order; the values of a row without them)."""
    from elicitation.models import ElicitationRun

    factors, blocks = _factors(study), _blocks(study)
    empty = (None,) * (len(design_types(study)))
    if not empty:
        return {}, NOT_GIVEN
    rows = ElicitationRun.objects.filter(study=study).values_list("pk", "condition")
    return {pk: (*_cell_values(study, cell, factors), *((None,) if blocks else ())) for pk, cell in rows}, empty
