"""Model endpoints, elicitation runs, stored prompts and model responses (SPEC §2, §5).

A model response is unique per (run, item, sample index, question): a retried, resumed or redelivered task
can fill in or complete that row, never add a second one; once it holds an answer, a database trigger
(migration 0003) refuses any change to it.
"""
from __future__ import annotations

import os
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from surveys.models import INTERVAL_ORDERED, Item, Study, TypedAnswer

from .choices import ApiStyle, Mode, api_style_choices
from .destinations import url_problem
from .key_env import check_key_variable, key_variable_problem
from .prompt_versions import PROMPT_VERSION_DEFAULT, default_prompt_version, prompt_shots
from .run_settings import settings_errors


class ModelEndpoint(models.Model):
    """An OpenAI-compatible API and one model behind it."""

    ApiStyle = ApiStyle

    name = models.SlugField(unique=True)
    base_url = models.URLField(help_text="e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1")
    model = models.CharField(max_length=200, help_text="Model id sent in each request.")
    api_style = models.CharField(max_length=12, choices=api_style_choices, default=ApiStyle.CHAT)
    api_key_env = models.CharField(
        max_length=100, blank=True,
        help_text="NAME of the environment variable that holds the API key (the key itself is never stored).",
    )
    max_concurrency = models.PositiveIntegerField(default=4, help_text="Requests in flight at once, over all workers.")
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_minute = models.PositiveIntegerField(null=True, blank=True)
    price_prompt_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    price_completion_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    timeout_seconds = models.FloatField(default=60)
    max_retries = models.PositiveSmallIntegerField(default=5)
    retry_backoff_seconds = models.FloatField(
        default=1.0, help_text="First retry waits about this long; each further retry doubles it (with jitter).")
    retry_backoff_max_seconds = models.FloatField(default=60.0, help_text="Longest wait between two attempts.")
    supports_seed = models.BooleanField(default=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # access.ownership: the owner and the users it is shared with use the endpoint (and its key)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="owned_endpoints",
                              help_text="Empty: superusers only. The owner decides who it is shared with.")
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_endpoints",
                                         help_text="Researchers who may run studies on this endpoint.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def api_key(self) -> str:
        """The key from the named environment variable ("" when unset; local servers need none).
        KeyVariableRefused when the operator does not allow the variable to be sent to the base URL's host
        (elicitation.key_env)."""
        if not self.api_key_env:
            return ""
        check_key_variable(self.api_key_env, self.base_url)
        return os.environ.get(self.api_key_env, "")

    def key_problem(self) -> str:
        """Why this endpoint's key variable may not be sent to its base URL ("" when it may)."""
        return key_variable_problem(self.api_key_env, self.base_url or "")

    def clean(self) -> None:
        """Refuse a base URL at a non-public address (elicitation.destinations) and a key variable that may
        not be sent to it (elicitation.key_env)."""
        from django.core.exceptions import ValidationError

        errors = {}
        if self.base_url and (problem := url_problem(self.base_url)):
            errors["base_url"] = problem
        if problem := self.key_problem():
            errors["api_key_env"] = problem
        if errors:
            raise ValidationError(errors)


