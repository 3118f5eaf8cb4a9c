"""Publishing a study on Prolific, reading its submissions and acting on them (plain functions; the admin,
the API and the periodic task call these).

- :func:`publish` checks what Prolific would refuse or a participant would trip over (:func:`publish_problems`),
  creates the study on Prolific (the participant link, the three completion codes, the number of places),
  publishes it and reads its status back (Prolific answers ``PUBLISHING`` first).
- :func:`sync` reads the study's status and every submission (paged), stores them, gives the slots of
  participants who **returned**, **timed out** or were **screened out** back to the balanced draw
  (``surveys.flow.mark_participants``), and decides each submission awaiting review: approve a participant who
  completed and passed the live attention check; reject it or request a return (the study's choice, with its
  message) when they failed it; leave it for a person when the platform has no completed participant for it.
  With the automatic policy decisions are sent at once; with the queued policy they wait for
  :func:`send_decisions` (a click in the admin or ``POST …/send/``).
- A return request only sends a message: the submission stays ``AWAITING REVIEW`` and Prolific approves (pays)
  it 21 days after completion. A participant asked to return who has not after ``PROLIFIC_RETURN_WAIT_DAYS``
  (or 2 days before that date) gets the study's ``unreturned_action``: reject, approve, or a pending decision
  for a person, shown with the date Prolific would approve it (``Submission.auto_approve_at``).
- A decision waits while Prolific is still ``PROCESSING`` a submission; it is dropped ("skipped") only once the
  submission is final there (approved, partially approved, rejected, returned, timed out, screened out).
- A decision is sent at most once: a row is claimed (queued/failed → sending) by a single UPDATE before the
  call, so two workers syncing at the same time cannot both send it.
"""
from __future__ import annotations

import ipaddress
import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable, Iterator
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from surveys import flow
from surveys.models import Participant, Study

from .client import ProlificClient, ProlificError
from .models import AUTO_APPROVE_AFTER, ProlificStudy, Submission, rejection_problems

log = logging.getLogger(__name__)

AWAITING_REVIEW = "AWAITING REVIEW"
#: Prolific's status → the participant status it means here (only for participants still answering).
ENDED = {"RETURNED": Participant.Status.RETURNED, "TIMED-OUT": Participant.Status.TIMED_OUT,
         "SCREENED OUT": Participant.Status.SCREENED_OUT}
#: Statuses after which nothing can be sent about a submission (RESERVED, ACTIVE, AWAITING REVIEW and
#: PROCESSING are not final: a decision waits through them).
FINAL = {"APPROVED", "PARTIALLY APPROVED", "REJECTED", "RETURNED", "TIMED-OUT", "SCREENED OUT"}
#: A follow-up decision on an unreturned participant is made at the latest this long before auto-approval.
FOLLOW_UP_MARGIN = timedelta(days=2)


class PublishError(Exception):
    """The study cannot be published; the message says why."""


@contextmanager
def _using(client: ProlificClient | None) -> Iterator[ProlificClient]:
    """``client``, or a new one (ProlificError without a token) closed at the end."""
    if client is not None:
        yield client
        return
    with ProlificClient() as own:
        yield own


# --- publishing ---------------------------------------------------------------------------------------
def study_payload(link: ProlificStudy) -> dict:
    """The body of Prolific's ``POST /api/v1/studies/`` for this study. Every code asks for manual review:
    the platform decides (and sends) approvals itself."""
    study = link.study
    review = [{"action": "MANUALLY_REVIEW"}]
    return {
        "name": study.shown_title,  # Prolific shows the name to participants
        "internal_name": study.slug,
        "description": link.description or study.shown_title,
        "external_study_url": study.participant_link(),
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {"code": study.completion_code, "code_type": "COMPLETED", "actions": review},
            {"code": study.failed_attention_code, "code_type": "FAILED_ATTENTION_CHECK", "actions": review},
            {"code": study.screened_out_code, "code_type": "OTHER", "actions": review},
        ],
        "total_available_places": link.places,
        "estimated_completion_time": link.estimated_minutes,
        "reward": link.reward_cents,
        "device_compatibility": ["desktop", "mobile", "tablet"],
        "filters": [],
    }


def _local_host(url: str) -> str | None:
    """The host of ``url`` if participants could not reach it (loopback, private, link-local, unnamed)."""
    host = (urlsplit(url).hostname or "").lower()
    if not host or host == "localhost" or host.endswith((".localhost", ".local", ".internal")) or "." not in host \
            and ":" not in host:
        return host or "(none)"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if not address.is_global else None


