"""The researcher's admin: studies (with their links, item import and raw CSV), items, participants
and read-only responses. Custom pages and the deletion guard live in surveys.admin_views."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from access.owned_admin import OwnedAdminMixin
from access.ownership import visible
from config.admin_columns import short_time, shortened

from . import flow
from .admin_ids import RawIdsAdminMixin
from .definition import versions as definition_versions
from .admin_definitions import download_definition_view, load_definition_view
from .admin_views import (ProtectedDeleteMixin, confirm_removal, import_items_view, item_template_view,
                          raw_responses_view,
                          test_participant_view)
from .instruments import AnswerError, instrument_choices
from .channels import entry_link
from .models import PROLIFIC_CHANNEL, Assignment, Item, Participant, RecruitmentChannel, Response, Study, Withdrawal


# The lists need the width of a laptop screen (1280 px) for their columns; the app list on the left took
# 300 px of it. The breadcrumbs and the admin index lead everywhere it did.
admin.site.enable_nav_sidebar = False


def count_of(model, fk: str, **filters) -> Coalesce:
    """A correlated COUNT(*) of ``model`` rows whose ``fk`` is the outer row (no join blow-up)."""
    rows = (model.objects.filter(**{fk: OuterRef("pk")}, **filters).order_by().values(fk)
            .annotate(n=Count("*")).values("n"))
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


# --- studies ----------------------------------------------------------------------------------------
class DemonstrationForm(forms.ModelForm):
    class Meta:
        model = Item
        fields = ("demo_order", "speaker_name", "speaker_gender", "expression", "statement", "demo_answer")
        # narrow enough for the six columns to fit the study page without sideways scrolling
        widgets = {
            "demo_order": forms.NumberInput(attrs={"style": "width: 4em"}),
            "speaker_name": forms.TextInput(attrs={"class": "vTextField", "style": "width: 8em"}),
            "speaker_gender": forms.TextInput(attrs={"class": "vTextField", "style": "width: 7em"}),
            "expression": forms.TextInput(attrs={"class": "vTextField", "style": "width: 10em"}),
            "statement": forms.TextInput(attrs={"class": "vTextField", "style": "width: 100%; min-width: 20em"}),
            "language": forms.TextInput(attrs={"class": "vTextField", "style": "width: 5em"}),
            "demo_answer": forms.NumberInput(attrs={"style": "width: 5em"}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.is_demonstration = True
        self.fields["demo_answer"].required = True

    def clean_demo_answer(self):
        value = self.cleaned_data["demo_answer"]
        study = getattr(self.instance, "study", None) if self.instance.study_id else None
        if study is not None and value is not None:
            try:
                return study.kind.validate(f"{value:g}")  # as the page writes it: 70.0 → "70"
            except AnswerError as exc:
                raise forms.ValidationError(str(exc)) from None
        return value


class DefaultOnOffSelect(forms.NullBooleanSelect):
    """A yes/no/empty setting shown as Default (what it means) / On / Off instead of Unknown / Yes / No."""

    def __init__(self, default_label: str, attrs=None):
        super().__init__(attrs)
        self.choices = [("unknown", default_label), ("true", "On"), ("false", "Off")]


class DemonstrationInline(admin.TabularInline):
    """The study's worked examples, edited with the fields its kind declares (``Instrument.demonstrations``);
    shown only for a kind that has demonstrations."""

    model = Item
    form = DemonstrationForm
    extra = 0
    verbose_name = "demonstration"
    verbose_name_plural = "demonstrations (worked examples with their answers: on the instructions page and in few-shot prompts)"
    ordering = ("demo_order", "id")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_demonstration=True)

    def get_fields(self, request, obj=None):
        spec = obj.kind.demonstrations if obj is not None else None
        return list(spec.fields) if spec is not None else list(DemonstrationForm.Meta.fields)


class ChannelForm(forms.ModelForm):
    class Meta:
        model = RecruitmentChannel
        fields = ("name", "id_param", "completion_url", "return_url")
        # narrow enough for the five columns (with the entry link) to fit the study page at 1280 px
        widgets = {
            "name": forms.TextInput(attrs={"class": "vTextField", "style": "width: 8em"}),
            "id_param": forms.TextInput(attrs={"class": "vTextField", "style": "width: 8em"}),
            "completion_url": forms.TextInput(attrs={"class": "vTextField", "style": "width: 17em"}),
            "return_url": forms.TextInput(attrs={"class": "vTextField", "style": "width: 13em"}),
        }


class ChannelInline(admin.TabularInline):
    """Ways into the study besides Prolific, each with the link to give out there."""

    model = RecruitmentChannel
    form = ChannelForm
    extra = 0
    fields = ("name", "id_param", "completion_url", "return_url", "link")
    readonly_fields = ("link",)
    verbose_name = "recruitment channel besides Prolific"
    verbose_name_plural = "recruitment channels besides Prolific"  # Django's own plural read "…besides Prolifics"

    @admin.display(description="entry link")
    def link(self, obj: RecruitmentChannel) -> str:
        return entry_link(obj) if obj.pk else "—"


class StudyForm(forms.ModelForm):
    """The study form, with the version question: a study with answers whose content an edit changes needs
    "Make a new version" (surveys/definition/versions.py), as ``load_study --new-version`` does."""

    new_version = forms.BooleanField(
        required=False, label="Make a new version",
        help_text="Needed when the study already has answers and this edit changes what participants or models "
                  "are given; earlier answers keep the version they were given under.")

    class Meta:
        model = Study
        fields = "__all__"

    def _post_clean(self) -> None:
        super()._post_clean()
        study = self.instance
        if study.pk is None or self.cleaned_data.get("new_version") or self.errors:
            return
        current = definition_versions.current_version(study)
        if not definition_versions.has_answers(study):
            return
        before = current.sha256 if current else definition_versions.pending_hash(Study.objects.get(pk=study.pk))
        if definition_versions.pending_hash(study) != before:
            self.add_error("new_version", "This study already has answers and this edit changes its content: "
                                          "tick “Make a new version” to save it as a new version.")


@admin.register(Study)
class StudyAdmin(OwnedAdminMixin, ProtectedDeleteMixin, admin.ModelAdmin):
    delete_advice = "To stop collecting, set the study's status to Closed."
    form = StudyForm
    list_display = ("title", "slug", "status", "instrument", "item_count", "participants_progress", "links")
    list_filter = ("status", "instrument")
    search_fields = ("title", "slug", "description")
    readonly_fields = ("prolific_link", "created_at", "declared_agents")
    fieldsets = (
        (None, {"fields": ("title", "slug", "status", "instrument", "description", "created_at")}),
        ("Shown to participants", {"fields": ("participant_title", "language", "consent_text", "instructions",
                                              "pledge_text")}),
        ("Design", {"fields": ("items_per_expression", "controls_per_participant", "items_per_participant",
                               "draw_speaker_names", "attention_filter", "attention_threshold",
                               "idle_timeout_minutes", "reference_study")}),
        ("Report", {"fields": ("report_options",),
                    "description": "Named report options of the study's kind, e.g. {\"reading\": \"authors\"} for "
                                   "WEP choice. Unset options take their default."}),
        ("Prolific", {"fields": ("prolific_link", "completion_code", "failed_attention_code",
                                 "screened_out_code"),
                      "description": "Paste the study link into Prolific (“I'll use URL parameters”) and "
                                     "enter the completion codes there."}),
        ("Model agents", {"fields": ("declared_agents",),
                          "description": "The model configurations the definition file declares ([[agents]])."}),
        ("Access", {"fields": ("owner", "shared_with"),
                    "description": "Who may use this study and its data (access.ownership)."}),
        ("Version", {"fields": ("new_version",),
                     "description": "Studies keep every version of their definition; answers record theirs."}),
    )
    filter_horizontal = ("shared_with",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            n_items=count_of(Item, "study", is_demonstration=False),
            n_participants=count_of(Participant, "study", is_test=False),
            n_completed=count_of(Participant, "study", status=Participant.Status.COMPLETED, is_test=False),
            n_declined=count_of(Participant, "study", status=Participant.Status.DECLINED, is_test=False),
            n_test=count_of(Participant, "study", is_test=True),
        )

    def get_prepopulated_fields(self, request, obj=None):
        """The slug is filled in from the title while a new study is added (later it is the participants' link)."""
        return {"slug": ("title",)} if obj is None else {}

    def get_form(self, request, obj=None, change=False, **kwargs):
        """The attention filter's empty choice names what it means: the kind's default, on or off."""
        form = super().get_form(request, obj, change=change, **kwargs)
        field = form.base_fields.get("attention_filter")
        if field is not None:
            default = ("the kind's default" if obj is None else
                       f"the default of {obj.kind.label}: {'on' if obj.kind.attention_filter_default else 'off'}")
            field.widget = DefaultOnOffSelect(f"Default ({default})")
        return form

    def get_inlines(self, request, obj):
        """The demonstrations inline once the study's kind is known and only if that kind has demonstrations;
        the recruitment channels."""
        demonstrations = obj is not None and obj.kind.demonstrations is not None
        return (DemonstrationInline, ChannelInline) if demonstrations else (ChannelInline,)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.items.exists():
            fields.append("instrument")  # the items' fields belong to it
        if obj is not None and obj.participants.exists():
            fields.append("slug")  # the Prolific link participants use
        return fields

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "instrument":
            return forms.ChoiceField(choices=instrument_choices(), initial=db_field.default,
                                     help_text=db_field.help_text, label="Instrument")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if change and obj.pk:
            definition_versions.ensure_first_version(Study.objects.get(pk=obj.pk))  # the state answers were given under
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if definition_versions.sync(form.instance) is not None and change:
            self.message_user(request, f"Saved as version {definition_versions.current_version(form.instance).number} "
                                       "of the study's definition.", messages.INFO)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Item:
            return super().save_formset(request, form, formset, change)
        instances = formset.save(commit=False)
        for obj in formset.deleted_objects:
            obj.delete()
        taken = set(form.instance.items.values_list("key", flat=True))
        for demo in instances:
            demo.is_demonstration = True
            if not demo.key:
                n = 1
                while f"demo-{n}" in taken:
                    n += 1
                demo.key = f"demo-{n}"
                taken.add(demo.key)
            demo.save()
        formset.save_m2m()

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("load-definition/", wrap(lambda r: load_definition_view(self, r)),
                 name="surveys_study_load_definition"),
            path("<path:object_id>/definition.zip",
                 wrap(lambda r, object_id: download_definition_view(self, r, object_id)),
                 name="surveys_study_definition"),
            path("<path:object_id>/import-items/", wrap(lambda r, object_id: import_items_view(self, r, object_id)),
                 name="surveys_study_import_items"),
            path("<path:object_id>/test-participant/",
                 wrap(lambda r, object_id: test_participant_view(self, r, object_id)),
                 name="surveys_study_test_participant"),
            path("<path:object_id>/item-template.csv",
                 wrap(lambda r, object_id: item_template_view(self, r, object_id)),
                 name="surveys_study_item_template"),
            path("<path:object_id>/raw-responses.csv",
                 wrap(lambda r, object_id: raw_responses_view(self, r, object_id)),
                 name="surveys_study_raw_responses"),
        ] + super().get_urls()

    @admin.display(description="items", ordering="n_items")
    def item_count(self, obj: Study) -> int:
        return obj.n_items

    @admin.display(description="participants: completed / entered")
    def participants_progress(self, obj: Study) -> str:
        """Completed / entered, then declined consent (with the decline rate) and test participants."""
        text = f"{obj.n_completed} / {obj.n_participants}"
        if obj.n_declined:
            text += f" · {obj.n_declined} declined ({100 * obj.n_declined / obj.n_participants:.0f}%)"
        if obj.n_test:
            text += f" · {obj.n_test} test"
        return text

    @admin.display(description="links")
    def links(self, obj: Study) -> str:
        return format_html_join(" · ", '<a href="{}" style="white-space: nowrap">{}</a>', [
            (reverse("surveys:preview", kwargs={"slug": obj.slug}) + "?restart=1", "preview"),
            (reverse("admin:surveys_study_test_participant", args=[obj.pk]), "test as participant"),
            (reverse("admin:surveys_study_import_items", args=[obj.pk]), "import items"),
            (reverse("admin:surveys_study_raw_responses", args=[obj.pk]), "raw CSV"),
            (reverse("admin:surveys_item_changelist") + f"?study__id__exact={obj.pk}", "items"),
            (reverse("admin:surveys_participant_changelist") + f"?study__id__exact={obj.pk}", "participants"),
            *([(reverse("admin:elicitation_run_agents", args=[obj.slug]), "run the declared agents")]
              if (obj.definition or {}).get("agents") else []),
        ])

    @admin.display(description="declared agents")
    def declared_agents(self, obj: Study) -> str:
        """The definition's agents by name, and the button that starts those not run yet."""
        agents = (obj.definition or {}).get("agents") or [] if obj.pk else []
        if not agents:
            return "none (add [[agents]] tables to the study's definition file)"
        return format_html('{} <a class="button" href="{}">Run the declared agents</a>',
                           ", ".join(f"{a['name']} ({a['endpoint']}, {a['mode']})" for a in agents),
                           reverse("admin:elicitation_run_agents", args=[obj.slug]))

    @admin.display(description="Prolific study link")
    def prolific_link(self, obj: Study) -> str:
        if obj.pk is None:
            return "(available once the study is saved)"
        return format_html(
            '<input type="text" id="prolific-link" value="{}" readonly class="vTextField" style="width: 42em; max-width: 100%;" '
            'aria-label="Prolific study link"> '
            '<button type="button" class="button" data-copy-target="prolific-link">Copy</button> '
            '<span class="copy-status" aria-live="polite"></span>',
            obj.participant_link(),
        )


