"""Reading a definition file: TOML parsed with the standard library, then validated by the schema; every problem
named with the file and its key path."""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config.paths import site_folder

from .errors import DefinitionError, Problem
from .schema import Definition


def key_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a key path: ``questionnaire[1].choices``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def validate(data: dict[str, Any], file: str) -> Definition:
    """``data`` (a parsed definition) validated; DefinitionError lists every problem by key path."""
    try:
        return Definition.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = "unknown key (not part of the definition format; check its spelling)"
            problems.append(Problem(file, key_path(loc), message))
        raise DefinitionError(problems) from None


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """A definition's TOML text as a dict; DefinitionError with the line and column of a syntax error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = ""
        if getattr(exc, "lineno", None):
            where = f"line {exc.lineno}, column {exc.colno}"
        message = getattr(exc, "msg", None) or str(exc)
        raise DefinitionError([Problem(file, where, f"not valid TOML: {message}")]) from None
    except RecursionError:
        raise DefinitionError([Problem(file, "", f"not a definition: arrays or tables nested more than "
                                       f"{MAX_DEPTH} deep")]) from None
    if where := _too_deep(data):
        raise DefinitionError([Problem(file, where, f"nested more than {MAX_DEPTH} deep: a definition's values "
                                       "are tables, arrays and plain values a few levels deep")])
    return data


MAX_DEPTH = 16


def _too_deep(data: Any) -> str:
    """The key path of a value nested more than MAX_DEPTH deep in ``data`` ("" when none is)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
    return ""


def read_definition(path: str | Path) -> tuple[Definition, dict[str, Any]]:
    """(validated definition, the parsed data) of the file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DefinitionError([Problem(str(path), "", "no such file")]) from None
    except UnicodeDecodeError as exc:
        raise DefinitionError([Problem(str(path), f"byte {exc.start}", "not UTF-8 text")]) from None
    data = parse_toml(text, str(path))
    return validate(data, str(path)), data


STUDIES_DIR = site_folder("studies")


def definition_path(given: str | Path) -> Path:
    """``given`` itself if it exists, else the shipped study of that name (e.g.
    ``examples/word-choice`` for ``studies/<name>/study.toml``: an installed wheel has no checkout to point at)."""
    path = Path(given)
    if path.exists() or path.is_absolute() or path.suffix:
        return path
    parts = path.parts[1:] if path.parts and path.parts[0] == "studies" else path.parts
    shipped = STUDIES_DIR.joinpath(*parts, "study.toml")
    return shipped if ".." not in parts and shipped.is_file() else path


@lru_cache(maxsize=None)
def shipped_definition(relative: str) -> dict[str, Any]:
    """A definition shipped under ``studies/`` (e.g. ``examples/word-choice/study.toml``), validated and dumped as
    stored."""
    definition, _ = read_definition(STUDIES_DIR / relative)
    return definition.model_dump(mode="json")
