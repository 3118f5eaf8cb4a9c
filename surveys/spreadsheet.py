"""CSV cells that a spreadsheet would run as formulas (OWASP "CSV injection"): a text cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, unless the whole cell is a
number (``-5``, ``+1e3`` are harmless). The full-width and small forms of these signs (``＝``, ``﹦``, ``＋``,
``－``, ``＠``, …: every character whose compatibility form, Unicode NFKC, is one of them) count too, since
spreadsheets in East Asian locales read ``＝1+1`` as a formula. A cell that starts with ``'`` before such a character gets one more,
so :func:`unescape_cell` restores every value exactly. Parquet files are not escaped (no spreadsheet runs
them)."""
from __future__ import annotations

import unicodedata

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _needs_escape(text: str) -> bool:
    if not text:
        return False
    if text[0] == "'":
        return _needs_escape(text[1:])
    return unicodedata.normalize("NFKC", text[0]).startswith(TRIGGERS) and not _is_number(text)


def safe_cell(value):
    """``value`` as a spreadsheet shows it, never run as a formula; non-strings unchanged."""
    return "'" + value if isinstance(value, str) and _needs_escape(value) else value


def unescape_cell(value):
    """The original of a cell written by :func:`safe_cell`."""
    if isinstance(value, str) and value.startswith("'") and _needs_escape(value[1:]):
        return value[1:]
    return value
