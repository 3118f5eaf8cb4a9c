"""Whether a definition's exclusion rules can be computed for its answers (``[[exclusions]]`` and the Belem
ranking rule that ``[participants] attention_filter = true`` turns on): check_study refuses one that cannot,
naming its key."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .errors import Problem
from .exclusion_rules import shape_problem


def exclusion_problems(dump: Mapping[str, Any], shape: str, rows: Sequence[Mapping[str, Any]],
                       file: str) -> list[Problem]:
    """The problems of rules the study's answers (of ``shape``; items ``rows``) cannot feed."""
    has_checks = bool(dump.get("checks"))
    has_expressions = any(row.get("expression") for row in rows)
    problems = []
    for n, rule in enumerate(dump.get("exclusions") or []):
        why = shape_problem(rule["rule"], shape, has_checks, has_expressions)
        if why:
            problems.append(Problem(file, f"exclusions[{n}].rule", why))
    if (dump.get("participants") or {}).get("attention_filter"):
        why = shape_problem("belem-ranking", shape, has_checks, has_expressions)
        if why:
            problems.append(Problem(file, "participants.attention_filter", f"the attention filter is {why}; "
                                    "declare [[exclusions]] rules that fit the study instead"))
    return problems
