"""Studies, items, participants, assignments and human responses (SPEC §2).

Integrity rules live in the database, not only in code:
- a participant is unique per (study, PROLIFIC_PID);
- an assignment slot is unique per (participant, position) and per (participant, item);
- a response is unique per assignment slot and per (participant, item), so an answer cannot be duplicated;
- triggers (migration 0003, SQLite and PostgreSQL) refuse a response whose participant or item is not its
  slot's, a new response for a participant who is not answering (completed, returned, timed out, screened
  out), and any change to a saved answer.
"""
from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .completion_urls import placeholder_problem
from .instruments import get_instrument, instrument_choices


def validate_instrument(value: str) -> None:
    """Reject names that are not registered instruments."""
    if value not in dict(instrument_choices()):
        known = ", ".join(name for name, _ in instrument_choices())
        raise ValidationError(f"{value!r} is not a registered instrument (known: {known})")


# A stored answer fills at least one typed column (a free text counts); an interval has both bounds, lower ≤ upper.
ANSWER_GIVEN = (Q(value__isnull=False) | ~Q(choice="")
                | (Q(lower__isnull=False) & Q(upper__isnull=False)) | ~Q(text=""))
INTERVAL_ORDERED = Q(lower__isnull=True, upper__isnull=True) | Q(lower__lte=models.F("upper"))


class TypedAnswer:
    """Mixin of the models that store a typed answer in ``value``/``choice``/``lower``/``upper``/``text``."""

    @property
    def answer(self):
        """The stored answer as a surveys.instruments.Answer."""
        from .instruments import Answer

        return Answer(value=self.value, choice=self.choice or "", lower=self.lower, upper=self.upper,
                      free_text=self.text or "")


def _new_code() -> str:
    return secrets.token_hex(4).upper()


