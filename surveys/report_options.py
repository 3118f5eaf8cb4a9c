"""Report options: named choices a study makes about how its report reads and scores the answers.

An instrument declares the options its report sections take (``Instrument.report_options``: name →
:class:`ReportOption`); a study stores its choices in ``Study.report_options`` ({"reading": "authors"}), set
in the admin, through the API (the study's ``report_options``), with ``report <study> --option NAME=VALUE``
or, later, by a study definition file. An option the study does not set takes the option's default. Unknown
names and values are refused with a message naming the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping


@dataclass(frozen=True)
class ReportOption:
    """One option: its allowed values (the first is the default for new studies) and what each means. An option
    with ``check`` takes free text instead (e.g. rules that orient expressions): ``choices`` then holds only its
    default, and ``check(value)`` says what is wrong with a value (empty when it can be used)."""

    name: str
    choices: Mapping[str, str]  # value → what it means (shown in the admin help and the report)
    help: str = ""
    check: Callable[[Any], list[str]] | None = None

    @property
    def default(self) -> str:
        return next(iter(self.choices))


def option_errors(declared: Mapping[str, ReportOption], chosen: Any) -> list[str]:
    """What is wrong with ``chosen`` (a study's report options) for an instrument declaring ``declared``."""
    if chosen in (None, ""):
        return []
    if not isinstance(chosen, Mapping):
        return ["report options are a mapping of option name to value, e.g. {\"reading\": \"authors\"}"]
    errors = []
    for name, value in chosen.items():
        option = declared.get(name)
        if option is None:
            known = ", ".join(sorted(declared)) or "none"
            errors.append(f"unknown report option {name!r} (this kind's options: {known})")
        elif option.check is not None:
            errors += [f"report option {name!r}: {problem}" for problem in option.check(value)]
        elif value not in option.choices:
            errors.append(f"report option {name!r} must be one of {', '.join(option.choices)}, not {value!r}")
    return errors


def resolved(declared: Mapping[str, ReportOption], chosen: Mapping[str, Any] | None) -> dict[str, str]:
    """Every declared option with the study's value, or the default where the study sets none."""
    chosen = chosen or {}
    return {name: str(chosen.get(name, option.default)) for name, option in declared.items()}


def parse_options(texts: Iterable[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings (``report --option``) as a dict; ValueError naming a bad one."""
    out = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"--option {text!r}: write NAME=VALUE, e.g. reading=authors")
        out[name.strip()] = value.strip()
    return out
