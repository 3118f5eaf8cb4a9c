"""Participant pages and the researcher preview. Thin: every decision is made in surveys.flow / surveys.preview.

The participant is identified by the study link's PROLIFIC_PID on entry and by the session afterwards;
each step has its own URL, and a request for any other step than the current one is redirected to it.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Mapping

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from access.ownership import require
from config.client_address import client_address
from config.permissions import check

from . import channels, checks, flow, questionnaire, questions
from .flow import FlowError, Outcome, Progress, Step
from .forms import AnswerForm, ConsentForm, PledgeForm
from .flow_queries import participants_with_study
from .condition_context import under
from .page_tokens import slot_token, token_matches
from .question_answers import question_pages
from .models import Item, Participant, Study
from .preview import (PreviewState, preview_answer, preview_consent, preview_instructions, preview_notes,
                      preview_pledge, preview_progress, preview_questionnaire, preview_summary)

STEP_URLS = {
    Step.CONSENT: "surveys:consent",
    Step.INSTRUCTIONS: "surveys:instructions",
    Step.PLEDGE: "surveys:pledge",
    Step.QUESTIONNAIRE_BEFORE: "surveys:questionnaire_before",
    Step.ITEM: "surveys:item",
    Step.CHECK: "surveys:check",
    Step.QUESTIONNAIRE_AFTER: "surveys:questionnaire_after",
    Step.DONE: "surveys:done",
    Step.ENDED: "surveys:done",
}
NOT_THIS_QUESTION = gettext_noop("That answer did not match your current question, so it was not saved. "
                                  "Please answer the question below.")
STALE_PAGE = gettext_noop("That page was already submitted (perhaps in another tab); here is where you are now.")


# --- helpers --------------------------------------------------------------------------------------
def _session_key(study: Study) -> str:
    return f"hedgelab.participant.{study.pk}"


def _redirect_key(study: Study) -> str:
    return f"hedgelab.redirect.{study.pk}"


def _step_redirect(study: Study, step: Step) -> HttpResponse:
    return redirect(STEP_URLS[step], slug=study.slug)


def problem(request: HttpRequest, error: FlowError, study: Study | None = None,
            back: channels.ReturnLink | None = None) -> HttpResponse:
    """The clear error page for a refused request, with the error's HTTP status (and ``back``: the link back to
    the channel the person came through, if it has one)."""
    return render(request, "surveys/problem.html", {"title": error.title, "message": error.message,
                                                    "study": study, "back": back}, status=error.status)


def _study(slug: str, prolific: bool = True) -> Study:
    """The study at ``slug``; FlowError (404) without one, naming Prolific only when ``prolific``."""
    try:
        return Study.objects.get(slug=slug)
    except Study.DoesNotExist:
        raise FlowError(_("No study at this address"),
                        _("There is no study at this address. Please check the link on Prolific.") if prolific
                        else _("There is no study at this address. Please check the link you were given."),
                        status=404) from None


def in_study_language(study: Study):
    """Participant pages speak the study's language (``Study.language``), whatever the browser asks for."""
    return translation.override(study.language or "en")


SESSION_PREFIX = "hedgelab.participant."


def _session_participant(request: HttpRequest, slug: str) -> Participant | None:
    """The session's participant in the study at ``slug``, with its study, in one query.

    The session holds one key per study entered (``_session_key``: by the study's id); the one whose study
    has this slug is the participant.
    """
    keys = {key[len(SESSION_PREFIX):]: pk for key, pk in request.session.items()
            if key.startswith(SESSION_PREFIX) and isinstance(pk, int)}
    if not keys:
        return None
    for participant in participants_with_study(list(keys.values()), slug):
        if keys.get(str(participant.study_id)) == participant.pk:
            return participant
    return None


def participant_page(*steps: Step) -> Callable:
    """Resolve the study and the session's participant (one query); redirect unless they are at one of
    ``steps``. The page is rendered in the study's language."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        @never_cache
        def wrapper(request: HttpRequest, slug: str) -> HttpResponse:
            participant = _session_participant(request, slug)
            if participant is None:
                try:
                    study = _study(slug)
                except FlowError as exc:
                    return problem(request, exc)
                with in_study_language(study):
                    return problem(request, FlowError(
                        _("We could not find your place in this study"),
                        _("Please open the study again with the link on Prolific; you will continue where you "
                          "left off.") if not channels.has_channels(study) else
                        _("Please open the study again with the link you were given; you will continue where "
                          "you left off."),
                    ), study)
            study = participant.study
            request.test_participant = participant.is_test  # base.html's banner on every page
            request.via_channel = participant.channel_id is not None  # the banner then names no Prolific
            with in_study_language(study), under(participant.condition):  # a study with factors: their cell
                progress = flow.current_step(participant)
                if progress.step not in steps:
                    if request.method == "POST":
                        messages.info(request, _(STALE_PAGE))
                    return _step_redirect(study, progress.step)
                return view(request, study, participant, progress)

        return wrapper

    return decorator


def _step_context(study: Study, step: Step, action: str, preview: bool, **extra: Any) -> dict[str, Any]:
    return {"study": study, "step": step.value, "action": action, "preview": preview, **extra}


def _demo_answer(value: float | None) -> float | int | None:
    return int(value) if value is not None and float(value).is_integer() else value


def _instructions_context(study: Study) -> dict[str, Any]:
    """The task description, the study's instructions and its two demonstrations (answers shown)."""
    kind = study.kind
    demos = [{"q": kind.page_context(demo), "answer": _demo_answer(demo.demo_answer), "prefix": f"demo{n}"}
             for n, demo in enumerate(study.demonstrations(), start=1)]
    return {"intro": kind.study_intro(study), "demos": demos,
            "item_template": kind.template_name}


