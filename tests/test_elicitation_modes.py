"""The four elicitation modes against the loopback stub, with the real openai client."""
from __future__ import annotations

import json
import math
import sys
import types
from dataclasses import dataclass, field

import pytest

from elicitation import full_distribution as real_full_distribution
from elicitation import modes
from elicitation.models import ElicitationRun, ModelResponse, StoredPrompt
from elicitation.prompts import build_prompt, prompt_hash
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub, tokens_for  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


def first_items(study, n):
    return list(study.main_items().filter(is_control=False).order_by("id")[:n])


def run_now(study, endpoint, items, **settings) -> ElicitationRun:
    run = create_run(study, endpoint, items=items, **settings)
    start_run(run, queue=False)
    return run_sync(run)


def test_greedy_parses_first_number_and_keeps_provenance(stub, imported_nv):
    items = first_items(imported_nv, 3)
    answers = {items[0].text(): "I'd say 70%", items[1].text(): "0, 5, or 10.", items[2].text(): "100"}

    def by_item(request):
        for sentence, answer in answers.items():
            if sentence in request.prompt_text.split("Question Given")[-1] or request.body["messages"][-1][
                    "content"].find(sentence) >= 0:
                return Reply.answer(answer, fingerprint="fp_abc", prompt_tokens=321, completion_tokens=4)
        return None

    stub.responder = by_item
    endpoint = make_endpoint(stub, price_prompt_per_1k="0.5", price_completion_per_1k="1.5")
    run = run_now(imported_nv, endpoint, items, seed=7)

    assert run.status == ElicitationRun.Status.COMPLETED
    rows = {r.item_id: r for r in ModelResponse.objects.filter(run=run)}
    assert len(rows) == 3
    assert (rows[items[0].pk].value, rows[items[0].pk].bin, rows[items[0].pk].raw_output) == (70, 70, "I'd say 70%")
    assert (rows[items[1].pk].value, rows[items[1].pk].bin) == (0, 0)
    assert (rows[items[2].pk].value, rows[items[2].pk].bin) == (100, 100)
    row = rows[items[0].pk]
    assert row.status == ModelResponse.Status.OK
    assert row.system_fingerprint == "fp_abc"
    assert row.base_url == stub.base_url and row.model_id == "stub-model"
    assert row.params == {"temperature": 0.0, "max_tokens": 8, "seed": 7}
    assert (row.prompt_tokens, row.completion_tokens, row.attempts, row.requests) == (321, 4, 1, 1)
    # 321 × 0.5/1000 + 4 × 1.5/1000 = 0.1605 + 0.006
    assert float(row.cost_usd) == pytest.approx(0.1665)
    assert row.latency_ms is not None and row.answered_at is not None
    # what was sent is what was stored, under its hash
    sent = stub.requests[0].body
    assert sent["temperature"] == 0 and sent["max_tokens"] == 8 and sent["seed"] == 7
    stored = StoredPrompt.objects.get(sha256=rows[items[0].pk].prompt_hash)
    assert any(r.body["messages"] == stored.content for r in stub.requests)
    assert stored.sha256 == prompt_hash(stored.content)
    # the prompt is the instrument's, with both demonstrations (paper Fig. 10/11)
    assert [m["role"] for m in stored.content] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Kathleen" in stored.content[1]["content"]


def test_greedy_out_of_range_and_garbage_are_kept_as_unparseable(stub, imported_nv):
    items = first_items(imported_nv, 3)
    stub.queue(Reply.answer("150"), Reply.answer("As an AI I cannot know."), Reply.answer("35"))
    run = run_now(imported_nv, make_endpoint(stub), items)

    rows = list(ModelResponse.objects.filter(run=run).order_by("item_id"))
    assert [r.status for r in rows] == ["unparseable", "unparseable", "ok"]
    assert rows[0].raw_output == "150" and "outside" in rows[0].parse_error
    assert rows[1].raw_output == "As an AI I cannot know." and rows[1].parse_error == "no number in the answer"
    assert rows[0].value is None and rows[0].bin is None
    assert rows[2].bin == 35
    # counted as done, the run completes (nothing dropped)
    assert run.status == ElicitationRun.Status.COMPLETED
    from elicitation.runs import progress

    p = progress(run)
    assert (p["done"], p["ok"], p["unparseable"], p["failed"], p["total"]) == (3, 1, 2, 0, 3)


