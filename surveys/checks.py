"""Attention checks declared in a study file (``[[checks]]``, ``[check_failures]``; schema in
surveys/definition/schema.py).

Every participant gets every check, whatever items are drawn: when their items are drawn (the pledge),
:func:`place` makes one ``CheckAnswer`` row per check with the place it appears at (``after_item``: a fixed
number, or drawn from the declared range, at most the number of items drawn). The participant's flow
(surveys/flow.py) shows a check once that many items are answered (:func:`due`); its page has the check's own
wording and answer shape (a generic instrument built from the check: :func:`check_kind`), and its answer is
stored on that row with its verdict (:func:`submit`), never as an answer to an item, so reports, exports of
the items and model runs never see it. When the failures reach ``[check_failures] after``, ``action`` decides:
``record`` (nothing more), ``return`` (the study ends with a page asking the participant to return the
submission) or ``screen_out`` (the study ends with the screened-out completion code).

Prolific's attention-check policy is enforced where a file can be checked (:func:`check_problems`, and the
schema's ``[check_failures]`` table): a check is instructed-response or nonsensical; its instruction is in the
question itself (there is no separate instruction text); a nonsensical scale has no neutral midpoint; not every
answer passes; a single failed check never ends a study of five minutes or more.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from django.db import transaction
from django.utils import timezone

from .definition.errors import Problem
from .instruments import AnswerError
from .models import CheckAnswer, Item, Participant, Study

SHAPES = ("scale", "choice", "pick")  # the answer shapes a check may have: answers that pass can be named


def declared(study: Study) -> list[dict[str, Any]]:
    """The study's checks as stored in its definition (dumped ``CheckTable`` entries), in the file's order."""
    return list((study.definition or {}).get("checks") or [])


def failures_policy(study: Study) -> dict[str, Any]:
    """``[check_failures]``: {"action", "after", "minutes"} (defaults: record after 2)."""
    return {"action": "record", "after": 2, "minutes": None, **((study.definition or {}).get("check_failures") or {})}


def by_key(study: Study) -> dict[str, dict[str, Any]]:
    return {c["key"]: c for c in declared(study)}


# --- the check as a page ------------------------------------------------------------------------------
def _answer_table(check: Mapping[str, Any], study_answer: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return dict(check.get("answer") or study_answer or {}) or None


def check_kind(study: Study, check: Mapping[str, Any]):
    """A generic instrument whose wording and answer shape are the check's (renders and validates its page)."""
    from .instruments.generic import GenericInstrument

    answer = _answer_table(check, (study.definition or {}).get("answer"))
    page = {"sentence": _literal(check.get("sentence") or ""), "question": _literal(check["question"]), "hints": []}
    return GenericInstrument({"answer": answer, "page": page}, study.slug)


def _literal(text: str) -> str:
    """A check's text as a template that renders it as written (a check names no item field)."""
    return "{% raw %}" + text.replace("{% endraw %}", "") + "{% endraw %}" if text else ""


def check_item(study: Study, check: Mapping[str, Any]) -> Item:
    """An unsaved item standing for the check on its page (it is never stored)."""
    return Item(study=study, key=check["key"])


def page_context(study: Study, check: Mapping[str, Any]) -> dict[str, Any]:
    kind = check_kind(study, check)
    return {"q": kind.page_context(check_item(study, check)), "item_template": kind.template_name,
            "shape": kind.shape}


def passes(check: Mapping[str, Any], value: float | None, choice: str) -> bool:
    """Whether an answer is among the check's passing answers."""
    for good in check.get("pass") or []:
        if isinstance(good, str) and choice and good == choice:
            return True
        if not isinstance(good, str) and value is not None and abs(float(good) - value) < 1e-9:
            return True
    return False