class ElicitationRun(models.Model):
    """Posing a study's items (or a subset) to one endpoint in one mode."""

    Mode = Mode

    class Source(models.TextChoices):
        LIVE = "live", "asked by this platform"
        IMPORTED = "imported", "imported answers (produced elsewhere)"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        BUDGET_EXHAUSTED = "budget_exhausted", "Stopped: budget reached"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Finished with failures"

    name = models.CharField(max_length=200, blank=True)
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="runs")
    study_version = models.ForeignKey("surveys.StudyVersion", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="runs",
                                      help_text="The definition version whose prompts this run asked (empty: before versions).")
    items = models.ManyToManyField(Item, blank=True, related_name="+",
                                   help_text="A subset of the study's items; empty means all of them.")
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="runs")
    mode = models.CharField(max_length=20, choices=Mode.choices, default=Mode.GREEDY)
    temperature = models.FloatField(default=0.0)
    samples_per_item = models.PositiveIntegerField(default=1)
    seed = models.BigIntegerField(null=True, blank=True, help_text="Sent where the endpoint takes one.")
    top_logprobs = models.PositiveSmallIntegerField(default=20)
    max_tokens = models.PositiveIntegerField(default=8)
    few_shot = models.BooleanField(default=True, help_text="Include the study's two demonstrations.")
    prompt_version = models.CharField(max_length=50, default=PROMPT_VERSION_DEFAULT)
    prompt_style = models.CharField(
        max_length=30, default="standard",
        help_text="One of the instrument's prompt styles (e.g. standard or cot for WEP choice).")
    budget_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True,
                                     help_text="Stop cleanly once the cost reaches this.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT, db_index=True)
    status_reason = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    last_started_at = models.DateTimeField(null=True, blank=True, help_text="Last start or resume.")
    finished_at = models.DateTimeField(null=True, blank=True)
    # Imported runs (analysis/model_answer_import.py): answers produced elsewhere, read from a file; never
    # started or resumed. The file's SHA-256 is unique per study, so the same file cannot be imported twice.
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.LIVE, db_index=True)
    source_file = models.CharField(max_length=300, blank=True, help_text="Imported runs: the file's name.")
    source_sha256 = models.CharField(max_length=64, blank=True, help_text="Imported runs: SHA-256 of the file.")
    # Self-refinement runs (elicitation/refinement.py): each prompt shows e answers of an earlier run of the same
    # study for the same question, drawn with this seed; a refinement prompt style of the kind (``refine``).
    refines = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="refinements",
                                help_text="Self-refinement: the run whose answers the prompts show.")
    refine_shown = models.PositiveSmallIntegerField(null=True, blank=True,
                                                    help_text="Self-refinement: answers shown per prompt (e).")
    refine_setting = models.CharField(
        max_length=10, blank=True, choices=[("single", "single confidence: answers of the same level"),
                                            ("mixed", "mixed confidence: answers of every level")],
        help_text="Self-refinement: which of the source run's answers to the question are drawn from.")
    refine_seed = models.BigIntegerField(null=True, blank=True, help_text="Self-refinement: seed of the draws.")
    # Agents declared in the study's definition file ([[agents]], issue 21): the run of one agent carries its
    # name and its settings as the file declared them, and the personas it asks (each persona answers every
    # target item; sample index = persona index × samples per item + sample).
    agent = models.CharField(max_length=60, blank=True, db_index=True,
                             help_text="The definition's agent this run is (empty: a run started by hand).")
    agent_settings = models.JSONField(default=dict, blank=True,
                                      help_text="The agent's table as the definition file declared it.")
    condition = models.CharField(max_length=200, blank=True, default="", db_index=True,
                                 help_text="The between-subjects cell the run asks under (a study with [[factors]]: "
                                 "each declared agent has one run per cell); empty: no factors.")
    personas = models.JSONField(default=list, blank=True,
                                help_text='The personas asked, in order: [{"fields": {...}, "source": "..."}].')
    persona_seed = models.BigIntegerField(null=True, blank=True,
                                          help_text="Seed of the persona draw from the study's participants.")
    # Created through the API with an Idempotency-Key header (elicitation/idempotency.py): a retried request
    # with the same key from the same user gets this run back instead of creating a second one.
    idempotency_key = models.CharField(max_length=200, blank=True, editable=False)
    idempotency_fingerprint = models.CharField(max_length=64, blank=True, editable=False,
                                               help_text="SHA-256 of the request body that created the run.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(samples_per_item__gte=1), name="run_at_least_one_sample"),
            models.CheckConstraint(condition=Q(temperature__gte=0), name="run_temperature_not_negative"),
            models.UniqueConstraint(fields=["study", "source_sha256"], condition=~Q(source_sha256=""),
                                    name="run_imported_file_once_per_study"),
            models.CheckConstraint(
                condition=Q(refines__isnull=True, refine_shown__isnull=True, refine_setting="", refine_seed__isnull=True)
                | Q(refines__isnull=False, refine_shown__gte=1, refine_setting__in=["single", "mixed"],
                    refine_seed__isnull=False),
                name="run_refinement_complete"),
            models.UniqueConstraint(fields=["created_by", "idempotency_key"], condition=~Q(idempotency_key=""),
                                    name="run_idempotency_key_once_per_user"),
        ]

    def __str__(self) -> str:
        return self.name or f"run {self.pk}: {self.endpoint.name} on {self.study.slug} ({self.mode})"

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        errors = settings_errors(self)
        if errors:
            raise ValidationError(errors)

    def save(self, *args, **kwargs):
        """A new run left at the field's default prompt version gets the version of the prompt it sends
        (``elicitation.prompt_versions.default_prompt_version``: e.g. ``<prefix>-zero-shot-v1``, not ``<prefix>-2shot-v1``),
        and records the study's current definition version (the wording its prompts come from)."""
        if self._state.adding and self.study_version_id is None:
            self.study_version = self.study.current_version()
        if self._state.adding and self.prompt_version == PROMPT_VERSION_DEFAULT and self.refines_id is None:
            self.prompt_version = default_prompt_version(self.study, prompt_shots(self))
        super().save(*args, **kwargs)

    def target_items(self):
        """The items this run poses: its subset, or every main item of the study."""
        subset = self.items.all()
        return subset if subset.exists() else self.study.main_items()

    def answers_per_item(self) -> int:
        """Answers the run asks of each item: its samples, once per persona when it has personas."""
        return self.samples_per_item * max(1, len(self.personas or []))

    def questions_per_answer(self) -> int:
        """Rows per (item, sample): one per question of a study with ``[[questions]]`` (a self-refinement asks
        its source's one question), else 1."""
        if self.refines_id is not None:
            return 1
        return len((self.study.definition or {}).get("questions") or []) or 1

    def requests_per_sample(self) -> int:
        """Prompts sent per (item, sample): one per question, or one for all of them when the study asks
        ``[prompt] questions = "together"``."""
        together = ((self.study.definition or {}).get("prompt") or {}).get("questions") == "together"
        return 1 if together else self.questions_per_answer()


