"""A recruitment channel's completion address: named placeholders, nothing else.

``{code}`` (the completion code for the participant's outcome) and ``{id}`` (their id on the channel) are the
only things in braces; ``{{`` and ``}}`` stand for a literal brace. No ``str.format``: a format spec
(``{code:>300000000}``, which made a 290 MB string) or attribute access (``{code.__class__}``) is text in
braces like any other, refused when the channel is saved (:func:`placeholder_problem`) and never expanded
(:func:`fill`).
"""
from __future__ import annotations

import re

PLACEHOLDERS = ("code", "id")
_TOKEN = re.compile(r"\{\{|\}\}|\{(?P<name>code|id)\}|(?P<stray>[{}])")


def placeholder_problem(url: str) -> str:
    """Why ``url`` is not a completion address with named placeholders ("" when it is)."""
    for match in _TOKEN.finditer(url):
        if match.group("stray"):
            start = match.start()
            end = url.find("}", start) + 1 if match.group("stray") == "{" and "}" in url[start:] else start + 1
            shown = url[start:min(end, start + 40)]
            return (f"Only the placeholders {{code}} and {{id}} may appear in braces (write {{{{ or }}}} for a "
                    f"literal brace); found {shown!r} at character {start + 1}.")
    return ""


def fill(url: str, code: str, participant_id: str) -> str:
    """``url`` with ``{code}`` and ``{id}`` replaced by the (already quoted) values; a brace that is not a
    placeholder stays as written (a row saved before this rule)."""
    values = {"code": code, "id": participant_id}

    def one(match: re.Match) -> str:
        text = match.group(0)
        if match.group("name"):
            return values[match.group("name")]
        return text[0] if text in ("{{", "}}") else text

    return _TOKEN.sub(one, url)
