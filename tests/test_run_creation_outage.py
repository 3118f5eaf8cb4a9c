"""Run creation through the API survives a broker outage and retries (issue 24, point 10): the run is
answered with its id and a "queued, broker unavailable" reason (never a 500 after the run exists), the sweep
queues it once the broker is back, and an Idempotency-Key makes a retried request return the same run."""
from __future__ import annotations

import pytest
from celery import Celery

from config.celery import app as celery_app
from elicitation import idempotency
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import BROKER_UNAVAILABLE
from elicitation.sweep import sweep
from elicitation.tasks import elicit_items
from private_services import free_port
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from test_api_write import api, user_api  # noqa: F401 (api is a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker_down(monkeypatch):
    """Tasks are published to a Redis port where nothing listens (a real publish, so the real kombu error)."""
    dead = Celery("dead", broker=f"redis://127.0.0.1:{free_port()}/0", set_as_current=False)
    dead.conf.broker_connection_retry = False
    dead.conf.task_publish_retry_policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.05}

    def publish(args=None, kwargs=None, **options):
        return dead.send_task(elicit_items.name, args=args, kwargs=kwargs, **options)

    monkeypatch.setattr(elicit_items, "apply_async", publish)
    return monkeypatch


def run_body(study, keys, **extra):
    return {"study": study.slug, "endpoint": "stubbed", "items": keys, "start": True, **extra}


@pytest.mark.django_db(transaction=True)  # real commits: the tasks are sent while the request is answered
def test_a_run_started_while_the_broker_is_down_is_answered_with_its_id_then_healed_by_the_sweep(
        api, stub, imported_nv, broker_down):
    stub.default = Reply.answer("70")
    make_endpoint(stub, name="stubbed")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:3])
    made = api.post("/api/runs/", run_body(imported_nv, keys))
    assert made.status_code == 201, made.content[:300]
    body = made.json()
    assert body["status"] == "running" and body["status_reason"] == BROKER_UNAVAILABLE
    run = ElicitationRun.objects.get()
    assert body["id"] == run.pk and ModelResponse.objects.filter(run=run, status="pending").count() == 3
    assert api.get(f"/api/runs/{run.pk}/").json()["status_reason"].startswith("queued, broker unavailable")

    broker_down.undo()  # the broker is back: the sweep finds the queue empty and queues the run's items
    broker_down.setitem(celery_app.conf, "task_always_eager", True)
    assert sweep(backlog=0, min_age=0) == {run.pk: 3}
    run.refresh_from_db()
    assert (run.status, run.status_reason) == ("completed", "")
    assert sorted(ModelResponse.objects.filter(run=run).values_list("value", flat=True)) == [70, 70, 70]
    assert len(stub.requests) == 4 and stub.requests[0].body["max_tokens"] == 1  # the pre-flight check, 3 answers


def test_a_successful_send_clears_the_broker_reason(api, stub, imported_nv, monkeypatch,
                                                    django_capture_on_commit_callbacks):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    make_endpoint(stub, name="stubbed")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:2])
    made = api.post("/api/runs/", run_body(imported_nv, keys, start=False)).json()
    ElicitationRun.objects.filter(pk=made["id"]).update(status="running", status_reason=BROKER_UNAVAILABLE)
    run = ElicitationRun.objects.get(pk=made["id"])
    from elicitation.runs import enqueue, ensure_rows

    ensure_rows(run)
    with django_capture_on_commit_callbacks(execute=True):
        enqueue(run, list(run.target_items().values_list("pk", flat=True)))
    run.refresh_from_db()
    assert run.status == "completed" and run.status_reason == ""


def test_an_idempotency_key_returns_the_run_of_the_first_request(api, client, django_user_model, stub,
                                                                 imported_nv, broker_down,
                                                                 django_capture_on_commit_callbacks):
    make_endpoint(stub, name="stubbed")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:2])
    body, header = run_body(imported_nv, keys), {"HTTP_IDEMPOTENCY_KEY": "4b1e-retry-me"}
    with django_capture_on_commit_callbacks(execute=True):
        first = api.client.post("/api/runs/", body, content_type="application/json", **api.auth, **header)
        again = api.client.post("/api/runs/", body, content_type="application/json", **api.auth, **header)
    assert first.status_code == 201 and again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["id"] == first.json()["id"]
    assert ElicitationRun.objects.count() == 1 and ModelResponse.objects.count() == 2

    other = api.client.post("/api/runs/", run_body(imported_nv, keys[:1]), content_type="application/json",
                            **api.auth, **header)
    assert other.status_code == 422 and "already used" in other.json()["detail"]
    too_long = api.client.post("/api/runs/", body, content_type="application/json", **api.auth,
                               HTTP_IDEMPOTENCY_KEY="k" * (idempotency.MAX_LENGTH + 1))
    assert too_long.status_code == 400
    colleague = user_api(client, django_user_model, "colleague", superuser=True)
    theirs = colleague.client.post("/api/runs/", run_body(imported_nv, keys, start=False),
                                   content_type="application/json", **colleague.auth, **header)
    assert theirs.status_code == 201 and theirs.json()["id"] != first.json()["id"]  # keys are per user
    plain = api.post("/api/runs/", run_body(imported_nv, keys, start=False))
    assert plain.status_code == 201 and ElicitationRun.objects.count() == 3  # no key: a new run each time


@pytest.mark.parametrize("refused_by", ["validation", "database"])
def test_two_requests_racing_with_one_key_create_one_run(api, stub, imported_nv, monkeypatch, refused_by):
    """The second request checked for the key before the first saved its run: the model's validation of the
    unique constraint, or the database itself when both validated before either saved, refuses the second
    run, and the request answers with the first."""
    if refused_by == "database":
        monkeypatch.setattr(ElicitationRun, "validate_constraints", lambda self, exclude=None: None)
    make_endpoint(stub, name="stubbed")
    keys = list(imported_nv.main_items().order_by("id").values_list("key", flat=True)[:2])
    body, header = run_body(imported_nv, keys, start=False), {"HTTP_IDEMPOTENCY_KEY": "race"}
    first = api.client.post("/api/runs/", body, content_type="application/json", **api.auth, **header)
    real, calls = idempotency.earlier_run, []

    def late(*args):
        calls.append(args)
        return None if len(calls) == 1 else real(*args)  # the first look happened before the first commit

    monkeypatch.setattr(idempotency, "earlier_run", late)
    second = api.client.post("/api/runs/", body, content_type="application/json", **api.auth, **header)
    assert second.status_code == 200 and second.json()["id"] == first.json()["id"]
    assert ElicitationRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_elicit_command_says_the_broker_is_unavailable_instead_of_queued(stub, imported_nv, broker_down):
    import io

    from django.core.management import call_command

    make_endpoint(stub, name="stubbed")
    out = io.StringIO()
    key = imported_nv.main_items().order_by("id").first().key
    call_command("elicit", "nv", "--endpoint", "stubbed", "--items", key, stdout=out)
    text = out.getvalue()
    assert "queued, broker unavailable" in text and "queued on Celery queue" not in text
    assert ElicitationRun.objects.get().status == "running"