def publish_problems(link: ProlificStudy) -> list[str]:
    """Everything that stops ``link`` from being published, in plain words (empty: it can be)."""
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
    if link.estimated_minutes < 1:
        problems.append("the estimated completion time must be at least 1 minute")
    else:
        hourly = link.reward_cents * 60 / link.estimated_minutes
        minimum = settings.PROLIFIC_MIN_HOURLY_REWARD
        if hourly < minimum:
            needed = -(-minimum * link.estimated_minutes // 60)
            problems.append(f"the reward ({link.reward_cents} for {link.estimated_minutes} min) is {hourly:.0f} per "
                            f"hour, under Prolific's minimum of {minimum} (PROLIFIC_MIN_HOURLY_REWARD): pay at "
                            f"least {needed}")
    codes = [study.completion_code, study.failed_attention_code, study.screened_out_code]
    if not all(c.strip() for c in codes) or len(set(codes)) != len(codes):
        problems.append(f"the completion codes must be three different non-empty codes (they are {codes})")
    local = _local_host(settings.SITE_URL)
    if local:
        problems.append(f"SITE_URL is {settings.SITE_URL}: participants cannot reach {local}; set SITE_URL to "
                        "the public https address of this server")
    if link.rejects():
        problems += list(rejection_problems(link.rejection_message, link.rejection_category).values())
    return problems


def publish(link: ProlificStudy, client: ProlificClient | None = None) -> ProlificStudy:
    """Create the study on Prolific (once), publish it and read its status back. Refused, with every reason,
    when :func:`publish_problems` finds any (nothing is sent then)."""
    problems = publish_problems(link)
    if problems:
        raise PublishError("cannot publish: " + "; ".join(problems))
    try:
        with _using(client) as api:
            if not link.prolific_id:
                created = api.create_study(study_payload(link))
                link.prolific_id, link.prolific_status = created["id"], created.get("status", "UNPUBLISHED")
                link.save(update_fields=["prolific_id", "prolific_status"])
            published = api.publish_study(link.prolific_id)
            link.prolific_status = published.get("status") or "PUBLISHING"
            link.published_at = timezone.now()
            link.save(update_fields=["prolific_status", "published_at"])
            link.prolific_status = api.get_study(link.prolific_id).get("status") or link.prolific_status
            link.save(update_fields=["prolific_status"])
    except ProlificError as exc:
        raise PublishError(str(exc)) from None
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
    completed = _when(row.get("completed_at"))
    values = {"participant_pid": pid, "participant": participants.get(pid), "status": str(row.get("status", "")),
              "study_code": str(row.get("study_code") or row.get("entered_code") or "")[:64],
              "started_at": _when(row.get("started_at")), "completed_at": completed,
              "auto_approve_at": completed + AUTO_APPROVE_AFTER if completed else None}
    submission, created = Submission.objects.update_or_create(
        submission_id=str(row["id"]), defaults=values, create_defaults={**values, "prolific_study": link})
    result.new += created
    return submission


def _give_back_slots(submission: Submission, result: SyncResult) -> None:
    """A returned, timed-out or screened-out participant who was still answering stops holding items."""
    status = ENDED.get(submission.status)
    participant = submission.participant
    if status is None or participant is None or participant.status != Participant.Status.STARTED:
        return
    if flow.mark_participants(Participant.objects.filter(pk=participant.pk, status=Participant.Status.STARTED),
                              status):
        result.ended[status] = result.ended.get(status, 0) + 1


def _record_decision(link: ProlificStudy, submission: Submission, result: SyncResult) -> None:
    if submission.status != AWAITING_REVIEW:
        if submission.status in FINAL and submission.state in (Submission.State.QUEUED, Submission.State.FAILED):
            Submission.objects.filter(pk=submission.pk, state=submission.state).update(
                state=Submission.State.SKIPPED, error=f"already {submission.status} on Prolific")
        return
    if submission.return_requested_at:
        _follow_up_return(link, submission, result)
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


def follow_up_due(submission: Submission) -> datetime | None:
    """When a participant asked to return who has not gets the study's follow-up decision."""
    if not submission.return_requested_at:
        return None
    due = submission.return_requested_at + timedelta(days=settings.PROLIFIC_RETURN_WAIT_DAYS)
    return min(due, submission.auto_approve_at - FOLLOW_UP_MARGIN) if submission.auto_approve_at else due


def _follow_up_return(link: ProlificStudy, submission: Submission, result: SyncResult) -> None:
    """Still awaiting review after a return request: once due, apply the study's ``unreturned_action`` (a
    rejection or approval is queued; otherwise a person decides, told the date Prolific would approve it)."""
    due = follow_up_due(submission)
    if submission.decision != Submission.Decision.RETURN or due is None or timezone.now() < due:
        return
    asked = f"asked to return on {submission.return_requested_at:%Y-%m-%d} and has not"
    action = link.unreturned_action
    if action == ProlificStudy.Unreturned.REJECT:
        decision, state, reason = Submission.Decision.REJECT, Submission.State.QUEUED, f"{asked}: rejected"
    elif action == ProlificStudy.Unreturned.APPROVE:
        decision, state, reason = Submission.Decision.APPROVE, Submission.State.QUEUED, f"{asked}: approved"
    else:
        when = f"{submission.auto_approve_at:%Y-%m-%d}" if submission.auto_approve_at else "21 days after completion"
        decision, state = Submission.Decision.REVIEW, Submission.State.NONE
        reason = f"{asked}; Prolific approves (pays) it on {when} unless you reject or approve it"
    if Submission.objects.filter(pk=submission.pk, decision=Submission.Decision.RETURN).update(
            decision=decision, decision_reason=reason[:300], decided_at=timezone.now(), state=state):
        key = f"unreturned: {decision}"
        result.decided[key] = result.decided.get(key, 0) + 1


def sync(link: ProlificStudy, client: ProlificClient | None = None) -> SyncResult:
    """Read the study's status and submissions from Prolific and act on them (see the module docstring)."""
    result = SyncResult(study=link.study.slug)
    if not link.prolific_id:
        result.errors.append("not on Prolific yet: publish it first")
        return result
    try:
        with _using(client) as api:
            _sync(link, api, result)
    except ProlificError as exc:
        link.sync_error = str(exc)
        link.save(update_fields=["sync_error"])
        result.errors.append(str(exc))
    return result


def _sync(link: ProlificStudy, api: ProlificClient, result: SyncResult) -> None:
    """The work of :func:`sync` over one client: status, every page, each submission in its own transaction."""
    status = api.get_study(link.prolific_id).get("status")
    listing = api.submissions(link.prolific_id)
    rows = listing.rows
    pids = {str(r.get("participant_id") or r.get("participant") or "") for r in rows}
    participants = {p.prolific_pid: p for p in Participant.objects.filter(study=link.study, prolific_pid__in=pids)}
    for row in rows:
        with transaction.atomic():
            submission = _store(link, row, participants, result)
            _give_back_slots(submission, result)
            submission.refresh_from_db()
            _record_decision(link, submission, result)
        result.seen += 1
    if listing.note:
        result.errors.append(listing.note)
    link.synced_at, link.sync_error = timezone.now(), listing.note
    link.prolific_status = status or link.prolific_status
    link.save(update_fields=["synced_at", "sync_error", "prolific_status"])
    if link.review_policy == ProlificStudy.Policy.AUTOMATIC:
        result.sent, result.failed = send_decisions(link.submissions.all(), client=api, retry_failed=True)


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
    now = timezone.now()
    Submission.objects.filter(pk=submission.pk).update(
        state=Submission.State.SENT, sent_at=now, error="", attempts=submission.attempts + 1,
        **({"return_requested_at": now} if submission.decision == Submission.Decision.RETURN else {}))
    return True


def send_decisions(submissions: QuerySet[Submission] | Iterable[Submission], client: ProlificClient | None = None,
                   retry_failed: bool = True) -> tuple[int, int]:
    """Send the queued (and, with ``retry_failed``, the failed) decisions among ``submissions``.
    Returns (sent, failed)."""
    if isinstance(submissions, QuerySet):
        states = [Submission.State.QUEUED] + ([Submission.State.FAILED] if retry_failed else [])
        submissions = submissions.filter(state__in=states).select_related("prolific_study")
    sent = failed = 0
    pending = list(submissions)
    if pending:  # no client (and no token needed) when nothing is to be sent
        with _using(client) as api:
            for submission in pending:
                outcome = send_one(submission, api, retry_failed)
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
