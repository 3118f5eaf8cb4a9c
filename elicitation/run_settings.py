"""Whether a run's settings fit together (``ElicitationRun.clean`` and ``start_run`` ask): pure checks of the
run's fields, its endpoint and its study's kind, below the models (they import no model at run time).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from surveys.instruments import instruments

from .api_styles import adapter_for
from .choices import Mode

if TYPE_CHECKING:  # pragma: no cover
    from .models import ElicitationRun

#: the bounds of a run's settings in the platform's own run forms (the API and ``manage.py elicit``, ``refine``);
#: ``reproduce --rerun-models`` holds a package's request parameters to them too
MAX_SAMPLES = 10_000
MAX_TEMPERATURE = 10
MAX_TOKENS = 100_000
SEED_BOUND = 2**62

REFINE_STYLE = "refine"  # the prompt style of a self-refinement run (elicitation/refinement.py), by default
REFINE_SETTINGS = ("single", "mixed")  # which of the source run's answers a refinement draws from


def default_temperature(study, mode: str, prompt_style: str) -> float:
    """The temperature of a run that names none: 1.0 for a sampled run, 0 (none sent) otherwise and for a prompt
    style run at the provider's default (e.g. authors-vanilla)."""
    sampled = mode == Mode.SAMPLED and study.kind.sends_temperature(prompt_style)
    return 1.0 if sampled else 0.0


def is_refinement(run: ElicitationRun) -> bool:
    """Whether ``run`` is a self-refinement of another run (elicitation/refinement.py)."""
    return run.refines_id is not None


def settings_errors(run: ElicitationRun) -> dict[str, str]:
    """Problems with a run's settings, by field (empty when the run can be started)."""
    errors: dict[str, str] = {}
    mode = run.mode
    if mode in (Mode.GREEDY, Mode.TOP_LOGPROBS, Mode.FULL_DISTRIBUTION) and run.samples_per_item != 1:
        errors["samples_per_item"] = f"{mode} gives one answer per item: set samples per item to 1 (or use sampled)."
    default_decoding = bool(run.study_id) and not run.study.kind.sends_temperature(run.prompt_style)
    if default_decoding and run.temperature != 0:
        errors["temperature"] = (f"the prompt style {run.prompt_style!r} sends no temperature (the provider's "
                                 "default, as the authors ran it): leave the temperature at 0.")
    elif mode == Mode.GREEDY and run.temperature != 0:
        errors["temperature"] = "greedy means temperature 0; use the sampled mode for another temperature."
    if mode == Mode.SAMPLED and run.temperature <= 0 and not default_decoding:
        errors["temperature"] = "sampled mode needs a temperature above 0 (temperature 0 gives n copies of one answer)."
    if mode == Mode.TOP_LOGPROBS and not 1 <= run.top_logprobs <= 20:
        errors["top_logprobs"] = "OpenAI-compatible endpoints return between 1 and 20 alternatives per position."
    if run.endpoint_id and mode == Mode.FULL_DISTRIBUTION and not adapter_for(run.endpoint).continues_text:
        errors["mode"] = ("the full distribution needs a completions endpoint (it continues the prompt text); "
                          f"{run.endpoint.name} is a {run.endpoint.api_style} endpoint.")
    if run.endpoint_id and (key_problem := run.endpoint.key_problem()):
        errors["endpoint"] = f"{run.endpoint.name}: {key_problem}"
    if run.max_tokens < 1:
        errors["max_tokens"] = "at least 1 token."
    if run.budget_usd is not None and run.budget_usd <= 0:
        errors["budget_usd"] = "a budget must be above 0 (leave it empty for none)."
    errors.update(likelihood_errors(run))
    if run.study_id and run.study.kind.shape.whole_reply and mode not in (Mode.GREEDY, Mode.SAMPLED):
        errors["mode"] = (f"a {run.study.kind.shape.name.replace('_', ' ')} answer is the model's whole reply: use "
                          "the greedy or sampled mode.")
    if run.study_id and mode not in (Mode.GREEDY, Mode.SAMPLED) and (problem := questions_problem(run.study)):
        errors["mode"] = problem
    if run.study_id:
        styles = run.study.kind.prompt_styles
        if run.prompt_style not in styles:
            errors["prompt_style"] = (f"{run.study.instrument} items are asked with the prompt style "
                                      f"{' or '.join(repr(s) for s in styles)}, not {run.prompt_style!r}.")
    errors.update(refinement_errors(run))
    return errors


