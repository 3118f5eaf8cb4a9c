"""Admin pages of the elicitation app: the run monitor (with its JSON feed), run actions, one item's
participant page beside its prompts, one item's human and model answers side by side, and "Run the declared
agents" of a study."""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template import TemplateDoesNotExist
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse

from access.ownership import require, visible
from config.permissions import allowed, check, can_see_raw_ids
from surveys.instruments import Prompt
from surveys.models import Item, Response, Study

from . import preflight
from .api_styles import styles
from .estimate import estimate_run
from .item_answers import answer_of, category_shares, mean_text
from .models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
from .prompt_versions import prompt_shots, shots_label
from .prompts import build_prompt, prompt_hash, render_for_display
from surveys.question_kinds import prompt_kind
from surveys.questions import keys_of
from .refine_request import REFINE_PERMS, RefineForm, create_and_start, refusal
from .runs import RunStateError, cancel_run, missing_key, progress


def _context(model_admin, request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    return {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta, "title": title,
            **extra}


def _require_change(model_admin, request: HttpRequest) -> None:
    if not model_admin.has_change_permission(request):
        raise PermissionDenied


def _require_view(model_admin, request: HttpRequest) -> None:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied


def _run(request: HttpRequest, object_id: str) -> ElicitationRun:
    """The run ``object_id`` if the user may see it (its study is theirs or shared with them), else 404."""
    runs = visible(ElicitationRun.objects.select_related("study", "endpoint"), request.user)
    return get_object_or_404(runs, pk=object_id)


# what the item pages show, by the admin's own model permissions
ITEM_PROMPT_PERMS = ("surveys.view_item", "elicitation.view_storedprompt")
ITEM_ANSWERS_PERMS = ("surveys.view_item", "surveys.view_response", "elicitation.view_modelresponse")


def run_monitor_view(model_admin, request: HttpRequest, object_id: str) -> HttpResponse:
    """The run page: live progress bar, tokens, cost, rate, failures; start / cancel / resume buttons."""
    _require_view(model_admin, request)
    run = _run(request, object_id)
    data = progress_with_estimate(run)
    title = f"Elicitation run {run.pk}" + (f": {run.name}" if run.name else "")
    return TemplateResponse(request, "elicitation/admin/run_monitor.html", _context(
        model_admin, request, title, run=run, progress=data, estimate=data["estimate"], shots=prompt_shots(run),
        progress_url=reverse("admin:elicitation_elicitationrun_progress", args=[run.pk]),
        key_problem=missing_key(run.endpoint),
        can_start=run.status == ElicitationRun.Status.DRAFT and not missing_key(run.endpoint),
        can_cancel=run.status in (ElicitationRun.Status.RUNNING, ElicitationRun.Status.DRAFT),
        can_resume=run.status in (ElicitationRun.Status.CANCELLED, ElicitationRun.Status.BUDGET_EXHAUSTED,
                                  ElicitationRun.Status.FAILED) or data["stalled"],
        can_refine=allowed(request.user, REFINE_PERMS) and not refusal(run),
    ))


def progress_with_estimate(run: ElicitationRun) -> dict[str, Any]:
    """:func:`progress` plus ``estimate``: the cost of the whole run for a draft, of the answers still to get
    once started (``left_only``), None for a completed run."""
    data = progress(run)
    estimate = None
    if run.status != ElicitationRun.Status.COMPLETED:
        left_only = run.status != ElicitationRun.Status.DRAFT
        estimate = estimate_run(run, answers_left_only=left_only).as_dict() | {"left_only": left_only}
    data["estimate"] = estimate
    return data


def run_progress_view(model_admin, request: HttpRequest, object_id: str) -> JsonResponse:
    """JSON polled by the run page: done/failed/total, tokens, cost, answers per second, failures and the
    estimate of what is left."""
    _require_view(model_admin, request)
    run = _run(request, object_id)
    return JsonResponse(progress_with_estimate(run))


def run_action_view(model_admin, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
    """POST start / cancel / resume, then back to the run page."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    _require_change(model_admin, request)
    run = _run(request, object_id)
    if action in ("start", "resume"):
        require(request.user, run.endpoint)  # requests go out with the endpoint's key
    try:
        if action == "start":
            queued = preflight.start(run)
            messages.success(request, f"Run {run.pk} started: {len(queued)} item(s) queued.")
        elif action == "resume":
            queued = preflight.resume(run)
            messages.success(request, f"Run {run.pk} resumed: {len(queued)} item(s) with answers still to get queued.")
        elif action == "cancel":
            if cancel_run(run, reason=f"cancelled by {request.user}"):
                messages.warning(request, f"Run {run.pk} cancelled; its answers so far are kept.")
            else:
                messages.error(request, f"Run {run.pk} is not running.")
        else:
            raise PermissionDenied
    except RunStateError as exc:
        messages.error(request, str(exc))
    return redirect("admin:elicitation_elicitationrun_monitor", run.pk)


def run_refine_view(model_admin, request: HttpRequest, object_id: str) -> HttpResponse:
    """"Self-refine this run": the form of ``manage.py refine``; POST creates the refinement, starts it and goes
    to its run page (bad settings re-ask with create_refinement's errors)."""
    check(request.user, *REFINE_PERMS)
    source = _run(request, object_id)
    if problem := refusal(source):
        messages.error(request, problem)
        return redirect("admin:elicitation_elicitationrun_monitor", source.pk)
    form = RefineForm(request.POST or None)
    form.fields["endpoint"].queryset = visible(ModelEndpoint.objects.order_by("name"), request.user)
    if request.method == "POST" and form.is_valid():
        try:
            options = dict(form.cleaned_data)
            checked = not options.pop("skip_check", False)
            run, problem = create_and_start(source, created_by=request.user, check=checked, **options)
        except DjangoValidationError as exc:
            form.add_refinement_errors(exc)
        else:
            if problem:  # created but not started: its page says why and can start it later
                messages.error(request, f"Run {run.pk} was created but not started: {problem}")
            else:
                messages.success(request, f"Run {run.pk} (self-refinement of run {source.pk}) started.")
            return redirect("admin:elicitation_elicitationrun_monitor", run.pk)
    return TemplateResponse(request, "elicitation/admin/run_refine.html", _context(
        model_admin, request, f"Self-refine run {source.pk}", run=source, form=form))


RUN_AGENTS_PERMS = ("elicitation.add_elicitationrun", "elicitation.change_elicitationrun")


def run_agents_view(model_admin, request: HttpRequest, slug: str) -> HttpResponse:
    """"Run the declared agents" of study ``slug``: GET lists its agents with what starting them would do (their
    run on the current version, if any); POST starts those not run yet (elicitation.declared_agents) and goes to
    the study's runs."""
    from .declared_agents import AgentError, agent_cells, current_run, declared, skip_reason, start_agents

    check(request.user, *RUN_AGENTS_PERMS)
    study = get_object_or_404(visible(Study.objects.all(), request.user), slug=slug)
    if request.method == "POST":
        try:
            outcomes = start_agents(study, request.user)
        except AgentError as exc:
            messages.error(request, f"No agent was started: {exc}")
        else:
            for outcome in outcomes:
                under = f" under {outcome.cell}" if outcome.cell else ""
                if outcome.action == "started":
                    messages.success(request, f"Agent {outcome.agent}{under}: run {outcome.run.pk} started.")
                else:
                    messages.info(request, f"Agent {outcome.agent}{under}: skipped, {outcome.reason}.")
            return redirect(reverse("admin:elicitation_elicitationrun_changelist") + f"?study__id__exact={study.pk}")
    rows = []
    for agent, cell in ((a, c) for a in declared(study) for c in agent_cells(study, a)):
        run = current_run(study, agent["name"], cell)
        rows.append({"agent": agent, "cell": cell, "run": run, "plan": skip_reason(run) or "start",
                     "personas": (agent.get("persona") or {}).get("from") or
                     (f"{len((agent.get('persona') or {}).get('people') or [])} written in the file"
                      if agent.get("persona") else "none")})
    return TemplateResponse(request, "elicitation/admin/run_agents.html", _context(
        model_admin, request, f"Run the declared agents of {study.slug}", study=study, rows=rows))


def prompt_in_every_style(prompt: Prompt) -> list[dict[str, str]]:
    """``prompt`` as each registered API style sends it: the style's name, the content as text, its hash."""
    return [{"name": style.name, "text": render_for_display(content), "hash": prompt_hash(content)}
            for style in styles() for content in [style.content(prompt)]]


def item_prompt_view(model_admin, request: HttpRequest, item_id: str) -> HttpResponse:
    """One item as a participant sees it, beside the prompt a model gets (in every API style) and the
    prompts actually sent for it."""
    check(request.user, *ITEM_PROMPT_PERMS)
    item = get_object_or_404(visible(Item.objects.select_related("study"), request.user), pk=item_id)
    study, kind = item.study, item.study.kind
    few_shot = request.GET.get("few_shot", "1") != "0"
    questions = keys_of(study)  # a study with [[questions]]: one question's prompt (?question=KEY)
    question = request.GET.get("question", questions[0])
    if question not in questions:
        raise Http404(f"no question {question!r} in {study.slug}")
    q = kind.page_context(item)
    try:
        page_html = render_to_string(kind.template_name, {"q": q, "name": "preview", "prefix": "preview",
                                                          "selected": None, "readonly": True})
    except TemplateDoesNotExist:
        page_html = None
    prompt = build_prompt(study, item, few_shot, question=question)
    few_shot_shots = prompt.shots if few_shot else build_prompt(study, item, True, question=question).shots
    sent_hashes = (ModelResponse.objects.filter(item=item).exclude(prompt_hash="")
                   .values_list("prompt_hash", flat=True).distinct())
    sent = [{"sha256": p.sha256, "api_style": p.api_style, "text": render_for_display(p.content),
             "runs": sorted(set(ModelResponse.objects.filter(item=item, prompt_hash=p.sha256)
                                .values_list("run_id", flat=True)))}
            for p in StoredPrompt.objects.filter(sha256__in=list(sent_hashes))]
    return TemplateResponse(request, "elicitation/admin/item_prompt.html", _context(
        model_admin, request, f"Page and prompt: {item.key}", item=item, study=study, q=q, page_html=page_html,
        few_shot=few_shot, shots=prompt.shots, shots_label=shots_label(prompt.shots), few_shot_shots=few_shot_shots,
        styles=prompt_in_every_style(prompt),
        sent_prompts=sent, answers_url=reverse("admin:elicitation_item_answers", args=[item.pk]),
        question=question, questions=[q for q in questions if q],
    ))


def item_answers_view(model_admin, request: HttpRequest, item_id: str) -> HttpResponse:
    """The human answers to one item beside the model answers to the same item, counted by the item's answer
    shape (raw PROLIFIC_PIDs only with the permission to view participants, otherwise the participant's
    number)."""
    check(request.user, *ITEM_ANSWERS_PERMS)
    item = get_object_or_404(visible(Item.objects.select_related("study"), request.user), pk=item_id)
    questions = keys_of(item.study)  # a study with [[questions]]: one question's answers (?question=KEY)
    question = request.GET.get("question", questions[0])
    if question not in questions:
        raise Http404(f"no question {question!r} in {item.study.slug}")
    kind = prompt_kind(item.study, question)
    humans = list(Response.objects.filter(item=item, question=question).select_related("participant", "assignment")
                  .order_by("created_at"))
    models = list(ModelResponse.objects.filter(item=item, question=question).select_related("run", "run__endpoint")
                  .order_by("run_id", "sample_index"))
    for row in (*humans, *models):
        row.answer_text = answer_of(kind, row).text()
    return TemplateResponse(request, "elicitation/admin/item_answers.html", _context(
        model_admin, request, f"Human and model answers: {item.key}", item=item, sentence=item.text(),
        humans=humans, models=models, bins=category_shares(kind, item, humans, models),
        category_name=kind.shape.category_name,
        raw_ids=can_see_raw_ids(request.user), human_mean=mean_text(kind, humans), model_mean=mean_text(kind, models),
        prompt_url=reverse("admin:elicitation_item_prompt", args=[item.pk]),
        question=question, questions=[q for q in questions if q],
    ))


def endpoint_key_status(endpoint: ModelEndpoint) -> str:
    """"set", "not set" or "not needed" for the endpoint's key variable (never the key)."""
    if not endpoint.api_key_env:
        return "not needed"
    if endpoint.key_problem():
        return "refused (not allowed for this host)"
    return "set" if endpoint.api_key() else "not set"
