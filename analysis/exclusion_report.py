"""What applying a study's exclusion rules did, in lines of text (``manage.py exclusions`` / ``attention``, the
report page's button)."""
from __future__ import annotations

from analysis.exclusions import ExclusionResult, reasons_text


def summary(result: ExclusionResult) -> str:
    """One line: how many were kept, or that the study declares no rules."""
    if not result.rules:
        return (f"{result.study}: the study declares no exclusion rules ([[exclusions]]) and applies no attention "
                f"filter: all {result.completed} completed participants kept")
    return (f"{result.study}: {result.analysed} of {result.completed} completed participants kept; "
            f"{len(result.excluded)} excluded (kept in the database)")


def lines(result: ExclusionResult, name_of) -> list[str]:
    """The summary, one line per rule, one per excluded participant (``name_of(pk)``: how to name them)."""
    out = []
    if result.attention is not None:
        out += result.attention.report_lines()
    out.append(summary(result))
    out += [f"  rule {r.label}: {len(r.excluded)} excluded" for r in result.rules]
    out += [f"  excluded {name_of(pk)}: {reasons_text(result.reasons[pk])}" for pk in sorted(result.excluded)]
    return out
