"""Admin of the Prolific integration: the study's settings and buttons (publish, sync), and the submissions
with their decisions, which a researcher sends with one click under the queued policy."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, Min, Q
from django.utils import timezone

from access.owned_admin import OwnedAdminMixin
from surveys.admin_ids import RawIdsAdminMixin

from .client import ProlificError
from .models import ProlificStudy, Submission, rejection_problems
from .review import PublishError, publish, send_decisions, sync


@admin.register(ProlificStudy)
class ProlificStudyAdmin(OwnedAdminMixin, admin.ModelAdmin):
    list_display = ("study", "prolific_id", "prolific_status", "places", "review_policy", "awaiting_click",
                    "pending", "synced_at", "sync_error")
    list_filter = ("review_policy", "prolific_status")
    readonly_fields = ("prolific_id", "prolific_status", "published_at", "synced_at", "sync_error")
    actions = ("publish_action", "sync_action", "send_action")

    def get_queryset(self, request):
        unsettled = Q(submissions__status="AWAITING REVIEW") & ~Q(submissions__state=Submission.State.SENT)
        return super().get_queryset(request).select_related("study").annotate(
            n_queued=Count("submissions", filter=Q(submissions__state=Submission.State.QUEUED)),
            n_pending=Count("submissions", filter=unsettled | Q(submissions__status="AWAITING REVIEW",
                                                                 submissions__decision=Submission.Decision.RETURN)),
            first_auto_approval=Min("submissions__auto_approve_at", filter=unsettled | Q(
                submissions__status="AWAITING REVIEW", submissions__decision=Submission.Decision.RETURN)))

    @admin.display(description="decisions waiting for a click", ordering="n_queued")
    def awaiting_click(self, obj: ProlificStudy) -> int:
        return obj.n_queued

    @admin.display(description="awaiting review, undecided (Prolific approves the first on)",
                   ordering="first_auto_approval")
    def pending(self, obj: ProlificStudy) -> str:
        if not obj.n_pending:
            return "—"
        when = timezone.localtime(obj.first_auto_approval).strftime("%Y-%m-%d") if obj.first_auto_approval else "?"
        return f"{obj.n_pending} (first on {when})"

    @admin.action(description="Publish on Prolific", permissions=["change"])
    def publish_action(self, request, queryset):
        for link in queryset:
            try:
                publish(link)
            except PublishError as exc:
                self.message_user(request, f"{link.study.slug}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{link.study.slug}: published on Prolific as {link.prolific_id}.")

    @admin.action(description="Read submissions from Prolific now", permissions=["change"])
    def sync_action(self, request, queryset):
        for link in queryset:
            result = sync(link)
            if result.errors:
                self.message_user(request, f"{link.study.slug}: {'; '.join(result.errors)}", messages.ERROR)
            else:
                self.message_user(request, f"{link.study.slug}: {result.seen} submissions, {result.new} new; "
                                           f"decided {result.decided or 'none'}; participants ended "
                                           f"{result.ended or 'none'}; sent {result.sent}.")

    @admin.action(description="Send the queued decisions to Prolific", permissions=["change"])
    def send_action(self, request, queryset):
        try:
            sent, failed = send_decisions(Submission.objects.filter(prolific_study__in=queryset))
        except ProlificError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, f"sent {sent} decision(s)" + (f"; {failed} failed" if failed else ""),
                          messages.WARNING if failed else messages.SUCCESS)


@admin.register(Submission)
class SubmissionAdmin(OwnedAdminMixin, RawIdsAdminMixin, admin.ModelAdmin):
    """Prolific's submissions and their decisions; PROLIFIC_PIDs only for *view participant*."""

    pid_fields = ("participant_pid",)
    list_display = ("participant_pid", "prolific_study", "status", "study_code", "decision", "decision_reason",
                    "state", "auto_approve_at", "error")
    list_filter = ("state", "decision", "status", "prolific_study")
    search_fields = ("participant_pid", "submission_id")
    readonly_fields = [f.name for f in Submission._meta.fields]
    actions = ("send_action", "approve_action", "reject_action", "return_action")

    def has_add_permission(self, request):
        return False

    def pid_of(self, obj: Submission) -> str:
        return obj.participant_pid

    @admin.action(description="Send the selected decisions to Prolific", permissions=["change"])
    def send_action(self, request, queryset):
        try:
            sent, failed = send_decisions(queryset)
        except ProlificError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, f"sent {sent} decision(s)" + (f"; {failed} failed" if failed else ""),
                          messages.WARNING if failed else messages.SUCCESS)

    def _override(self, request, queryset, decision: str) -> None:
        if decision == Submission.Decision.REJECT:
            refused = [f"{link.study.slug}: {' '.join(problems.values())}"
                       for link in ProlificStudy.objects.filter(submissions__in=queryset).distinct().select_related(
                           "study")
                       if (problems := rejection_problems(link.rejection_message, link.rejection_category))]
            if refused:
                self.message_user(request, "nothing queued; Prolific would refuse these rejections: "
                                  + "; ".join(refused) + " Fix the study's rejection message or category first.",
                                  messages.ERROR)
                return
        # a sent return request that was not followed may be overridden; any other sent decision may not
        settled = Q(state__in=[Submission.State.SENT, Submission.State.SENDING]) & ~Q(
            decision=Submission.Decision.RETURN, state=Submission.State.SENT)
        changed = queryset.filter(status="AWAITING REVIEW").exclude(settled).update(
            decision=decision, decision_reason=f"set by {request.user} in the admin", decided_at=timezone.now(),
            state=Submission.State.QUEUED)
        self.message_user(request, f"{changed} decision(s) set to {decision} and queued; send them to apply.")

    @admin.action(description="Queue: approve", permissions=["change"])
    def approve_action(self, request, queryset):
        self._override(request, queryset, Submission.Decision.APPROVE)

    @admin.action(description="Queue: reject (study's message)", permissions=["change"])
    def reject_action(self, request, queryset):
        self._override(request, queryset, Submission.Decision.REJECT)

    @admin.action(description="Queue: request a return (study's message)", permissions=["change"])
    def return_action(self, request, queryset):
        self._override(request, queryset, Submission.Decision.RETURN)
