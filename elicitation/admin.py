"""Admin for model endpoints, elicitation runs (start / cancel / resume, live run page) and model
responses. The custom pages are in elicitation.admin_views."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, Q, Sum
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html

from access.owned_admin import OwnedAdminMixin
from access.ownership import visible
from config.admin_columns import short_time, shortened
from config.permissions import allowed
from surveys.models import Item

from .admin_views import (endpoint_key_status, item_answers_view, item_prompt_view, run_action_view,
                          run_agents_view, run_monitor_view, run_progress_view, run_refine_view)
from . import preflight
from .endpoint_form import URL_FIELD_OPTIONS, EndpointForm
from .models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
from .refine_request import REFINE_PERMS, refusal
from .run_form import RunForm
from .runs import RunStateError, cancel_run

RUN_SETTINGS = ("study", "items", "endpoint", "mode", "temperature", "samples_per_item", "seed", "top_logprobs",
                "max_tokens", "few_shot", "prompt_version", "prompt_style")


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(OwnedAdminMixin, admin.ModelAdmin):
    form = EndpointForm
    formfield_overrides = {models.URLField: URL_FIELD_OPTIONS}  # the admin builds its own form fields
    list_display = ("name", "model", "base_url", "api_style", "api_key_env", "key", "max_concurrency",
                    "requests_per_minute", "price_prompt_per_1k", "price_completion_per_1k")
    search_fields = ("name", "model", "base_url")
    fieldsets = (
        (None, {"fields": ("name", "base_url", "model", "api_style", "api_key_env", "notes", "skip_check")}),
        ("Limits (shared by all workers)", {"fields": ("max_concurrency", "requests_per_minute", "tokens_per_minute")}),
        ("Prices (USD per 1,000 tokens)", {"fields": ("price_prompt_per_1k", "price_completion_per_1k")}),
        ("Requests", {"fields": ("timeout_seconds", "max_retries", "retry_backoff_seconds",
                                 "retry_backoff_max_seconds", "supports_seed")}),
        ("Access", {"fields": ("owner", "shared_with"),
                    "description": "Who may run studies on this endpoint (access.ownership)."}),
    )
    filter_horizontal = ("shared_with",)

    @admin.display(description="key variable")
    def key(self, obj: ModelEndpoint) -> str:
        return endpoint_key_status(obj)


@admin.register(ElicitationRun)
class ElicitationRunAdmin(OwnedAdminMixin, admin.ModelAdmin):
    form = RunForm
    # compact columns: the list fits 1280 px (tests/test_browser_admin_lists.py)
    list_display = ("id", "run_name", "study_slug", "endpoint_name", "mode_name", "status", "answers", "cost",
                    "created", "page")
    list_display_links = ("id", "run_name")
    list_filter = ("status", "mode", "endpoint", "study", "source", "condition")
    list_select_related = ("study", "endpoint")
    change_form_template = "elicitation/admin/run_change_form.html"
    actions = ("start_runs", "cancel_runs", "resume_runs")
    readonly_fields = ("status", "status_reason", "created_by", "created_at", "started_at", "last_started_at",
                       "finished_at", "source", "source_file", "source_sha256",
                       "refines", "refine_shown", "refine_setting", "refine_seed",
                       "agent", "agent_settings", "personas", "persona_seed", "condition")
    fieldsets = (
        (None, {"fields": ("name", "study", "items", "endpoint")}),
        ("Mode", {"fields": ("mode", "temperature", "samples_per_item", "seed", "top_logprobs", "max_tokens",
                             "few_shot", "prompt_version", "prompt_style", "budget_usd")}),
        ("State", {"fields": ("status", "status_reason", "created_by", "created_at", "started_at",
                              "last_started_at", "finished_at")}),
        ("Source", {"fields": ("source", "source_file", "source_sha256")}),  # imported runs: the file
        # self-refinement runs (elicitation/refinement.py): "Self-refine this run" on the run page, the API or manage.py refine
        ("Self-refinement", {"fields": ("refines", "refine_shown", "refine_setting", "refine_seed")}),
        # a study's declared agent ([[agents]]): "Run the declared agents", the API or elicit --all-agents
        ("Declared agent", {"fields": ("agent", "agent_settings", "personas", "persona_seed", "condition")}),
    )

    def get_queryset(self, request):
        done = Q(responses__status__in=[ModelResponse.Status.OK, ModelResponse.Status.UNPARSEABLE])
        return super().get_queryset(request).annotate(
            n_rows=Count("responses"), n_done=Count("responses", filter=done),
            n_failed=Count("responses", filter=Q(responses__status=ModelResponse.Status.FAILED)),
            total_cost=Sum("responses__cost_usd"))

    def get_fieldsets(self, request, obj=None):
        """A new run offers to skip its endpoint's pre-flight check (RunForm)."""
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            (title, options), *rest = fieldsets
            fieldsets = [(title, {**options, "fields": (*options["fields"], "skip_check")}), *rest]
        return fieldsets

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.status != ElicitationRun.Status.DRAFT:
            fields += [f for f in RUN_SETTINGS if f not in fields]  # answers were given under these settings
        return fields

    def save_model(self, request, obj, form, change):
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        run = self.get_object(request, object_id)
        if run is not None and allowed(request.user, REFINE_PERMS) and not refusal(run):
            extra_context = {**(extra_context or {}),
                             "refine_url": reverse("admin:elicitation_elicitationrun_refine", args=[run.pk])}
        return super().change_view(request, object_id, form_url, extra_context)

    def response_add(self, request, obj, post_url_continue=None):
        if "_continue" in request.POST or "_addanother" in request.POST:
            return super().response_add(request, obj, post_url_continue)
        messages.info(request, "Check the estimate, then start the run.")
        return redirect("admin:elicitation_elicitationrun_monitor", obj.pk)

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<path:object_id>/monitor/", wrap(lambda r, object_id: run_monitor_view(self, r, object_id)),
                 name="elicitation_elicitationrun_monitor"),
            path("<path:object_id>/progress.json", wrap(lambda r, object_id: run_progress_view(self, r, object_id)),
                 name="elicitation_elicitationrun_progress"),
            path("<path:object_id>/do/<str:action>/",
                 wrap(lambda r, object_id, action: run_action_view(self, r, object_id, action)),
                 name="elicitation_elicitationrun_action"),
            path("<path:object_id>/refine/", wrap(lambda r, object_id: run_refine_view(self, r, object_id)),
                 name="elicitation_elicitationrun_refine"),
            path("run-agents/<slug:slug>/", wrap(lambda r, slug: run_agents_view(self, r, slug)),
                 name="elicitation_run_agents"),
            path("item/<int:item_id>/prompt/", wrap(lambda r, item_id: item_prompt_view(self, r, item_id)),
                 name="elicitation_item_prompt"),
            path("item/<int:item_id>/answers/", wrap(lambda r, item_id: item_answers_view(self, r, item_id)),
                 name="elicitation_item_answers"),
        ] + super().get_urls()

    @admin.display(description="run", ordering="name")
    def run_name(self, obj: ElicitationRun) -> str:
        return shortened(obj.name, 28) or f"run {obj.pk}"

    @admin.display(description="study", ordering="study__slug")
    def study_slug(self, obj: ElicitationRun) -> str:
        return obj.study.slug

    @admin.display(description="endpoint", ordering="endpoint__name")
    def endpoint_name(self, obj: ElicitationRun) -> str:
        return shortened(obj.endpoint.name, 20)

    @admin.display(description="mode", ordering="mode")
    def mode_name(self, obj: ElicitationRun) -> str:
        return obj.mode

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: ElicitationRun) -> str:
        return short_time(obj.created_at)

    @admin.display(description="done/failed/all")
    def answers(self, obj: ElicitationRun) -> str:
        return f"{obj.n_done} / {obj.n_failed} / {obj.n_rows}"

    @admin.display(description="USD")
    def cost(self, obj: ElicitationRun) -> str:
        return f"{obj.total_cost or 0:.4f}"

    @admin.display(description="")
    def page(self, obj: ElicitationRun) -> str:
        return format_html('<a href="{}">run page</a>', reverse("admin:elicitation_elicitationrun_monitor",
                                                                args=[obj.pk]))

    def _each(self, request, queryset, verb: str, fn) -> None:
        done, problems = [], []
        for run in queryset:
            try:
                result = fn(run)
            except RunStateError as exc:
                problems.append(str(exc))
                continue
            if result is False:
                problems.append(f"run {run.pk} is {run.status}, not running")
            else:
                done.append(str(run.pk))
        if done:
            self.message_user(request, f"{verb}: run(s) {', '.join(done)}", messages.SUCCESS)
        for problem in problems:
            self.message_user(request, problem, messages.ERROR)

    @admin.action(description="Start the selected draft runs")
    def start_runs(self, request, queryset):
        self._each(request, _on_usable_endpoints(queryset, request), "started", preflight.start)

    @admin.action(description="Cancel the selected runs (answers so far are kept)")
    def cancel_runs(self, request, queryset):
        self._each(request, queryset, "cancelled", lambda run: cancel_run(run, reason=f"cancelled by {request.user}"))

    @admin.action(description="Resume the selected runs (ask only what is missing or failed)")
    def resume_runs(self, request, queryset):
        self._each(request, _on_usable_endpoints(queryset, request), "resumed", preflight.resume)


