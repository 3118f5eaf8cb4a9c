"""The Prolific participant flow (SPEC §4) as plain functions; the views only call these.

A participant's place in the study is derived from their own row, never stored separately:
no consent time → consent; the study's "before" questionnaire not answered → that page (surveys.questionnaire);
no instructions time → instructions; no pledge time → pledge; an unanswered slot → that item; all slots answered
and the "after" questionnaire not answered → that page; then completed (with the code they were sent back with).
The "before" page comes right after consent, where participants of a survey expect questions about themselves:
the instructions, their demonstrations and the pledge then lead straight into the first item, and the items are
drawn at the pledge as before, so someone who stops at the questionnaire holds no slots. Studies without a
questionnaire have neither page.
Participants who returned the study, timed out or were screened out see an "ended" page.

The consent, instructions and pledge steps lock the participant row (``select_for_update``) so that double
clicks, stale tabs and concurrent requests are serialised. An answer is one short transaction: the insert
(``INSERT … ON CONFLICT DO NOTHING``: the unique constraints in ``surveys.models`` decide whether the slot was
already answered) and, after the last answer, the completion; the database's trigger refuses an answer for
a participant who is no longer answering and, on PostgreSQL, holds the participant's row (``FOR SHARE``) until
the transaction ends, so nothing can change their status in between. The checks before it (the current slot,
the answer's value) read without a lock: whatever they read, the database keeps one answer per slot.
"""
from __future__ import annotations

import enum
import math
import random
import re
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from .assignment import assign
from .entry_counter import count_entry
from .flow_errors import FlowError
from .instruments import AnswerError
from .models import Assignment, Participant, RecruitmentChannel, Response, Study
from .flow_queries import first_unanswered, mark_first_shown
from .response_insert import insert_once
from . import channels, checks, conditions, question_answers, questionnaire, questions
from .channels import prolific_completion_url as completion_url  # noqa: F401 (the preview's)
from .test_mode import BadTestToken, is_test_entry
from .withdrawal import check_not_withdrawn

PID_PARAM, STUDY_PARAM, SESSION_PARAM = "PROLIFIC_PID", "STUDY_ID", "SESSION_ID"
PROLIFIC_ID = re.compile(r"[A-Za-z0-9]{1,64}")
# Prolific substitutes {{%PROLIFIC_PID%}}; a link pasted without "URL parameters" keeps the placeholder.
PLACEHOLDER = re.compile(r"%[A-Z_]+%|\{\{|\}\}")
MAX_CLIENT_MS = 24 * 3600 * 1000  # anything longer than a day is not a measurement
MAX_STORED_MS = 2**31 - 1  # PositiveIntegerField's portable upper bound

# The instruments' and answer shapes' messages (AnswerError, empty/number/order messages), marked here so that makemessages keeps their translations;
# submit_answer translates the message it gets in the participant's study language.
ANSWER_MESSAGES = (
    gettext_noop("Please choose one of the answers from 0 to 100."),
    gettext_noop("Please choose one of the answers from 0 to 100 (in steps of 5)."),
    gettext_noop("Please enter a number from 0 to 100."),
    gettext_noop("Please enter a whole number from 0 to 100."),
    gettext_noop("Please choose an answer before continuing."),
    gettext_noop("Please choose one of the options shown."),
    gettext_noop("Please enter a lower and an upper bound before continuing."),
    gettext_noop("Please enter a lower bound."),
    gettext_noop("Please enter a upper bound."),
    gettext_noop("Each bound must be a number (for example 12 or -3.5)."),
    gettext_noop("The lower bound must not be greater than the upper bound."),
    gettext_noop("Please give one answer only."),
    gettext_noop("Please choose one of the answers on the scale."),
    gettext_noop("Please write an answer before continuing."),
    gettext_noop("Your answer holds a character that cannot be stored (NUL); please remove it."),
    gettext_noop("Please shorten your answer: it is longer than this question allows."),
)

ENDED_STATUSES = (Participant.Status.RETURNED, Participant.Status.TIMED_OUT, Participant.Status.SCREENED_OUT)


