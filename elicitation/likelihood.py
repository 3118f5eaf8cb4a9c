"""Likelihood mode: score each candidate text of an item by its log-likelihood (a way of probing
language models without asking them a question).

For a verbalisation-choice item the candidates are "PREMISE. T_p(HYPOTHESIS)." for each of its two options
(``Instrument.likelihood_candidates``: key, whole text, verbalisation alone). Each text is sent to a
*completions* endpoint with ``echo=True, logprobs=1, max_tokens=1, temperature=0``: the reply then carries the
log-probability of every prompt token (``logprobs.token_logprobs``, aligned with ``logprobs.text_offset``);
tokens at offsets past the prompt (the one generated token) are ignored. 2 candidates × 2 texts = 4 requests.

Scores per candidate c, with L(t) = Σ log P(token) over the tokens of text t that have a log-probability and
n(t) their number:

- raw         = L(PREMISE. T_p(H).)
- normalised  = L(PREMISE. T_p(H).) / n(PREMISE. T_p(H).)      (average per token; Brown et al. 2020)
- calibrated  = L(PREMISE. T_p(H).) − L(T_p(H).)                (the likelihood divided by that of the
                                                                 verbalisation alone; Zhao et al. 2021)

All three and the option each would choose are stored (``detail``); the answer's ``choice`` is the option with
the higher **length-normalised** score (:data:`DECIDING_SCORE`), the score that suits
a causal language model like the ones served here (it does not favour the shorter text). A tie is stored as unparseable.

The OpenAI echo format gives the first token of a text no log-probability (llama-cpp-python's server nulls it
too), so L counts the tokens after the first: for the two whole texts that first token is the premise's and
is the same for both candidates; for the verbalisations alone it is the template's first word ("It",
"There", …), which calibration therefore leaves out.

An endpoint that cannot return prompt log-probabilities — a chat endpoint, or a completions endpoint that
ignores ``echo``/``logprobs`` — is refused before a run starts (:func:`check_endpoint`, a one-request probe).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any

from surveys.instruments import Instrument
from surveys.models import Item

from .api_styles import MalformedResponse, Unsupported, adapter_for
from .api_styles.base import fingerprint_of, usage_of
from .models import ElicitationRun, ModelEndpoint, ModelResponse
from .outcomes import Outcome

SCORES: tuple[str, ...] = ("raw", "normalised", "calibrated")
DECIDING_SCORE = "normalised"
REQUESTS_PER_ANSWER = 4
PROBE_TEXT = "The cat sat on the mat."
PROBE_VALID_SECONDS = 300.0  # a successful probe of an endpoint (URL, model) is trusted this long in-process
_probed: dict[tuple[str, str], float] = {}
METHOD = ("log-likelihood of 'PREMISE. T_p(HYPOTHESIS).' per option (completions echo + logprobs); raw, "
          "length-normalised and calibrated scores; the option with the higher length-normalised score is chosen")


class LikelihoodUnavailable(Exception):
    """The endpoint cannot give the log-probabilities of a prompt's tokens; the message says why."""


@dataclass
class TextScore:
    """The log-likelihood of one text: the sum over its scored tokens, their number, and usage."""

    text: str
    logprob: float
    tokens: int
    prompt_tokens: int | None
    completion_tokens: int | None
    fingerprint: str


def request_params(run: ElicitationRun, endpoint: ModelEndpoint) -> dict[str, Any]:
    """What each request sends besides the prompt (stored with the answer as provenance). max_tokens is 1:
    llama-cpp-python reads 0 as "no limit"."""
    params: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1, "echo": True, "logprobs": 1}
    if run.seed is not None and endpoint.supports_seed:
        params["seed"] = int(run.seed)
    return params


def _choice(reply: Any) -> Any:
    choices = getattr(reply, "choices", None)
    if isinstance(reply, (str, bytes)) or not choices:
        raise MalformedResponse(reply)
    return choices[0]


def score_text(client: Any, endpoint: ModelEndpoint, text: str, params: dict[str, Any]) -> TextScore:
    """One request: the log-likelihood of ``text``. Unsupported if the reply has no prompt log-probabilities."""
    style = adapter_for(endpoint)
    reply = style.echo(client, endpoint.model, text, params)
    offsets, values = style.prompt_logprobs(_choice(reply))
    if not values or not offsets or len(offsets) != len(values):
        raise Unsupported("the endpoint returned no log-probabilities for the prompt's tokens "
                          "(it does not support echo with logprobs on completions)")
    scored = [float(v) for offset, v in zip(offsets, values) if offset < len(text) and v is not None]
    if not scored or not all(math.isfinite(v) and v <= 1e-6 for v in scored):
        raise Unsupported(f"the endpoint's prompt log-probabilities are unusable: {values[:8]}")
    prompt_tokens, completion_tokens = usage_of(reply)
    return TextScore(text=text, logprob=math.fsum(scored), tokens=len(scored), prompt_tokens=prompt_tokens,
                     completion_tokens=completion_tokens, fingerprint=fingerprint_of(reply))