class StoredPrompt(models.Model):
    """A prompt exactly as sent, stored once and addressed by its SHA-256 hash."""

    sha256 = models.CharField(max_length=64, unique=True)
    api_style = models.CharField(max_length=12, choices=api_style_choices)
    content = models.JSONField(help_text="The text (completions) or the message list (chat).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.sha256[:12]


class ModelResponse(TypedAnswer, models.Model):
    """One model answer (or the recorded failure to get one) for (run, item, sample index, question): a study
    with several questions per item ([[questions]]) has one row per question (``question``: its key; "" for a
    study's one question). An agent that asks the study's attention checks (``[[agents]] checks = true``) has one
    row per (check, sample index) too, with no item and the check's key in ``check_key`` (unique per run, check
    and sample); reports and exports of the items never count them as answers."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OK = "ok", "Parsed"
        UNPARSEABLE = "unparseable", "Unparseable answer (kept)"
        FAILED = "failed", "Request failed"

    run = models.ForeignKey(ElicitationRun, on_delete=models.CASCADE, related_name="responses")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.PROTECT, related_name="model_responses",
                             help_text="The item asked (empty for an attention check's answer: see check_key).")
    check_key = models.CharField(max_length=40, blank=True, default="",
                                 help_text="An attention check's key ([[checks]]) for the answer of an agent that asks "
                                 "them (``checks = true``); empty for an item's answer.")
    sample_index = models.PositiveIntegerField(default=0)
    question = models.CharField(max_length=40, blank=True, default="",
                                help_text="The key of the item's question this answer is to ([[questions]]; empty: "
                                "the study's one question).")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    prompt = models.ForeignKey(StoredPrompt, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    prompt_hash = models.CharField(max_length=64, blank=True, db_index=True)
    raw_output = models.TextField(blank=True)
    value = models.FloatField(null=True, blank=True, help_text="Parsed number (greedy/sampled) or the distribution's argmax.")
    bin = models.FloatField(null=True, blank=True)
    choice = models.CharField(max_length=100, blank=True, help_text="The chosen option's key (choice kinds).")
    lower = models.FloatField(null=True, blank=True, help_text="Lower bound (interval kinds).")
    upper = models.FloatField(null=True, blank=True, help_text="Upper bound (interval kinds).")
    text = models.TextField(blank=True, default="", help_text="A free-text answer: the raw output, stripped.")
    persona = models.JSONField(null=True, blank=True,
                               help_text="The persona's field values this answer was asked under (null: none).")
    condition = models.CharField(max_length=200, blank=True, default="",
                                 help_text="The between-subjects cell this answer was asked under (its run's; "
                                 "empty: the study declares no factors).")
    parse_error = models.CharField(max_length=300, blank=True)
    distribution = models.JSONField(null=True, blank=True,
                                    help_text='{"0": p, "5": p, …, "100": p, "-1": non-number mass}')
    coverage = models.FloatField(null=True, blank=True, help_text="Probability mass the distribution accounts for.")
    error = models.TextField(blank=True, help_text="Why the request failed, after all attempts.")
    attempts = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # provenance, so that a run can be reproduced and audited
    base_url = models.CharField(max_length=300, blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="All sampling parameters sent.")
    detail = models.JSONField(null=True, blank=True,
                              help_text="Raw mode output: logprobs at the answer position, the full-distribution "
                                        "detail, the errors of failed attempts.")
    requests = models.PositiveIntegerField(default=0, help_text="HTTP requests sent for this answer (all attempts).")
    # A worker holds the row while it asks for it; a lease that runs out (killed worker) frees the row.
    lease_owner = models.CharField(max_length=120, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "item", "sample_index", "question"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "sample_index", "question"],
                                    name="model_response_unique_sample"),
            models.UniqueConstraint(fields=["run", "check_key", "sample_index"], condition=~Q(check_key=""),
                                    name="model_response_unique_check"),
            models.CheckConstraint(condition=Q(item__isnull=False, check_key="")
                                   | Q(item__isnull=True, question="") & ~Q(check_key=""),
                                   name="model_response_item_or_check"),
            models.CheckConstraint(condition=INTERVAL_ORDERED, name="model_response_interval_ordered"),
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self) -> str:
        question = f" · {self.question}" if self.question else ""
        asked = f"check {self.check_key}" if self.check_key else self.item.key
        return f"run {self.run_id} · {asked}{question} · #{self.sample_index}: {self.status}"


class EndpointSlot(models.Model):
    """One of an endpoint's ``max_concurrency`` request slots, leased by a worker for one request.

    Shared by every worker through the database, so the limit holds across processes and machines;
    a lease that expires (killed worker) frees the slot.
    """

    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.CASCADE, related_name="slots")
    index = models.PositiveIntegerField()
    holder = models.CharField(max_length=120, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "index"], name="endpoint_slot_unique_index")]

    def __str__(self) -> str:
        return f"{self.endpoint.name} slot {self.index}: {self.holder or 'free'}"


class RateBucket(models.Model):
    """A token bucket in the database (requests or tokens per minute of one endpoint)."""

    class Kind(models.TextChoices):
        REQUESTS = "requests", "requests per minute"
        TOKENS = "tokens", "tokens per minute"

    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.CASCADE, related_name="buckets")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    level = models.FloatField(help_text="Tokens left in the bucket at updated_at.")
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "kind"], name="rate_bucket_unique_kind")]

    def __str__(self) -> str:
        return f"{self.endpoint.name} {self.kind}: {self.level:.2f}"