class Step(str, enum.Enum):
    """Where a participant is in the study."""

    CONSENT = "consent"
    INSTRUCTIONS = "instructions"
    PLEDGE = "pledge"
    QUESTIONNAIRE_BEFORE = "questionnaire_before"  # only for studies that ask questionnaire fields then
    ITEM = "item"
    CHECK = "check"  # a declared attention check (surveys/checks.py) is due
    QUESTIONNAIRE_AFTER = "questionnaire_after"
    DONE = "done"  # completed: show the code and the link back to Prolific
    ENDED = "ended"  # returned, timed out or screened out


@dataclass(frozen=True)
class Progress:
    """A participant's current step; for ``Step.ITEM`` also the slot and "Question number of total"."""

    step: Step
    slot: Assignment | None = None
    number: int = 0
    total: int = 0
    check: Any = None  # Step.CHECK: the participant's CheckAnswer row to answer


class StudyNotOpen(FlowError):
    """The study does not accept new participants (draft, closed or without items)."""

    status = 403


class OutOfStep(FlowError):
    """A form for a step the participant is no longer (or not yet) at, e.g. from a stale tab."""

    status = 409


@dataclass(frozen=True)
class EntryParams:
    pid: str
    study_id: str
    session_id: str


# --- entry --------------------------------------------------------------------------------------
def _check_id(params: Mapping[str, str], name: str, required: bool) -> str:
    value = (params.get(name) or "").strip()
    if not value:
        if required:
            raise FlowError(
                _("This link is missing your Prolific ID"),
                _("The address has no %(name)s. Please open the study again from Prolific "
                  "(use the link or button on the study page); it adds your Prolific ID for you.") % {"name": name},
            )
        return ""
    if PLACEHOLDER.search(value):
        raise FlowError(
            _("This link has not been filled in by Prolific"),
            _("The address contains Prolific's placeholder %(value)s instead of your %(name)s. "
              "Please open the study from its page on Prolific. (Researchers: in the Prolific study settings, "
              "choose to record Prolific IDs via URL parameters.)") % {"value": repr(value), "name": name},
        )
    if not PROLIFIC_ID.fullmatch(value):
        raise FlowError(
            _("This link has an invalid Prolific ID"),
            _("The %(name)s in the address (%(value)s) is not valid: it should be 1 to 64 letters and digits. "
              "Please open the study again from Prolific.") % {"name": name, "value": repr(value[:80])},
        )
    return value


def check_entry_params(params: Mapping[str, str]) -> EntryParams:
    """The Prolific parameters of a study link; FlowError (400) names what is missing or malformed."""
    return EntryParams(
        pid=_check_id(params, PID_PARAM, required=True),
        study_id=_check_id(params, STUDY_PARAM, required=False),
        session_id=_check_id(params, SESSION_PARAM, required=False),
    )


def check_study_open(study: Study, channel: RecruitmentChannel | None = None, *, test: bool = False) -> None:
    """Raise StudyNotOpen unless ``study`` accepts new participants; the message names Prolific only to
    Prolific's participants (``channel`` None), nothing to those of another channel. A test participant
    (``test``: a researcher's test link, surveys.test_mode) may also enter a draft, to try it before it opens."""
    prolific = channel is None
    if study.status == Study.Status.DRAFT and not test:
        raise StudyNotOpen(_("This study has not started yet"),
                           _("The study is not open yet. Please try again later or return it on Prolific.")
                           if prolific else _("The study is not open yet. Please try again later."))
    if study.status == Study.Status.CLOSED:
        raise StudyNotOpen(_("This study is closed"),
                           _("The study is no longer accepting participants. Please return it on Prolific.")
                           if prolific else _("The study is no longer accepting participants."))
    if not study.main_items().exists():
        raise StudyNotOpen(_("This study is not ready"),
                           _("The study has no questions yet. Please return it on Prolific.")
                           if prolific else _("The study has no questions yet. Please try again later."))


class TooManyEntries(FlowError):
    """One client created more new participants than ENTRY_MAX_PER_CLIENT in ENTRY_WINDOW_SECONDS."""

    status = 429


