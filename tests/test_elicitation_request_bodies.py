"""Every request body the platform sends, byte for byte, against a record (tests/data/request_bodies.json).

Each case runs the real path — a run of one mode on one API style through the worker (``run_sync``), the
likelihood probe, the pre-flight check — against the loopback stub, which keeps each body exactly as it arrived,
and compares the path and the SHA-256 of every body with the record. An API-style adapter
(elicitation/api_styles/) that changed a body — a key, its order, a value, the JSON's spacing — fails here.

The record was written with the code before the adapters existed. To write it again after a deliberate change:
``HEDGELAB_WRITE_REQUEST_BODIES=1 .venv/bin/pytest tests/test_elicitation_request_bodies.py`` (and say why in
the commit).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.models import Item, Study

pytestmark = pytest.mark.django_db
RECORD = Path(__file__).parent / "data" / "request_bodies.json"
WRITE = os.environ.get("HEDGELAB_WRITE_REQUEST_BODIES") == "1"
VALID = "It is highly likely that an animal moves."
DISTRACTOR = "There is little chance that an animal moves."


def verbalisation_study() -> Study:
    study = Study.objects.create(slug="v", title="V", instrument="verbalisation_choice", status="live")
    Item.objects.create(study=study, key="dog", statement="A dog runs.",
                        extra={"dataset": "wep-unli", "hypothesis": "an animal moves", "p": 0.9,
                               "valid_wep": "highly likely", "distractor_wep": "little chance",
                               "options": [["A", DISTRACTOR], ["B", VALID]], "valid_key": "B"})
    return study


def full_distribution_replies(request: Any) -> Reply:
    """After "Correct answer:": " 7" .5, " 10" .3, " I" .2; after " 10": "0" .5, "." .5; else a newline."""
    tables = {"": [(" 7", math.log(0.5)), (" 10", math.log(0.3)), (" I", math.log(0.2))],
              " 10": [("0", math.log(0.5)), (".", math.log(0.5))]}
    prompt = request.body.get("prompt", "")
    top = tables.get(prompt.rsplit("Correct answer:", 1)[-1], [("\n", 0.0)])
    return Reply.answer(top[0][0], tokens=[(top[0][0], top[0][1], top)], prompt_tokens=50, completion_tokens=1)


def top_logprobs_reply(request: Any) -> Reply:
    top = [(" 70", math.log(0.6)), (" 50", math.log(0.3))]
    return Reply.answer(" 70", tokens=[(" 70", math.log(0.6), top)])


def ask(style: str, mode: str, replies: Callable[[Any], Reply] | None = None, **settings: Any):
    """A case: a run of ``mode`` on a ``style`` endpoint over the study's first two items."""
    def case(stub, study) -> None:
        if replies is not None:
            stub.responder = replies
        items = list(study.main_items().filter(is_control=False).order_by("id")[:2])
        run = create_run(study, make_endpoint(stub, api_style=style), mode=mode, items=items, **settings)
        start_run(run, queue=False)
        assert run_sync(run).status == "completed"
    return case


def likelihood(stub, study) -> None:
    stub.default = Reply.scoring(lambda token: -1.0)
    run = create_run(verbalisation_study(), make_endpoint(stub, api_style="completions"), mode="likelihood", seed=5)
    start_run(run, queue=False)
    assert run_sync(run).status == "completed"


def preflight(style: str):
    def case(stub, study) -> None:
        from elicitation.preflight import problem

        assert problem(make_endpoint(stub, api_style=style)) == ""
    return case


CASES: dict[str, Callable[..., None]] = {
    "chat greedy": ask("chat", "greedy", seed=7),
    "chat greedy zero-shot": ask("chat", "greedy", few_shot=False, max_tokens=16),
    "chat sampled": ask("chat", "sampled", samples=2, temperature=0.7, seed=3),
    "chat top_logprobs": ask("chat", "top_logprobs", top_logprobs_reply, top_logprobs=5),
    "completions greedy": ask("completions", "greedy", seed=7),
    "completions sampled": ask("completions", "sampled", samples=2, temperature=0.7),
    "completions top_logprobs": ask("completions", "top_logprobs", top_logprobs_reply, top_logprobs=5),
    "completions full_distribution": ask("completions", "full_distribution", full_distribution_replies, seed=2),
    "completions likelihood": likelihood,
    "chat preflight": preflight("chat"),
    "completions preflight": preflight("completions"),
}


def sent(stub) -> list[list[str]]:
    return [[r.path, hashlib.sha256(r.raw).hexdigest()] for r in stub.requests]


@pytest.mark.parametrize("case", list(CASES))
def test_every_request_body_is_as_recorded(stub, imported_nv, case, monkeypatch):
    monkeypatch.setenv("FULL_DISTRIBUTION_RESET_CACHE", "0")
    CASES[case](stub, imported_nv)
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if WRITE:
        record[case] = sent(stub)
        RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        return
    assert case in record, f"no record for {case!r}: write it (module doc)"
    assert len(stub.requests) == len(record[case]) > 0
    for (path, digest), request in zip(record[case], stub.requests):
        assert (request.path, hashlib.sha256(request.raw).hexdigest()) == (path, digest), \
            f"{case}: the body sent to {request.path} changed: {request.raw[:600]!r}"


def test_a_full_distribution_with_a_cache_reset_sends_as_recorded(stub, imported_nv, monkeypatch):
    """The cache-reset request first (``FULL_DISTRIBUTION_RESET_CACHE``), then the mode's own."""
    monkeypatch.setenv("FULL_DISTRIBUTION_RESET_CACHE", "1")
    ask("completions", "full_distribution", full_distribution_replies)(stub, imported_nv)
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if WRITE:
        record["completions full_distribution reset"] = sent(stub)
        RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        return
    assert sent(stub) == record["completions full_distribution reset"]
    assert json.loads(stub.requests[0].raw)["prompt"] == "0"
