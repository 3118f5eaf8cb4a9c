"""A study's counterpart on Prolific and the submissions Prolific reports for it.

The API token is never stored: it is read from the environment variable that ``settings.PROLIFIC_TOKEN_ENV``
names. A submission is unique per Prolific id, and its decision is sent at most once: the row is claimed
(queued/failed → sending) by one process before the call (prolific.review).
"""
from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import models

from surveys.models import Participant, Study

DEFAULT_REJECTION_MESSAGE = (
    "Thank you for taking part. Your answers did not pass the study's attention check: they did not follow the "
    "order of the expressions as the instructions asked, so we cannot approve this submission."
)
#: Prolific's rejection categories (its API refuses any other).
REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER")
#: Prolific approves a submission left AWAITING REVIEW this long after it was completed.
AUTO_APPROVE_AFTER = timedelta(days=21)
MIN_REJECTION_CHARS = 100


class ProlificStudy(models.Model):
    """How ``study`` is published on Prolific, and what to do with its submissions."""

    class Policy(models.TextChoices):
        AUTOMATIC = "automatic", "automatic: send each decision at once"
        QUEUED = "queued", "queued: decisions wait for a click in the admin (or POST …/send/)"

    class FailedAction(models.TextChoices):
        REJECT = "reject", "reject (with the message below)"
        RETURN = "return", "request a return (with the message below)"

    class Unreturned(models.TextChoices):
        REVIEW = "review", "leave it to a person (shown with the date Prolific approves it)"
        REJECT = "reject", "reject (with the message below)"
        APPROVE = "approve", "approve"

    study = models.OneToOneField(Study, on_delete=models.PROTECT, related_name="prolific")
    prolific_id = models.CharField(max_length=64, blank=True, db_index=True,
                                   help_text="The study's id on Prolific (set when it is created there).")
    prolific_status = models.CharField(max_length=30, blank=True, help_text="As Prolific last reported it.")
    places = models.PositiveIntegerField(default=50, help_text="Number of participants to recruit.")
    reward_cents = models.PositiveIntegerField(default=150, help_text="Payment per participant, in cents/pence.")
    estimated_minutes = models.PositiveIntegerField(default=8)
    description = models.TextField(blank=True, help_text="What Prolific shows participants before they start.")
    review_policy = models.CharField(max_length=10, choices=Policy.choices, default=Policy.QUEUED)
    failed_attention_action = models.CharField(max_length=10, choices=FailedAction.choices,
                                               default=FailedAction.RETURN)
    rejection_message = models.TextField(default=DEFAULT_REJECTION_MESSAGE,
                                         help_text="Sent with a rejection or a return request (Prolific requires "
                                                   "at least 100 characters for a rejection).")
    rejection_category = models.CharField(max_length=30, default="FAILED_CHECK",
                                          choices=[(c, c) for c in REJECTION_CATEGORIES],
                                          help_text="Prolific's rejection category.")
    unreturned_action = models.CharField(
        max_length=10, choices=Unreturned.choices, default=Unreturned.REVIEW,
        help_text="For a participant asked to return who has not: Prolific approves (and pays) such a submission "
                  "21 days after completion. Decided PROLIFIC_RETURN_WAIT_DAYS after the request, or 2 days "
                  "before that date.")
    published_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)
    sync_error = models.TextField(blank=True, help_text="The last synchronisation's error (empty when it worked).")

    class Meta:
        verbose_name = "Prolific study"

    def __str__(self) -> str:
        return f"{self.study.slug} on Prolific ({self.prolific_id or 'not created'})"

    def rejects(self) -> bool:
        """Whether the platform may send a rejection on its own (then the message must be one Prolific takes)."""
        return self.FailedAction.REJECT in (self.failed_attention_action, self.unreturned_action)

    def clean(self) -> None:
        if self.rejects():
            problems = rejection_problems(self.rejection_message, self.rejection_category)
            if problems:
                raise ValidationError(problems)


def rejection_problems(message: str, category: str) -> dict[str, str]:
    """Why Prolific would refuse a rejection with this message and category (empty: it would take it)."""
    problems = {}
    if len(message.strip()) < MIN_REJECTION_CHARS:
        problems["rejection_message"] = (f"Prolific requires at least {MIN_REJECTION_CHARS} characters for a "
                                         f"rejection message ({len(message.strip())} given).")
    if category not in REJECTION_CATEGORIES:
        problems["rejection_category"] = (f"{category!r} is not one of Prolific's rejection categories "
                                          f"({', '.join(REJECTION_CATEGORIES)}).")
    return problems


class Submission(models.Model):
    """One submission on Prolific (a participant's attempt) and the platform's decision about it."""

    class Decision(models.TextChoices):
        NONE = "", "none yet"
        APPROVE = "approve", "approve"
        REJECT = "reject", "reject"
        RETURN = "return", "request a return"
        REVIEW = "review", "needs a person (no completed participant here)"

    class State(models.TextChoices):
        NONE = "", "—"
        QUEUED = "queued", "queued (waiting for a click)"
        SENDING = "sending", "being sent"
        SENT = "sent", "sent to Prolific"
        FAILED = "failed", "failed (tried again at the next sync)"
        SKIPPED = "skipped", "not sent (decided on Prolific meanwhile)"

    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="submissions")
    submission_id = models.CharField(max_length=64, unique=True)
    participant_pid = models.CharField(max_length=64, db_index=True)
    participant = models.ForeignKey(Participant, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="prolific_submissions")
    status = models.CharField(max_length=30, help_text="Prolific's status (RESERVED, ACTIVE, AWAITING REVIEW, "
                                                       "PROCESSING, APPROVED, PARTIALLY APPROVED, REJECTED, "
                                                       "RETURNED, TIMED-OUT, SCREENED OUT).")
    study_code = models.CharField(max_length=64, blank=True, help_text="The completion code Prolific received.")
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    auto_approve_at = models.DateTimeField(null=True, blank=True, db_index=True,
                                           help_text="When Prolific approves it on its own if it is still awaiting "
                                                     "review (21 days after completion).")
    return_requested_at = models.DateTimeField(null=True, blank=True,
                                               help_text="When the return request was sent.")
    decision = models.CharField(max_length=10, choices=Decision.choices, blank=True, default="")
    decision_reason = models.CharField(max_length=300, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, blank=True, default="", db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["prolific_study", "started_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(state="sent") | models.Q(sent_at__isnull=False),
                                   name="prolific_submission_sent_has_time"),
        ]

    def __str__(self) -> str:
        return f"submission {self.submission_id} ({self.status})"  # no PROLIFIC_PID: see the admin