def check_entry_rate(study: Study, client: str, channel: RecruitmentChannel | None = None) -> None:
    """Count a new participant from ``client`` (its address); TooManyEntries past the limit."""
    limit = settings.ENTRY_MAX_PER_CLIENT
    if limit and client and count_entry(study.pk, client, settings.ENTRY_WINDOW_SECONDS) > limit:
        raise TooManyEntries(_("Too many new participants from your network"),
                             _("This study admits only a few new participants per network at a time. "
                               "Please wait a few minutes and open the link from Prolific again.")
                             if channel is None else
                             _("This study admits only a few new participants per network at a time. "
                               "Please wait a few minutes and open the link you were given again."))


def enter(study: Study, params: Mapping[str, str], user_agent: str = "", client: str = "") -> Participant:
    """The participant for a study link: created on first entry, the same row when the PID comes back.

    New participants are only admitted to a live study with items (test participants to a draft too), and at most ENTRY_MAX_PER_CLIENT per
    client address in ENTRY_WINDOW_SECONDS; a known PID may always come back (to resume, or to see their
    completion code). Nothing is created when the link is refused.
    """
    try:
        channel = channels.channel_of(study, params)
        ids = check_entry_params(params) if channel is None else EntryParams(
            channels.participant_key(channel, params), "", "")
    except channels.ChannelError as exc:
        raise FlowError(exc.title, exc.message) from None
    existing = Participant.objects.filter(study=study, prolific_pid=ids.pid).first()
    if existing is not None:
        return existing
    try:
        is_test = is_test_entry(study, params)
    except BadTestToken:
        raise FlowError(_("This test link is not valid"),
                        _("The address carries a test marker that this site did not issue for this study. "
                          "Researchers: copy a fresh test link from `.venv/bin/python manage.py show_links` "
                          "or the admin.")) from None
    check_study_open(study, channel, test=is_test)
    check_not_withdrawn(study, ids.pid, channel)
    check_entry_rate(study, client, channel)
    defaults = {"prolific_study_id": ids.study_id, "prolific_session_id": ids.session_id,
                "user_agent": user_agent[:1000], "is_test": is_test, "channel": channel}
    if conditions.has_factors(study):  # the cell is chosen under the study's row lock (surveys/conditions.py)
        with transaction.atomic():
            Study.objects.select_for_update().filter(pk=study.pk).first()
            existing = Participant.objects.filter(study=study, prolific_pid=ids.pid).first()
            if existing is not None:
                return existing
            defaults["condition"] = conditions.choose_cell(study, params, is_test)
            return Participant.objects.create(study=study, prolific_pid=ids.pid, **defaults)
    participant, _created = Participant.objects.get_or_create(study=study, prolific_pid=ids.pid, defaults=defaults)
    return participant


def names_participant(study: Study, params: Mapping[str, str]) -> bool:
    """Whether a study link says who the participant is (a Prolific PID, or a channel's id parameter); when it
    does not, the browser's session says it. A Prolific link costs no query here."""
    if channels.CHANNEL_PARAM not in params:
        return PID_PARAM in params
    try:
        channel = channels.channel_of(study, params)
    except channels.ChannelError:
        return True  # enter() refuses it with the reason
    return PID_PARAM in params if channel is None else channels.brings_id(channel, params)


# --- where the participant is ---------------------------------------------------------------------
def current_step(participant: Participant) -> Progress:
    """The participant's current step, derived from their timestamps, status and slots.

    At the question step this costs one query (surveys.flow_queries): the first unanswered slot with its item,
    and the counts of the participant's slots and answers (``Question number of total``).
    """
    if participant.status in ENDED_STATUSES:
        return Progress(Step.ENDED)
    if participant.status == Participant.Status.COMPLETED:
        return Progress(Step.DONE)
    if participant.consented_at is None:  # also after declining: they may change their mind
        return Progress(Step.CONSENT)
    if participant.instructions_read_at is None:
        if questionnaire.pending(participant, "before"):
            return Progress(Step.QUESTIONNAIRE_BEFORE)
        return Progress(Step.INSTRUCTIONS)
    if participant.pledged_at is None:
        return Progress(Step.PLEDGE)
    found = first_unanswered(participant.pk)
    if participant.study.definition.get("checks"):  # [[checks]]: shown among the items, counted with them
        return checks_step(participant, found)
    if found is not None:
        slot, total, answered = found
        return Progress(Step.ITEM, slot=slot, number=answered + 1, total=total)
    if questionnaire.pending(participant, "after"):
        return Progress(Step.QUESTIONNAIRE_AFTER)
    # Pledged and every slot answered, but not yet marked completed (cannot normally happen, since
    # the last answer, or the "after" questionnaire, completes in the same transaction): the view calls complete().
    n = participant.assignments.count()
    return Progress(Step.DONE, number=n, total=n)


