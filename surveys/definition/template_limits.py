"""What a definition's template may compute: Jinja2's sandbox, bounded.

The sandbox keeps a template away from Python's internals, not from the processor: ``{{ 9**(9**7) }}`` was
computed while the template compiled (Jinja folds constant expressions), holding the interpreter lock, and
nested loops, ``"x" * 10**9`` or ``"x"|center(10**9)`` pinned a worker. :class:`BoundedSandbox` refuses, with a
:class:`TemplateLimit` (a Jinja ``SecurityError``, so it reads like any template error and names the limit):

- ``**``, ``*``, ``+``, ``%`` and ``//`` are intercepted (so never folded at compile time) and refused when the
  result would be larger than :data:`MAX_INT_BITS` bits or :data:`MAX_LENGTH` characters or items;
- ``range`` is at most :data:`MAX_RANGE` long; every ``{% for %}`` of one render together runs at most
  :data:`MAX_LOOP_ITERATIONS` times (the parser wraps each loop's iterable in :meth:`BoundedSandbox.bounded_loop`);
- ``~`` (:meth:`BoundedSandbox.bounded_concat`), the filters and string methods that take a width or a count
  (``center``, ``indent``, ``replace``, ``format``, ``ljust``, ``zfill``…) stay within :data:`MAX_LENGTH`;
- a render writes at most :data:`MAX_LENGTH` characters (:func:`render_bounded`).

Every shipped definition renders exactly as before (tests/test_prompt_baseline.py): the limits refuse, they never
change a text.
"""
from __future__ import annotations

import operator
import re
from contextvars import ContextVar
from typing import Any, Iterable, Iterator

from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.filters import do_center, do_indent, do_replace, do_format
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

MAX_RANGE = 10_000
MAX_LOOP_ITERATIONS = 100_000
MAX_LENGTH = 200_000  # characters of a string or items of a list, and of a render's output
MAX_INT_BITS = 4_096

_BINOPS = {"**": operator.pow, "*": operator.mul, "+": operator.add, "%": operator.mod, "//": operator.floordiv}
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_BRACES = re.compile(r"\{[^{}]*:([^{}]*)(\}|\{)")
_GROWING_STR_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join"}
_loop_budget: ContextVar[list[int] | None] = ContextVar("hedgelab_template_loops", default=None)


class TemplateLimit(SecurityError):
    """A template asked for more than a definition's template may compute."""


def _too_long(size: int, what: str) -> None:
    if size > MAX_LENGTH:
        raise TemplateLimit(f"{what} would be {size:,} characters or items long; a template may make at most "
                            f"{MAX_LENGTH:,}")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple)) else 0


def _check_binop(op: str, left: Any, right: Any) -> None:
    """TemplateLimit when ``left op right`` would be too large (checked before it is computed)."""
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right))
    if op == "**" and ints and right > 0:
        bits = max(abs(left).bit_length(), 1) * right if abs(left) > 1 else 1
        if bits > MAX_INT_BITS or right > MAX_INT_BITS:
            raise TemplateLimit(f"{left!r} ** {right!r} is too large a number: a template computes numbers of at "
                                f"most {MAX_INT_BITS} bits")
    elif op == "**" and isinstance(right, (int, float)) and abs(right) > MAX_INT_BITS:
        raise TemplateLimit(f"the power {right!r} is too large: a template computes numbers of at most "
                            f"{MAX_INT_BITS} bits")
    elif op == "*" and ints and abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
        raise TemplateLimit(f"a product of {abs(left).bit_length()}- and {abs(right).bit_length()}-bit numbers is "
                            f"too large: a template computes numbers of at most {MAX_INT_BITS} bits")
    elif op == "*":
        sequence, count = (left, right) if _size(left) or isinstance(left, (str, list, tuple)) else (right, left)
        if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
            _too_long(_size(sequence) * max(count, 0), "the repeated text or list")
    elif op == "+":
        _too_long(_size(left) + _size(right), "the joined text or list")
    elif op == "%" and isinstance(left, str):
        _check_widths(left)


def _check_widths(template: str) -> None:
    """A ``%`` or ``{}`` format string whose field widths or precisions pass MAX_LENGTH (``%999999999d``,
    ``{:>999999999}``), or are given as arguments (``%*d``, ``{:{}}``)."""
    for match in _PERCENT.finditer(template):
        if any(g == "*" or (g and int(g) > MAX_LENGTH) for g in match.groups()):
            raise TemplateLimit(f"the format {match.group(0)[:40]!r} asks for a width above {MAX_LENGTH:,} "
                                "(or a width given as an argument)")
    for match in _BRACES.finditer(template):
        if match.group(2) == "{" or any(int(d) > MAX_LENGTH for d in re.findall(r"\d+", match.group(1))):
            raise TemplateLimit(f"the format {match.group(0)[:40]!r} asks for a width above {MAX_LENGTH:,} "
                                "(or a width given as an argument)")


def _check_width(width: Any, what: str) -> None:
    if isinstance(width, int) and width > MAX_LENGTH:
        _too_long(width, what)