# --- items ------------------------------------------------------------------------------------------
class UsedFilter(admin.SimpleListFilter):
    title = "answered"
    parameter_name = "answered"

    def lookups(self, request, model_admin):
        return (("yes", "has human responses"), ("no", "no human responses"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(responses__isnull=False).distinct()
        if self.value() == "no":
            return queryset.filter(responses__isnull=True)
        return queryset


@admin.register(Item)
class ItemAdmin(OwnedAdminMixin, ProtectedDeleteMixin, admin.ModelAdmin):
    delete_advice = "Items that were shown to participants or models stay, so their answers keep their meaning."
    # What a researcher scans first, narrow enough for a 1280 px screen with the filter sidebar: the key,
    # control and demonstration flags are in the filters and on the item's page.
    list_display = ("rendered_sentence", "label", "truth_shown", "statement_type", "study_slug", "compare_links")
    list_display_links = ("rendered_sentence",)
    list_filter = ("study", "expression", "statement_type", "truth", "is_control", "is_demonstration", UsedFilter)
    search_fields = ("statement", "key", "speaker_name", "statement_id")
    list_select_related = ("study",)
    list_per_page = 100
    readonly_fields = ("rendered_sentence", "source_row", "compare_links")

    @admin.display(description="compare")
    def compare_links(self, obj: Item) -> str:
        """Links to the page-beside-prompt view and the human-beside-model answers of this item."""
        if not obj.pk:
            return "-"
        return format_html(
            '<a href="{}">page &amp; prompt</a> · <a href="{}">answers</a>',
            reverse("admin:elicitation_item_prompt", args=[obj.pk]),
            reverse("admin:elicitation_item_answers", args=[obj.pk]),
        )

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and (obj.assignments.exists() or obj.responses.exists()):
            # Answers were given to this wording: it can no longer change.
            fields += [f.name for f in Item._meta.fields if f.name not in fields and f.name != "id"]
        return fields

    @admin.display(description="study", ordering="study__slug")
    def study_slug(self, obj: Item) -> str:
        return obj.study.slug

    @admin.display(description="truth", ordering="truth")
    def truth_shown(self, obj: Item) -> str:
        return obj.truth or "–"  # "none (non-verifiable)" took two lines in every row

    @admin.display(description="sentence (with the item's own speaker)")
    def rendered_sentence(self, obj: Item) -> str:
        try:
            return obj.text()
        except Exception as exc:  # a half-filled item in the add form
            return f"(cannot render yet: {exc})"


# --- participants -----------------------------------------------------------------------------------
class ChannelFilter(admin.RelatedFieldListFilter):
    """By channel: the participants without one came through Prolific, and the filter says so (not "-")."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.empty_value_display = PROLIFIC_CHANNEL


@admin.register(Participant)
class ParticipantAdmin(OwnedAdminMixin, ProtectedDeleteMixin, admin.ModelAdmin):
    delete_advice = ("Mark participants as returned or timed out instead; their answers are kept. To honour a "
                     "request to withdraw, use the action “Withdraw”; test participants: “Remove test participants”.")
    # What a researcher scans first, narrow enough for a 1280 px screen with the filter sidebar; ρ rounded.
    # Completion time, raw ρ values and the Prolific study/session ids are on the participant's page.
    list_display = ("participant_id", "study_slug", "status_shown", "progress", "started", "live_check",
                    "analysis_filter")
    list_filter = ("study", "status", "is_test", ("channel", ChannelFilter), "condition", "passed_attention",
                   "attention_included")
    search_fields = ("prolific_pid", "prolific_session_id", "prolific_study_id")
    list_select_related = ("study",)
    date_hierarchy = "started_at"
    actions = ("mark_returned", "mark_timed_out", "reinstate", "withdraw", "remove_test")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            n_assigned=count_of(Assignment, "participant"),
            n_answered=count_of(Response, "participant"),
        )

    def has_add_permission(self, request):
        return False  # participants arrive through the Prolific link

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Participant._meta.fields] + ["progress", "check_results", "exclusion"]

    @admin.display(description="checks")
    def check_results(self, obj: Participant) -> str:
        """Each declared check's result ([[checks]], surveys/checks.py)."""
        rows = obj.check_answers.order_by("after_item", "id")
        return ", ".join(f"{r.check_key}: {'not answered' if r.passed is None else 'passed' if r.passed else 'failed'}"
                         for r in rows) or "-"

    @admin.display(description="exclusion rules (stored)")
    def exclusion(self, obj: Participant) -> str:
        """The stored decision of the study's exclusion rules (analysis/exclusions.py), with its reasons."""
        decision = getattr(obj, "exclusion_decision", None) if obj.pk else None
        if decision is None:
            return "-"
        if not decision.excluded:
            return f"kept ({decision.decided_at:%Y-%m-%d %H:%M})"
        return "excluded: " + "; ".join(f"{r['rule']}: {r['detail']}" for r in decision.reasons)

    @admin.display(description="participant id", ordering="prolific_pid")
    def participant_id(self, obj: Participant) -> str:
        return obj.prolific_pid  # a Prolific PID, or <channel>-<id> for another channel's participant

    @admin.display(description="study", ordering="study__slug")
    def study_slug(self, obj: Participant) -> str:
        return obj.study.slug  # the title is long; the list has many columns

    @admin.display(description="answered / assigned")
    def progress(self, obj: Participant) -> str:
        return f"{obj.n_answered} / {obj.n_assigned}"

    @admin.display(description="status", ordering="status")
    def status_shown(self, obj: Participant) -> str:
        return obj.get_status_display() + (" (test)" if obj.is_test else "")

    @admin.display(description="started", ordering="started_at")
    def started(self, obj: Participant) -> str:
        return f"{timezone.localtime(obj.started_at):%Y-%m-%d %H:%M}"

    # "rho" in the headers: the admin writes them in capitals, and a capital ρ reads as P
    @admin.display(description="live check (rho)", ordering="live_attention_rho")
    def live_check(self, obj: Participant) -> str:
        return _check(obj.passed_attention, obj.live_attention_rho, "passed", "failed")

    @admin.display(description="analysis filter (rho)", ordering="attention_rho")
    def analysis_filter(self, obj: Participant) -> str:
        return _check(obj.attention_included, obj.attention_rho, "included", "excluded")

    def _mark(self, request: HttpRequest, queryset: QuerySet, status: str, label: str) -> None:
        changed = flow.mark_participants(queryset, status)
        self.message_user(request, f"{changed} participant(s) marked as {label}; their answers are kept "
                                   "and their unanswered items go back into the draw.", messages.SUCCESS)

    @admin.action(description="Mark as returned", permissions=["change"])
    def mark_returned(self, request, queryset):
        self._mark(request, queryset, Participant.Status.RETURNED, "returned")

    @admin.action(description="Mark as timed out", permissions=["change"])
    def mark_timed_out(self, request, queryset):
        self._mark(request, queryset, Participant.Status.TIMED_OUT, "timed out")

    @admin.action(description="Undo: back to started / completed", permissions=["change"])
    def reinstate(self, request, queryset):
        changed = flow.reinstate_participants(queryset)
        self.message_user(request, f"{changed} participant(s) reinstated.", messages.SUCCESS)

    @admin.action(description="Withdraw at their request: delete their answers (audited)", permissions=["delete"])
    def withdraw(self, request, queryset):
        return confirm_removal(self, request, queryset, "withdraw")

    @admin.action(description="Remove test participants (with their answers)", permissions=["delete"])
    def remove_test(self, request, queryset):
        return confirm_removal(self, request, queryset, "remove_test")


def _check(decision: bool | None, rho: float | None, yes: str, no: str) -> str:
    """"passed (0.85)", "failed (—)" or "" for a check that has not run; ρ to two decimals."""
    if decision is None:
        return ""
    shown = "—" if rho is None else f"{rho:.2f}"
    return f"{yes if decision else no} ({shown})"


@admin.register(Withdrawal)
class WithdrawalAdmin(admin.ModelAdmin):
    """The audit trail of removed participant data: read-only, never edited or deleted."""

    list_display = ("created_at", "reason", "study_slug", "respondent_id", "participant_status",
                    "responses_deleted", "requested_by")
    list_filter = ("reason", "study_slug")
    search_fields = ("respondent_id", "note", "requested_by")
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        """The records of the user's own and shared studies (a record keeps the slug, not the study)."""
        slugs = visible(Study.objects.all(), request.user).values("slug")
        return super().get_queryset(request).filter(study_slug__in=slugs)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# --- responses --------------------------------------------------------------------------------------
@admin.register(Response)
class ResponseAdmin(OwnedAdminMixin, RawIdsAdminMixin, admin.ModelAdmin):
    """Read-only: answers are never added, edited or deleted by hand. PROLIFIC_PIDs only for *view participant*."""

    pid_fields = ("prolific_pid",)
    # compact columns: the list fits 1280 px (tests/test_browser_admin_lists.py)
    list_display = ("prolific_pid", "item_key", "answer", "times", "answered", "imported")
    list_filter = (("participant__study", admin.RelatedOnlyFieldListFilter), "imported")
    search_fields = ("participant__prolific_pid", "item__key", "item__statement")
    readonly_fields = ("prolific_pid",)
    list_select_related = ("participant", "participant__study", "item")
    date_hierarchy = "created_at"

    @admin.display(description="answer")
    def answer(self, obj: Response) -> str:
        """The answer; with [[questions]] after its question's key (``sure: 6``)."""
        return f"{obj.question}: {obj.answer.text()}" if obj.question else obj.answer.text()

    @admin.display(description="PROLIFIC_PID", ordering="participant__prolific_pid")
    def prolific_pid(self, obj: Response) -> str:
        return obj.participant.prolific_pid

    def pid_of(self, obj: Response) -> str:
        return obj.participant.prolific_pid

    @admin.display(description="item", ordering="item__key")
    def item_key(self, obj: Response) -> str:
        return shortened(obj.item.key, 24)

    @admin.display(description="time (ms): server / browser")
    def times(self, obj: Response) -> str:
        return f"{obj.time_taken_ms if obj.time_taken_ms is not None else '–'} / " \
               f"{obj.client_time_ms if obj.client_time_ms is not None else '–'}"

    @admin.display(description="answered", ordering="created_at")
    def answered(self, obj: Response) -> str:
        return short_time(obj.created_at)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