def checks_step(participant: Participant, found: tuple[Assignment, int, int] | None) -> Progress:
    """``current_step`` past the pledge for a study with checks: a due check first, then the next item; the
    question number and total count checks and items together."""
    placed, answered_checks = checks.counts(participant)
    check = checks.due(participant, found[2] if found is not None else None)
    if found is not None:
        slot, total, answered = found
    else:
        slot, total = None, participant.assignments.count()
        answered = total
    number, total = answered + answered_checks + 1, total + placed
    if check is not None:
        return Progress(Step.CHECK, number=number, total=total, check=check)
    if slot is not None:
        return Progress(Step.ITEM, slot=slot, number=number, total=total)
    if questionnaire.pending(participant, "after"):
        return Progress(Step.QUESTIONNAIRE_AFTER)
    return Progress(Step.DONE, number=total, total=total)


def _locked(participant: Participant) -> Participant:
    """The participant's row (with its study), re-read and locked until the end of the transaction."""
    return lock_query().get(pk=participant.pk)


def lock_query() -> QuerySet[Participant]:
    """Participants read with their study, locking only the participant's row (inside a transaction)."""
    return Participant.objects.select_for_update(of=("self",)).select_related("study").order_by()


def _expect(participant: Participant, step: Step) -> None:
    if current_step(participant).step != step:
        raise OutOfStep(_("This page was already submitted"),
                        _("That page was already submitted (perhaps in another tab); here is where you are now."))


def record_consent(participant: Participant, agreed: bool) -> bool:
    """Record consent, or the decline: status ``declined`` with ``declined_at`` (the latest decline).
    A participant who declined and opens the link again sees the consent page again; agreeing then puts
    them back to ``started`` (``declined_at`` keeps when they declined). Returns ``agreed``.

    OutOfStep if consent was already recorded.
    """
    with transaction.atomic():
        locked = _locked(participant)
        _expect(locked, Step.CONSENT)
        now, before = timezone.now(), locked.status
        if agreed:
            locked.consented_at = now
            locked.status = Participant.Status.STARTED
        else:
            locked.declined_at = now
            locked.status = Participant.Status.DECLINED
        if locked.status != before:
            locked.status_changed_at = now
        locked.save(update_fields=["consented_at", "declined_at", "status", "status_changed_at"])
    participant.refresh_from_db()
    return agreed


def record_instructions(participant: Participant) -> None:
    """Record that the instructions (with the two demonstrations) were read."""
    with transaction.atomic():
        locked = _locked(participant)
        _expect(locked, Step.INSTRUCTIONS)
        locked.instructions_read_at = timezone.now()
        locked.save(update_fields=["instructions_read_at"])
    participant.refresh_from_db()


def record_pledge(participant: Participant, rng: random.Random | None = None) -> list[Assignment]:
    """Record the integrity pledge and draw the participant's items (balanced; see surveys.assignment).

    Items are drawn here rather than at entry, so people who stop before the first question hold no slots.
    """
    with transaction.atomic():
        locked = _locked(participant)
        _expect(locked, Step.PLEDGE)
        locked.pledged_at = timezone.now()
        locked.save(update_fields=["pledged_at"])
        slots = assign(locked, rng)
    participant.refresh_from_db()
    return slots


QUESTIONNAIRE_STEPS: dict[questionnaire.When, Step] = {"before": Step.QUESTIONNAIRE_BEFORE,
                                                       "after": Step.QUESTIONNAIRE_AFTER}


