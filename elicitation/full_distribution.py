"""Full-distribution mode: the probability of every number 0–100 as a complete answer (SPEC §5).

For models whose tokenizer spells numbers digit by digit (Gemma, Llama 3, OLMo), the probability of
the answer "7" is not the probability of the token "7": "7" is also the start of "70" and "75". The
*corrected probability* of a digit prefix i (the probability that the answer is i itself) is therefore

    P(i) − Σ_j P(i, j)        (j a digit: i followed by anything but a digit),

and the greedy answer is the arg-max over the numbers 0–100 under it. This module computes that
distribution through the plain OpenAI *completions* API with ``logprobs=k`` (top-k alternatives at one
position; the requests are sent and read by the endpoint's API style, elicitation/api_styles/, which must
continue a text), one request per answer prefix that matters:

1. the prompt itself → the distribution of the first answer token;
2. the prompt plus a leading whitespace token (" " — the answer after "Correct answer:" usually starts
   with a space) → the distribution after that space;
3. the prompt plus each digit prefix with enough probability → the next-token distribution after it,
   whose digit alternatives are subtracted from the prefix (the correction above). Prefixes that can
   still grow into a longer number ("1"–"9", "10") come first, most probable first, down to
   ``min_prefix_mass``; then any prefix left ("0", "50", "15", "100", … whose digit continuations can only
   make the answer not a number — Gemma often continues "15" to "150"), most probable first, until the
   mass of the prefixes left unread is at most ``tolerance``; never more than ``max_requests`` in all.

Requests are streamed (``stream=True``, one token): llama-cpp-python's server computes log-probabilities
only for the generated position then, instead of for all ~800 prompt positions, which made a request
3–20× faster in our measurements; the top-k alternatives are the same. Its server reports no token usage
when streaming, so ``prompt_tokens`` and ``completion_tokens`` are 0 and ``detail["usage_reported"]``
is False there (``params["stream"] = False`` gets usage at that cost).

llama-cpp-python's server takes any ``logprobs`` k (OpenAI's completions allow at most 5); ``echo`` with
logprobs would return alternatives for every prompt token (a full-vocabulary sort each), so it is not
used. Gemma's tokenizer writes the answer after "Correct answer:" as a space token, then one token per
digit, then "\n\n" or "\n".

Reproducibility. llama.cpp's server reuses the previous request's cache for the longest common prefix
and evaluates only the rest. With its default CPU kernels (llamafile sgemm, repacked weights), the
numbers for a token depend on how it was batched (we measured up to 0.9 nats on top-100 logprobs and an
L1 distance of 0.045 over the bins for the same item asked after another item). Built with
``-DGGML_LLAMAFILE=OFF -DGGML_CPU_REPACK=OFF`` (the flags ``make local-model`` uses), repeats gave identical
distributions in our tests, whatever was asked before. For other builds, ``reset_cache=True`` first
sends a tiny prompt, so that every item is evaluated from scratch the same way (identical repeats, at
1.5–2.5× the time).

Prefixes are kept as *text*: prefixes reached through different token paths (" 7" as one token, or " "
then "7") are merged, and the server tokenizes ``prompt + prefix`` itself. For digit-by-digit tokenizers
this is the same token sequence the model generates; for others it is the canonical tokenization of the
same text.

Approximations, all reported in ``FullDistribution.detail`` and reflected in ``coverage``:

* ``unseen_start`` — mass outside the top-k at a position *before* any digit: it is not a number we
  can name, so it goes to the non-number ("-1") bin.
* ``unseen_after_digits`` — mass outside the top-k *after* a digit prefix: following the paper's formula
  (prefix minus its observed digit continuations) it counts as "the number ends here". With digit-by-digit
  tokenizers only ten tokens can continue a number, so this errs only when a digit is missing from the
  top-k.
* ``assumed_complete`` — digit prefixes that were not read (within ``tolerance``, or beyond
  ``max_requests``) count as complete numbers: their longer continuations are not subtracted.
* ``unresolved`` — whitespace-only prefixes that were not expanded (a second leading whitespace token, or
  out of budget) go to the non-number bin.

``coverage`` = 1 − (all of the above): the share of probability mass whose fate (which number, or not a
number) was read from observed tokens rather than assumed.

Numbers are the canonical spellings 0–100 ("0", "7", "42", "100"); "07", "00" or "101" are not numbers.
A number is complete when its digits are followed by any non-digit (space, newline, ".", end of text).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from config.env import env_bool

from .api_styles import ApiStyleAdapter, adapter_for

MAX_NUMBER = 100
DEFAULT_TOP_LOGPROBS = 20
DEFAULT_MAX_REQUESTS = 48
DEFAULT_MIN_PREFIX_MASS = 1e-3
DEFAULT_TOLERANCE = 0.02
DEFAULT_MAX_LEADING_SPACE_TOKENS = 1
# Sent first when ``reset_cache`` is on: a prompt that shares nothing but the BOS token with a real one,
# so that the server's prefix cache holds no part of the prompt (see "Reproducibility" in the module doc).
CACHE_RESET_PROMPT = "0"
DEFAULT_STYLE = "completions"  # the API style asked when none is given (elicitation/api_styles/)

_TOKEN = re.compile(r"(\s*)(\d*)(.*)", re.DOTALL)


@dataclass
class FullDistribution:
    """The probability of each number 0–100 as a complete answer, and of not answering with one."""

    probs: dict[int, float]  # number → probability of it as a complete answer (only numbers with mass)
    nonnumber: float  # 1 − Σ probs: the "-1" bin
    prompt_tokens: int
    completion_tokens: int
    requests: int
    system_fingerprint: str
    detail: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable: coverage, approximations, prefixes

    @property
    def coverage(self) -> float:
        """Share of the mass whose classification was observed rather than assumed (see module doc)."""
        return float(self.detail.get("coverage", 0.0))

    @property
    def argmax(self) -> int | None:
        """The greedy prediction conditioned on numbers (ties → the smaller number); None if no number."""
        if not self.probs:
            return None
        return max(sorted(self.probs), key=lambda n: self.probs[n])

    def binned(self, step: int = 5) -> dict[str, float]:
        """Probabilities summed into bins of ``step`` ({"0": p, "5": p, …, "100": p, "-1": non-number}).

        A number n goes to the bin centre c with c − step/2 ≤ n < c + step/2 (100 stays in 100), the
        same rule as SPEC §6.
        """
        bins = {str(c): 0.0 for c in range(0, MAX_NUMBER + 1, step)}
        for number, p in self.probs.items():
            centre = min(MAX_NUMBER, math.floor((number + step / 2) / step) * step)
            bins[str(centre)] += p
        bins["-1"] = self.nonnumber
        return bins


# --- token classification --------------------------------------------------------------------------
def _valid_number(digits: str) -> int | None:
    """The number spelled by ``digits`` if it is a canonical spelling of 0–100, else None."""
    if not digits or len(digits) > 3 or (len(digits) > 1 and digits[0] == "0"):
        return None
    value = int(digits)
    return value if value <= MAX_NUMBER else None


def _can_grow(text: str) -> bool:
    """Whether the answer prefix ``text`` can still grow into a longer number 0–100.

    True for "" and whitespace, "1"–"9" and "10"; False for "0", "50" or "100", whose continuations can
    only make the answer not a number (expanding those merely corrects their own probability)."""
    digits = text.strip()
    return not digits or (digits[0] != "0" and len(digits) < 3 and int(digits + "0") <= MAX_NUMBER)


@dataclass
class _Node:
    """An answer prefix (text after the prompt) and what we fetched about its next token."""

    text: str
    space_tokens: int = 0  # whitespace-only tokens on the way (only for whitespace-only prefixes)
    top: dict[str, float] | None = None  # token text → probability, once fetched

    @property
    def digits(self) -> str:
        return self.text.strip()


def _prob_items(top_logprobs: dict[str, float]) -> dict[str, float]:
    """Token text → probability; ValueError if the alternatives claim more than all of the mass."""
    probs = {token: math.exp(lp) for token, lp in top_logprobs.items() if lp is not None and lp > -math.inf}
    if sum(probs.values()) > 1 + 1e-4:
        raise ValueError(f"top_logprobs sum to {sum(probs.values()):.6f} > 1: not log-probabilities")
    return probs


class _Flow:
    """Mass propagation through the fetched prefixes; recomputed after every request."""

    def __init__(self, nodes: dict[str, _Node], max_space_tokens: int):
        self.nodes = nodes
        self.max_space_tokens = max_space_tokens
        self.mass: dict[str, float] = {}
        self.numbers: dict[int, float] = {}
        self.nonnumber_seen = 0.0  # observed tokens that make the answer not a number
        self.unseen_start = 0.0
        self.unseen_after_digits = 0.0
        self.assumed_complete = 0.0
        self.unresolved = 0.0
        self.pending: dict[str, float] = {}  # unfetched prefixes worth fetching → mass

    def _add_number(self, digits: str, p: float) -> None:
        number = _valid_number(digits)
        if number is None:
            self.nonnumber_seen += p
        else:
            self.numbers[number] = self.numbers.get(number, 0.0) + p

    def _child(self, parent: _Node, token: str, p: float) -> None:
        text = parent.text + token
        if not text.strip():  # still only whitespace
            spaces = parent.space_tokens + 1
            if spaces > self.max_space_tokens:
                self.unresolved += p
                return
            self.nodes.setdefault(text, _Node(text, space_tokens=spaces))
        else:
            self.nodes.setdefault(text, _Node(text))
        self.mass[text] = self.mass.get(text, 0.0) + p

    def run(self) -> None:
        self.mass = {"": 1.0}
        done: set[str] = set()
        while True:
            waiting = [t for t in self.mass if t not in done]
            if not waiting:
                break
            # Prefixes only grow, so the shortest waiting one has received all of its mass.
            text = min(waiting, key=len)
            done.add(text)
            self._expand(self.nodes[text], self.mass[text])

    def _expand(self, node: _Node, mass: float) -> None:
        digits = node.digits
        if digits and _valid_number(digits) is None:  # "05", "101": no continuation makes it a number
            self.nonnumber_seen += mass
            return
        if node.top is None:
            self.pending[node.text] = mass
            if digits:
                self.assumed_complete += mass
                self._add_number(digits, mass)
            else:
                self.unresolved += mass
            return
        seen = 0.0
        for token, q in node.top.items():
            p = mass * q
            seen += q
            _, tok_digits, rest = _TOKEN.fullmatch(token).groups()
            if digits:  # after a digit prefix: a digit continues the number, anything else ends it
                if token[:1].isdigit():
                    if rest:
                        self._add_number(digits + tok_digits, p)
                    else:
                        self._child(node, token, p)
                else:
                    self._add_number(digits, p)
            elif tok_digits and not rest:  # "7", " 7", "10": a number that may go on
                self._child(node, token, p)
            elif tok_digits:  # "7\n", " 7.": a whole number in one token
                self._add_number(tok_digits, p)
            elif token and not token.strip():  # leading whitespace
                self._child(node, token, p)
            else:  # a word, punctuation, a sign, end of text
                self.nonnumber_seen += p
        unseen = max(0.0, 1.0 - seen) * mass
        if digits:  # the paper's formula: prefix minus its observed digit continuations
            self.unseen_after_digits += unseen
            self._add_number(digits, unseen)
        else:
            self.unseen_start += unseen


@dataclass
class _Answer:
    """What one request told us: the alternatives at the first generated position, and usage."""

    top: dict[str, float]  # token text → logprob
    prompt_tokens: int | None
    completion_tokens: int | None
    fingerprint: str


def _fetch(style: ApiStyleAdapter, client: Any, model: str, prompt: str, k: int, stream: bool,
           extra: dict[str, Any]) -> _Answer:
    """One request for one token with top-``k`` logprobs (the style's ``next_token``).

    Streamed by default: llama-cpp-python's server then computes log-probabilities for the generated
    position only, instead of for every prompt position (3–20× faster per request in our measurements).
    """
    top: dict[str, float] | None = None
    usage = None
    fingerprint = ""
    for chunk in style.next_token(client, model, prompt, k, extra, stream):
        if top is None and getattr(chunk, "choices", None):
            top = style.top_alternatives(chunk.choices[0])
        usage = getattr(chunk, "usage", None) or usage
        fingerprint = getattr(chunk, "system_fingerprint", None) or fingerprint
    if top is None:
        raise ValueError("the endpoint returned no top_logprobs (does it support `logprobs` on completions?)")
    return _Answer(top=top,
                   prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
                   completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
                   fingerprint=fingerprint)


@dataclass
class _Settings:
    """The settings of one full distribution, read from its ``params`` (see :func:`full_distribution`)."""

    k: int
    max_requests: int
    min_mass: float
    tolerance: float
    stream: bool
    max_spaces: int
    reset_cache: bool
    extra: dict[str, Any]  # sent with every request besides the prompt: the seed

    @classmethod
    def of(cls, params: dict) -> "_Settings":
        extra: dict[str, Any] = {}
        if params.get("seed") is not None:
            extra["seed"] = int(params["seed"])
        return cls(k=int(params.get("top_logprobs") or DEFAULT_TOP_LOGPROBS),
                   max_requests=max(1, int(params.get("max_requests") or DEFAULT_MAX_REQUESTS)),
                   min_mass=float(params.get("min_prefix_mass", DEFAULT_MIN_PREFIX_MASS)),
                   tolerance=float(params.get("tolerance", DEFAULT_TOLERANCE)),
                   stream=bool(params.get("stream", True)),
                   max_spaces=int(params.get("max_leading_space_tokens", DEFAULT_MAX_LEADING_SPACE_TOKENS)),
                   reset_cache=bool(params.get("reset_cache",
                                               env_bool("FULL_DISTRIBUTION_RESET_CACHE", default=False))),
                   extra=extra)


class _Requests:
    """The requests of one full distribution (through the endpoint's API style) and what they reported."""

    def __init__(self, style: ApiStyleAdapter, client: Any, model: str, prompt: str, settings: _Settings):
        self.style, self.client, self.model, self.prompt, self.settings = style, client, model, prompt, settings
        self.prompt_tokens = self.completion_tokens = 0
        self.usage_missing = 0
        self.fingerprints: list[str] = []
        self.fetched: list[dict[str, Any]] = []

    def reset_cache(self) -> None:
        """The tiny request that replaces the server's cached prefix (module doc, "Reproducibility")."""
        reset = self.style.reset_cache(self.client, self.model, CACHE_RESET_PROMPT, self.settings.extra)
        usage = getattr(reset, "usage", None)
        self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)

    def fetch(self, node: _Node, mass: float) -> None:
        """Read the next-token alternatives after ``node``'s prefix (which carries ``mass``) into the node."""
        answer = _fetch(self.style, self.client, self.model, self.prompt + node.text, self.settings.k,
                        self.settings.stream, self.settings.extra)
        node.top = _prob_items(answer.top)
        if answer.prompt_tokens is None:
            self.usage_missing += 1
        self.prompt_tokens += int(answer.prompt_tokens or 0)
        self.completion_tokens += int(answer.completion_tokens or 0)
        if answer.fingerprint and answer.fingerprint not in self.fingerprints:
            self.fingerprints.append(answer.fingerprint)
        self.fetched.append({"prefix": node.text, "mass": mass, "alternatives": len(node.top),
                             "top_mass": sum(node.top.values())})


def _next_prefix(flow: _Flow, settings: _Settings) -> tuple[float, str] | None:
    """(mass, text) of the prefix to read next: the most probable one that can still grow into a longer number
    (down to ``min_mass``), else the most probable one left while more than ``tolerance`` is unread; None: done."""
    pending = [(m, t) for t, m in flow.pending.items() if m > 0]
    growing = [(m, t) for m, t in pending if m >= settings.min_mass and _can_grow(t)]
    if growing:
        return max(growing, key=lambda c: (c[0], -len(c[1])))
    if pending and sum(m for m, _ in pending) > settings.tolerance:
        return max(pending, key=lambda c: (c[0], -len(c[1])))
    return None


def _result(flow: _Flow, settings: _Settings, requests: _Requests) -> FullDistribution:
    """The FullDistribution of the last flow, with every approximation in its ``detail``."""
    probs = {n: p for n, p in sorted(flow.numbers.items()) if p > 0}
    total = sum(probs.values())
    if total > 1.0:  # float noise on logprobs that sum to 1; never report more than all of the mass
        probs = {n: p / total for n, p in probs.items()}
        total = 1.0
    approximated = flow.unseen_start + flow.unseen_after_digits + flow.assumed_complete + flow.unresolved
    not_expanded = {t: m for t, m in flow.pending.items() if m > 0}
    detail = {
        "method": "corrected probability of digit prefixes from completions top-k logprobs",
        "top_logprobs": settings.k,
        "coverage": max(0.0, 1.0 - approximated),
        "number_mass": total,
        "nonnumber_seen": flow.nonnumber_seen,
        "unseen_start": flow.unseen_start,
        "unseen_after_digits": flow.unseen_after_digits,
        "assumed_complete": flow.assumed_complete,
        "unresolved": flow.unresolved,
        "argmax": max(sorted(probs), key=lambda n: probs[n]) if probs else None,
        "requests": requests.fetched,
        "not_expanded": dict(sorted(not_expanded.items(), key=lambda kv: -kv[1])[:20]),
        "not_expanded_count": len(not_expanded),
        "max_requests": settings.max_requests,
        "min_prefix_mass": settings.min_mass,
        "tolerance": settings.tolerance,
        "streamed": settings.stream,
        "usage_reported": requests.usage_missing == 0,
        "cache_reset": settings.reset_cache,
    }
    return FullDistribution(
        probs=probs,
        nonnumber=max(0.0, 1.0 - total),
        prompt_tokens=requests.prompt_tokens,
        completion_tokens=requests.completion_tokens,
        requests=len(requests.fetched) + int(settings.reset_cache),
        system_fingerprint=",".join(requests.fingerprints),
        detail=detail,
    )


def full_distribution(client: Any, model: str, prompt: str, params: dict,
                      style: ApiStyleAdapter | None = None) -> FullDistribution:
    """The probability of each number 0–100 as a complete answer to ``prompt`` (the corrected probability).

    ``client`` is an ``openai.OpenAI``; ``style`` the endpoint's API style (elicitation/api_styles/; default the
    completions style), which sends each request and reads its reply: it must continue a text.
    ``params`` (all optional): ``top_logprobs`` (k alternatives per position, default 20), ``max_requests``
    (default 48), ``min_prefix_mass`` (growable prefixes read down to this mass, default 0.001),
    ``tolerance`` (then read the most probable prefixes left until at most this much mass is
    assumed rather than read, default 0.02),
    ``max_leading_space_tokens`` (default 1), ``stream`` (default True), ``reset_cache`` (True sends one tiny
    request first, see the module doc; default: the environment variable FULL_DISTRIBUTION_RESET_CACHE,
    else False), ``seed``. Other keys
    (temperature, max_tokens, …) are ignored: every request is max_tokens=1 at temperature 0, since
    only the logprobs are used.
    Raises the client's errors (the caller retries) and ValueError when the endpoint returns no logprobs.
    """
    settings = _Settings.of(params)
    requests = _Requests(style or adapter_for(DEFAULT_STYLE), client, model, prompt, settings)
    nodes: dict[str, _Node] = {"": _Node("")}
    if settings.reset_cache:
        requests.reset_cache()
    requests.fetch(nodes[""], 1.0)
    while True:
        flow = _Flow(nodes, settings.max_spaces)
        flow.run()
        if len(requests.fetched) >= settings.max_requests:
            break
        chosen = _next_prefix(flow, settings)
        if chosen is None:
            break
        mass, text = chosen
        requests.fetch(nodes[text], mass)
    return _result(flow, settings, requests)
