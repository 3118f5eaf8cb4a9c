"""A named design: the module whose ``generate(study, **options)`` makes a study's items (no Django import, so
that a family's declaration can hold its designs)."""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class CliOption:
    """One option of ``manage.py generate_items`` that a design takes (the command adds each installed design's
    options; a flag several designs declare is added once, with the first declaration's type and choices)."""

    flag: str  # "--numbers"
    help: str
    type: Callable[[str], Any] | None = None  # e.g. int; None: the text as given
    choices: tuple[Any, ...] | None = None
    key: str = ""  # the keyword of ``generate`` it fills; default: the flag's name ("--contexts" → "contexts")
    case: str = ""  # "lower" or "upper": a comma-separated list, each entry stripped and so cased (empty ones left out)

    @property
    def dest(self) -> str:
        """The command line's name of the value (argparse's ``dest``)."""
        return self.flag.lstrip("-").replace("-", "_")

    def value(self, given: Any) -> Any:
        """The keyword value the command line's ``given`` text stands for (a list for a comma-separated option)."""
        if not self.case or not given:
            return given
        entries = [entry.strip() for entry in str(given).split(",") if entry.strip()]
        return [entry.lower() if self.case == "lower" else entry.upper() for entry in entries]


@dataclass(frozen=True)
class Design:
    name: str
    module: str
    instrument: str
    summary: str
    cli: tuple[CliOption, ...] = ()  # its options on ``manage.py generate_items``'s command line

    def function(self) -> Callable[..., list[dict[str, Any]]]:
        return importlib.import_module(self.module).generate

    def report_defaults(self, options: dict[str, Any]) -> dict[str, str]:
        """Report options a study generated with ``options`` takes unless it sets them itself (a module's
        optional ``report_defaults(**options)``; e.g. the paper's numbers → the authors' reading)."""
        hook = getattr(importlib.import_module(self.module), "report_defaults", None)
        return hook(**options) if hook else {}

    def notes(self, items: list) -> list[str]:
        """What the researcher should know about the generated ``items`` (the module's ``notes(items)``, if
        it has one), e.g. numbers changed to fit a quantity; empty by default."""
        notes = getattr(importlib.import_module(self.module), "notes", None)
        return notes(items) if notes else []

    def command_line(self, options: dict[str, Any]) -> dict[str, Any]:
        """The command line's options as the design takes them (the module's optional ``command_line(**options)``,
        e.g. a file name read into the values it holds); unchanged by default. Only ``manage.py generate_items``
        calls it: the API passes values, never a server path."""
        hook = getattr(importlib.import_module(self.module), "command_line", None)
        return hook(**options) if hook else options

    def options(self) -> list[str]:
        """The keyword options ``generate`` takes (besides the study)."""
        params = list(inspect.signature(self.function()).parameters.values())[1:]
        return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
