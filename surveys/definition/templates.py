"""Wording templates of definition files: Jinja2, sandboxed and strict.

Jinja2 rather than Django's template language: a definition can arrive through the API, so templates render in
Jinja2's sandbox (no attribute access to internals); a field a template names that an item lacks is an error
(``StrictUndefined``), and the fields a template reads can be listed before anything renders
(:func:`template_fields`), so the loader refuses a template naming a missing field. Output is byte-literal: no
autoescape (prompts are plain text; Django escapes page text when it shows it), no block trimming, the trailing
newline kept.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError, meta
from jinja2.sandbox import SandboxedEnvironment

ENV = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False,
                           trim_blocks=False, lstrip_blocks=False)


def number(value: Any) -> str:
    """``{{ x|number }}``: a number as Python's ``{:g}`` writes it (``100.0`` → ``100``, ``2.5`` → ``2.5``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return str(value)


ENV.filters["number"] = number


class TemplateProblem(ValueError):
    """A template that does not parse or does not render (names the problem in words)."""


@lru_cache(maxsize=4096)
def _compiled(template: str):
    return ENV.from_string(template)


def render(template: str, context: Mapping[str, Any]) -> str:
    """``template`` rendered over ``context``; TemplateProblem when it is invalid or names a missing field."""
    try:
        return _compiled(template).render(**context)
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc)) from None


def template_fields(template: str) -> set[str]:
    """The top-level variables ``template`` reads (loop variables and ``set`` names excluded)."""
    try:
        return set(meta.find_undeclared_variables(ENV.parse(template)))
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc)) from None


def _describe(exc: TemplateError) -> str:
    line = getattr(exc, "lineno", None)
    where = f" (template line {line})" if line else ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{message}{where}"
