"""The one error a definition file gets: where (file, key path or line and column) and what."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem: the file, where in it (a key path such as ``answer.max`` or ``line 4, column "truth"``)
    and what is wrong."""

    file: str
    where: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.where}" if self.where else ""
        return f"{self.file}{where}: {self.message}"


class DefinitionError(ValueError):
    """A definition (or an item file it names) that cannot be loaded; ``problems`` lists every one found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