@dataclass
class ItemScores:
    """Every text's score for one item, in option order."""

    candidates: list[dict[str, Any]]  # key, text, alone, raw, normalised, calibrated, tokens, alone_tokens
    prompt_tokens: int | None
    completion_tokens: int | None
    fingerprint: str
    requests: int


def scored_text(kind: Instrument, item: Item) -> str:
    """The texts scored for ``item``, one per line (what is stored as the answer's prompt)."""
    lines = []
    for _, whole, alone in kind.likelihood_candidates(item):
        lines += [whole, alone]
    return "\n".join(lines)


def score_item(client: Any, endpoint: ModelEndpoint, kind: Instrument, item: Item,
               params: dict[str, Any]) -> ItemScores:
    """The raw, length-normalised and calibrated score of each option of ``item`` (4 requests)."""
    candidates = []
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    fingerprints: list[str] = []
    for key, whole, alone in kind.likelihood_candidates(item):
        full, bare = score_text(client, endpoint, whole, params), score_text(client, endpoint, alone, params)
        for s in (full, bare):
            prompt_tokens = None if prompt_tokens is None or s.prompt_tokens is None else prompt_tokens + s.prompt_tokens
            completion_tokens = (None if completion_tokens is None or s.completion_tokens is None
                                 else completion_tokens + s.completion_tokens)
            if s.fingerprint and s.fingerprint not in fingerprints:
                fingerprints.append(s.fingerprint)
        candidates.append({"key": key, "text": whole, "alone": alone, "tokens": full.tokens,
                           "alone_tokens": bare.tokens, "logprob": full.logprob, "alone_logprob": bare.logprob,
                           "raw": full.logprob, "normalised": full.logprob / full.tokens,
                           "calibrated": full.logprob - bare.logprob})
    return ItemScores(candidates=candidates, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                      fingerprint=",".join(fingerprints), requests=2 * len(candidates))


def chosen_by(candidates: list[dict[str, Any]], score: str) -> str | None:
    """The key of the option with the highest ``score``; None on a tie."""
    best = max(c[score] for c in candidates)
    keys = [c["key"] for c in candidates if c[score] == best]
    return keys[0] if len(keys) == 1 else None


def outcome(scores: ItemScores) -> Outcome:
    """The Outcome written to the answer's row: the deciding score's choice, every score in ``detail``."""
    choices = {score: chosen_by(scores.candidates, score) for score in SCORES}
    detail = {"method": METHOD, "decides": DECIDING_SCORE, "choice_by": choices, "candidates": scores.candidates}
    raw = json.dumps({c["key"]: {s: c[s] for s in SCORES} for c in scores.candidates}, separators=(",", ":"))
    base = dict(raw_output=raw, detail=detail, prompt_tokens=scores.prompt_tokens,
                completion_tokens=scores.completion_tokens, system_fingerprint=scores.fingerprint,
                requests=scores.requests)
    decided = choices[DECIDING_SCORE]
    if decided is None:
        return Outcome(status=ModelResponse.Status.UNPARSEABLE,
                       parse_error=f"the options have the same {DECIDING_SCORE} score", **base)
    return Outcome(status=ModelResponse.Status.OK, choice=decided, **base)


def check_endpoint(endpoint: ModelEndpoint, client: Any | None = None) -> None:
    """Refuse (LikelihoodUnavailable) an endpoint that cannot return prompt log-probabilities: a chat endpoint,
    or a completions endpoint whose answer to one echo + logprobs probe has none. Called before a likelihood
    run starts, so that no run is started that could not get a single score."""
    if not adapter_for(endpoint).continues_text:
        raise LikelihoodUnavailable(
            f"endpoint {endpoint.name!r} is a {endpoint.api_style} endpoint: the likelihood mode needs a completions "
            "endpoint that returns prompt log-probabilities (echo + logprobs)")
    from .client import EndpointClient, classify

    signature = (endpoint.base_url, endpoint.model)
    if time.monotonic() - _probed.get(signature, -math.inf) < PROBE_VALID_SECONDS:
        return  # probed a moment ago (e.g. by the elicit command before start_run)
    own = client is None
    client = client or EndpointClient(endpoint).openai
    try:
        score_text(client, endpoint, PROBE_TEXT, {"temperature": 0.0, "max_tokens": 1, "echo": True, "logprobs": 1})
    except Exception as exc:  # noqa: BLE001 - every reason is reported to the researcher
        try:
            reason = str(exc) if isinstance(exc, Unsupported) else classify(exc, endpoint.timeout_seconds).reason
        except Exception:  # noqa: BLE001 - classify re-raises what it does not know
            reason = repr(exc)
        raise LikelihoodUnavailable(
            f"endpoint {endpoint.name!r} cannot be used for the likelihood mode: {reason}") from None
    else:
        _probed[signature] = time.monotonic()
    finally:
        if own:
            client.close()
