"""Full-distribution mode (elicitation.full_distribution) against a scripted completions endpoint.

The endpoint is served to the real ``openai.OpenAI`` client through an in-process mock transport (no
socket, no network): for each request it looks up the answer prefix (the text after the base prompt)
in a table of next-token probabilities and answers like llama.cpp's server, with ``top_logprobs`` at
the one generated position. Every expected number below is worked out by hand in the comments.
"""
from __future__ import annotations

import json
import math
import random
import re

import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elicitation.full_distribution import CACHE_RESET_PROMPT, FullDistribution, full_distribution

PROMPT = "Question: how likely?\nCorrect answer:"


class ScriptedEndpoint:
    """Answers /v1/completions from ``table``: answer prefix → {token text: probability}."""

    def __init__(self, table: dict[str, dict[str, float]], fingerprint: str | None = "fp-test",
                 stream_usage: bool = True):
        self.table = table
        self.fingerprint = fingerprint
        self.stream_usage = stream_usage  # llama-cpp-python's server sends no usage when streaming
        self.requests: list[dict] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        prompt = body["prompt"]
        if prompt == CACHE_RESET_PROMPT:
            return httpx2.Response(200, json={
                "id": "cmpl-0", "object": "text_completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "text": "\n", "finish_reason": "length", "logprobs": None}],
                "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}})
        assert prompt.startswith(PROMPT), prompt
        prefix = prompt[len(PROMPT):]
        if prefix not in self.table:
            return httpx2.Response(400, json={"error": {"message": f"unscripted prefix {prefix!r}"}})
        top = self.table[prefix]
        chosen = max(top, key=top.get)
        payload = {
            "id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "text": chosen, "finish_reason": "length", "logprobs": {
                "tokens": [chosen], "text_offset": [len(prompt)], "token_logprobs": [math.log(top[chosen])],
                "top_logprobs": [{t: math.log(p) for t, p in list(top.items())[: body["logprobs"]]}],
            }}],
            "usage": {"prompt_tokens": 100 + len(prefix), "completion_tokens": 1,
                      "total_tokens": 101 + len(prefix)},
        }
        if self.fingerprint:
            payload["system_fingerprint"] = self.fingerprint
        if not body.get("stream"):
            return httpx2.Response(200, json=payload)
        # Server-sent events: the token chunk, then (when asked for and supported) a usage-only chunk.
        usage = payload.pop("usage")
        events = [payload]
        if self.stream_usage and (body.get("stream_options") or {}).get("include_usage"):
            events.append({**payload, "choices": [], "usage": usage})
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return httpx2.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(api_key="none", base_url="http://scripted.invalid/v1", max_retries=0,
                             http_client=httpx2.Client(transport=httpx2.MockTransport(self.handler)))

    def prefixes(self) -> list[str]:
        return [r["prompt"][len(PROMPT):] for r in self.requests if r["prompt"] != CACHE_RESET_PROMPT]


# A digit-by-digit tokenizer with a separate leading-space token (Gemma-like), plus one " 7" token to
# check that two token paths to the same text are merged.
GEMMA_LIKE = {
    # start: " " .70, "5" .10, " 7" .05, "The" .05 (not a number); 0.10 outside the top-k → unseen_start
    "": {" ": 0.70, "5": 0.10, " 7": 0.05, "The": 0.05},
    # after " " (mass .70): " 1" .35, " 7" .21, " 0" .07, "-" .035 (not a number); .05 × .70 = .035 unseen
    " ": {"1": 0.50, "7": 0.30, "0": 0.10, "-": 0.05},
    # " 1" (.35): " 10" .21, ends → 1 gets .105, " 15" .035
    " 1": {"0": 0.60, "\n": 0.30, "5": 0.10},
    # " 10" (.21): " 100" .084, ends ("\n" or ".") → 10 gets .105 + .021 = .126
    " 10": {"0": 0.40, "\n": 0.50, ".": 0.10},
    # " 100" (.084): ends → 100 gets .0756; "1000" is not a number: .0084
    " 100": {"\n": 0.90, "0": 0.10},
    # " 15" (.035): ends → 15 gets .035
    " 15": {"\n": 1.0},
    # " 7" (.21 via " " + .05 as one token = .26): " 75" .13, " 70" .065, ends → 7 gets .065
    " 7": {"5": 0.50, "0": 0.25, "\n": 0.25},
    # " 75" (.13): ends → 75 gets .104; "755" is not a number: .026
    " 75": {"\n": 0.8, "5": 0.2},
    # " 70" (.065): "\n" .0585 plus the unseen .1 × .065 = .0065 (paper's formula: counts as the end) → 70 .065
    " 70": {"\n": 0.9},
    # " 0" (.07): ends → 0 gets .042; "05" is not a number: .028
    " 0": {"\n": 0.6, "5": 0.4},
    # "5" (.10, no leading space): "50" .05, ends → 5 gets .05
    "5": {"0": 0.5, "\n": 0.5},
    # "50" (.05): ends → 50 gets .05
    "50": {"\n": 1.0},
}
GEMMA_LIKE_EXPECTED = {1: .105, 10: .126, 100: .0756, 15: .035, 7: .065, 75: .104, 70: .065, 0: .042,
                       5: .05, 50: .05}
