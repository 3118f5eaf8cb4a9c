"""Publishing a study on Prolific, reading its submissions and acting on them (plain functions; the admin,
the API and the periodic task call these).

- :func:`publish` creates the study on Prolific (the participant link, the three completion codes, the number
  of places) and publishes it.
- :func:`sync` reads every submission, stores it, gives the slots of participants who **returned** or **timed
  out** back to the balanced draw (``surveys.flow.mark_participants``), and decides each submission awaiting
  review: approve a participant who completed and passed the live attention check; reject it or request a
  return (the study's choice, with its message) when they failed it; leave it for a person when the platform
  has no completed participant for it. With the automatic policy decisions are sent at once; with the queued
  policy they wait for :func:`send_decisions` (a click in the admin or ``POST …/send/``).
- A decision is sent at most once: a row is claimed (queued/failed → sending) by a single UPDATE before the
  call, so two workers syncing at the same time cannot both send it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from surveys import flow
from surveys.models import Participant, Study

from .client import ProlificClient, ProlificError
from .models import ProlificStudy, Submission

log = logging.getLogger(__name__)

AWAITING_REVIEW = "AWAITING REVIEW"
#: Prolific's status → the participant status it means here (only for participants still answering).
ENDED = {"RETURNED": Participant.Status.RETURNED, "TIMED-OUT": Participant.Status.TIMED_OUT}


class PublishError(Exception):
    """The study cannot be published; the message says why."""


# --- publishing ---------------------------------------------------------------------------------------
def study_payload(link: ProlificStudy) -> dict:
    """The body of Prolific's ``POST /api/v1/studies/`` for this study. Every code asks for manual review:
    the platform decides (and sends) approvals itself."""
    study = link.study
    review = [{"action": "MANUALLY_REVIEW"}]
    return {
        "name": study.title,
        "internal_name": study.slug,
        "description": link.description or study.title,
        "external_study_url": study.participant_link(),
        "prolific_id_option": "url_parameters",
        "completion_option": "code",
        "completion_codes": [
            {"code": study.completion_code, "code_type": "COMPLETED", "actions": review},
            {"code": study.failed_attention_code, "code_type": "FAILED_ATTENTION_CHECK", "actions": review},
            {"code": study.screened_out_code, "code_type": "OTHER", "actions": review},
        ],
        "total_available_places": link.places,
        "estimated_completion_time": link.estimated_minutes,
        "reward": link.reward_cents,
        "device_compatibility": ["desktop", "mobile", "tablet"],
    }


def publish(link: ProlificStudy, client: ProlificClient | None = None) -> ProlificStudy:
    """Create the study on Prolific (once) and publish it. The study must be live here with items and the
    demonstrations its kind needs, or participants would meet a closed door."""
    study = link.study
    problems = []
    if study.status != Study.Status.LIVE:
        problems.append(f"set study {study.slug} live first (it is {study.status})")
    if not study.main_items().exists():
        problems.append("it has no items")
    if study.demonstration_problem():
        problems.append(study.demonstration_problem())
    if link.prolific_id and link.prolific_status not in ("", "UNPUBLISHED"):
        problems.append(f"it is already on Prolific ({link.prolific_id}, {link.prolific_status})")
    if problems:
        raise PublishError("cannot publish: " + "; ".join(problems))
    try:
        client = client or ProlificClient()
        if not link.prolific_id:
            created = client.create_study(study_payload(link))
            link.prolific_id, link.prolific_status = created["id"], created.get("status", "UNPUBLISHED")
            link.save(update_fields=["prolific_id", "prolific_status"])
        published = client.publish_study(link.prolific_id)
    except ProlificError as exc:
        raise PublishError(str(exc)) from None
    link.prolific_status = published.get("status", "ACTIVE")
    link.published_at = timezone.now()
    link.save(update_fields=["prolific_status", "published_at"])
    return link


# --- synchronising ---------------------------------------------------------------------------------------
@dataclass
class SyncResult:
    study: str
    seen: int = 0
    new: int = 0
    ended: dict[str, int] = field(default_factory=dict)  # participants marked returned / timed out
    decided: dict[str, int] = field(default_factory=dict)
    sent: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return vars(self).copy()


def _when(value) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else None


def decide(link: ProlificStudy, participant: Participant | None) -> tuple[str, str]:
    """(decision, reason) for a submission awaiting review, from the platform's own record."""
    if participant is None:
        return Submission.Decision.REVIEW, "no participant with this PROLIFIC_PID entered the study here"
    if participant.status != Participant.Status.COMPLETED:
        return Submission.Decision.REVIEW, f"the participant is {participant.status} here, not completed"
    if participant.passed_attention is False:
        action = (Submission.Decision.REJECT if link.failed_attention_action == ProlificStudy.FailedAction.REJECT
                  else Submission.Decision.RETURN)
        rho = participant.live_attention_rho
        return action, "failed the live attention check" + (f" (ρ = {rho:.2f})" if rho is not None else "")
    return Submission.Decision.APPROVE, "completed" + (" and passed the attention check"
                                                       if participant.passed_attention else "")


def _store(link: ProlificStudy, row: dict, participants: dict[str, Participant], result: SyncResult) -> Submission:
    pid = str(row.get("participant_id") or row.get("participant") or "")
    values = {"participant_pid": pid, "participant": participants.get(pid), "status": str(row.get("status", "")),
              "study_code": str(row.get("study_code") or row.get("entered_code") or "")[:64],
              "started_at": _when(row.get("started_at")), "completed_at": _when(row.get("completed_at"))}
    submission, created = Submission.objects.update_or_create(
        submission_id=str(row["id"]), defaults=values, create_defaults={**values, "prolific_study": link})
    result.new += created
    return submission