class Study(models.Model):
    """One survey: an instrument, its items, its texts and its Prolific settings."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        CLOSED = "closed", "Closed"

    slug = models.SlugField(unique=True, help_text="Appears in the participant link: /s/your-slug/ (letters, digits, hyphens).")
    title = models.CharField(max_length=200, help_text="For researchers (lists, reports, exports); participants see "
                             "the participant title when it is set.")
    participant_title = models.CharField(
        max_length=200, blank=True,
        help_text="The title participants see in each page's header and browser tab, in the study's language "
        "(e.g. without the paper's name). Empty: the title.",
    )
    instrument = models.CharField(
        max_length=50, default="speaker_belief", validators=[validate_instrument],
        help_text="Item kind; one of the registered instruments (surveys/instruments/).",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)

    class Language(models.TextChoices):
        ENGLISH = "en", "English"
        CHINESE = "zh-hans", "Chinese (Simplified)"

    language = models.CharField(
        max_length=10, choices=Language.choices, default=Language.ENGLISH,
        help_text="Language of the participant pages (buttons, progress, messages); chosen by the study, "
        "never by the browser. The items' own wording follows each item's language.",
    )
    description = models.TextField(blank=True, help_text="For researchers; never shown to participants.")
    consent_text = models.TextField(blank=True)
    instructions = models.TextField(blank=True, help_text="Shown before the two demonstrations.")
    pledge_text = models.TextField(blank=True)
    # Design: how a participant's items are drawn.
    items_per_expression = models.PositiveSmallIntegerField(
        default=2, help_text="Statements per expression for each participant."
    )
    controls_per_participant = models.PositiveSmallIntegerField(
        default=2, help_text="Control items (no expression) added to each participant's list."
    )
    items_per_participant = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="For kinds whose items have no expression (WEP choice, intervals, verbalisations): how many "
        "items each participant answers, least-used first. Empty: all of the study's items.",
    )
    draw_speaker_names = models.BooleanField(
        default=True,
        help_text="Draw each slot's speaker from the kind's gender-balanced name list; "
        "off: show each item's own speaker.",
    )
    attention_threshold = models.FloatField(
        default=0.2, help_text="Participants with Spearman ρ at or below this fail the attention check."
    )
    idle_timeout_minutes = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Minutes after the pledge within which a participant must answer a first question; after "
        "that, someone who has answered nothing is marked timed out and their items go back to the draw "
        "(empty: never). Set it above the time Prolific allows.",
    )
    attention_filter = models.BooleanField(
        null=True, blank=True,
        help_text="Apply the attention filter of the study's kind (e.g. Spearman ρ > threshold) in the report. "
        "Empty: the instrument's default (on for speaker belief; off for the kinds whose papers keep every "
        "respondent).",
    )
    report_options = models.JSONField(
        default=dict, blank=True,
        help_text="Named report options, e.g. {\"reading\": \"authors\"} (WEP choice: \"text\", the Methods' reading, "
        "default; \"authors\", the authors' code). Unset options take their default.",
    )
    reference_study = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="companions",
        help_text="For a verifiable-set study: its non-verifiable companion (reference distribution and ranking).",
    )
    # Prolific: one completion code per outcome.
    completion_code = models.CharField(max_length=40, default=_new_code)
    failed_attention_code = models.CharField(max_length=40, default=_new_code)
    screened_out_code = models.CharField(max_length=40, default=_new_code)
    created_at = models.DateTimeField(auto_now_add=True)
    # access.ownership: the owner and the users it is shared with use the study (within their permissions)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="owned_studies",
                              help_text="Empty: superusers only. The owner decides who it is shared with.")
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_studies",
                                         help_text="Researchers who may use this study as its owner does.")
    # surveys.definition: the validated definition file this study was loaded from ({}: created the old way,
    # its wording is its kind's shipped definition); the current version is the newest StudyVersion.
    definition = models.JSONField(default=dict, blank=True, editable=False,
                                  help_text="The study's definition (load_study / export_study).")

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.title} ({self.slug})"

    @property
    def shown_title(self) -> str:
        """The title on the participant pages: the participant title, else the researchers' title."""
        return self.participant_title or self.title

    @property
    def kind(self):
        """The study's instrument object (as configured by its definition, for kinds that are)."""
        key = (self.instrument, id(self.definition))  # a new definition (loaded, synced) makes a new kind
        cached = self.__dict__.get("_kind")
        if cached is None or cached[0] != key:
            cached = (key, get_instrument(self.instrument).for_study(self))
            self.__dict__["_kind"] = cached
        return cached[1]

    def clean(self) -> None:
        from surveys.report_options import option_errors

        try:
            declared = self.kind.report_options
        except (KeyError, ValueError):  # an unknown instrument: its own field error says so
            return
        errors = option_errors(declared, self.report_options)
        if errors:
            raise ValidationError({"report_options": errors})

    def report_option(self, name: str) -> str:
        """The study's value of the report option ``name``, or the option's default."""
        from surveys.report_options import resolved

        return resolved(self.kind.report_options, self.report_options)[name]

    @property
    def applies_attention_filter(self) -> bool:
        """Whether the report filters participants: the study's setting, else its instrument's default."""
        return self.kind.attention_filter_default if self.attention_filter is None else self.attention_filter

    @property
    def attention_filter_threshold(self) -> float | None:
        """The threshold the study's attention filter applies: ``attention_threshold``, or None (every participant
        kept) when its filter is off."""
        return self.attention_threshold if self.applies_attention_filter else None

    def participant_link(self, base: str | None = None) -> str:
        """The URL to paste into Prolific, with Prolific's placeholders (``base``: default SITE_URL)."""
        base = (base or settings.SITE_URL).rstrip("/")
        return (
            f"{base}/s/{self.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
            f"&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
        )

    def demonstrations(self) -> list["Item"]:
        """The study's worked examples, in order."""
        return list(self.items.filter(is_demonstration=True).order_by("demo_order", "id"))

    def demonstration_problem(self) -> str:
        """Why the study's demonstrations keep it from being published ("" when they do not)."""
        spec = self.kind.demonstrations
        return spec.problem(len(self.demonstrations())) if spec is not None else ""

    def main_items(self):
        """Items that can be assigned to participants and posed to models."""
        return self.items.filter(is_demonstration=False)

    def current_version(self) -> "StudyVersion | None":
        """The version participants and runs are given now: the one that became current last (a load that
        returns to an earlier version's content makes that version current again), None before versions."""
        return self.versions.order_by("-current_since", "-number").first()