# Σ = .7176. Not a number: "The" .05 + "-" .035 + "1000" .0084 + "755" .026 + "05" .028 = .1474 observed,
# plus .10 + .035 = .135 outside the top-k before any digit → nonnumber = .2824 = 1 − .7176.


def run(table, endpoint_options=None, **params) -> tuple[FullDistribution, ScriptedEndpoint]:
    endpoint = ScriptedEndpoint(table, **(endpoint_options or {}))
    params.setdefault("top_logprobs", 20)
    return full_distribution(endpoint.client(), "scripted-model", PROMPT, params), endpoint


def assert_probs(actual: dict[int, float], expected: dict[int, float]) -> None:
    assert set(actual) == set(expected)
    for n, p in expected.items():
        assert actual[n] == pytest.approx(p, abs=1e-12), n


def test_corrected_probabilities_with_leading_space_and_1_10_100_prefixes():
    dist, endpoint = run(GEMMA_LIKE)
    assert_probs(dist.probs, GEMMA_LIKE_EXPECTED)
    assert dist.nonnumber == pytest.approx(0.2824, abs=1e-12)
    assert sum(dist.probs.values()) + dist.nonnumber == pytest.approx(1.0, abs=1e-12)
    # The greedy prediction conditioned on numbers is 10 (.126), although the first digit "1" is what a
    # greedy decoder would emit and "1" alone (.105) is what an uncorrected first-token reading gives.
    assert dist.argmax == 10
    assert dist.detail["unseen_start"] == pytest.approx(0.135)
    assert dist.detail["unseen_after_digits"] == pytest.approx(0.0065)
    assert dist.detail["assumed_complete"] == 0
    assert dist.detail["nonnumber_seen"] == pytest.approx(0.1474)
    # coverage = 1 − .135 − .0065 = .8585
    assert dist.coverage == pytest.approx(0.8585)
    # One request per prefix, " 7" fetched once although two token paths lead to it.
    assert sorted(endpoint.prefixes()) == sorted(GEMMA_LIKE)
    assert dist.requests == 12
    assert dist.prompt_tokens == sum(100 + len(p) for p in GEMMA_LIKE) and dist.completion_tokens == 12
    assert dist.system_fingerprint == "fp-test"
    json.dumps(dist.detail)  # storable as JSON


def test_every_request_asks_for_one_token_at_temperature_zero_with_top_k():
    _, endpoint = run(GEMMA_LIKE, top_logprobs=7, seed=42, temperature=0.9, max_tokens=50)
    assert endpoint.prefixes()[:2] == ["", " "]  # first position, then the most probable prefix
    for body in endpoint.requests:
        assert body["model"] == "scripted-model"
        assert body["max_tokens"] == 1 and body["temperature"] == 0
        assert body["logprobs"] == 7 and body["seed"] == 42
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        assert not body.get("echo")