def test_sampled_mode_one_row_and_seed_per_sample(stub, imported_nv):
    items = first_items(imported_nv, 2)
    counter = iter(range(100))
    stub.responder = lambda request: Reply.answer(str(5 * next(counter)))
    run = run_now(imported_nv, make_endpoint(stub), items, mode="sampled", samples=3, temperature=0.7, seed=100)

    rows = list(ModelResponse.objects.filter(run=run).order_by("item_id", "sample_index"))
    assert [(r.item_id, r.sample_index) for r in rows] == [(i.pk, s) for i in items for s in range(3)]
    assert len(stub.requests) == 6
    seeds = sorted(r.body["seed"] for r in stub.requests)
    assert seeds == [100, 100, 101, 101, 102, 102]
    assert {r.body["temperature"] for r in stub.requests} == {0.7}
    assert sorted(r.value for r in rows) == [0, 5, 10, 15, 20, 25]
    assert all(r.params["seed"] == 100 + r.sample_index for r in rows)
    # the samples of one item share one stored prompt
    assert len({r.prompt_hash for r in rows if r.item_id == items[0].pk}) == 1


def test_sampled_mode_without_seed_support_sends_no_seed(stub, imported_nv):
    items = first_items(imported_nv, 1)
    run = run_now(imported_nv, make_endpoint(stub, supports_seed=False), items, mode="sampled", samples=2,
                  temperature=1.0, seed=5)
    assert all("seed" not in r.body for r in stub.requests)
    assert ModelResponse.objects.filter(run=run, status="ok").count() == 2


def test_top_logprobs_bins_minus_one_and_coverage_chat(stub, imported_nv):
    items = first_items(imported_nv, 1)
    top = [("70", math.log(0.5)), ("75", math.log(0.1)), ("72", math.log(0.05)), ("I", math.log(0.2)),
           ("100", math.log(0.05)), ("**", math.log(0.02))]
    stub.queue(Reply.answer("70", tokens=tokens_for("70", top)))
    run = run_now(imported_nv, make_endpoint(stub), items, mode="top_logprobs")

    sent = stub.requests[0].body
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20
    row = ModelResponse.objects.get(run=run)
    d = row.distribution
    assert set(d) == {str(k) for k in range(0, 101, 5)} | {"-1"}
    # 70 → bin 70 (0.5), 72 → bin 70 (0.05), 75 → bin 75 (0.1), 100 → bin 100 (0.05)
    assert d["70"] == pytest.approx(0.55)
    assert d["75"] == pytest.approx(0.10)
    assert d["100"] == pytest.approx(0.05)
    # "-1": everything that is not a number, including the mass outside the top-k: 1 − 0.70
    assert d["-1"] == pytest.approx(0.30)
    assert sum(d.values()) == pytest.approx(1.0)
    # coverage: the top-k list covers 0.5+0.1+0.05+0.2+0.05+0.02
    assert row.coverage == pytest.approx(0.92)
    assert (row.value, row.bin, row.status) == (70, 70, "ok")
    assert row.detail["number_mass"] == pytest.approx(0.70)
    assert row.detail["top_logprobs"][0] == ["70", pytest.approx(math.log(0.5))]


