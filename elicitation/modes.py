"""The four elicitation modes (SPEC §5): what is sent, and how the reply becomes an answer.

- greedy: temperature 0, one answer, the first number parsed by the instrument.
- sampled: one request per sample at the run's temperature; the seed (where the endpoint takes one)
  is the run's seed + the sample index, so each sample is reproducible and distinct.
- top_logprobs: ``top_logprobs`` alternatives at the answer position (the first generated token that
  is not whitespace); number tokens 0–100 go to the instrument's bins, everything else (other tokens
  and the mass outside the top-k) to the "-1" bin; ``coverage`` is the mass the top-k list covers.
- full_distribution: delegated to ``elicitation.full_distribution.full_distribution`` (endpoints whose API style
  continues a text); numbers 0–100 are binned with the instrument's ``score``.

What a request looks like in each API style, and how its reply is read, is the style's adapter's
(elicitation/api_styles/).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from surveys.instruments import Answer, Instrument
from surveys.models import Item

from .api_styles import adapter_for
from .client import Unsupported
from .likelihood import request_params as likelihood_params
from .models import ElicitationRun, ModelEndpoint, ModelResponse
from .outcomes import Completion, Outcome, TokenLogprobs

Mode = ElicitationRun.Mode
NON_NUMBER_BIN = "-1"
NUMBER_TOKEN = re.compile(r"^\d{1,3}(?:\.\d+)?$")


def request_params(run: ElicitationRun, endpoint: ModelEndpoint, sample_index: int) -> dict[str, Any]:
    """Every sampling parameter sent for one answer (stored with it as provenance). No temperature is sent
    (nor stored) for a prompt style its kind runs at the provider's default (``Instrument.sends_temperature``)."""
    if run.mode == Mode.LIKELIHOOD:
        return likelihood_params(run, endpoint)
    greedy = run.mode in (Mode.GREEDY, Mode.FULL_DISTRIBUTION)
    params: dict[str, Any] = {"temperature": 0.0 if greedy else float(run.temperature),
                              "max_tokens": int(run.max_tokens)}
    if run.study_id and not run.study.kind.sends_temperature(run.prompt_style):
        del params["temperature"]  # the provider's default, as the paper's authors ran it
    if run.seed is not None and endpoint.supports_seed:
        params["seed"] = int(run.seed) + (sample_index if run.mode == Mode.SAMPLED else 0)
    if run.mode == Mode.TOP_LOGPROBS:
        params.update(adapter_for(endpoint).top_logprobs_params(int(run.top_logprobs)))
    if run.mode == Mode.FULL_DISTRIBUTION:
        params["top_logprobs"] = int(run.top_logprobs)
    return params


def complete(client: Any, endpoint: ModelEndpoint, content: Any, params: dict[str, Any]) -> Completion:
    """Send one request in the endpoint's API style; MalformedResponse if the reply is not a completion."""
    return adapter_for(endpoint).complete(client, endpoint.model, content, params)


def empty_bins(kind: Instrument) -> dict[str, float]:
    """{"0": 0, "5": 0, …, "100": 0, "-1": 0} for the instrument's bins."""
    bins = {f"{kind.score(v):g}": 0.0 for v in kind.answer_options()}
    bins[NON_NUMBER_BIN] = 0.0
    return bins


def parse_text(kind: Instrument, completion: Completion, item: Item | None = None) -> Outcome:
    """Greedy and sampled modes: the text parsed by the instrument's answer shape (a number is snapped to
    its bin)."""
    parsed = kind.parse_model_answer(completion.text, item)
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint,
                detail={"finish_reason": completion.finish_reason})
    if parsed.ok:
        return answered(kind, parsed.answer, ModelResponse.Status.OK, **base)
    return Outcome(status=ModelResponse.Status.UNPARSEABLE, parse_error=parsed.error[:300], **base)


def answered(kind: Instrument, answer: Answer, status: str, **fields: Any) -> Outcome:
    """An Outcome holding a typed answer (its number's bin computed by the instrument)."""
    bin_ = kind.score(answer.value) if answer.value is not None else None
    return Outcome(status=status, bin=bin_, **answer.columns(), **fields)


def number_value(kind: Instrument, token: str) -> float | None:
    """The number a single token spells (whitespace ignored), if it is one on the instrument's scale."""
    stripped = token.strip()
    if not NUMBER_TOKEN.match(stripped):
        return None
    parsed = kind.parse_model_answer(stripped)
    return parsed.value if parsed.ok else None