class StudyVersion(models.Model):
    """One version of a study's definition: its content hash and the definition itself, kept for good so the
    wording earlier answers were given stays known (surveys/definition/versions.py)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the definition's canonical JSON and its item files.")
    definition = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    current_since = models.DateTimeField(
        default=timezone.now, help_text="When this version last became the study's current one: when it was made, "
                                        "or when a load returned the study to its content.")

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="study_version_number_unique"),
            models.UniqueConstraint(fields=["study", "sha256"], name="study_version_sha_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} v{self.number} ({self.sha256[:12]})"


class Item(models.Model):
    """One question. Its wording is computed by the study's instrument from these fields."""

    class Truth(models.TextChoices):
        TRUE = "true", "true"
        FALSE = "false", "false"
        NONE = "", "none (non-verifiable)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=200, help_text="Unique within the study; built by the instrument.")
    expression = models.CharField(max_length=100, blank=True, db_index=True)
    speaker_name = models.CharField(max_length=100, blank=True)
    speaker_gender = models.CharField(max_length=20, blank=True)
    statement = models.TextField(blank=True, help_text="May hold [[they]]/[[their]] pronoun placeholders.")
    statement_id = models.CharField(max_length=100, blank=True, db_index=True)
    statement_type = models.CharField(max_length=100, blank=True)
    truth = models.CharField(max_length=5, choices=Truth.choices, blank=True, default="")
    is_control = models.BooleanField(default=False)
    is_demonstration = models.BooleanField(default=False)
    demo_order = models.PositiveSmallIntegerField(null=True, blank=True)
    demo_answer = models.FloatField(null=True, blank=True, help_text="Shown answer of a demonstration.")
    context = models.CharField(max_length=50, blank=True, help_text="Context setting (e.g. CNC/ENC).")
    language = models.CharField(max_length=10, default="en")
    ground_truth = models.FloatField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="Kind-specific fields.")
    source_row = models.PositiveIntegerField(null=True, blank=True, help_text="Row in the imported file.")

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="item_unique_key_per_study"),
            models.CheckConstraint(
                condition=Q(is_demonstration=False) | Q(demo_answer__isnull=False),
                name="item_demonstration_has_answer",
            ),
        ]
        indexes = [models.Index(fields=["study", "is_demonstration", "is_control"])]

    def __str__(self) -> str:
        return self.key

    @property
    def kind(self):
        return self.study.kind

    @property
    def label(self) -> str:
        """The item's label in analyses: its expression, or ``control``."""
        return "control" if self.is_control else self.expression

    def text(self) -> str:
        """The item's main sentence as a participant sees it (with its own speaker)."""
        return self.kind.sentence(self)