def test_top_logprobs_completions_skips_leading_space_token(stub, imported_nv):
    items = first_items(imported_nv, 1)
    # the first generated token is a bare space; the answer position is the next one
    tokens = [(" ", math.log(0.9), [(" ", math.log(0.9)), ("\n", math.log(0.1))]),
              ("30", math.log(0.6), [("30", math.log(0.6)), ("25", math.log(0.3)), ("abc", math.log(0.05))])]
    stub.queue(Reply.answer(" 30", tokens=tokens))
    run = run_now(imported_nv, make_endpoint(stub, api_style="completions"), items, mode="top_logprobs",
                  top_logprobs=5)

    sent = stub.requests[0].body
    assert sent["logprobs"] == 5 and "prompt" in sent and sent["prompt"].endswith("Correct answer:")
    row = ModelResponse.objects.get(run=run)
    assert row.detail["answer_position"] == 1
    assert row.distribution["30"] == pytest.approx(0.6) and row.distribution["25"] == pytest.approx(0.3)
    assert row.distribution["-1"] == pytest.approx(0.1)
    assert row.coverage == pytest.approx(0.95)
    assert row.value == 30


def test_top_logprobs_without_numbers_is_unparseable_but_kept(stub, imported_nv):
    items = first_items(imported_nv, 1)
    top = [("I", math.log(0.6)), ("The", math.log(0.3))]
    stub.queue(Reply.answer("I think", tokens=tokens_for("I", top)))
    run = run_now(imported_nv, make_endpoint(stub), items, mode="top_logprobs")
    row = ModelResponse.objects.get(run=run)
    assert row.status == "unparseable" and "no number" in row.parse_error
    assert row.distribution["-1"] == pytest.approx(1.0)
    assert row.raw_output == "I think"


def test_top_logprobs_missing_from_reply_is_a_recorded_failure(stub, imported_nv):
    items = first_items(imported_nv, 1)
    stub.queue(Reply.answer("40"))  # no logprobs in the reply
    run = run_now(imported_nv, make_endpoint(stub), items, mode="top_logprobs")
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and "no logprobs" in row.error and row.raw_output == "40"
    assert run.status == ElicitationRun.Status.FAILED


@dataclass
class FakeFullDistribution:
    probs: dict[int, float]
    nonnumber: float
    prompt_tokens: int
    completion_tokens: int
    requests: int
    system_fingerprint: str
    detail: dict = field(default_factory=dict)


def test_full_distribution_mode_bins_numbers_with_the_instrument(stub, imported_nv, monkeypatch):
    """Our side of helper C2's contract: the function gets the openai client, model, prompt text and
    params; its FullDistribution is binned with score() and stored."""
    calls = []

    def fake_full_distribution(client, model, prompt, params, style=None):
        # one real request through the client we were given, to show it is wired to the endpoint
        reply = client.completions.create(model=model, prompt=prompt, max_tokens=1, logprobs=5)
        calls.append((model, prompt, params, reply.choices[0].text))
        return FakeFullDistribution(probs={7: 0.1, 10: 0.3, 12: 0.05, 100: 0.25, 98: 0.1}, nonnumber=0.2,
                                    prompt_tokens=700, completion_tokens=11, requests=1,
                                    system_fingerprint="b1234", detail={"coverage": 0.97, "prefixes": ["", "1"]})

    fake_module = types.ModuleType("elicitation.full_distribution")
    fake_module.full_distribution = fake_full_distribution
    fake_module.DEFAULT_MAX_REQUESTS = real_full_distribution.DEFAULT_MAX_REQUESTS  # the estimate's (elicitation.conf)
    monkeypatch.setitem(sys.modules, "elicitation.full_distribution", fake_module)
    items = first_items(imported_nv, 1)
    endpoint = make_endpoint(stub, api_style="completions", price_prompt_per_1k="1")
    run = run_now(imported_nv, endpoint, items, mode="full_distribution")

    row = ModelResponse.objects.get(run=run)
    model, prompt, params, _ = calls[0]
    assert model == "stub-model" and prompt.endswith("Correct answer:") and params["temperature"] == 0.0
    d = row.distribution
    # 7 → bin 5; 10 and 12 → bin 10; 98 and 100 → bin 100
    assert d["5"] == pytest.approx(0.1) and d["10"] == pytest.approx(0.35) and d["100"] == pytest.approx(0.35)
    assert d["-1"] == pytest.approx(0.2)
    assert sum(d.values()) == pytest.approx(1.0)
    assert row.coverage == pytest.approx(0.97)
    assert (row.value, row.bin) == (10, 10)  # the argmax over numbers
    assert (row.prompt_tokens, row.completion_tokens, row.system_fingerprint) == (700, 11, "b1234")
    assert row.requests == 1 and float(row.cost_usd) == pytest.approx(0.7)
    assert json.loads(row.raw_output)["probs"]["100"] == 0.25
    assert row.detail["prefixes"] == ["", "1"]