def test_reset_cache_sends_one_tiny_prompt_first():
    plain, endpoint = run(GEMMA_LIKE)
    assert all(body["prompt"].startswith(PROMPT) for body in endpoint.requests)  # off by default
    dist, endpoint = run(GEMMA_LIKE, reset_cache=True)
    first = endpoint.requests[0]
    assert first["prompt"] == CACHE_RESET_PROMPT and first["max_tokens"] == 1 and "logprobs" not in first
    assert len(endpoint.requests) == 13 and dist.requests == 13  # it counts as a request
    assert dist.probs == plain.probs and dist.detail["cache_reset"] is True
    assert dist.prompt_tokens == plain.prompt_tokens + 2


def test_reset_cache_default_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("FULL_DISTRIBUTION_RESET_CACHE", "1")
    _, endpoint = run(GEMMA_LIKE)
    assert endpoint.requests[0]["prompt"] == CACHE_RESET_PROMPT
    _, endpoint = run(GEMMA_LIKE, reset_cache=False)  # a run's own setting wins
    assert endpoint.requests[0]["prompt"] == PROMPT


def test_unstreamed_requests_give_the_same_distribution():
    streamed, _ = run(GEMMA_LIKE)
    plain, endpoint = run(GEMMA_LIKE, stream=False)
    assert not any(body.get("stream") for body in endpoint.requests)
    assert plain.probs == streamed.probs and plain.detail["streamed"] is False
    assert plain.prompt_tokens == streamed.prompt_tokens


def test_streams_without_usage_are_counted_as_unreported():
    dist, _ = run(GEMMA_LIKE, endpoint_options={"stream_usage": False})
    assert dist.prompt_tokens == 0 and dist.completion_tokens == 0
    assert dist.detail["usage_reported"] is False
    assert_probs(dist.probs, GEMMA_LIKE_EXPECTED)


def test_prefixes_that_can_grow_are_expanded_first():
    # Growable prefixes ("", " ", "1"–"9", "10") before the others ("0", "75", "100"), each by mass:
    # "", then " " (.70), " 1" (.35), " 7" (.26), " 10" (.21) — before " 75" (.13) although it is bigger
    # than the growable "5" (.10), which comes next.
    _, endpoint = run(GEMMA_LIKE, max_requests=6)
    assert endpoint.prefixes() == ["", " ", " 1", " 7", " 10", "5"]


def test_budget_leaves_prefixes_assumed_complete():
    # max_requests=3: "", " " (.70), then the most probable pending prefix " 1" (.35). Left unexpanded:
    # " 10" .21, " 15" .035, " 7" .26, " 0" .07, "5" .10 → counted as complete numbers (assumed .675).
    dist, endpoint = run(GEMMA_LIKE, max_requests=3)
    assert endpoint.prefixes() == ["", " ", " 1"]
    assert_probs(dist.probs, {1: .105, 10: .21, 15: .035, 7: .26, 0: .07, 5: .10})
    assert dist.detail["assumed_complete"] == pytest.approx(0.675)
    assert dist.coverage == pytest.approx(1 - 0.135 - 0.675)  # .19
    assert dist.nonnumber == pytest.approx(1 - 0.78)  # "-" .035 + "The" .05 + unseen .135 = .22


def test_tolerance_leaves_the_least_probable_prefixes_unread():
    # After the growable prefixes, the rest are read most probable first — " 75" .13, " 100" .084,
    # " 0" .07, " 70" .065 — until what is left ("50" .05 + " 15" .035 = .085) is within the tolerance.
    # Their tables are {"\n": 1}, so the numbers are unchanged, but they count as assumed:
    # coverage = .8585 − .085 = .7735.
    dist, endpoint = run(GEMMA_LIKE, tolerance=0.09)
    assert endpoint.prefixes()[6:] == [" 75", " 100", " 0", " 70"]
    assert dist.requests == 10
    assert_probs(dist.probs, GEMMA_LIKE_EXPECTED)
    assert dist.detail["assumed_complete"] == pytest.approx(0.085)
    assert dist.coverage == pytest.approx(0.7735)


