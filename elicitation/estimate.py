"""Token and cost arithmetic: prices, and the estimate shown before a run starts."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db.models import Count

from . import conf
from .models import ElicitationRun, ModelEndpoint
from .prompts import approx_tokens, prompt_content, prompt_for_run
from surveys.questions import keys_of

from .question_prompts import agent_asks_checks

MICRO = Decimal("0.000001")


def cost_of(endpoint: ModelEndpoint, prompt_tokens: float, completion_tokens: float) -> Decimal:
    """Price of the tokens at the endpoint's prices per 1,000 tokens (USD, 6 decimals)."""
    cost = (Decimal(str(prompt_tokens)) * Decimal(str(endpoint.price_prompt_per_1k))
            + Decimal(str(completion_tokens)) * Decimal(str(endpoint.price_completion_per_1k))) / Decimal(1000)
    return cost.quantize(MICRO, rounding=ROUND_HALF_UP)


def requests_per_answer(run: ElicitationRun) -> float:
    """Requests one answer needs (full distribution: an assumed number, see ``conf``)."""
    if run.mode == ElicitationRun.Mode.FULL_DISTRIBUTION:
        return conf.full_distribution_requests()
    if run.mode == ElicitationRun.Mode.LIKELIHOOD:  # 2 options × (whole text, verbalisation alone)
        return 4.0
    return 1.0


def completion_tokens_per_request(run: ElicitationRun) -> int:
    """At most max_tokens; the full distribution asks for one token per request."""
    one = (ElicitationRun.Mode.FULL_DISTRIBUTION, ElicitationRun.Mode.LIKELIHOOD)
    return 1 if run.mode in one else int(run.max_tokens)


@dataclass
class Estimate:
    """What a run will cost at most (completion tokens counted at ``max_tokens``)."""

    items: int
    answers: int
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: Decimal
    method: str = ("prompt tokens ≈ characters / 4 (+4 per chat message); completion tokens = max_tokens "
                   "per request")

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = str(self.cost_usd)
        return data


def estimate_run(run: ElicitationRun, answers_left_only: bool = False, items: list | None = None) -> Estimate:
    """Estimated requests, tokens and cost of ``run`` (all answers, or only those still to do).
    ``items`` overrides the run's items (for a run not saved yet)."""
    from .models import ModelResponse

    endpoint, study = run.endpoint, run.study
    demos = study.demonstrations()
    items = list(run.target_items()) if items is None else list(items)
    per_item_samples = {item.pk: run.answers_per_item() for item in items}
    if answers_left_only and run.pk:
        # a sample counts done once all its questions are
        answered = (ModelResponse.objects.filter(run=run, check_key="")
                    .exclude(status__in=[ModelResponse.Status.PENDING, ModelResponse.Status.FAILED])
                    .values_list("item_id", "sample_index").annotate(n=Count("id")).order_by())
        done = [item_id for item_id, _, n in answered if n >= run.questions_per_answer()]
        for item_id in done:
            if item_id in per_item_samples:
                per_item_samples[item_id] -= 1
    per_request = requests_per_answer(run)
    answers = prompt_tokens = asked = 0
    questions = [""] if run.refines_id is not None else keys_of(study)
    asked_per_sample = questions if run.requests_per_sample() == len(questions) else questions[:1]
    for item in items:
        n = max(0, per_item_samples[item.pk])
        if not n:
            continue
        for question in asked_per_sample:  # one prompt per question, or one for them all (together)
            content = prompt_content(prompt_for_run(run, item, 0, demos, question), endpoint.api_style)
            prompt_tokens += approx_tokens(content) * n
            asked += n
        answers += n * len(questions)
    for key in agent_asks_checks(run):  # an agent with checks = true: each check once per persona and sample
        n = run.answers_per_item()
        if answers_left_only and run.pk:
            n -= (ModelResponse.objects.filter(run=run, check_key=key)
                  .exclude(status__in=[ModelResponse.Status.PENDING, ModelResponse.Status.FAILED]).count())
        if n > 0:
            content = prompt_content(prompt_for_run(run, None, 0, demos, check=key), endpoint.api_style)
            prompt_tokens += approx_tokens(content) * n
            asked, answers = asked + n, answers + n
    requests = int(round(asked * per_request))
    prompt_tokens = int(round(prompt_tokens * per_request))
    completion_tokens = requests * completion_tokens_per_request(run)
    return Estimate(items=len(items), answers=answers, requests=requests, prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens, cost_usd=cost_of(endpoint, prompt_tokens, completion_tokens))