def test_full_distribution_needs_a_completions_endpoint(stub, imported_nv):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as err:
        create_run(imported_nv, make_endpoint(stub, api_style="chat"), mode="full_distribution")
    assert "completions endpoint" in str(err.value)


@pytest.mark.parametrize("settings, field", [
    ({"mode": "greedy", "samples": 3}, "samples_per_item"),
    ({"mode": "greedy", "temperature": 0.5}, "temperature"),
    ({"mode": "sampled", "samples": 3, "temperature": 0}, "temperature"),
    ({"mode": "top_logprobs", "top_logprobs": 50}, "top_logprobs"),
])
def test_invalid_run_settings_are_rejected_by_field(stub, imported_nv, settings, field):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as err:
        create_run(imported_nv, make_endpoint(stub), **settings)
    assert field in err.value.message_dict
    assert not ElicitationRun.objects.exists()


def test_number_token_helper():
    from surveys.instruments import get_instrument

    kind = get_instrument("speaker_belief")
    assert modes.number_value(kind, " 70") == 70
    assert modes.number_value(kind, "100") == 100
    assert modes.number_value(kind, "101") is None
    assert modes.number_value(kind, "7%") is None
    assert modes.number_value(kind, "seventy") is None


def test_full_distribution_mode_end_to_end_with_the_real_module(stub, imported_nv):
    """C2's full_distribution against the stub through our worker. Logprobs by hand, after "Correct answer:":
    first token: " 7" 0.5, " 10" 0.3, " I" 0.2; after " 7": newline 1.0 (so 7 is complete: 0.5);
    after " 10": "0" 0.5, "." 0.5 (so 10 → 0.15, 100 → 0.15); anything else ends the answer."""
    pytest.importorskip("elicitation.full_distribution")
    tables = {
        "": [(" 7", math.log(0.5)), (" 10", math.log(0.3)), (" I", math.log(0.2))],
        " 7": [("\n", 0.0)],
        " 10": [("0", math.log(0.5)), (".", math.log(0.5))],
    }

    def responder(request):
        suffix = request.body["prompt"].rsplit("Correct answer:", 1)[1]
        top = tables.get(suffix, [("\n", 0.0)])
        return Reply.answer(top[0][0], tokens=[(top[0][0], top[0][1], top)], prompt_tokens=50, completion_tokens=1,
                            fingerprint="fp_fd")

    stub.responder = responder
    items = first_items(imported_nv, 1)
    run = run_now(imported_nv, make_endpoint(stub, api_style="completions"), items, mode="full_distribution")

    row = ModelResponse.objects.get(run=run)
    assert row.status == "ok", (row.error, row.parse_error)
    d = row.distribution
    assert d["5"] == pytest.approx(0.5)  # 7 → bin 5
    assert d["10"] == pytest.approx(0.15) and d["100"] == pytest.approx(0.15)
    assert d["-1"] == pytest.approx(0.2)
    assert (row.value, row.bin) == (7, 5)
    assert row.requests == len(stub.requests) >= 3  # every HTTP request of the mode was counted
    assert row.prompt_tokens == 50 * len(stub.requests) and row.system_fingerprint == "fp_fd"
    assert all(r.body["max_tokens"] == 1 and r.body["logprobs"] == 20 for r in stub.requests)


