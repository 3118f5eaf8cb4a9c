"""What checks and exclusion rules store (imported by surveys/models.py; no import of it: string references).

``CheckAnswer``: one row per participant and declared check (``[[checks]]``, surveys/checks.py), made when the
participant's items are drawn with the place the check appears at, answered once. The database keeps one row per
(participant, check) and an answer's verdict beside it: never a second answer to the same check.

``ExclusionDecision``: the stored outcome of a study's exclusion rules for one completed participant
(analysis/exclusions.py: ``manage.py exclusions``, the report page's button, the API): excluded or not, and the
rules that excluded them with what each measured.
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone


class CheckAnswer(models.Model):
    """A participant's place for one check and, once answered, their answer and whether it passed."""

    participant = models.ForeignKey("surveys.Participant", on_delete=models.CASCADE, related_name="check_answers")
    check_key = models.CharField(max_length=40, help_text="The check's key in the study file ([[checks]] key).")
    after_item = models.PositiveSmallIntegerField(help_text="Shown after this many of the participant's items.")
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    value = models.FloatField(null=True, blank=True, help_text="A scale answer.")
    choice = models.CharField(max_length=100, blank=True, help_text="A choice answer's option key.")
    raw = models.CharField(max_length=200, blank=True, help_text="The submitted value as sent.")
    passed = models.BooleanField(null=True, blank=True, help_text="Empty until answered.")
    time_taken_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["participant", "after_item", "id"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "check_key"], name="checkanswer_unique_per_participant"),
            models.CheckConstraint(condition=Q(answered_at__isnull=True, passed__isnull=True)
                                   | Q(answered_at__isnull=False, passed__isnull=False),
                                   name="checkanswer_answered_has_verdict"),
            models.CheckConstraint(condition=Q(answered_at__isnull=True)
                                   | Q(value__isnull=False) | ~Q(choice=""),
                                   name="checkanswer_answered_has_answer"),
        ]

    def __str__(self) -> str:
        verdict = "unanswered" if self.passed is None else "passed" if self.passed else "failed"
        return f"participant {self.participant_id} check {self.check_key}: {verdict}"


class ExclusionDecision(models.Model):
    """The exclusion rules' decision for one completed participant, as last computed and stored."""

    participant = models.OneToOneField("surveys.Participant", on_delete=models.CASCADE,
                                       related_name="exclusion_decision")
    excluded = models.BooleanField()
    reasons = models.JSONField(default=list, blank=True,
                               help_text="The rules that excluded them: [{\"rule\", \"detail\"}] (empty: kept).")
    rules = models.JSONField(default=list, blank=True,
                             help_text="The rules applied, with their parameters: [{\"rule\", \"params\"}].")
    decided_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"participant {self.participant_id}: {'excluded' if self.excluded else 'kept'}"