def _on_usable_endpoints(runs, request):
    """The runs whose endpoint the user may send requests to (their own or shared: its key is used)."""
    return runs.filter(endpoint__in=visible(ModelEndpoint.objects.all(), request.user))


class ItemExpressionFilter(admin.SimpleListFilter):
    title = "expression"
    parameter_name = "expression"

    def lookups(self, request, model_admin):
        values = Item.objects.filter(is_demonstration=False).exclude(expression="").order_by(
            "expression").values_list("expression", flat=True).distinct()
        return [(v, v) for v in values] + [("control", "control")]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(item__is_control=True) if value == "control" else queryset.filter(
            item__expression=value)


@admin.register(ModelResponse)
class ModelResponseAdmin(OwnedAdminMixin, admin.ModelAdmin):
    # compact columns: the list fits 1280 px with ids of six digits (tests/test_browser_admin_lists.py); the
    # latency is on each answer's page
    list_display = ("id", "run_number", "item_link", "sample", "status", "answer", "short_raw", "tries", "tokens",
                    "usd", "answered")
    list_filter = ("status", "run__mode", "run__endpoint", "run", ItemExpressionFilter, "item__truth",
                   "item__is_control")
    search_fields = ("item__key", "question", "check_key", "raw_output", "error", "prompt_hash")
    list_select_related = ("run", "run__endpoint", "run__study", "item")
    list_per_page = 100

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ModelResponse._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="run", ordering="run")
    def run_number(self, obj: ModelResponse) -> str:
        return format_html('<a href="{}" title="{}">{}</a>', reverse("admin:elicitation_elicitationrun_monitor",
                                                                     args=[obj.run_id]), obj.run, obj.run_id)

    @admin.display(description="item")
    def item_link(self, obj: ModelResponse) -> str:
        if obj.item_id is None:  # an attention check asked of an agent with checks = true
            return f"check {shortened(obj.check_key, 14)}"
        question = f" · {shortened(obj.question, 10)}" if obj.question else ""
        return format_html('{}{} (<a href="{}">page &amp; prompt</a> · <a href="{}">answers</a>)',
                           shortened(obj.item.key, 14), question,
                           reverse("admin:elicitation_item_prompt", args=[obj.item_id]),
                           reverse("admin:elicitation_item_answers", args=[obj.item_id]))

    @admin.display(description="sample", ordering="sample_index")
    def sample(self, obj: ModelResponse) -> int:
        return obj.sample_index

    @admin.display(description="tries", ordering="attempts")
    def tries(self, obj: ModelResponse) -> int:
        return obj.attempts

    @admin.display(description="tokens")
    def tokens(self, obj: ModelResponse) -> str:
        """Prompt + answer tokens."""
        return f"{obj.prompt_tokens or 0} + {obj.completion_tokens or 0}"

    @admin.display(description="USD", ordering="cost_usd")
    def usd(self, obj: ModelResponse) -> str:
        return "–" if obj.cost_usd is None else f"{obj.cost_usd:.4f}"

    @admin.display(description="answered", ordering="answered_at")
    def answered(self, obj: ModelResponse) -> str:
        return short_time(obj.answered_at)

    @admin.display(description="answer")
    def answer(self, obj: ModelResponse) -> str:
        return obj.answer.text()

    @admin.display(description="raw output")
    def short_raw(self, obj: ModelResponse) -> str:
        return shortened(obj.raw_output or obj.error, 32)  # the list fits 1280 px with ids of six digits


@admin.register(StoredPrompt)
class StoredPromptAdmin(admin.ModelAdmin):
    list_display = ("sha256", "api_style", "created_at")
    search_fields = ("sha256",)

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in StoredPrompt._meta.fields]

    def has_add_permission(self, request):
        return False