def _item_context(study: Study, progress: Progress, error: str = "", refused: Any = None,
                  errors: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The question page's context; ``refused``: the submission the page refused (shown again as the shape says);
    ``errors``: a page of several questions, the message of each question asked again."""
    slot = progress.slot
    if slot.item.study_id == study.pk:
        slot.item.study = study  # its wording is the study's: the object at hand, not another query
    shape = study.kind.shape
    return {
        "questions": question_pages(study, slot, errors or {}, refused) if questions.several(study) else None,
        "selected": shape.refused_selection(refused) if error and refused is not None else None,
        "q": study.kind.slot_page_context(slot),
        "item_template": study.kind.template_name,
        "shape": study.kind.shape,
        "slot": slot,
        "number": progress.number,
        "total": progress.total,
        "percent": round(100 * (progress.number - 1) / progress.total) if progress.total else 0,
        "error": error,
    }


# --- participant pages ----------------------------------------------------------------------------
@never_cache
@require_http_methods(["GET"])
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """The study link: validate the Prolific parameters, find or create the participant, go to their step."""
    try:
        study = _study(slug, prolific=not channels.names_other_channel(request.GET))
    except FlowError as exc:
        return problem(request, exc)
    if request.session.get(_session_key(study)) and not flow.names_participant(study, request.GET):
        return _step_redirect(study, Step.CONSENT)  # the step page redirects on to the current step
    try:
        with in_study_language(study):
            participant = flow.enter(study, request.GET, request.META.get("HTTP_USER_AGENT", ""),
                                     client=client_address(request))
    except FlowError as exc:
        with in_study_language(study):
            return problem(request, exc, study, channels.return_link(channels.named_channel(study, request.GET)))
    request.session[_session_key(study)] = participant.pk
    return _step_redirect(study, flow.current_step(participant).step)


@participant_page(Step.CONSENT)
def consent(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    form = ConsentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            agreed = flow.record_consent(participant, form.agreed)
        except flow.OutOfStep:
            messages.info(request, _(STALE_PAGE))
            return _step_redirect(study, flow.current_step(participant).step)
        if not agreed:
            return render(request, "surveys/declined.html",
                          {"study": study, "via_channel": participant.channel_id is not None,
                           "back": channels.return_link(participant.channel),
                           "prolific_url": channels.prolific_home_url()})
        return _step_redirect(study, flow.current_step(participant).step)  # the questionnaire or instructions
    return render(request, "surveys/consent.html",
                  _step_context(study, Step.CONSENT, request.path, False, form=form,
                                via_channel=participant.channel_id is not None))


@participant_page(Step.INSTRUCTIONS)
def instructions(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    if request.method == "POST":
        try:
            flow.record_instructions(participant)
        except flow.OutOfStep:
            messages.info(request, _(STALE_PAGE))
        return _step_redirect(study, flow.current_step(participant).step)
    return render(request, "surveys/instructions.html",
                  _step_context(study, Step.INSTRUCTIONS, request.path, False, **_instructions_context(study)))


@participant_page(Step.PLEDGE)
def pledge(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    form = PledgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            flow.record_pledge(participant)
        except flow.OutOfStep:
            messages.info(request, _(STALE_PAGE))
        return _step_redirect(study, flow.current_step(participant).step)
    return render(request, "surveys/pledge.html", _step_context(study, Step.PLEDGE, request.path, False, form=form))


def _questionnaire_page(request: HttpRequest, study: Study, participant: Participant,
                        when: questionnaire.When) -> HttpResponse:
    """A questionnaire page (surveys.questionnaire): asked again with its messages and the values entered while
    not valid; stored once (a second POST changes nothing). After the items, storing completes the participant."""
    form = questionnaire.questionnaire_form(study, when)
    if request.method == "POST":
        try:
            form = flow.record_questionnaire(participant, when, request.POST)
        except flow.OutOfStep:
            messages.info(request, _(STALE_PAGE))
            return _step_redirect(study, flow.current_step(participant).step)
        if form.is_valid():
            step = flow.current_step(participant).step
            if when == "after" and step == Step.DONE:
                request.session[_redirect_key(study)] = True
            return _step_redirect(study, step)
    return render(request, "surveys/questionnaire.html",
                  _step_context(study, flow.QUESTIONNAIRE_STEPS[when], request.path, False, form=form, when=when))


@participant_page(Step.QUESTIONNAIRE_BEFORE)
def questionnaire_before(request: HttpRequest, study: Study, participant: Participant,
                         progress: Progress) -> HttpResponse:
    return _questionnaire_page(request, study, participant, "before")


@participant_page(Step.QUESTIONNAIRE_AFTER)
def questionnaire_after(request: HttpRequest, study: Study, participant: Participant,
                        progress: Progress) -> HttpResponse:
    return _questionnaire_page(request, study, participant, "after")


@participant_page(Step.ITEM)
def item(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    """One question. An answer is saved in one short transaction (surveys.flow.submit_answer), and the reply
    to it is the next question itself (its page replaces the POST in the browser's history, static/surveys/
    flow.js, so a reload asks for the page again); the last answer redirects to the completion page."""
    error, errors = "", None
    if request.method == "POST":
        form = AnswerForm(request.POST)
        if not form.is_valid() or not token_matches(form.cleaned_data["token"], participant.pk,
                                                    form.cleaned_data["position"], form.cleaned_data["item"]):
            return _refused_page(request, study)
        data = form.cleaned_data
        result = flow.submit_answer(participant, data["position"], data["item"], request.POST,
                                    data["client_time_ms"], progress=progress, show_next=True)
        if result.outcome == Outcome.SAVED and result.next is not None:
            return _question_page(request, study, result.next)
        if result.outcome != Outcome.INVALID:
            if result.outcome != Outcome.SAVED:
                messages.info(request, result.message)
            if result.outcome == Outcome.SAVED and result.step == Step.DONE:
                request.session[_redirect_key(study)] = True
            return _step_redirect(study, result.step)
        error, errors = result.message, result.errors
    flow.mark_shown(progress.slot)
    return _question_page(request, study, progress, error, request.POST if error else None, errors)


def _refused_page(request: HttpRequest, study: Study) -> HttpResponse:
    """A post that is not an answer to a question page of this participant's (no or a wrong token: a page
    restored from another question, or altered): nothing is stored, and the current question is shown again
    (the question URL), empty, with a message saying so."""
    messages.warning(request, _(NOT_THIS_QUESTION))
    return _step_redirect(study, Step.ITEM)


def _question_page(request: HttpRequest, study: Study, progress: Progress, error: str = "",
                   refused: Any = None, errors: Mapping[str, str] | None = None) -> HttpResponse:
    """The page of the question at ``progress`` (its first-shown time already recorded); it posts to the
    question URL, the one it was asked for or posted to, with the token of its question (surveys.page_tokens)."""
    context = _item_context(study, progress, error, refused, errors)
    context["token"] = slot_token(progress.slot)
    return render(request, "surveys/item.html", _step_context(study, Step.ITEM, request.path, False, **context))


@participant_page(Step.CHECK)
def check_page(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    """A declared attention check (surveys/checks.py): its own page and form; its answer goes to its own row."""
    row, error = progress.check, ""
    if request.method == "POST":
        if request.POST.get("check") != row.check_key:  # a stale page of another check
            messages.info(request, _(STALE_PAGE))
            return _step_redirect(study, Step.CHECK)
        result = checks.submit(participant, row, request.POST)
        if result.saved or not result.message:
            step = flow.current_step(participant).step
            if step == Step.DONE and participant.status == Participant.Status.STARTED:  # the last page was a check
                flow.complete(participant)
                request.session[_redirect_key(study)] = True
            return _step_redirect(study, step)
        error = _(result.message)
    checks.mark_shown(row)
    check = checks.by_key(study).get(row.check_key)
    if check is None:  # the check left the study's file after this participant's draw
        checks.submit(participant, row, {})
        return _step_redirect(study, flow.current_step(participant).step)
    return render(request, "surveys/check.html", _step_context(
        study, Step.CHECK, request.path, False, **checks.page_context(study, check), row=row, error=error,
        number=progress.number, total=progress.total,
        percent=round(100 * (progress.number - 1) / progress.total) if progress.total else 0))


@participant_page(Step.DONE, Step.ENDED)
def done(request: HttpRequest, study: Study, participant: Participant, progress: Progress) -> HttpResponse:
    """Completion (code, link back to Prolific; redirects right after the last answer) or the ended page."""
    if progress.step == Step.ENDED and (ended := checks.ended_by_checks(participant)):
        code = participant.completion_code if ended == "screen_out" else ""
        target = channels.completion(participant, code) if code else None
        return render(request, "surveys/checks_failed.html", {
            "study": study, "action": ended, "code": code, "url": target.url if target else "",
            "platform": target.platform if target else "Prolific", "via_channel": participant.channel_id is not None,
            "back": channels.return_link(participant.channel)})
    if progress.step == Step.ENDED:
        return render(request, "surveys/ended.html", {"study": study, "participant": participant,
                                                      "via_channel": participant.channel_id is not None,
                                                      "back": channels.return_link(participant.channel)})
    # normally completed with the last answer; complete() covers a participant left just short of it
    code = participant.completion_code if participant.completed_at else flow.complete(participant)
    redirect_now = request.session.pop(_redirect_key(study), False)
    target = channels.completion(participant, code)
    return render(request, "surveys/done.html", {
        "study": study, "code": code, "url": target.url, "platform": target.platform,
        # a test participant is never sent to Prolific; a channel without a completion address sends nobody
        "redirect": redirect_now and bool(target.url) and not participant.is_test,
    })


# --- researcher preview ---------------------------------------------------------------------------
def _preview_key(study: Study) -> str:
    return f"hedgelab.preview.{study.pk}"


#: a preview shows the study and its items: the admin's permissions to view them
PREVIEW_PERMS = ("surveys.view_study", "surveys.view_item")


@staff_member_required
@never_cache
def preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant flow for a researcher (staff with PREVIEW_PERMS, and the study theirs or shared with
    them), any study status; state in the session, nothing saved."""
    check(request.user, *PREVIEW_PERMS)
    try:
        study = _study(slug)
    except FlowError as exc:
        return problem(request, exc)
    require(request.user, study)
    with in_study_language(study):
        return _preview(request, study)


