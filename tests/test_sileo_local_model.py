"""Sileo & Moens with the bundled Gemma 3 270M: one generated 1-hop and one 2-hop verbalisation item asked
(greedy, the two-option prompt), the 1-hop one also scored by likelihood (prompt log-probabilities from
llama.cpp's server), then the report. Marked ``local_model`` (skipped without the ``local`` extra). One item is
scored only, the one with the shortest texts (seed 3's, of seeds 0–11): llama-cpp-python computes prompt
log-probabilities with a full-vocabulary sort per prompt token (about 1 s per token on a busy 2-core machine;
a 2-hop item's ~170-token text takes minutes)."""
from __future__ import annotations

import math

import pytest
from django.core.management import call_command

from analysis.reports import build_report
from elicitation import local_model
from elicitation.likelihood import check_endpoint
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Study
from local_model_server import needs_model

pytestmark = [needs_model, pytest.mark.local_model, pytest.mark.django_db]


def test_ask_and_score_verbalisations_with_the_local_model(server):
    call_command("create_study", "vc", "--instrument", "verbalisation_choice", "--live")
    call_command("generate_items", "vc", "--design", "wep-reasoning", "--hops", "1", "--n", "1", "--seed", "3")
    call_command("generate_items", "vc", "--design", "wep-reasoning", "--hops", "2", "--n", "1", "--seed", "3")
    study = Study.objects.get(slug="vc")
    endpoint = local_model.register_endpoint(server["base_url"], server["model"])
    check_endpoint(endpoint)  # llama.cpp's server returns prompt log-probabilities with echo

    call_command("elicit", "vc", "--endpoint", endpoint.name, "--max-tokens", "4", "--sync")
    call_command("elicit", "vc", "--endpoint", endpoint.name, "--mode", "likelihood", "--items", "wr1-s3-00000",
                 "--sync")
    greedy, likelihood = (ElicitationRun.objects.get(study=study, mode=m) for m in ("greedy", "likelihood"))
    assert greedy.status == likelihood.status == ElicitationRun.Status.COMPLETED
    asked = ModelResponse.objects.filter(run=greedy)
    assert asked.count() == 2 and all(r.raw_output for r in asked)  # parsed or kept as unparseable
    assert all(r.choice in ("A", "B") for r in asked if r.status == "ok")
    assert ModelResponse.objects.filter(run=likelihood).count() == 1
    for row in ModelResponse.objects.filter(run=likelihood).select_related("item"):
        assert row.status == "ok" and row.choice in ("A", "B") and row.requests == 4
        candidates = {c["key"]: c for c in row.detail["candidates"]}
        for c in candidates.values():
            assert all(math.isfinite(c[s]) and c[s] < 0 for s in ("raw", "normalised"))
            assert c["normalised"] == pytest.approx(c["raw"] / c["tokens"])
            assert c["calibrated"] == pytest.approx(c["logprob"] - c["alone_logprob"])
            assert c["tokens"] > c["alone_tokens"] > 3  # the whole text holds the premise too
        assert row.choice == max(candidates, key=lambda k: candidates[k]["normalised"])
        assert row.prompt_tokens > 0  # reported by the server

    report = build_report(study)
    table = report.tables()["sileo_table1"].set_index("agent")
    assert {"Chance", "gemma3-270m-local (greedy)", "gemma3-270m-local (likelihood)"} <= set(table.index)
    assert set(report.tables()["sileo_likelihood"]["score"]) == {"raw", "normalised", "calibrated"}
    print(report.summary_text())
