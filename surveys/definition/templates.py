"""Wording templates of definition files: Jinja2, sandboxed and strict.

Jinja2 rather than Django's template language: a definition can arrive through the API, so templates render in
Jinja2's sandbox (no attribute access to internals), bounded in what they compute (template_limits.py); a field a template names that an item lacks is an error
(``StrictUndefined``), and the fields a template reads can be listed before anything renders
(:func:`template_fields`), so the loader refuses a template naming a missing field. Output is byte-literal: no
autoescape (prompts are plain text; Django escapes page text when it shows it), no block trimming, the trailing
newline kept.
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError, meta, nodes

from .template_limits import BoundedSandbox, TemplateLimit, render_bounded

ENV = BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False,
                     trim_blocks=False, lstrip_blocks=False)


def number(value: Any) -> str:
    """``{{ x|number }}``: a number as Python's ``{:g}`` writes it (``100.0`` → ``100``, ``2.5`` → ``2.5``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return str(value)


ENV.filters["number"] = number


class TemplateProblem(ValueError):
    """A template that does not parse or does not render (names the problem in words); ``limit``: it passed a
    limit of what a template may compute (template_limits.py)."""

    def __init__(self, message: str, limit: bool = False):
        super().__init__(message)
        self.limit = limit


@lru_cache(maxsize=4096)
def _compiled(template: str):
    return ENV.from_string(template)


def _compile(template: str):
    try:
        return _compiled(template)
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc)) from None
    except (RecursionError, MemoryError, ValueError, TypeError, ArithmeticError) as exc:  # e.g. nested too deep
        raise TemplateProblem(_plain(exc), limit=isinstance(exc, (RecursionError, MemoryError))) from None


def render(template: str, context: Mapping[str, Any]) -> str:
    """``template`` rendered over ``context``; TemplateProblem when it is invalid or names a missing field.

    Remembered by the values of the fields the template reads (``_rendered``): a model run renders each
    prompt's demonstrations and shared parts once per process, not once per item."""
    key = _render_key(template, context)
    if key is not None and (found := _rendered.get(key)) is not None:
        return found
    compiled = _compile(template)
    try:
        text = render_bounded(compiled, dict(context))
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc), limit=isinstance(exc, TemplateLimit)) from None
    except Exception as exc:  # the template's own computation: 1/0, "a" + 1, int("x"), a float overflow…
        raise TemplateProblem(_plain(exc), limit=isinstance(exc, (RecursionError, MemoryError))) from None
    if key is not None:
        if len(_rendered) >= RENDERED_MAX:
            _rendered.clear()
        _rendered[key] = text
    return text


# Renders by template and the values it reads: a template sees nothing but its context (sandboxed, no state), so
# the same values give the same text. Only values of plain types are keys (``_frozen``); others render each time.
RENDERED_MAX = 4096
_rendered: dict[tuple, str] = {}
_MISSING = object()
_SCALARS = (str, int, float, bool, Decimal, type(None))


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a plain ``value`` that differs whenever the rendered text could (types kept: 1,
    1.0, True and Decimal("1.00") render differently); TypeError for anything else."""
    if isinstance(value, _SCALARS):
        return (type(value), value if type(value) is str else repr(value))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    raise TypeError(type(value).__name__)


def _render_key(template: str, context: Mapping[str, Any]) -> tuple | None:
    """``render``'s memo key: the template and the values of the fields it reads; None when a value is not plain
    or the template does not parse."""
    try:
        names = _read_fields(template)
        return (template, *(_frozen(context[n]) if n in context else _MISSING for n in names))
    except (TypeError, TemplateProblem):
        return None


@lru_cache(maxsize=4096)
def _read_fields(template: str) -> tuple[str, ...]:
    return tuple(sorted(template_fields(template)))


def template_fields(template: str) -> set[str]:
    """The top-level variables ``template`` reads (loop variables and ``set`` names excluded)."""
    try:
        return set(meta.find_undeclared_variables(ENV.parse(template)))
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc)) from None
    except (RecursionError, MemoryError) as exc:
        raise TemplateProblem(_plain(exc), limit=True) from None


def _plain(exc: BaseException) -> str:
    """An error of the template's own computation in words (a RecursionError: nested too deeply)."""
    if isinstance(exc, RecursionError):
        return "the template is nested too deeply"
    if isinstance(exc, MemoryError):
        return "the template needs too much memory"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


#: Nodes under which a field may be empty or missing: a condition, a loop, ``a or b``, a test (``is defined``).
_GUARDS = (nodes.If, nodes.CondExpr, nodes.For, nodes.And, nodes.Or, nodes.Test, nodes.Not)


def shown_fields(template: str) -> set[str]:
    """The top-level variables ``template`` shows whatever their values: read outside any ``{% if %}``,
    ``{% for %}``, conditional expression, ``and``/``or``, test or ``default`` filter (a field read only there may
    be empty). A subset of :func:`template_fields`."""
    found: set[str] = set()

    def walk(node: nodes.Node, guarded: bool) -> None:
        guarded = guarded or isinstance(node, _GUARDS) or (isinstance(node, nodes.Filter)
                                                            and node.name in ("default", "d"))
        if isinstance(node, nodes.Name) and node.ctx == "load" and not guarded:
            found.add(node.name)
        for child in node.iter_child_nodes():
            walk(child, guarded)

    try:
        walk(ENV.parse(template), False)
    except TemplateError as exc:
        raise TemplateProblem(_describe(exc)) from None
    return found & template_fields(template)


def _describe(exc: TemplateError) -> str:
    line = getattr(exc, "lineno", None)
    where = f" (template line {line})" if line else ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{message}{where}"
