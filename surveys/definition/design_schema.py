"""The experimental design tables of a study definition: ``[[factors]]`` (between-subjects factors and their
levels), ``[conditions]`` (the cells, how participants are assigned to them, caps) and ``[blocks]`` (items
grouped into blocks, the order of the blocks counterbalanced across participants).

A study that declares none of them is exactly as before: its stored definition, content hash and prompts do not
change (``versions.content_hash`` leaves the empty tables out). Cells are named by their levels' keys joined with
``-`` in the factors' order (``doctor-gain``); a level key is lower case letters, digits and ``_`` so that the
name reads back unambiguously.
"""
from __future__ import annotations

import itertools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Names a template reads under ``condition`` besides the factors: the cell's name and the levels' keys.
CONDITION_RESERVED = frozenset({"cell", "levels"})
KEY = r"^[a-z][a-z0-9_]*$"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def repeated(values: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    for value in values:
        seen[value] = seen.get(value, 0) + 1
    return sorted(v for v, n in seen.items() if n > 1)


class Level(_Table):
    """One level of a factor: its ``key`` (stored, in the cell's name and the export) and ``text``, what
    ``{{ condition.FACTOR }}`` writes in a template (default: the key); ``values``: further named texts of this
    level, read as ``{{ condition.NAME }}``."""

    key: str = Field(pattern=KEY, max_length=30)
    text: str = ""
    values: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _text(self) -> "Level":
        if not self.text:
            self.text = self.key
        return self


class FactorTable(_Table):
    """``[[factors]]``: a between-subjects factor. ``levels`` are tables (``key``, ``text``, ``values``) or plain
    keys; every participant sees one level of every factor (their cell) on every page and prompt."""

    name: str = Field(pattern=KEY, max_length=30, description="Read in templates as condition.NAME.")
    levels: list[Level] = Field(min_length=2, description="At least two; plain strings are keys (text = key).")
    description: str = ""

    @field_validator("levels", mode="before")
    @classmethod
    def _plain_levels(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"key": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _distinct(self) -> "FactorTable":
        if duplicates := repeated([level.key for level in self.levels]):
            raise ValueError(f"factor {self.name!r}: level keys repeat: {', '.join(duplicates)}")
        names = [set(level.values) for level in self.levels]
        if any(n != names[0] for n in names):
            raise ValueError(f"factor {self.name!r}: every level must set the same values "
                             f"({', '.join(sorted(set().union(*names)))})")
        return self


class ConditionsTable(_Table):
    """``[conditions]``: which cells there are and how a participant gets one."""

    assignment: Literal["balanced", "random", "link"] = Field(
        "balanced", description="balanced: the least-filled cell (completed participants and those in progress "
        "within in_progress_minutes), ties at random; random: any open cell at random; link: the entry link's "
        "?condition=CELL (for a channel that assigns itself).")
    cells: list[str] = Field(default_factory=list, description="The cells, by name (levels' keys joined by -); "
                             "empty: every crossing of the factors.")
    cap: int | None = Field(None, ge=1, description="At most this many participants (completed or in progress) "
                            "per cell; a full cell is skipped, and when all are full new entries see the study's "
                            "full page.")
    caps: dict[str, int] = Field(default_factory=dict, description="Caps of single cells (by name), over cap.")
    in_progress_minutes: int = Field(60, ge=1, description="A participant who started less than this long ago "
                                     "and has not finished counts towards their cell (the study's time limit).")


class BlocksTable(_Table):
    """``[blocks]``: items grouped into blocks by an item field; the blocks' order per participant."""

    field: str = Field(min_length=1, description="The item field whose value names each item's block.")
    order: Literal["counterbalanced", "fixed", "random"] = Field(
        "counterbalanced", description="counterbalanced: every order of the blocks (a balanced Latin square when "
        "there are more than four), the least-used order for each new participant; fixed: the order of "
        "`sequence`; random: a random order per participant.")
    sequence: list[str] = Field(default_factory=list, description="The blocks (values of the field) in their "
                                "base order; empty: sorted.")
    within: Literal["random", "fixed"] = Field("random", description="Items within a block: random order, or the "
                                               "item file's order.")


def cell_name(levels: tuple[str, ...] | list[str]) -> str:
    return "-".join(levels)


def crossing(factors: list[FactorTable]) -> list[str]:
    """Every cell of the factors' crossing, in the factors' and levels' order."""
    return [cell_name(combo) for combo in itertools.product(*[[lv.key for lv in f.levels] for f in factors])]


def check_design(factors: list[FactorTable], conditions: ConditionsTable | None,
                 questionnaire_names: set[str]) -> None:
    """ValueError (with the key) when the design tables do not fit together."""
    if duplicates := repeated([f.name for f in factors]):
        raise ValueError(f"factor names repeat: {', '.join(duplicates)}")
    names = [f.name for f in factors] + [v for f in factors for v in f.levels[0].values]
    if duplicates := repeated(names):
        raise ValueError(f"condition names repeat (a factor's name or a level value's): {', '.join(duplicates)}")
    if taken := sorted(set(names) & CONDITION_RESERVED):
        raise ValueError(f"{', '.join(taken)}: reserved under condition (condition.cell, condition.levels)")
    if conditions is not None and not factors:
        raise ValueError("[conditions] needs [[factors]]")
    if conditions is None:
        return
    every = crossing(factors)
    unknown = [c for c in conditions.cells if c not in every]
    if unknown:
        raise ValueError(f"conditions.cells: {', '.join(map(repr, unknown))} is not a crossing of the factors' "
                         f"levels (cells are named like {every[0]!r})")
    if duplicates := repeated(conditions.cells):
        raise ValueError(f"conditions.cells repeat: {', '.join(duplicates)}")
    cells = conditions.cells or every
    if bad := sorted(c for c, n in conditions.caps.items() if n < 1):
        raise ValueError(f"conditions.caps: {', '.join(bad)}: a cap is at least 1")
    unknown = [c for c in conditions.caps if c not in cells]
    if unknown:
        raise ValueError(f"conditions.caps: no cell {', '.join(map(repr, unknown))} (cells: {', '.join(cells)})")