def test_tolerance_can_stop_after_one_terminal_prefix():
    # Left after the growable prefixes: .434; reading " 75" (.13) leaves .304 ≤ .31. Assumed complete:
    # " 100" .084, " 0" .07, " 70" .065, "50" .05, " 15" .035 → .304; so 100 gets .084 (not .0756) and
    # 0 gets .07 (not .042); the rest as in GEMMA_LIKE_EXPECTED. Σ = .754.
    dist, endpoint = run(GEMMA_LIKE, tolerance=0.31)
    assert endpoint.prefixes() == ["", " ", " 1", " 7", " 10", "5", " 75"]
    assert_probs(dist.probs, GEMMA_LIKE_EXPECTED | {100: .084, 0: .07})
    assert dist.detail["assumed_complete"] == pytest.approx(0.304)
    assert sum(dist.probs.values()) == pytest.approx(0.754)


def test_min_prefix_mass_leaves_small_growable_prefixes_unread():
    # Growable prefixes down to .15: " " .70, " 1" .35, " 7" .26, " 10" .21 — not "5" (.10). With a
    # tolerance of 1 nothing else is read: "5" counts as 5 (.10), " 100" .084, " 15" .035, " 75" .13,
    # " 70" .065, " 0" .07 as themselves; 1 .105, 10 .126, 7 .065 as read. Σ = .78, assumed .484.
    dist, endpoint = run(GEMMA_LIKE, min_prefix_mass=0.15, tolerance=1.0)
    assert endpoint.prefixes() == ["", " ", " 1", " 7", " 10"]
    assert_probs(dist.probs, {5: .10, 100: .084, 15: .035, 75: .13, 70: .065, 0: .07, 1: .105, 10: .126, 7: .065})
    assert dist.detail["assumed_complete"] == pytest.approx(0.484)


def test_multi_digit_tokens_and_numbers_ending_inside_a_token():
    table = {
        # " 50" .40, " 100" .20, " 5" .10, "50" .10 (different text from " 50"), " fifty" .10 (not a number),
        # " 75." .05 → 75 complete inside the token; .05 unseen before any digit.
        "": {" 50": 0.40, " 100": 0.20, " 5": 0.10, "50": 0.10, " fifty": 0.10, " 75.": 0.05},
        # " 50": its mass is .40 + .05 (from " 5" + "0") = .45 → 50 gets .405, "500" .045 not a number
        " 50": {"\n": 0.9, "0": 0.1},
        " 100": {"\n": 1.0},  # 100 gets .20
        " 5": {"0": 0.5, "\n": 0.5},  # 5 gets .05
        "50": {"\n": 1.0},  # 50 gets .10 more → .505
    }
    dist, endpoint = run(table)
    assert_probs(dist.probs, {50: .505, 100: .20, 5: .05, 75: .05})
    assert dist.nonnumber == pytest.approx(0.195)  # fifty .10 + 500 .045 + unseen .05
    assert sorted(endpoint.prefixes()) == sorted(table)
    assert dist.argmax == 50


def test_second_leading_space_is_unresolved_unless_allowed():
    table = {
        "": {" ": 1.0},
        " ": {" ": 0.5, "4": 0.5},       # "  " .5; " 4" .5
        " 4": {"0": 0.5, "\n": 0.5},     # 4 gets .25, " 40" .25
        " 40": {"\n": 1.0},              # 40 gets .25
        "  ": {"3": 1.0},                # only read when two space tokens are allowed: "  3" .5
        "  3": {"\n": 1.0},              # 3 gets .5
    }
    dist, endpoint = run(table)
    assert "  " not in endpoint.prefixes()
    assert_probs(dist.probs, {4: .25, 40: .25})
    assert dist.detail["unresolved"] == pytest.approx(0.5) and dist.nonnumber == pytest.approx(0.5)
    assert dist.coverage == pytest.approx(0.5)

    dist, _ = run(table, max_leading_space_tokens=2)
    assert_probs(dist.probs, {4: .25, 40: .25, 3: .5})
    assert dist.coverage == pytest.approx(1.0)


def test_top_k_truncation_is_honoured_and_reported():
    # The endpoint returns only the first k alternatives. With k=2 at the start only " " (.70) and "5"
    # (.10) are seen: " 7" and "The" fall into the unseen .20 before any digit.
    dist, _ = run(GEMMA_LIKE, top_logprobs=2)
    assert dist.detail["unseen_start"] >= 0.20
    assert sum(dist.probs.values()) <= 1 + 1e-12
    assert dist.coverage < 0.8


