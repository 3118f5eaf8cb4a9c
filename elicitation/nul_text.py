"""Model text with NUL characters, stored escaped.

A model (or a broken endpoint) may answer with NUL characters (U+0000), which PostgreSQL refuses in text and
JSON columns: the row failed as "DataError" and its raw text was lost. Before a row is written, every NUL in
its text, and in the text inside its JSON values, becomes the six characters ``\\u0000``, and the row's
``detail["escaped_nul"]`` lists the fields where that happened (so the raw text is known to differ from the
reply by exactly that).
"""
from __future__ import annotations

from typing import Any

NUL = "\x00"
ESCAPED = "\\u0000"


def _escape(value: Any) -> tuple[Any, bool]:
    """``value`` with NUL escaped in every string (dict keys and values, list items), and whether any was."""
    if isinstance(value, str):
        return (value.replace(NUL, ESCAPED), True) if NUL in value else (value, False)
    if isinstance(value, dict):
        pairs = [(_escape(k), _escape(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in pairs}, any(a or b for (_, a), (_, b) in pairs)
    if isinstance(value, (list, tuple)):
        items = [_escape(v) for v in value]
        return [v for v, _ in items], any(found for _, found in items)
    return value, False


def without_nul(fields: dict[str, Any]) -> dict[str, Any]:
    """The row ``fields`` to write, NUL escaped; ``detail["escaped_nul"]`` names the fields that held one."""
    escaped, names = {}, []
    for name, value in fields.items():
        escaped[name], found = _escape(value)
        if found:
            names.append(name)
    if names:
        escaped["detail"] = {**(escaped.get("detail") or {}), "escaped_nul": names}
    return escaped