class RecruitmentChannel(models.Model):
    """A way into ``study`` besides Prolific (the default, which needs no row): a mailing list, SONA, MTurk,
    CloudResearch, … Its entry link is the study link with ``channel=<name>``; the participant's id comes from
    the URL parameter ``id_param`` (or is assigned here when that is empty); at the end they are sent to
    ``completion_url``, and a page that ends their visit early links back to ``return_url`` (surveys.channels)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="channels")
    name = models.SlugField(max_length=16, help_text="Short name, in the entry link, the export and the report "
                                                     "(letters, digits, hyphens; e.g. sona, mturk, mailing-list).")
    id_param = models.CharField(
        max_length=40, blank=True, verbose_name="id parameter",
        help_text="The URL parameter that carries the participant's id on that platform (SONA: id, MTurk: "
                  "workerId, CloudResearch: participantId). Empty: the platform assigns each new entry an id.")
    completion_url = models.CharField(
        max_length=500, blank=True,
        help_text="Where participants go at the end; {code} is replaced by the study's completion code for their "
                  "outcome and {id} by their id, e.g. https://lab.sona-systems.com/webstudy_credit.aspx?"
                  "experiment_id=12&credit_token=ab&survey_code={id}. Empty: the code is shown, no redirect.")
    return_url = models.CharField(
        max_length=500, blank=True, verbose_name="return URL",
        help_text="Where a participant who does not finish goes back to (the platform's study list or your "
                  "lab's page): the declined, ended and error pages then show “Back to <name>”. Empty: they read "
                  "“You may close this page”.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="channel_unique_name_per_study")]

    def __str__(self) -> str:
        return f"{self.name} ({self.study.slug})"

    def clean(self) -> None:
        if self.name == PROLIFIC_CHANNEL:
            raise ValidationError({"name": f"“{PROLIFIC_CHANNEL}” is the default channel; choose another name."})
        if self.id_param and not self.id_param.replace("_", "").isalnum():
            raise ValidationError({"id_param": "A URL parameter name: letters, digits and underscores."})
        if self.id_param == "channel":  # surveys.channels.CHANNEL_PARAM: the link's own parameter
            raise ValidationError({"id_param": "“channel” names the channel in the link; choose another parameter."})
        if self.completion_url:
            if problem := placeholder_problem(self.completion_url):
                raise ValidationError({"completion_url": problem})
            if not self.completion_url.startswith(("https://", "http://")):
                raise ValidationError({"completion_url": "An absolute address (https://…)."})
        if self.return_url and not self.return_url.startswith(("https://", "http://")):
            raise ValidationError({"return_url": "An absolute address (https://…)."})


#: The name of the default channel in exports and reports (participants without a RecruitmentChannel).
PROLIFIC_CHANNEL = "prolific"


class Participant(models.Model):
    """One Prolific participant in one study."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        COMPLETED = "completed", "Completed"
        RETURNED = "returned", "Returned"
        TIMED_OUT = "timed_out", "Timed out"
        SCREENED_OUT = "screened_out", "Screened out"
        DECLINED = "declined", "Declined consent"

    ACTIVE = (Status.STARTED, Status.COMPLETED)

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    prolific_pid = models.CharField(max_length=64)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    channel = models.ForeignKey(
        RecruitmentChannel, null=True, blank=True, on_delete=models.PROTECT, related_name="participants",
        help_text="How they came in; empty: Prolific. Their id on a channel is stored as <channel>-<id>.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STARTED, db_index=True)
    is_test = models.BooleanField(
        default=False, db_index=True, verbose_name="test",
        help_text="Entered through a researcher's test link (surveys.test_mode): left out of reports, "
        "balancing and exports, and removable.",
    )
    user_agent = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    consented_at = models.DateTimeField(null=True, blank=True)
    instructions_read_at = models.DateTimeField(null=True, blank=True)
    pledged_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    declined_at = models.DateTimeField(null=True, blank=True, help_text="When they clicked “I do not agree”.")
    status_changed_at = models.DateTimeField(null=True, blank=True)
    passed_attention = models.BooleanField(
        null=True, blank=True, help_text="Live check at completion (canonical expression order)."
    )
    live_attention_rho = models.FloatField(
        null=True, blank=True,
        help_text="Spearman ρ of the live check at completion (answers vs. the canonical expression order); "
        "empty when it was undefined.",
    )
    attention_rho = models.FloatField(null=True, blank=True, help_text="Spearman ρ of the study's attention filter.")
    attention_included = models.BooleanField(null=True, blank=True)
    completion_code = models.CharField(max_length=40, blank=True, help_text="The code this participant was sent back with.")
    study_version = models.ForeignKey(StudyVersion, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="participants",
                                      help_text="The definition version this participant saw (empty: before versions).")
    questionnaire = models.JSONField(default=dict, blank=True,
                                     help_text="Answers to the study's questionnaire: field name → typed value.")
    # The experimental design (surveys/conditions.py, surveys/blocks.py): empty for a study without [[factors]]
    # or [blocks].
    condition = models.CharField(max_length=200, blank=True, default="", db_index=True,
                                 help_text="The between-subjects cell this participant was given (levels' keys "
                                 "joined by -); empty: the study declares no factors.")
    block_order = models.JSONField(default=list, blank=True,
                                   help_text="The blocks in the order this participant saw them (empty: no blocks).")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "prolific_pid"], name="participant_unique_pid_per_study"),
            models.CheckConstraint(
                condition=~Q(status="completed") | Q(completed_at__isnull=False),
                name="participant_completed_has_time",
            ),
            models.CheckConstraint(
                condition=~Q(status="declined") | Q(declined_at__isnull=False),
                name="participant_declined_has_time",
            ),
        ]
        ordering = ["study", "started_at"]

    def save(self, *args, **kwargs) -> None:
        """A new participant records the study's current definition version (the wording they are shown)."""
        if self._state.adding and self.study_version_id is None:
            self.study_version = self.study.current_version()
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"participant {self.pk} in {self.study.slug}"  # no PROLIFIC_PID: shown to staff without view_participant


class Assignment(models.Model):
    """One slot of a participant's list: which item, at which position, with which speaker."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    position = models.PositiveSmallIntegerField()
    speaker_name = models.CharField(max_length=100, blank=True)
    speaker_gender = models.CharField(max_length=20, blank=True)
    first_shown_at = models.DateTimeField(null=True, blank=True)
    option_order = models.JSONField(default=list, blank=True,
                                    help_text="The option keys in the order this slot shows them (a choice whose "
                                              "options are randomised per participant; empty: as declared).")

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "position"], name="assignment_unique_position"),
            models.UniqueConstraint(fields=["participant", "item"], name="assignment_unique_item"),
        ]

    def __str__(self) -> str:
        return f"participant {self.participant_id} #{self.position}: {self.item.key}"

    def speaker(self) -> tuple[str, str] | None:
        """(name, gender) shown in this slot, or None to use the item's own speaker."""
        return (self.speaker_name, self.speaker_gender) if self.speaker_name else None