def test_binned_follows_the_21_bins():
    dist, _ = run(GEMMA_LIKE)
    bins = dist.binned()
    assert list(bins) == [str(c) for c in range(0, 101, 5)] + ["-1"]
    # 0 (.042) and 1 (.105) → bin 0; 5 (.05) and 7 (.065) → bin 5; 10 → 10; 15 → 15; 50; 70; 75; 100.
    assert bins["0"] == pytest.approx(.147) and bins["5"] == pytest.approx(.115)
    assert bins["10"] == pytest.approx(.126) and bins["100"] == pytest.approx(.0756)
    assert bins["-1"] == pytest.approx(.2824)
    assert sum(bins.values()) == pytest.approx(1.0)


def test_no_logprobs_is_a_clear_error():
    def handler(request):
        return httpx2.Response(200, json={"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "text": " 5", "finish_reason": "length",
                                                       "logprobs": None}]})
    client = openai.OpenAI(api_key="none", base_url="http://scripted.invalid/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(ValueError, match="no top_logprobs"):
        full_distribution(client, "m", PROMPT, {})


def test_logprobs_that_sum_above_one_are_rejected():
    with pytest.raises(ValueError, match="sum to"):
        run({"": {" 1": 0.8, " 2": 0.8}})


def test_endpoint_errors_reach_the_caller():
    with pytest.raises(openai.BadRequestError, match="unscripted"):
        run({"": {" ": 1.0}})  # " " is not scripted


# --- against brute force ------------------------------------------------------------------------------
VOCAB = [" ", "\n", "x", "."] + [str(d) for d in range(10)]


def _model_table(seed: int, density: float, prefix: str) -> dict[str, float]:
    """A complete next-token distribution for ``prefix``, random but fixed by (seed, prefix): each token
    is possible with probability ``density``; no second space token and no fourth digit, so that
    generation always ends."""
    rng = random.Random(f"{seed}:{prefix}")
    weights = {t: (rng.random() if rng.random() < density else 0.0) for t in VOCAB}
    weights["x"] += 0.05  # never an empty table
    if prefix and not prefix.strip():
        weights[" "] = weights["\n"] = 0.0
    if len(prefix.strip()) >= 3:
        for d in "0123456789":
            weights[d] = 0.0
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items() if w > 0}


def _brute_force(table_for) -> tuple[dict[int, float], float]:
    """Exact P(number) by enumerating every token path until the answer is decided."""
    probs: dict[int, float] = {}
    other = 0.0

    def walk(text: str, mass: float) -> None:
        nonlocal other
        for token, p in table_for(text).items():
            new = text + token
            if re.fullmatch(r"\s*", new) or re.fullmatch(r"\s*\d+", new):
                walk(new, mass * p)
                continue
            m = re.fullmatch(r"\s*(\d+)(\D.*)?", new, re.DOTALL)
            digits = m.group(1) if m else ""
            if digits and (digits == "0" or not digits.startswith("0")) and int(digits) <= 100:
                probs[int(digits)] = probs.get(int(digits), 0.0) + mass * p
            else:
                other += mass * p

    walk("", 1.0)
    return probs, other


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), density=st.floats(0.2, 0.6))
def test_equals_brute_force_when_every_alternative_is_visible(seed, density):
    tables: dict[str, dict[str, float]] = {}

    def table_for(prefix: str) -> dict[str, float]:
        if prefix not in tables:
            tables[prefix] = _model_table(seed, density, prefix)
        return tables[prefix]

    expected, other = _brute_force(table_for)
    endpoint = ScriptedEndpoint(tables)
    dist = full_distribution(endpoint.client(), "m", PROMPT,
                             {"top_logprobs": len(VOCAB), "max_requests": 10_000, "min_prefix_mass": 0.0,
                              "tolerance": 0.0})
    assert set(dist.probs) <= set(expected)
    for n, p in expected.items():
        assert dist.probs.get(n, 0.0) == pytest.approx(p, abs=1e-9)
    assert dist.nonnumber == pytest.approx(other, abs=1e-9)
    assert sum(dist.probs.values()) <= 1 + 1e-9
    assert dist.coverage == pytest.approx(1.0)
