"""Removing a participant's data: a withdrawal at the participant's request, or a test participant cleared
away. The only code that deletes human answers; every removal leaves an audit record (models.Withdrawal).

What is removed: the participant's responses, their assignment slots and their participant row, in one
transaction. What is kept (``Withdrawal``): the study, the hashed PROLIFIC_PID (the combined export's
``respondent_id``, so the same person can be found in exports shared earlier), the reason, who carried it
out and when, the status they had, and how many answers and slots were deleted. Reports and exports built
afterwards no longer contain them (they are read from the database each time). A withdrawn PID cannot enter
the study again (``check_not_withdrawn``); a removed test participant can.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from .flow_errors import FlowError
from .models import Assignment, Participant, RecruitmentChannel, Response, Study, Withdrawal
from .respondent_ids import hashed_id


class WithdrawalError(ValueError):
    """The removal cannot be carried out; the message says why."""


def respondent_id(pid: str) -> str:
    """The hashed PROLIFIC_PID stored in the audit record (the export's ``respondent_id``)."""
    return hashed_id(pid)


def check_not_withdrawn(study: Study, pid: str, channel: RecruitmentChannel | None = None) -> None:
    """Raise FlowError (403) when ``pid`` withdrew from ``study``: nothing of theirs is created again (the
    message names Prolific only when ``channel`` is None)."""
    if Withdrawal.objects.filter(study=study, reason=Withdrawal.Reason.WITHDRAWN,
                                 respondent_id=respondent_id(pid)).exists():
        raise FlowError(_("You have withdrawn from this study"),
                        _("You asked for your data to be removed from this study, and it has been. "
                          "You cannot take part in it again. Please return it on Prolific.") if channel is None
                        else _("You asked for your data to be removed from this study, and it has been. "
                               "You cannot take part in it again."), status=403)


@dataclass(frozen=True)
class Preview:
    """What a removal would delete (for the admin's confirmation page and the command's dry run)."""

    participant: Participant
    responses: int
    assignments: int


def preview(participant: Participant) -> Preview:
    return Preview(participant, participant.responses.count(), participant.assignments.count())


def _remove(participant: Participant, reason: str, by: str, note: str) -> Withdrawal:
    with transaction.atomic():
        locked = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        responses = Response.objects.filter(participant=locked)
        slots = Assignment.objects.filter(participant=locked)
        record = Withdrawal(
            study=locked.study, study_slug=locked.study.slug, respondent_id=respondent_id(locked.prolific_pid),
            reason=reason, note=note, requested_by=by or "unknown", participant_status=locked.status,
            was_test=locked.is_test, responses_deleted=responses.count(), assignments_deleted=slots.count(),
        )
        responses.delete()  # answers first: slots and the participant are PROTECTed by them
        slots.delete()
        locked.delete()
        record.save()
    return record


def withdraw(study: Study, pid: str, *, by: str, note: str = "") -> Withdrawal:
    """Delete every answer, slot and the row of ``pid`` in ``study`` at their request; return the audit record.

    WithdrawalError when there is no such participant (saying whether they withdrew already)."""
    participant = Participant.objects.filter(study=study, prolific_pid=pid.strip()).first()
    if participant is None:
        earlier = Withdrawal.objects.filter(study=study, respondent_id=respondent_id(pid.strip())).first()
        if earlier is not None:
            raise WithdrawalError(f"{pid} was already removed from {study.slug} on "
                                  f"{earlier.created_at:%Y-%m-%d %H:%M} UTC by {earlier.requested_by}")
        raise WithdrawalError(f"no participant with PROLIFIC_PID {pid!r} in study {study.slug!r}")
    return _remove(participant, Withdrawal.Reason.WITHDRAWN, by, note)


def withdraw_participants(queryset: QuerySet[Participant], *, by: str, note: str = "") -> list[Withdrawal]:
    """Withdraw every participant of ``queryset`` (the admin action)."""
    return [_remove(p, Withdrawal.Reason.WITHDRAWN, by, note) for p in queryset.select_related("study")]


def remove_test_participants(queryset: QuerySet[Participant], *, by: str) -> list[Withdrawal]:
    """Delete the test participants of ``queryset`` with their answers (audited as ``test``).

    WithdrawalError, and nothing deleted, when the selection holds a real participant."""
    real = queryset.filter(is_test=False)
    if real.exists():
        pids = ", ".join(real.order_by("prolific_pid").values_list("prolific_pid", flat=True)[:5])
        raise WithdrawalError(f"{real.count()} selected participant(s) are not test participants ({pids}): "
                              "nothing was removed. Real participants' data are removed only when they "
                              "withdraw (action “Withdraw …” or `.venv/bin/python manage.py withdraw`).")
    return [_remove(p, Withdrawal.Reason.TEST, by, "") for p in queryset.select_related("study")]