def record_questionnaire(participant: Participant, when: questionnaire.When,
                         data: Mapping[str, Any]) -> questionnaire.QuestionnaireForm:
    """Validate the posted ``when`` questionnaire page and store its answers (surveys.questionnaire.store);
    after the items this also completes the participant, in the same transaction.

    Returns the bound form: when it is not valid nothing is stored and the page asks again with its messages
    and the values entered. OutOfStep when the participant is not at that page (a second POST: the answers
    stored first stand, unchanged).
    """
    form = questionnaire.questionnaire_form(participant.study, when, data)
    if not form.is_valid():
        return form
    with transaction.atomic():
        locked = _locked(participant)
        _expect(locked, QUESTIONNAIRE_STEPS[when])
        try:
            questionnaire.store(locked, form.answers())
        except questionnaire.AlreadyAnswered:
            raise OutOfStep(_("This page was already submitted"),
                            _("That page was already submitted (perhaps in another tab); here is where you are "
                              "now.")) from None
        if when == "after":
            _complete(locked)
    participant.refresh_from_db()
    return form


def mark_shown(slot: Assignment, now: datetime | None = None) -> None:
    """Record when a slot was first shown (only the first time: reloads keep the original time).
    No query when the slot already has its time."""
    if slot.first_shown_at is not None:
        return
    now = now or timezone.now()
    if mark_first_shown(slot.pk, now):
        slot.first_shown_at = now
    else:  # another request showed it first
        slot.refresh_from_db(fields=["first_shown_at"])


# --- answers --------------------------------------------------------------------------------------
class Outcome(str, enum.Enum):
    SAVED = "saved"  # the answer was stored; go on to the next step
    INVALID = "invalid"  # no or a bad value: ask the same question again with ``message``
    ALREADY_ANSWERED = "already_answered"  # double click or stale tab: the first answer stands
    REJECTED = "rejected"  # not this participant's current slot (tampered or out of order)
    NOT_ANSWERING = "not_answering"  # the participant is not at the question step (e.g. completed)


@dataclass(frozen=True)
class Submission:
    outcome: Outcome
    message: str = ""
    response: Response | None = None  # the first answer stored (a page of several questions: ``responses``)
    step: Step = Step.ITEM  # where the participant is after this submission
    next: Progress | None = None  # with ``show_next``: the next question, already marked shown
    errors: Mapping[str, str] | None = None  # INVALID on a page of several questions: message per question key
    responses: tuple[Response, ...] = ()


class _AlreadyAnswered(Exception):
    """A page's answer conflicted after another of its answers was inserted: the whole page rolls back."""