# --- validating a file -------------------------------------------------------------------------------
def check_problems(dump: Mapping[str, Any], file: str) -> list[Problem]:
    """What is wrong with a definition's ``[[checks]]`` and ``[check_failures]`` beyond their types."""
    from .instruments.generic import GenericInstrument

    problems: list[Problem] = []
    checks = dump.get("checks") or []
    for n, check in enumerate(checks):
        where = f"checks[{n}]"
        answer = _answer_table(check, dump.get("answer"))
        if answer is None:
            problems.append(Problem(file, f"{where}.answer", "the study has no [answer] table: give the check its "
                                    "own answer (a scale or a choice)"))
            continue
        shape = answer.get("shape", "scale")
        if shape not in SHAPES:
            problems.append(Problem(file, f"{where}.answer", f"a check's answer is a scale, a choice or a pick "
                                    f"(its passing answers are named), not {shape!r}"))
            continue
        kind = GenericInstrument({"answer": answer}, "")
        if shape == "scale":
            values = [float(v) for v in kind.answer_options()]
            allowed: list[Any] = values
            bad = [g for g in check["pass"] if isinstance(g, str) or not any(abs(float(g) - v) < 1e-9 for v in values)]
            if bad:
                problems.append(Problem(file, f"{where}.pass", f"{', '.join(map(repr, bad))} not on the scale "
                                        f"{values[0]:g}–{values[-1]:g}"))
            if check["type"] == "nonsensical" and len(values) % 2 == 1:
                problems.append(Problem(file, f"{where}.answer", "a nonsensical check's scale has no neutral "
                                        f"midpoint (Prolific's policy): {len(values)} points have one at "
                                        f"{values[len(values) // 2]:g}; use an even number of points"))
        else:
            allowed = [o["key"] for o in answer.get("options") or []]
            bad = [g for g in check["pass"] if str(g) not in allowed]
            if bad and allowed:
                problems.append(Problem(file, f"{where}.pass", f"{', '.join(map(repr, bad))} not among the "
                                        f"options ({', '.join(allowed)})"))
            if not allowed:
                problems.append(Problem(file, f"{where}.answer", "a check's choice needs its options in the "
                                        "answer table (answer.options)"))
        if check["type"] == "instructed" and not _names_an_answer(check, answer):
            named = ", ".join(repr(n) for n in _answer_names(check, answer))
            above = " (it is in the sentence above the question)" if _names_an_answer(check, answer, "sentence") else ""
            problems.append(Problem(file, f"{where}.question", "an instructed-response check says in its question "
                                    f"which answer to give (Prolific's policy: in the question, not in text above "
                                    f"it){above}; name one of {named}"))
        if allowed and len({str(g) for g in check["pass"]}) >= len(allowed):
            problems.append(Problem(file, f"{where}.pass", "every answer passes: the check checks nothing"))
    policy = dump.get("check_failures") or {}
    if checks and policy.get("action", "record") != "record" and policy.get("after", 2) > len(checks):
        problems.append(Problem(file, "check_failures.after", f"{policy['after']} failed checks can never happen: "
                                f"the study declares {len(checks)} check(s)"))
    if not checks and policy.get("action", "record") != "record":
        problems.append(Problem(file, "check_failures.action", "the study declares no [[checks]] to fail"))
    return problems


def _answer_names(check: Mapping[str, Any], answer: Mapping[str, Any]) -> list[str]:
    """How a passing answer may be named: its value or key, and its label."""
    names = []
    labels = {float(k): v for k, v in (answer.get("labels") or {}).items()} if answer.get("shape", "scale") == "scale" else {}
    options = {o["key"]: o["label"] for o in answer.get("options") or []}
    for good in check["pass"]:
        if isinstance(good, str):
            names += [good, options.get(good, good)]
        else:
            names += [f"{float(good):g}"] + ([labels[float(good)]] if float(good) in labels else [])
    return list(dict.fromkeys(names))


def _names_an_answer(check: Mapping[str, Any], answer: Mapping[str, Any], field: str = "question") -> bool:
    text = (check.get(field) or "").casefold()
    return any(name.casefold() in text for name in _answer_names(check, answer))


# --- placing and answering ------------------------------------------------------------------------------
def place(participant: Participant, items: int, rng: random.Random) -> list[CheckAnswer]:
    """Make the participant's check rows (once; called with their items' draw, in its transaction)."""
    rows = []
    for check in declared(participant.study):
        spot = check["after_item"]
        after = rng.randint(spot[0], spot[1]) if isinstance(spot, list) else int(spot)
        rows.append(CheckAnswer(participant=participant, check_key=check["key"], after_item=min(after, items)))
    return CheckAnswer.objects.bulk_create(rows, ignore_conflicts=True)