def _bounded_center(value: str, width: int = 80) -> str:
    _check_width(width, "the centred text")
    return do_center(value, width)


def _bounded_indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    _check_width(width, "the indentation")
    if isinstance(width, str):
        _too_long(len(width) * (str(s).count("\n") + 1) + len(str(s)), "the indented text")
    elif isinstance(width, int):
        _too_long(width * (str(s).count("\n") + 1) + len(str(s)), "the indented text")
    return do_indent(s, width, first, blank)


def _replaced_size(s: str, old: str, new: str, count: int | None = None) -> int:
    found = len(s) + 1 if old == "" else s.count(old)
    if count is not None and count >= 0:
        found = min(found, count)
    return len(s) + found * (len(new) - len(old))


def _bounded_replace(eval_ctx: Any, s: str, old: str, new: str, count: int | None = None) -> str:
    _too_long(_replaced_size(str(s), str(old), str(new), count), "the replaced text")
    return do_replace(eval_ctx, s, old, new, count)


_bounded_replace.jinja_pass_arg = do_replace.jinja_pass_arg  # type: ignore[attr-defined]  # its eval context


def _bounded_format(value: str, *args: Any, **kwargs: Any) -> str:
    _check_widths(str(value))
    return do_format(value, *args, **kwargs)


def _check_str_method(method: str, text: str, args: tuple, kwargs: dict) -> None:
    """TemplateLimit when a string method would make a string above MAX_LENGTH."""
    values = list(args) + list(kwargs.values())
    if method in ("center", "ljust", "rjust", "zfill") and values:
        _check_width(values[0], f"str.{method}'s result")
    elif method == "expandtabs":
        size = values[0] if values and isinstance(values[0], int) else 8
        _too_long(len(text) + text.count("\t") * max(size, 0), "str.expandtabs's result")
    elif method == "replace" and len(args) >= 2:
        _too_long(_replaced_size(text, str(args[0]), str(args[1]), args[2] if len(args) > 2 else None),
                  "the replaced text")
    elif method == "join" and args and isinstance(args[0], (list, tuple)):
        _too_long(sum(len(str(v)) for v in args[0]) + len(text) * len(args[0]), "the joined text")


class BoundedSandbox(SandboxedEnvironment):
    """Jinja2's sandbox with bounded computation (see the module docstring)."""

    intercepted_binops = frozenset(_BINOPS)

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.globals["range"] = self.bounded_range
        self.filters.update(center=_bounded_center, indent=_bounded_indent, replace=_bounded_replace,
                            format=_bounded_format)

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        _check_binop(operator_, left, right)
        result = _BINOPS[operator_](left, right)
        if isinstance(result, str):
            _too_long(len(result), "the computed text")
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's names)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", "") in _GROWING_STR_METHODS:
            _check_str_method(__obj.__name__, owner, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        """``str.format`` / ``format_map`` as the sandbox wraps them, with the widths checked first."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text = value.__self__

        def checked(*args: Any, **kwargs: Any) -> str:
            _check_widths(str(text))
            return wrapped(*args, **kwargs)

        return checked

    @staticmethod
    def bounded_range(*args: int) -> range:
        numbers = range(*args)
        if len(numbers) > MAX_RANGE:
            raise TemplateLimit(f"range of {len(numbers):,} numbers: a template's range is at most {MAX_RANGE:,} long")
        return numbers

    @staticmethod
    def bounded_loop(iterable: Iterable[Any]) -> Iterator[Any]:
        """``iterable``, charging each step to the render's loop budget."""
        budget = _loop_budget.get()
        for value in iterable:
            if budget is not None:
                budget[0] -= 1
                if budget[0] < 0:
                    raise TemplateLimit(f"the loops ran more than {MAX_LOOP_ITERATIONS:,} times in one render")
            yield value

    @staticmethod
    def bounded_concat(*values: Any) -> str:
        """``a ~ b ~ …`` (Jinja's str_join), at most MAX_LENGTH characters."""
        parts = [str(v) for v in values]
        _too_long(sum(map(len, parts)), "the joined text")
        return "".join(parts)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        return _Bounding().visit(super()._parse(source, name, filename))


class _Bounding(NodeTransformer):
    """Each loop's iterable through ``environment.bounded_loop``, each ``~`` through ``bounded_concat``."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("bounded_loop"), [node.iter], [], None, None,
                               lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.EnvironmentAttribute("bounded_concat"), node.nodes, [], None, None,
                          lineno=node.lineno)


def render_bounded(template: Any, context: dict[str, Any]) -> str:
    """``template`` rendered over ``context`` within the loop budget and the output limit."""
    token = _loop_budget.set([MAX_LOOP_ITERATIONS])
    try:
        parts, size = [], 0
        for chunk in template.generate(**context):
            size += len(chunk)
            if size > MAX_LENGTH:
                raise TemplateLimit(f"the template writes more than {MAX_LENGTH:,} characters")
            parts.append(chunk)
        return "".join(parts)
    finally:
        _loop_budget.reset(token)