def test_full_distribution_without_logprobs_fails_with_a_reason_without_retrying(stub, imported_nv):
    pytest.importorskip("elicitation.full_distribution")
    stub.default = Reply.answer(" 50")  # no logprobs
    items = first_items(imported_nv, 1)
    run = run_now(imported_nv, make_endpoint(stub, api_style="completions", max_retries=3), items,
                  mode="full_distribution")
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and "no top_logprobs" in row.error and row.attempts == 1
    assert len(stub.requests) == 1


def test_full_distribution_tokens_are_estimated_when_the_server_reports_no_usage(stub, imported_nv, monkeypatch):
    from elicitation.prompts import approx_tokens

    def fake_full_distribution(client, model, prompt, params, style=None):
        return FakeFullDistribution(probs={50: 0.9}, nonnumber=0.1, prompt_tokens=0, completion_tokens=0, requests=3,
                                    system_fingerprint="", detail={"coverage": 1.0, "usage_reported": False})

    fake_module = types.ModuleType("elicitation.full_distribution")
    fake_module.full_distribution = fake_full_distribution
    fake_module.DEFAULT_MAX_REQUESTS = real_full_distribution.DEFAULT_MAX_REQUESTS  # the estimate's (elicitation.conf)
    monkeypatch.setitem(sys.modules, "elicitation.full_distribution", fake_module)
    items = first_items(imported_nv, 1)
    endpoint = make_endpoint(stub, api_style="completions", price_prompt_per_1k="1", price_completion_per_1k="1")
    run = run_now(imported_nv, endpoint, items, mode="full_distribution")
    row = ModelResponse.objects.get(run=run)
    prompt = build_prompt(imported_nv, items[0], True).text
    # 3 requests of ≈ characters/4 prompt tokens and 1 completion token each
    assert row.prompt_tokens == 3 * approx_tokens(prompt) and row.completion_tokens == 3
    assert row.detail["usage_estimated"] is True
    assert float(row.cost_usd) == pytest.approx((3 * approx_tokens(prompt) + 3) / 1000)


@pytest.mark.parametrize("study", ["demo", "tang-zh", "sileo-r"])
def test_a_completion_is_requested_as_the_clients_create_would(stub, study):
    """An API style's ``send`` (elicitation/api_styles/) posts the body through the client as it is, without
    ``create``'s walk over its typed parameters: for prompts of the baseline's studies, in both API styles and
    with every mode's parameters, ``create`` would have sent the same request (path, headers, JSON body)."""
    import openai

    import prompt_baseline
    from elicitation.api_styles import adapter_for

    prompt_baseline.build_studies([study])
    client = openai.OpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0)
    params = [{"temperature": 0.0, "max_tokens": 8}, {"temperature": 0.7, "max_tokens": 8, "seed": 12},
              {"max_tokens": 2}]
    sent = 0
    for row in prompt_baseline.example_rows(study):
        for chat, content in ((True, row["messages"]), (False, row["text"])):
            for extra in params + [{"max_tokens": 1, **({"logprobs": True, "top_logprobs": 20} if chat
                                                        else {"logprobs": 5})}]:
                body = {"model": "stub-model", "messages" if chat else "prompt": content, **extra}
                ours = adapter_for("chat" if chat else "completions").send(client, body)
                theirs = (client.chat.completions if chat else client.completions).create(**body)
                assert type(ours) is type(theirs) and ours.choices[0] == theirs.choices[0]
                sent += 2
    assert len(stub.requests) == sent > 0
    volatile = {"x-stainless-retry-count", "x-stainless-read-timeout"}
    for ours, theirs in zip(stub.requests[::2], stub.requests[1::2]):
        assert (ours.path, ours.body) == (theirs.path, theirs.body)
        assert {k.lower(): v for k, v in ours.headers.items() if k.lower() not in volatile} == \
            {k.lower(): v for k, v in theirs.headers.items() if k.lower() not in volatile}
        assert {k.lower(): v for k, v in ours.headers.items()}["authorization"] == "Bearer sk-test"