def _preview(request: HttpRequest, study: Study) -> HttpResponse:
    key = _preview_key(study)
    if "restart" in request.GET:
        request.session[key] = PreviewState().to_session()
        return redirect("surveys:preview", slug=study.slug)
    state = PreviewState.from_session(request.session.get(key))
    action = reverse("surveys:preview", kwargs={"slug": study.slug})
    context: dict[str, Any] = {}
    if request.method == "POST" and request.POST.get("step") == state.step.value:
        if state.step == Step.CONSENT:
            form = ConsentForm(request.POST)
            if form.is_valid() and not form.agreed:
                return render(request, "surveys/declined.html", {"study": study, "preview": True,
                                                                 "prolific_url": channels.prolific_home_url()})
            if form.is_valid():
                preview_consent(state, True, study)
            else:
                context["form"] = form
        elif state.step == Step.INSTRUCTIONS:
            preview_instructions(state)
        elif state.step == Step.PLEDGE:
            form = PledgeForm(request.POST)
            if form.is_valid():
                preview_pledge(study, state)
            else:
                context["form"] = form
        elif state.step in flow.QUESTIONNAIRE_STEPS.values():
            about = preview_questionnaire(study, state, request.POST)
            if about is not None and not about.is_valid():
                context["form"] = about
        elif state.step == Step.ITEM:
            form = AnswerForm(request.POST)
            if form.is_valid():
                context["error"] = preview_answer(study, state, form.cleaned_data["position"],
                                                  request.POST)
        request.session[key] = state.to_session()
        if not context.get("error") and "form" not in context:
            return redirect("surveys:preview", slug=study.slug)
    request.session[key] = state.to_session()
    try:
        progress = preview_progress(study, state)
    except (Item.DoesNotExist, IndexError):  # the study's items changed since the preview started
        request.session[key] = PreviewState().to_session()
        return redirect("surveys:preview", slug=study.slug)
    base = _step_context(study, state.step, action, True, preview_notes=preview_notes(study))
    if state.step == Step.CONSENT:
        return render(request, "surveys/consent.html", base | {"form": context.get("form") or ConsentForm()})
    if state.step == Step.INSTRUCTIONS:
        return render(request, "surveys/instructions.html", base | _instructions_context(study))
    if state.step == Step.PLEDGE:
        return render(request, "surveys/pledge.html", base | {"form": context.get("form") or PledgeForm()})
    if state.step in flow.QUESTIONNAIRE_STEPS.values():
        when = "before" if state.step == Step.QUESTIONNAIRE_BEFORE else "after"
        return render(request, "surveys/questionnaire.html",
                      base | {"form": context.get("form") or questionnaire.questionnaire_form(study, when), "when": when})
    if state.step == Step.ITEM:
        return render(request, "surveys/item.html", base | _item_context(study, progress, context.get("error", ""),
                                                                          request.POST or None))
    summary = preview_summary(study, state)
    return render(request, "surveys/preview_done.html", base | summary | {"url": flow.completion_url(summary["code"])})
