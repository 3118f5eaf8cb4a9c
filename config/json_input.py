"""JSON from outside (API bodies, JSON Lines imports), with its nesting bounded.

Python's json parser recurses once per level: a body of 100 000 ``[`` raised RecursionError (an HTTP 500), and
data a few hundred levels deep parses but breaks later code that walks it. Nothing the platform reads is
nested more than a few levels, so :data:`MAX_DEPTH` levels are refused as a clear error.
"""
from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

#: Deepest nesting of arrays and objects accepted (an answer file or a request needs 3 or 4).
MAX_DEPTH = 32


class TooDeep(ValueError):
    """The JSON text nests arrays/objects deeper than :data:`MAX_DEPTH`."""


def depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def loads(text: str | bytes, **options: Any) -> Any:
    """``json.loads(text, **options)`` that raises :class:`TooDeep` (a ValueError) for nesting deeper than
    MAX_DEPTH instead of RecursionError; json.JSONDecodeError for text that is not JSON."""
    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if depth(value) > MAX_DEPTH:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser with bounded nesting: too deep is a 400 like any malformed body."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        strict = {"parse_constant": parsers.json.strict_constant} if self.strict else {}
        try:
            return loads(stream.read().decode(encoding), **strict)
        except ValueError as exc:  # not JSON, too deep, or not in the encoding (UnicodeDecodeError)
            raise ParseError(f"JSON parse error - {exc}") from None