def parse_client_ms(raw: Any) -> int | None:
    """The browser-measured time in ms, or None when missing or implausible (never an error)."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value < 0 or value > MAX_CLIENT_MS:
        return None
    return int(round(value))


ALREADY_SAVED = gettext_noop("Your answer to that question was already saved; it has not been changed.")


def submit_answer(participant: Participant, position: int, item_id: int, answer: Any,
                  client_time_ms: Any = None, *, progress: Progress | None = None,
                  show_next: bool = False) -> Submission:
    """Save the answer to the participant's current slot; never a duplicate or an overwrite.

    ``position`` and ``item_id`` come from the form and must name the participant's current slot.
    ``answer``: the posted form (the instrument's answer shape reads its own fields) or, for a one-field
    shape, the value itself. The last answer also completes the participant (see ``complete``) in the same
    transaction, unless the study asks questionnaire fields after the items: then the submission's step is
    ``QUESTIONNAIRE_AFTER`` and storing those answers completes them (``record_questionnaire``).

    ``progress``: the participant's current step as the caller has just read it with the participant (and its
    study): the participant view's path (surveys.views), which then reads nothing again. Without it the
    participant is re-read here and ``participant`` refreshed afterwards.

    ``show_next``: the caller shows the next question in its reply to this answer (the participant view: one
    request per answer instead of a redirect and a second request). The next slot is then read and marked
    shown in the answer's own transaction, and returned as ``Submission.next``.
    """
    if progress is not None:
        return _submit(participant, progress, position, item_id, answer, client_time_ms, show_next)
    row = Participant.objects.select_related("study").get(pk=participant.pk)
    result = _submit(row, current_step(row), position, item_id, answer, client_time_ms, show_next)
    participant.refresh_from_db()
    return result


def _submit(participant: Participant, progress: Progress, position: int, item_id: int, answer: Any,
            client_time_ms: Any, show_next: bool = False) -> Submission:
    if progress.step != Step.ITEM or participant.status != Participant.Status.STARTED:
        return _not_answering(progress.step)
    slot = progress.slot
    if (position, item_id) != (slot.position, slot.item_id):
        return _not_current(participant, position, item_id)
    if questions.several(participant.study):
        page = question_answers.read_page(participant.study, slot.item, answer)
        if not page.ok:
            errors = {key: _(message) for key, message in page.errors.items()}  # marked in ANSWER_MESSAGES
            return Submission(Outcome.INVALID, next(iter(errors.values())), errors=errors)
        given = [(g.question.key, g.answer, g.raw) for g in page.given]
    else:
        kind = participant.study.kind
        try:
            data = kind.shape.form_data(answer)
            if kind.shape.is_empty(data):
                return Submission(Outcome.INVALID, _(kind.shape.empty_message))
            typed = kind.validate_answer(slot.item, data)
        except AnswerError as exc:
            return Submission(Outcome.INVALID, _(str(exc)))  # messages marked in ANSWER_MESSAGES
        given = [(questions.SINGLE, typed, kind.shape.raw(data))]
    client_ms = parse_client_ms(client_time_ms)
    now = timezone.now()
    taken = None
    if slot.first_shown_at is not None:
        taken = min(MAX_STORED_MS, max(0, int((now - slot.first_shown_at).total_seconds() * 1000)))
    rows = [Response(assignment=slot, participant=participant, item_id=slot.item_id, question=key,
                     **typed.columns(), raw=raw[:200], time_taken_ms=taken, client_time_ms=client_ms, created_at=now)
            for key, typed, raw in given]
    last = progress.number >= progress.total
    if participant.study.definition.get("checks") and checks.pending(participant):
        last = False  # a check is still to come: the next step says which page
    completes = last and not questionnaire.pending(participant, "after")
    following: Progress | None = None
    try:
        with transaction.atomic():  # SQLite: BEGIN IMMEDIATE, so the write lock is held only for this
            if not _insert_page(rows):  # answered meanwhile (double click, another tab)
                return Submission(Outcome.ALREADY_ANSWERED, _(ALREADY_SAVED))
            if completes:
                _complete(participant)
            elif show_next:  # one commit for the answer and the next question's first-shown time
                following = current_step(participant)
                if following.step == Step.ITEM:
                    mark_shown(following.slot)
                else:
                    following = None
    except _AlreadyAnswered:  # part of the page was stored meanwhile: nothing of this submission is
        return Submission(Outcome.ALREADY_ANSWERED, _(ALREADY_SAVED))
    except IntegrityError:  # the trigger: their status changed meanwhile (e.g. marked returned)
        participant.refresh_from_db()
        return _not_answering(current_step(participant).step)
    step = Step.ITEM if not last else Step.DONE if completes else Step.QUESTIONNAIRE_AFTER
    return Submission(Outcome.SAVED, response=rows[0], step=step, next=following, responses=tuple(rows))


def _insert_page(rows: list[Response]) -> bool:
    """Insert a page's answers, all or none, inside the caller's transaction: False when the page was answered
    already (its first answer is there); _AlreadyAnswered (rolling the transaction back) when a later one is."""
    for number, row in enumerate(rows):
        if not insert_once(row):
            if number == 0:
                return False
            raise _AlreadyAnswered
    return True


def _not_answering(step: Step) -> Submission:
    message = (_("Your answers are already complete.") if step == Step.DONE
               else _("This page cannot take answers now."))
    return Submission(Outcome.NOT_ANSWERING, message, step=step)


def _not_current(participant: Participant, position: int, item_id: int) -> Submission:
    """Why a posted (position, item) is not the current slot: already answered, out of order or not theirs."""
    slot = (participant.assignments.filter(position=position).order_by()
            .annotate(answered=Exists(Response.objects.filter(assignment_id=OuterRef("pk")))).first())
    if slot is None or slot.item_id != item_id:
        return Submission(Outcome.REJECTED, _("That answer did not match your current question, so it was "
                                              "not saved. Please answer the question below."))
    if slot.answered:
        return Submission(Outcome.ALREADY_ANSWERED, _(ALREADY_SAVED))
    return Submission(Outcome.REJECTED, _("Please answer the questions in order."))


# --- completion -----------------------------------------------------------------------------------
def attention_rho(values: Sequence[float], labels: Sequence[str], order: Sequence[str]) -> float | None:
    """Spearman ρ between answers and the canonical order of their labels (first = highest expected).

    Answers whose label is not in ``order`` (controls) are left out. None when ρ is undefined
    (fewer than two answers, or constant answers or labels).
    """
    rank = {label: len(order) - i for i, label in enumerate(order)}
    pairs = [(float(v), rank[label]) for v, label in zip(values, labels) if label in rank]
    if len(pairs) < 2:
        return None
    from scipy import stats  # imported here: scipy takes a second to import, and only completion needs it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConstantInputWarning: handled as undefined below
        rho = stats.spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return None if rho is None or not math.isfinite(rho) else float(rho)


def passes_attention(rho: float | None, threshold: float) -> bool:
    """The live check: pass only when ρ is defined and above the study's threshold."""
    return rho is not None and rho > threshold