def questions_problem(study) -> str:
    """Why a study with ``[[questions]]`` can be asked only in the greedy or sampled mode ("" when it need not):
    its questions asked together (one JSON reply, read as text), or a free-text question (the whole reply)."""
    definition = study.definition or {}
    questions = definition.get("questions") or []
    if questions and (definition.get("prompt") or {}).get("questions") == "together":
        return ("the study asks its questions together ([prompt] questions = \"together\": one JSON reply, read as "
                "text): use the greedy or sampled mode.")
    free = [q["key"] for q in questions if (q.get("answer") or {}).get("shape") == "free_text"]
    if free:
        return f"question {free[0]!r} is answered in free text (the model's whole reply): use the greedy or sampled mode."
    return ""


def likelihood_errors(run: ElicitationRun) -> dict[str, str]:
    """Why a likelihood run (elicitation/likelihood.py) cannot be set up (empty when it can, or for another mode)."""
    if run.mode != Mode.LIKELIHOOD:
        return {}
    errors: dict[str, str] = {}
    if run.endpoint_id and not adapter_for(run.endpoint).continues_text:
        errors["mode"] = (f"the likelihood mode scores texts through a completions endpoint (echo + logprobs); "
                          f"{run.endpoint.name} is a {run.endpoint.api_style} endpoint, which cannot return the "
                          "log-probabilities of a prompt.")
    if run.study_id and not hasattr(run.study.kind, "likelihood_candidates"):
        errors["mode"] = (f"{run.study.instrument} items have no candidate texts to score; the likelihood mode "
                          "is for verbalisation-choice studies.")
    if run.samples_per_item != 1:
        errors["samples_per_item"] = "the likelihood mode gives one answer per item: set samples per item to 1."
    return errors


def refine_styles(study) -> tuple[str, ...]:
    """The prompt styles reserved for self-refinement runs of ``study`` (``refine``, and its kind's own)."""
    refinement = study.kind.refinement_hook() if study is not None else None
    return tuple(dict.fromkeys((REFINE_STYLE, *(refinement.styles if refinement is not None else ()))))


def refinable_answers() -> str:
    """The answers self-refinement can refine (by the shapes of the kinds with a refinement), e.g. "interval"."""
    shapes = dict.fromkeys(kind.shape.name.replace("_", " ") for kind in instruments()
                           if kind.refinement_hook() is not None)
    return " or ".join(shapes) or "no"


def refinement_errors(run: ElicitationRun) -> dict[str, str]:
    """Problems with a run's refinement settings (none for an ordinary run)."""
    if not is_refinement(run):
        if run.prompt_style in refine_styles(run.study if run.study_id else None):
            return {"prompt_style": "the refine prompt style is for self-refinement runs, which need a source run "
                                    "(manage.py refine)"}
        return {}
    errors: dict[str, str] = {}
    source = run.refines
    if run.prompt_style != refine_style(source):
        errors["prompt_style"] = (f"a self-refinement of run {source.pk} uses the prompt style "
                                  f"{refine_style(source)!r}")
    if run.study_id and source.study_id != run.study_id:
        errors["refines"] = f"run {source.pk} belongs to another study"
    if source.refines_id is not None:
        errors["refines"] = f"run {source.pk} is itself a refinement; refine a run of answers"
    if run.study_id and run.study.kind.refinement_hook() is None:
        errors["refines"] = f"self-refinement needs {refinable_answers()} answers, not {run.study.instrument} items"
    if run.refine_setting not in REFINE_SETTINGS:
        errors["refine_setting"] = "single or mixed"
    if not run.refine_shown or run.refine_shown < 1:
        errors["refine_shown"] = "show at least one answer"
    if run.refine_seed is None:
        errors["refine_seed"] = "a draw seed is needed to reproduce the draws"
    return errors


def refine_style(source: ElicitationRun) -> str:
    """The refinement's prompt style: the one the source's kind's refinement takes for it (``refine`` by default)."""
    refinement = source.study.kind.refinement_hook()
    return refinement.style(source) if refinement is not None else REFINE_STYLE