def due(participant: Participant, answered: int | None) -> CheckAnswer | None:
    """The check the participant is to answer now: the first unanswered one placed after at most ``answered``
    items (None: all items are answered, so any unanswered check)."""
    rows = CheckAnswer.objects.filter(participant=participant, answered_at__isnull=True)
    if answered is not None:
        rows = rows.filter(after_item__lte=answered)
    return rows.order_by("after_item", "id").first()


def counts(participant: Participant) -> tuple[int, int]:
    """(checks placed, checks answered) of the participant."""
    rows = list(CheckAnswer.objects.filter(participant=participant).values_list("answered_at", flat=True))
    return len(rows), sum(r is not None for r in rows)


def pending(participant: Participant) -> bool:
    return CheckAnswer.objects.filter(participant=participant, answered_at__isnull=True).exists()


@dataclass(frozen=True)
class CheckSubmission:
    saved: bool
    message: str = ""
    ended: bool = False  # the failures reached the policy's threshold and the study ended for them


def submit(participant: Participant, row: CheckAnswer, data: Mapping[str, Any], now: datetime | None = None
           ) -> CheckSubmission:
    """Store the participant's answer to the check ``row`` (once; a second answer changes nothing), its
    verdict, and apply ``[check_failures]`` when the failures reach its threshold."""
    study = participant.study
    check = by_key(study).get(row.check_key)
    if check is None:  # the check left the file after this participant's draw: nothing to ask
        CheckAnswer.objects.filter(pk=row.pk, answered_at__isnull=True).delete()
        return CheckSubmission(saved=False)
    kind = check_kind(study, check)
    try:
        form = kind.shape.form_data(data)
        if kind.shape.is_empty(form):
            return CheckSubmission(saved=False, message=kind.shape.empty_message)
        typed = kind.validate_answer(check_item(study, check), form).columns()
    except AnswerError as exc:
        return CheckSubmission(saved=False, message=str(exc))
    now = now or timezone.now()
    value, choice = typed.get("value"), typed.get("choice") or ""
    verdict = passes(check, value, choice)
    taken = int((now - row.shown_at).total_seconds() * 1000) if row.shown_at else None
    with transaction.atomic():
        locked = Participant.objects.select_for_update().get(pk=participant.pk)
        if locked.status != Participant.Status.STARTED:
            return CheckSubmission(saved=False)
        changed = CheckAnswer.objects.filter(pk=row.pk, answered_at__isnull=True).update(
            answered_at=now, value=value, choice=choice, raw=kind.shape.raw(form)[:200], passed=verdict,
            time_taken_ms=None if taken is None else max(0, min(taken, 2**31 - 1)))
        if not changed:
            return CheckSubmission(saved=False)  # answered meanwhile: the first answer stands
        ended = False if verdict else _apply_policy(locked, now)
    participant.refresh_from_db()
    return CheckSubmission(saved=True, ended=ended)


def _apply_policy(locked: Participant, now: datetime) -> bool:
    """End the study for a participant whose failures reach ``[check_failures] after`` (unless it records only)."""
    policy = failures_policy(locked.study)
    if policy["action"] == "record":
        return False
    failed = CheckAnswer.objects.filter(participant=locked, passed=False).count()
    if failed < policy["after"]:
        return False
    locked.status = Participant.Status.SCREENED_OUT
    locked.status_changed_at = now
    locked.completion_code = locked.study.screened_out_code if policy["action"] == "screen_out" else ""
    locked.save(update_fields=["status", "status_changed_at", "completion_code"])
    return True


def mark_shown(row: CheckAnswer, now: datetime | None = None) -> None:
    if row.shown_at is None:
        now = now or timezone.now()
        if CheckAnswer.objects.filter(pk=row.pk, shown_at__isnull=True).update(shown_at=now):
            row.shown_at = now


def ended_by_checks(participant: Participant) -> str | None:
    """``"return"`` or ``"screen_out"`` when the participant's study was ended by failed checks, else None."""
    if participant.status != Participant.Status.SCREENED_OUT or not declared(participant.study):
        return None
    policy = failures_policy(participant.study)
    if policy["action"] == "record":
        return None
    failed = CheckAnswer.objects.filter(participant=participant, passed=False).count()
    return policy["action"] if failed >= policy["after"] else None


__all__ = ["CheckSubmission", "check_kind", "check_problems", "counts", "declared", "due",
           "ended_by_checks", "failures_policy", "mark_shown", "page_context", "passes", "pending", "place",
           "submit"]
