"""Whether a definition's exclusion rules can be computed for its answers (``[[exclusions]]`` and the attention
filter's rule that ``[participants] attention_filter = true`` turns on): check_study refuses one that cannot,
naming its key."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .errors import Problem
from .exclusion_rules import attention_rule, shape_problem


def exclusion_problems(dump: Mapping[str, Any], shape: str, rows: Sequence[Mapping[str, Any]],
                       file: str, kind_attention_rule: str = "") -> list[Problem]:
    """The problems of rules the study's answers (of ``shape``; items ``rows``) cannot feed
    (``kind_attention_rule``: the rule the kind's attention filter applies, ``Instrument.attention_rule``)."""
    has_checks = bool(dump.get("checks"))
    has_expressions = any(row.get("expression") for row in rows)
    problems = []
    for n, rule in enumerate(dump.get("exclusions") or []):
        why = shape_problem(rule["rule"], shape, has_checks, has_expressions)
        if why:
            problems.append(Problem(file, f"exclusions[{n}].rule", why))
    rule = attention_rule(kind_attention_rule)
    if (dump.get("participants") or {}).get("attention_filter") and rule is not None:
        why = shape_problem(rule, shape, has_checks, has_expressions)
        if why:
            problems.append(Problem(file, "participants.attention_filter", f"the attention filter is {why}; "
                                    "declare [[exclusions]] rules that fit the study instead"))
    return problems
