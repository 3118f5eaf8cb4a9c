"""What templates see as ``condition``: the cell a page or a prompt is rendered under (no model imports).

A study that declares ``[[factors]]`` gives every template (page, hints, prompt, persona-free parts alike) a
``condition`` mapping: ``condition.FACTOR`` is the level's text, ``condition.NAME`` a level's named value,
``condition.cell`` the cell's name and ``condition.levels`` the levels' keys by factor. The cell is the one set
by :func:`under` around the rendering (the participant's, on their pages; the run's, for a model's prompt); with
none set (previews, the loader's checks) the study's first cell. A study without factors gets no ``condition``
at all, so its pages and prompts are exactly as before.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Mapping

_CURRENT: ContextVar[str] = ContextVar("hedgelab_condition_cell", default="")


@contextmanager
def under(cell: str | None) -> Iterator[None]:
    """Render templates under ``cell`` (a cell's name; "" or None: the study's first cell) within the block."""
    token = _CURRENT.set(cell or "")
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_cell() -> str:
    return _CURRENT.get()


def factors_of(definition: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The ``[[factors]]`` of a dumped definition ([] when it declares none)."""
    return list((definition or {}).get("factors") or [])


def cells_of(definition: Mapping[str, Any] | None) -> list[str]:
    """The study's cells: ``[conditions] cells`` when declared, else every crossing of the factors' levels."""
    factors = factors_of(definition)
    if not factors:
        return []
    declared = ((definition or {}).get("conditions") or {}).get("cells") or []
    if declared:
        return list(declared)
    return ["-".join(combo) for combo in itertools.product(*[[lv["key"] for lv in f["levels"]] for f in factors])]


def levels_of(definition: Mapping[str, Any] | None, cell: str) -> dict[str, str]:
    """The level key of each factor in ``cell`` (factor name → level key); KeyError for an unknown cell."""
    factors = factors_of(definition)
    keys = cell.split("-")
    if cell not in cells_of(definition) or len(keys) != len(factors):
        raise KeyError(cell)
    return {f["name"]: key for f, key in zip(factors, keys)}


def condition_values(definition: Mapping[str, Any] | None, cell: str | None = None) -> dict[str, Any] | None:
    """What templates see as ``condition`` under ``cell`` (the current one, else the first); None without
    factors."""
    factors = factors_of(definition)
    if not factors:
        return None
    cells = cells_of(definition)
    cell = cell or current_cell() or cells[0]
    if cell not in cells:
        cell = cells[0]
    levels = levels_of(definition, cell)
    values: dict[str, Any] = {"cell": cell, "levels": dict(levels)}
    for factor in factors:
        level = next(lv for lv in factor["levels"] if lv["key"] == levels[factor["name"]])
        values[factor["name"]] = level.get("text") or level["key"]
        values.update(level.get("values") or {})
    return values
