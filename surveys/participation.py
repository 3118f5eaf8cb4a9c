"""How many people entered a study and what became of them: the decline and completion rates.

Test participants (surveys.test_mode) are counted apart and never in the rates. A participant who declined
consent has status ``declined``; one who declined and then agreed after all counts as consented.
"""
from __future__ import annotations

from typing import Any

from django.db.models import Count

from .models import PROLIFIC_CHANNEL, Participant, Study, Withdrawal


def participation(study: Study) -> dict[str, Any]:
    """Counts per status of real participants, the decline rate (declined / entered) and the completion
    rate (completed / consented, i.e. entered − declined); rates are None when nobody is counted yet."""
    rows = (Participant.objects.filter(study=study).values_list("is_test", "status", "channel__name")
            .annotate(n=Count("id")).order_by())
    counts: dict[str, int] = {status: 0 for status in Participant.Status.values}
    tests = 0
    by_channel: dict[str, dict[str, int]] = {}
    for is_test, status, channel, n in rows:
        if is_test:
            tests += n
        else:
            counts[status] += n
            per = by_channel.setdefault(channel or PROLIFIC_CHANNEL, {"entered": 0, "completed": 0})
            per["entered"] += n
            per["completed"] += n if status == Participant.Status.COMPLETED else 0
    entered = sum(counts.values())
    declined = counts[Participant.Status.DECLINED]
    consented = entered - declined
    completed = counts[Participant.Status.COMPLETED]
    return {
        "entered": entered, **counts,
        "decline_rate": round(declined / entered, 4) if entered else None,
        "completion_rate": round(completed / consented, 4) if consented else None,
        "test_participants": tests,
        "withdrawn": Withdrawal.objects.filter(study=study, reason=Withdrawal.Reason.WITHDRAWN,
                                                was_test=False).count(),
        "channels": dict(sorted(by_channel.items())),  # real participants per recruitment channel
    }


def summary_line(p: dict[str, Any]) -> str:
    """One readable line, e.g. "40 entered: 30 completed (81% of 37 who consented), 3 declined (7.5%), …"."""
    def pct(rate: float | None) -> str:
        return "–" if rate is None else f"{100 * rate:.3g}%"

    parts = [f"{p['entered']} entered: {p['completed']} completed ({pct(p['completion_rate'])} of "
             f"{p['entered'] - p['declined']} who consented)",
             f"{p['declined']} declined consent ({pct(p['decline_rate'])})",
             f"{p['started']} in progress"]
    for key, label in (("returned", "returned"), ("timed_out", "timed out"), ("screened_out", "screened out"),
                       ("withdrawn", "withdrew (data removed)"),
                       ("test_participants", "test participants, not counted")):
        if p[key]:
            parts.append(f"{p[key]} {label}")
    if set(p.get("channels", {})) - {PROLIFIC_CHANNEL}:  # only said when someone came another way
        parts.append("by channel: " + ", ".join(f"{name} {c['completed']} completed of {c['entered']}"
                                                for name, c in p["channels"].items()))
    return ", ".join(parts)
