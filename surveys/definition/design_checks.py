"""The checks of a definition's design tables (``[[factors]]``, ``[blocks]``) against its items: what the schema
alone cannot see."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import Problem


def design_problems(dump: Mapping[str, Any], rows: list[dict[str, Any]], file: str) -> list[Problem]:
    """Problems of the design tables with the items ``rows`` (item field dicts, ``extra`` inside)."""
    problems: list[Problem] = []
    if dump.get("factors"):
        for row in rows:
            if "condition" in row or "condition" in (row.get("extra") or {}):
                problems.append(Problem(file, "factors", f"item {row['key']!r} has a field called 'condition', "
                                        "which templates of a study with [[factors]] read as the participant's "
                                        "cell: rename the column"))
                break
    blocks = dump.get("blocks")
    if blocks and rows:
        field = blocks["field"]
        values: set[str] = set()
        for row in rows:
            value = row.get(field, (row.get("extra") or {}).get(field))
            if value in (None, ""):
                problems.append(Problem(file, "blocks.field", f"item {row['key']!r} has no {field!r} (every item "
                                        "needs a block)"))
                return problems
            values.add(str(value))
        sequence = blocks.get("sequence") or []
        if sequence and set(sequence) != values:
            problems.append(Problem(file, "blocks.sequence", f"{sequence} does not name the blocks the items have: "
                                    f"{sorted(values)}"))
        if len(values) < 2:
            problems.append(Problem(file, "blocks.field", f"the items' {field!r} names one block only "
                                    f"({', '.join(sorted(values))}); blocks need at least two"))
    return problems