class Response(TypedAnswer, models.Model):
    """A human answer. Exactly one per assignment slot and question (``question``: the key of one of the
    study's ``[[questions]]``, empty for a study's only question); never updated after it is saved (the database
    refuses a change of the answer, raw text, slot, participant or item).

    The answer is typed by the instrument's shape (surveys/instruments/shapes.py): ``value`` (a number on a
    scale), ``choice`` (an option's key), ``lower`` and ``upper`` (an interval) or ``text`` (free text); the
    other columns stay empty. The database requires at least one of them and lower ≤ upper."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="responses",
                                   related_query_name="response")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="responses")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="responses")
    question = models.CharField(max_length=40, blank=True, default="",
                                help_text="The question's key ([[questions]]); empty: the study's only question.")
    value = models.FloatField(null=True, blank=True, help_text="A number on the scale (scale kinds).")
    choice = models.CharField(max_length=100, blank=True, help_text="The chosen option's key (choice kinds).")
    lower = models.FloatField(null=True, blank=True, help_text="Lower bound (interval kinds).")
    upper = models.FloatField(null=True, blank=True, help_text="Upper bound (interval kinds).")
    text = models.TextField(blank=True, default="", help_text="A free-text answer, exactly as written.")
    raw = models.CharField(max_length=200, blank=True, help_text="The submitted value as sent.")
    time_taken_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Server-side: shown → saved.")
    client_time_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Measured in the browser.")
    created_at = models.DateTimeField(default=timezone.now)
    imported = models.BooleanField(default=False, help_text="Imported from an earlier study rather than collected here.")

    class Meta:
        ordering = ["participant", "assignment__position"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "item", "question"],
                                    name="response_unique_per_participant_item_question"),
            models.UniqueConstraint(fields=["assignment", "question"], name="response_unique_per_slot_question"),
            models.CheckConstraint(condition=ANSWER_GIVEN, name="response_has_an_answer"),
            models.CheckConstraint(condition=INTERVAL_ORDERED, name="response_interval_ordered"),
        ]

    def __str__(self) -> str:
        return f"participant {self.participant_id}: {self.item.key} = {self.answer.text()}"

    def clean(self) -> None:
        if self.assignment_id and (
            self.assignment.participant_id != self.participant_id or self.assignment.item_id != self.item_id
        ):
            raise ValidationError("A response must belong to its own assignment's participant and item.")


class Withdrawal(models.Model):
    """Audit record of a participant's data removed from a study (surveys.withdrawal): a participant's
    request to withdraw, or a researcher's test participant cleared away. The participant's row, slots and
    answers are deleted; this record keeps who did it, when, and how much, never the PROLIFIC_PID."""

    class Reason(models.TextChoices):
        WITHDRAWN = "withdrawn", "Participant withdrew"
        TEST = "test", "Test participant removed"

    study = models.ForeignKey(Study, null=True, on_delete=models.SET_NULL, related_name="withdrawals")
    study_slug = models.SlugField(help_text="Kept if the study is deleted later.")
    respondent_id = models.CharField(
        max_length=16, db_index=True,
        help_text="The hashed PROLIFIC_PID, as in the combined export's respondent_id (HMAC with EXPORT_ID_SALT).",
    )
    reason = models.CharField(max_length=20, choices=Reason.choices, default=Reason.WITHDRAWN)
    note = models.TextField(blank=True, help_text="E.g. how the request arrived (Prolific message of …).")
    requested_by = models.CharField(max_length=150, help_text="The admin user or shell user who carried it out.")
    created_at = models.DateTimeField(default=timezone.now)
    participant_status = models.CharField(max_length=20, help_text="Their status before removal.")
    was_test = models.BooleanField(default=False)
    responses_deleted = models.PositiveIntegerField(default=0)
    assignments_deleted = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_reason_display()}: {self.respondent_id} from {self.study_slug}"


class EntryCount(models.Model):
    """New participants admitted from one client address to one study in the current window
    (``ENTRY_MAX_PER_CLIENT`` in ``ENTRY_WINDOW_SECONDS``; surveys.entry_counter). The address is stored
    hashed. One row per (study, address), counted with an atomic UPDATE so that concurrent entries from
    several web processes are all counted."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    client = models.CharField(max_length=64, help_text="HMAC-SHA-256 of the client address (keyed with SECRET_KEY).")
    started_at = models.DateTimeField(help_text="Start of the current window (its first entry).")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "client"], name="entrycount_study_client")]

    def __str__(self) -> str:
        return f"{self.count} since {self.started_at:%Y-%m-%d %H:%M}"


from .check_models import CheckAnswer, ExclusionDecision  # noqa: E402,F401 (checks and exclusion decisions)