def _give_back_slots(submission: Submission, result: SyncResult) -> None:
    """A returned or timed-out participant who was still answering stops holding items."""
    status = ENDED.get(submission.status)
    participant = submission.participant
    if status is None or participant is None or participant.status != Participant.Status.STARTED:
        return
    if flow.mark_participants(Participant.objects.filter(pk=participant.pk, status=Participant.Status.STARTED),
                              status):
        result.ended[status] = result.ended.get(status, 0) + 1


def _record_decision(link: ProlificStudy, submission: Submission, result: SyncResult) -> None:
    if submission.status != AWAITING_REVIEW:
        if submission.state in (Submission.State.QUEUED, Submission.State.FAILED):
            Submission.objects.filter(pk=submission.pk, state=submission.state).update(
                state=Submission.State.SKIPPED, error=f"already {submission.status} on Prolific")
        return
    if submission.decision and submission.decision != Submission.Decision.REVIEW:
        return  # decided before; sending (or the click) is pending or done
    decision, reason = decide(link, submission.participant)
    if decision == submission.decision:
        return
    sendable = decision != Submission.Decision.REVIEW
    Submission.objects.filter(pk=submission.pk).update(
        decision=decision, decision_reason=reason[:300], decided_at=timezone.now(),
        state=Submission.State.QUEUED if sendable else Submission.State.NONE)
    result.decided[decision] = result.decided.get(decision, 0) + 1


def sync(link: ProlificStudy, client: ProlificClient | None = None) -> SyncResult:
    """Read the study's submissions from Prolific and act on them (see the module docstring)."""
    result = SyncResult(study=link.study.slug)
    if not link.prolific_id:
        result.errors.append("not on Prolific yet: publish it first")
        return result
    try:
        client = client or ProlificClient()
        rows = list(client.submissions(link.prolific_id))
    except ProlificError as exc:
        link.sync_error = str(exc)
        link.save(update_fields=["sync_error"])
        result.errors.append(str(exc))
        return result
    pids = {str(r.get("participant_id") or r.get("participant") or "") for r in rows}
    participants = {p.prolific_pid: p for p in Participant.objects.filter(study=link.study, prolific_pid__in=pids)}
    for row in rows:
        with transaction.atomic():
            submission = _store(link, row, participants, result)
            _give_back_slots(submission, result)
            submission.refresh_from_db()
            _record_decision(link, submission, result)
        result.seen += 1
    link.synced_at, link.sync_error = timezone.now(), ""
    link.save(update_fields=["synced_at", "sync_error"])
    if link.review_policy == ProlificStudy.Policy.AUTOMATIC:
        sent, failed = send_decisions(link.submissions.all(), client=client, retry_failed=True)
        result.sent, result.failed = sent, failed
    return result


# --- sending decisions ----------------------------------------------------------------------------------
def _claim(submission: Submission, retry_failed: bool) -> bool:
    states = [Submission.State.QUEUED] + ([Submission.State.FAILED] if retry_failed else [])
    return bool(Submission.objects.filter(pk=submission.pk, state__in=states, status=AWAITING_REVIEW)
                .update(state=Submission.State.SENDING))


def send_one(submission: Submission, client: ProlificClient, retry_failed: bool = True) -> bool | None:
    """Send one queued decision; True sent, False failed (kept with the error), None not claimable."""
    if not _claim(submission, retry_failed):
        return None
    link = submission.prolific_study
    try:
        if submission.decision == Submission.Decision.APPROVE:
            client.approve(submission.submission_id)
        elif submission.decision == Submission.Decision.REJECT:
            client.reject(submission.submission_id, link.rejection_message.strip(), link.rejection_category)
        elif submission.decision == Submission.Decision.RETURN:
            client.request_return(submission.submission_id, [link.rejection_message.strip()])
        else:
            raise ProlificError(f"nothing to send for decision {submission.decision!r}")
    except ProlificError as exc:
        Submission.objects.filter(pk=submission.pk).update(state=Submission.State.FAILED, error=str(exc)[:2000],
                                                           attempts=submission.attempts + 1)
        log.warning("Prolific: %s for %s failed: %s", submission.decision, submission.submission_id, exc)
        return False
    Submission.objects.filter(pk=submission.pk).update(state=Submission.State.SENT, sent_at=timezone.now(),
                                                       error="", attempts=submission.attempts + 1)
    return True


def send_decisions(submissions: QuerySet[Submission] | Iterable[Submission], client: ProlificClient | None = None,
                   retry_failed: bool = True) -> tuple[int, int]:
    """Send the queued (and, with ``retry_failed``, the failed) decisions among ``submissions``.
    Returns (sent, failed)."""
    if isinstance(submissions, QuerySet):
        states = [Submission.State.QUEUED] + ([Submission.State.FAILED] if retry_failed else [])
        submissions = submissions.filter(state__in=states).select_related("prolific_study")
    sent = failed = 0
    for submission in submissions:
        client = client or ProlificClient()
        outcome = send_one(submission, client, retry_failed)
        sent += outcome is True
        failed += outcome is False
    return sent, failed


def sync_all() -> list[SyncResult]:
    """Synchronise every study that is on Prolific and not finished there (the periodic task)."""
    results = []
    for link in ProlificStudy.objects.exclude(prolific_id="").exclude(prolific_status="COMPLETED").select_related(
            "study"):
        try:
            results.append(sync(link))
        except Exception as exc:  # one study's trouble must not stop the others
            log.exception("Prolific sync of %s failed", link.study.slug)
            link.sync_error = f"{type(exc).__name__}: {exc}"
            link.save(update_fields=["sync_error"])
            results.append(SyncResult(study=link.study.slug, errors=[link.sync_error]))
    return results
