"""manage.py add_endpoint and manage.py elicit (in-process with --sync; queueing without it)."""
from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


def run_command(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_add_endpoint_creates_updates_and_refuses_bad_input(monkeypatch, settings):
    monkeypatch.delenv("C1_API_KEY", raising=False)
    settings.MODEL_API_KEY_VARS = ["C1_API_KEY@api.openai.com"]
    out, _ = run_command("add_endpoint", "gpt4o", "--base-url", "https://api.openai.com/v1", "--model", "gpt-4o",
                         "--key-env", "C1_API_KEY", "--price-prompt", "0.0025", "--price-completion", "0.01",
                         "--rpm", "500", "--max-concurrency", "8", "--no-check")  # no key, no server here
    assert "added endpoint gpt4o" in out and "$C1_API_KEY is not set" in out
    e = ModelEndpoint.objects.get(name="gpt4o")
    assert (e.model, e.api_style, e.api_key_env, e.requests_per_minute, e.max_concurrency) == (
        "gpt-4o", "chat", "C1_API_KEY", 500, 8)
    assert e.price_prompt_per_1k == Decimal("0.0025") and e.price_completion_per_1k == Decimal("0.01")

    with pytest.raises(CommandError, match="exists; add --update"):
        run_command("add_endpoint", "gpt4o", "--base-url", "https://x.example/v1", "--model", "m")
    run_command("add_endpoint", "gpt4o", "--update", "--api-style", "completions", "--no-seed", "--timeout", "30",
                "--no-check")
    e.refresh_from_db()
    assert e.api_style == "completions" and not e.supports_seed and e.timeout_seconds == 30 and e.model == "gpt-4o"

    with pytest.raises(CommandError, match="base_url"):
        run_command("add_endpoint", "bad", "--base-url", "not a url", "--model", "m")
    with pytest.raises(CommandError, match="not a price"):
        run_command("add_endpoint", "bad", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--price-prompt", "x")
    with pytest.raises(CommandError, match="needs --base-url and --model"):
        run_command("add_endpoint", "bad")
    assert not ModelEndpoint.objects.filter(name="bad").exists()


def test_elicit_sync_prints_the_estimate_and_answers_everything(stub, imported_nv):
    make_endpoint(stub, price_prompt_per_1k="0.001")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:4])
    stub.default = Reply.answer("I'd say 70%")
    out, err = run_command("elicit", "nv", "--endpoint", "stub", "--items", ",".join(keys), "--sync", "--seed", "3")
    run = ElicitationRun.objects.get()
    assert f"created run {run.pk}" in out and "estimate (in all): 4 answers, 4 requests" in out
    assert "characters / 4" in out
    assert run.status == "completed" and run.seed == 3
    assert list(ModelResponse.objects.filter(run=run).values_list("value", flat=True)) == [70.0] * 4
    assert f"run {run.pk} [Completed] 4/4 done, 0 failed" in out
    assert "4/4" in err  # the tqdm bar


def test_elicit_sampled_defaults_to_temperature_one(stub, imported_nv):
    make_endpoint(stub)
    key = imported_nv.main_items().order_by("id").first().key
    run_command("elicit", "nv", "--endpoint", "stub", "--mode", "sampled", "--samples", "3", "--items", key, "--sync",
                "--no-check")  # only the run's requests
    run = ElicitationRun.objects.get()
    assert run.temperature == 1.0 and ModelResponse.objects.filter(run=run).count() == 3
    assert {r.body["temperature"] for r in stub.requests} == {1.0}


def test_elicit_refuses_bad_input_and_creates_nothing(stub, imported_nv):
    make_endpoint(stub)
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        run_command("elicit", "nope", "--endpoint", "stub")
    with pytest.raises(CommandError, match="no endpoint with name 'nope'.*stub"):
        run_command("elicit", "nv", "--endpoint", "nope")
    with pytest.raises(CommandError, match="not main items of nv: missing-key"):
        run_command("elicit", "nv", "--endpoint", "stub", "--items", "missing-key")
    with pytest.raises(CommandError, match="samples_per_item"):
        run_command("elicit", "nv", "--endpoint", "stub", "--samples", "5")
    with pytest.raises(CommandError, match="budget"):
        run_command("elicit", "nv", "--endpoint", "stub", "--budget", "lots")
    with pytest.raises(CommandError, match="no run 999"):
        run_command("elicit", "--resume", "999")
    assert not ElicitationRun.objects.exists() and not stub.requests


def test_elicit_estimate_only_creates_nothing(stub, imported_nv):
    make_endpoint(stub, price_prompt_per_1k="1")
    out, _ = run_command("elicit", "nv", "--endpoint", "stub", "--estimate-only")
    n = imported_nv.main_items().count()
    assert f"estimate (in all): {n} answers, {n} requests" in out
    assert not ElicitationRun.objects.exists() and not stub.requests


def test_elicit_queues_one_task_per_item(stub, imported_nv, monkeypatch, django_capture_on_commit_callbacks):
    from elicitation import tasks

    make_endpoint(stub)
    sent = []
    monkeypatch.setattr(tasks.elicit_items, "apply_async", lambda args, **kw: sent.append((args, kw)))
    monkeypatch.setenv("ELICITATION_QUEUE", "elicit-test")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:3])
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run_command("elicit", "nv", "--endpoint", "stub", "--items", ",".join(keys), "--no-check")
    run = ElicitationRun.objects.get()
    assert run.status == "running" and "queued on Celery queue 'elicit-test'" in out
    # three items, four slots: one item per task, so that every slot has work (runs.items_per_task)
    assert sorted(args for args, _ in sent) == sorted((run.pk, [pk]) for pk in
                                                      imported_nv.main_items().filter(key__in=keys).values_list("pk", flat=True))
    assert {kw["queue"] for _, kw in sent} == {"elicit-test"}
    assert ModelResponse.objects.filter(run=run, status="pending").count() == 3
    assert not stub.requests


def test_elicit_cancel_status_and_resume(stub, imported_nv):
    make_endpoint(stub, max_retries=0)
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:3])
    stub.queue(Reply.answer("10"), Reply.error(500, "boom"), Reply.answer("20"))
    with pytest.raises(CommandError, match="finished with failures; --resume"):
        run_command("elicit", "nv", "--endpoint", "stub", "--items", ",".join(keys), "--sync", "--no-check")
    run = ElicitationRun.objects.get()
    out, _ = run_command("elicit", "--status", str(run.pk))
    assert "2/3 done, 1 failed" in out and "HTTP 500: boom" in out

    stub.default = Reply.answer("30")
    out, _ = run_command("elicit", "--resume", str(run.pk), "--sync", "--no-check")
    assert "estimate (still to do): 1 answers" in out and "1 item(s)" in out
    run.refresh_from_db()
    assert run.status == "completed" and len(stub.requests) == 4
    assert sorted(ModelResponse.objects.filter(run=run).values_list("value", flat=True)) == [10, 20, 30]

    with pytest.raises(CommandError, match="not running"):
        run_command("elicit", "--cancel", str(run.pk))
    ElicitationRun.objects.filter(pk=run.pk).update(status="running")
    out, _ = run_command("elicit", "--cancel", str(run.pk))
    assert "cancelled run" in out
    run.refresh_from_db()
    assert run.status == "cancelled"