def complete(participant: Participant) -> str:
    """Mark the participant completed, run the live attention check, store and return the code to send.

    Idempotent: a completed participant keeps the code they were first given. The check compares
    the participant's non-control answers with the instrument's ``canonical_order()``; an instrument
    without one has no live check (``passed_attention`` stays empty and the completion code is sent).
    """
    with transaction.atomic():
        locked = _locked(participant)
        code = _complete(locked)
    participant.refresh_from_db()
    return code


def _complete(locked: Participant) -> str:
    """``complete`` inside the caller's transaction, on a row it has locked (``complete``) or that the answer
    trigger holds (``submit_answer``: the last answer was just inserted)."""
    if locked.status == Participant.Status.COMPLETED:
        return locked.completion_code
    study = locked.study
    order = study.kind.canonical_order()
    if order:
        answers = list(locked.responses.filter(item__is_control=False).values_list("value", "item__expression"))
        rho = attention_rho([a[0] for a in answers], [a[1] for a in answers], order)
        passed: bool | None = passes_attention(rho, study.attention_threshold)
    else:
        rho, passed = None, None
    code = study.failed_attention_code if passed is False else study.completion_code
    now = timezone.now()
    locked.status = Participant.Status.COMPLETED
    locked.completed_at = now
    locked.status_changed_at = now
    locked.live_attention_rho = rho
    locked.passed_attention = passed
    locked.completion_code = code
    locked.save(update_fields=["status", "completed_at", "status_changed_at", "live_attention_rho",
                               "passed_attention", "completion_code"])
    return code




# --- researcher actions ---------------------------------------------------------------------------
def mark_participants(queryset: QuerySet[Participant], status: str) -> int:
    """Set ``status`` (returned, timed out or screened out) on the participants in ``queryset``.

    For the admin action. Their unanswered slots stop counting for balancing at once
    (surveys.assignment.item_usage); their answers are kept. Returns the number of rows changed.
    """
    if status not in ENDED_STATUSES:
        allowed = ", ".join(s.value for s in ENDED_STATUSES)
        raise ValueError(f"{status!r} is not a status a researcher can set (allowed: {allowed})")
    with transaction.atomic():
        return queryset.exclude(status=status).update(status=status, status_changed_at=timezone.now())


def reinstate_participants(queryset: QuerySet[Participant]) -> int:
    """Undo ``mark_participants``: back to completed (if they had completed) or started. Returns rows changed."""
    now = timezone.now()
    with transaction.atomic():
        ended = queryset.filter(status__in=ENDED_STATUSES)
        done = ended.filter(completed_at__isnull=False).update(status=Participant.Status.COMPLETED,
                                                               status_changed_at=now)
        started = ended.filter(completed_at__isnull=True).update(status=Participant.Status.STARTED,
                                                                 status_changed_at=now)
    return done + started