def answer_position(positions: list[TokenLogprobs]) -> int | None:
    """Index of the first generated token that is not only whitespace."""
    for i, position in enumerate(positions):
        if position.token.strip():
            return i
    return None


def top_logprobs_outcome(kind: Instrument, completion: Completion, top_k: int) -> Outcome:
    """Top-logprobs mode: the distribution over bins at the answer position (paper App. C.6.2)."""
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint)
    if not completion.positions:
        return Outcome(status=ModelResponse.Status.FAILED, error="the endpoint returned no logprobs "
                       "(does it support logprobs/top_logprobs?)", **base)
    index = answer_position(completion.positions)
    if index is None:
        return Outcome(status=ModelResponse.Status.UNPARSEABLE, parse_error="the answer is empty",
                       detail={"positions": len(completion.positions)}, **base)
    position = completion.positions[index]
    alternatives = position.top or [(position.token, position.logprob)]
    bins = empty_bins(kind)
    numbers: dict[float, float] = {}
    covered = 0.0
    for token, logprob in alternatives:
        p = math.exp(logprob)
        covered += p
        value = number_value(kind, token)
        if value is not None:
            numbers[value] = numbers.get(value, 0.0) + p
            bins[f"{kind.score(value):g}"] += p
    number_mass = sum(numbers.values())
    bins[NON_NUMBER_BIN] = max(0.0, 1.0 - number_mass)
    detail = {"answer_position": index, "token": position.token, "top_logprobs": [[t, lp] for t, lp in alternatives],
              "number_mass": number_mass, "top_k_requested": top_k, "finish_reason": completion.finish_reason}
    outcome = Outcome(status=ModelResponse.Status.OK, distribution=bins, coverage=min(1.0, covered),
                      detail=detail, **base)
    if not numbers:
        outcome.status = ModelResponse.Status.UNPARSEABLE
        outcome.parse_error = f"no number among the top {len(alternatives)} tokens at the answer position"
        return outcome
    best = max(numbers, key=lambda v: (numbers[v], -v))
    outcome.value, outcome.bin = best, kind.score(best)
    return outcome


def full_distribution_outcome(kind: Instrument, result: Any) -> Outcome:
    """Full-distribution mode: the FullDistribution of ``elicitation.full_distribution`` as bins."""
    bins = empty_bins(kind)
    probs = {int(n): float(p) for n, p in result.probs.items()}
    for number, p in probs.items():
        bins[f"{kind.score(number):g}"] += p
    bins[NON_NUMBER_BIN] = float(result.nonnumber)
    detail = result.detail if isinstance(result.detail, dict) else {"detail": result.detail}
    coverage = detail.get("coverage")
    coverage = float(coverage) if isinstance(coverage, (int, float)) else sum(probs.values())
    raw = json.dumps({"probs": {str(n): p for n, p in sorted(probs.items())}, "nonnumber": result.nonnumber},
                     separators=(",", ":"))
    reported = detail.get("usage_reported", True) is not False  # a streaming server may not report usage
    outcome = Outcome(status=ModelResponse.Status.OK, raw_output=raw, distribution=bins, coverage=coverage,
                      detail=detail, prompt_tokens=result.prompt_tokens if reported else None,
                      completion_tokens=result.completion_tokens if reported else None,
                      system_fingerprint=result.system_fingerprint or "", requests=max(1, int(result.requests)))
    positive = {n: p for n, p in probs.items() if p > 0}
    if not positive:
        outcome.status = ModelResponse.Status.UNPARSEABLE
        outcome.parse_error = "no probability on any number 0–100"
        return outcome
    best = max(positive, key=lambda n: (positive[n], -n))
    outcome.value, outcome.bin = float(best), kind.score(best)
    return outcome


def call_full_distribution(client: Any, endpoint: ModelEndpoint, prompt: str, params: dict[str, Any]) -> Any:
    """Helper C2's ``full_distribution`` (imported late: the module is optional until it lands), through the
    endpoint's API style."""
    from .full_distribution import full_distribution

    try:
        return full_distribution(client, endpoint.model, prompt, params, style=adapter_for(endpoint))
    except ValueError as exc:  # its way of saying the endpoint gives no usable logprobs
        raise Unsupported(f"full distribution: {exc}") from exc
