"""Admin pages (run page, actions, progress JSON, page/prompt view, human vs model answers) and the API."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse

from config.celery import app as celery_app
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.prompts import build_prompt, prompt_hash
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager(monkeypatch):
    """Celery tasks run inline when queued (no broker, no worker)."""
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    monkeypatch.setitem(celery_app.conf, "task_eager_propagates", True)


def resume_form_visible(page: str) -> bool:
    tag = page.split('<form id="resume-form"', 1)[1].split(">", 1)[0]
    return "hidden" not in tag


def items_of(study, n):
    return list(study.main_items().filter(is_control=False).order_by("id")[:n])


def test_add_a_run_in_the_admin_then_start_it_from_its_page(admin_client, stub, imported_nv, eager,
                                                             django_capture_on_commit_callbacks):
    endpoint = make_endpoint(stub, price_prompt_per_1k="0.01")
    items = items_of(imported_nv, 3)
    stub.default = Reply.answer("75")
    response = admin_client.post(reverse("admin:elicitation_elicitationrun_add"), {
        "name": "first", "study": imported_nv.pk, "items": [i.pk for i in items], "endpoint": endpoint.pk,
        "mode": "greedy", "temperature": "0", "samples_per_item": "1", "top_logprobs": "20", "max_tokens": "8",
        "few_shot": "on", "prompt_version": "belem-2shot-v1", "prompt_style": "standard",
    })
    run = ElicitationRun.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])
    assert run.created_by.is_superuser and run.status == "draft"

    page = admin_client.get(response.url).content.decode()
    assert "Estimate" in page and '<span id="e-answers">3</span> answers in <span id="e-requests">3</span> requests' in page
    assert "Start run" in page and reverse("admin:elicitation_elicitationrun_progress", args=[run.pk]) in page

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:elicitation_elicitationrun_action", args=[run.pk, "start"]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "completed"
    # the endpoint's pre-flight check when the run was added (remembered when it started), then the 3 answers
    assert len(stub.requests) == 4 and stub.requests[0].body["max_tokens"] == 1

    data = admin_client.get(reverse("admin:elicitation_elicitationrun_progress", args=[run.pk])).json()
    assert (data["done"], data["failed"], data["total"], data["status"]) == (3, 0, 3, "completed")
    assert data["prompt_tokens"] == 300 and data["cost_usd"] == "0.003000"
    assert data["answers_per_second"] is not None and data["answers_per_second"] > 0


def test_admin_run_settings_are_validated(admin_client, stub, imported_nv):
    endpoint = make_endpoint(stub)
    response = admin_client.post(reverse("admin:elicitation_elicitationrun_add"), {
        "study": imported_nv.pk, "endpoint": endpoint.pk, "mode": "greedy", "temperature": "0.7",
        "samples_per_item": "3", "top_logprobs": "20", "max_tokens": "8", "prompt_version": "v",
    })
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "temperature" in errors and "samples_per_item" in errors
    assert not ElicitationRun.objects.exists()


def test_progress_json_lists_failures_with_reasons_and_cancel_resume_buttons(admin_client, stub, imported_nv,
                                                                             django_capture_on_commit_callbacks,
                                                                             monkeypatch):
    stub.default = Reply.error(503, "overloaded")
    run = create_run(imported_nv, make_endpoint(stub, max_retries=1), items=items_of(imported_nv, 2))
    start_run(run, queue=False)
    run_sync(run)
    data = admin_client.get(reverse("admin:elicitation_elicitationrun_progress", args=[run.pk])).json()
    assert data["status"] == "failed" and data["failed"] == 2
    assert [f["error"] for f in data["failures"]] == ["HTTP 503: overloaded"] * 2
    assert all(f["attempts"] == 2 for f in data["failures"])
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])).content.decode()
    assert "HTTP 503: overloaded" in page and "Start run" not in page
    assert resume_form_visible(page)

    sent = []
    from elicitation import tasks

    monkeypatch.setattr(tasks.elicit_items, "apply_async", lambda args, **kw: sent.append((args, kw)))
    admin_client.post(reverse("admin:elicitation_elicitationrun_action", args=[run.pk, "resume"]))
    assert ElicitationRun.objects.get(pk=run.pk).status == "failed" and not sent  # still 503: its check fails
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])).content.decode()
    assert f"503 at {stub.base_url}/chat/completions: overloaded" in page
    stub.default = Reply.answer("50")  # the endpoint answers again
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("admin:elicitation_elicitationrun_action", args=[run.pk, "resume"]))
    run.refresh_from_db()
    assert run.status == "running" and len(sent) == 2
    assert sorted(args for args, _ in sent) == sorted((run.pk, [i.pk]) for i in items_of(imported_nv, 2))
    assert {kw["queue"] for _, kw in sent} == {"celery"}

    admin_client.post(reverse("admin:elicitation_elicitationrun_action", args=[run.pk, "cancel"]))
    run.refresh_from_db()
    assert run.status == "cancelled"
    # GET does not change anything
    assert admin_client.get(reverse("admin:elicitation_elicitationrun_action",
                                    args=[run.pk, "resume"])).status_code == 405


def test_changelist_actions_start_and_cancel(admin_client, stub, imported_nv, eager, django_capture_on_commit_callbacks):
    endpoint = make_endpoint(stub)
    a = create_run(imported_nv, endpoint, items=items_of(imported_nv, 1))
    b = create_run(imported_nv, endpoint, items=items_of(imported_nv, 2))
    url = reverse("admin:elicitation_elicitationrun_changelist")
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {"action": "start_runs", "_selected_action": [a.pk, b.pk]})
    a.refresh_from_db(), b.refresh_from_db()
    assert a.status == b.status == "completed"
    assert ModelResponse.objects.filter(run__in=[a, b], status="ok").count() == 3
    response = admin_client.post(url, {"action": "cancel_runs", "_selected_action": [a.pk]}, follow=True)
    assert "not running" in response.content.decode()
    listing = admin_client.get(url).content.decode()
    assert "1 / 0 / 1" in listing and "2 / 0 / 2" in listing


def test_item_page_and_prompt_side_by_side(admin_client, stub, imported_nv):
    item = items_of(imported_nv, 1)[0]
    run = create_run(imported_nv, make_endpoint(stub), items=[item])
    start_run(run, queue=False)
    run_sync(run)
    url = reverse("admin:elicitation_item_prompt", args=[item.pk])
    page = admin_client.get(url).content.decode()
    kind = imported_nv.kind
    import html

    text = html.unescape(page)
    assert kind.sentence(item) in text and kind.question(item) in text
    assert 'class="sb-item"' in page  # rendered with the participant page's own item template
    prompt = build_prompt(imported_nv, item, True)
    assert prompt_hash(prompt.text) in page and prompt_hash(prompt.messages) in page
    assert 'id="prompt-completions"' in page and 'id="prompt-chat"' in page  # one section per API style
    assert "Correct answer:" in text and "Example Question 1" in text
    # the prompt actually sent is listed with the run that sent it
    sent_hash = ModelResponse.objects.get(run=run).prompt_hash
    assert sent_hash == prompt_hash(prompt.messages) and sent_hash in page
    zero = html.unescape(admin_client.get(url + "?few_shot=0").content.decode())
    assert "Example Question 1" not in zero and kind.sentence(item) in zero


def test_item_answers_shows_humans_beside_models(admin_client, stub, imported_nv):
    from django.utils import timezone

    from surveys.models import Assignment, Participant, Response

    item = items_of(imported_nv, 1)[0]
    for n, value in enumerate([60, 65, 70]):
        p = Participant.objects.create(study=imported_nv, prolific_pid=f"PID{n:021d}")
        a = Assignment.objects.create(participant=p, item=item, position=0)
        Response.objects.create(assignment=a, participant=p, item=item, value=value, created_at=timezone.now())
    stub.queue(Reply.answer("I'd say 90"))
    run = create_run(imported_nv, make_endpoint(stub), items=[item])
    start_run(run, queue=False)
    run_sync(run)
    response = admin_client.get(reverse("admin:elicitation_item_answers", args=[item.pk]))
    page = response.content.decode()
    assert "PID000000000000000000001" in page and "I&#x27;d say 90" in page
    bins = {b["bin"]: b for b in response.context["bins"]}
    assert bins["60"]["human_share"] == pytest.approx(1 / 3) and bins["90"]["model_share"] == 1.0
    assert response.context["human_mean"] == "65.0" and response.context["model_mean"] == "90.0"


def test_model_response_changelist_filters(admin_client, stub, imported_nv):
    items = items_of(imported_nv, 2)
    stub.queue(Reply.answer("55"), Reply.answer("nonsense"))
    run = create_run(imported_nv, make_endpoint(stub), items=items)
    start_run(run, queue=False)
    run_sync(run)
    url = reverse("admin:elicitation_modelresponse_changelist")
    assert admin_client.get(url + "?status__exact=unparseable").context["cl"].result_count == 1
    assert admin_client.get(url + f"?expression={items[0].expression}").context["cl"].result_count >= 1
    assert admin_client.get(url + f"?run__id__exact={run.pk}").context["cl"].result_count == 2
    row = ModelResponse.objects.get(run=run, status="ok")
    assert admin_client.get(reverse("admin:elicitation_modelresponse_change", args=[row.pk])).status_code == 200


def test_admin_pages_need_staff(client, stub, imported_nv):
    run = create_run(imported_nv, make_endpoint(stub), items=items_of(imported_nv, 1))
    for url in [reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk]),
                reverse("admin:elicitation_elicitationrun_progress", args=[run.pk])]:
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response.url
    client.post(reverse("admin:elicitation_elicitationrun_action", args=[run.pk, "start"]))
    run.refresh_from_db()
    assert run.status == "draft"


def test_endpoint_admin_shows_whether_the_key_variable_is_set(admin_client, stub, monkeypatch):
    make_endpoint(stub, name="withkey", api_key_env="C1_TEST_API_KEY")
    monkeypatch.delenv("C1_TEST_API_KEY", raising=False)
    page = admin_client.get(reverse("admin:elicitation_modelendpoint_changelist")).content.decode()
    assert "not set" in page
    monkeypatch.setenv("C1_TEST_API_KEY", "sk-secret-value")
    page = admin_client.get(reverse("admin:elicitation_modelendpoint_changelist")).content.decode()
    assert "sk-secret-value" not in page and ">set<" in page


def test_api_lists_runs_with_progress_and_model_responses(admin_client, client, stub, imported_nv):
    items = items_of(imported_nv, 2)
    run = create_run(imported_nv, make_endpoint(stub), items=items)
    start_run(run, queue=False)
    run_sync(run)
    runs = admin_client.get("/api/runs/?study=nv").json()
    assert runs["count"] == 1
    data = runs["results"][0]
    assert data["study"] == "nv" and data["endpoint"] == "stub" and data["progress"]["done"] == 2
    answers = admin_client.get(f"/api/model-responses/?run={run.pk}").json()
    assert answers["count"] == 2
    first = answers["results"][0]
    assert first["item_key"] == items[0].key and first["value"] == 50 and "lease_owner" not in first
    assert first["system_fingerprint"] == "fp_stub_1" and first["params"]["temperature"] == 0
    assert admin_client.get("/api/model-responses/?run=abc").status_code == 400
    assert admin_client.get("/api/endpoints/stub/").json()["model"] == "stub-model"
    assert client.get("/api/runs/").status_code in (401, 403)


def test_a_running_run_with_nothing_happening_is_flagged_stalled(admin_client, stub, imported_nv):
    from datetime import timedelta

    from django.utils import timezone

    run = create_run(imported_nv, make_endpoint(stub), items=items_of(imported_nv, 2))
    start_run(run, queue=False)  # queued nowhere: as if no worker were running
    url = reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])
    progress_url = reverse("admin:elicitation_elicitationrun_progress", args=[run.pk])
    assert admin_client.get(progress_url).json()["stalled"] is False  # just started
    assert not resume_form_visible(admin_client.get(url).content.decode())

    ElicitationRun.objects.filter(pk=run.pk).update(last_started_at=timezone.now() - timedelta(minutes=5))
    assert admin_client.get(progress_url).json()["stalled"] is True
    page = admin_client.get(url).content.decode()
    assert resume_form_visible(page) and "are the Celery workers running" in page

    # a row in flight (leased) means a worker is at it: not stalled
    ModelResponse.objects.filter(run=run).update(lease_owner="w", lease_until=timezone.now() + timedelta(seconds=60))
    assert admin_client.get(progress_url).json()["stalled"] is False


def item_options(page: str) -> dict[str, str]:
    """value → label of the options of the Items picker on a run form page."""
    import re

    select = page.split('name="items"', 1)[1].split("</select>", 1)[0]
    return {v: html.unescape(label) for v, label in re.findall(r'<option value="(\d+)"[^>]*>([^<]*)</option>', select)}


def other_study(belem_dir):
    from surveys.importers import import_items
    from surveys.models import Study

    other = Study.objects.create(slug="other", title="Other")
    import_items(other, belem_dir / "verifiable.csv")
    return other


def test_run_form_items_picker_offers_the_chosen_studys_items_as_sentences(admin_client, imported_nv, belem_dir):
    other = other_study(belem_dir)
    add = reverse("admin:elicitation_elicitationrun_add")
    # no study chosen yet: nothing to pick from, and the page reloads itself when one is chosen
    page = admin_client.get(add).content.decode()
    assert item_options(page) == {} and 'id="run-study-reload"' in page
    # a chosen study: exactly its main items, each as the sentence a participant reads
    page = admin_client.get(add + f"?study={imported_nv.pk}&name=kept").content.decode()
    options = item_options(page)
    main = list(imported_nv.main_items().order_by("id"))
    assert set(options) == {str(i.pk) for i in main}
    first = main[0]
    assert options[str(first.pk)].startswith(f"nv: {first.text()}") and first.key not in options[str(first.pk)]
    assert 'value="kept"' in page  # what was typed survives the reload
    # a saved draft run: its study's items, its own selected
    from test_analysis_factories import endpoint as plain_endpoint

    run = ElicitationRun.objects.create(study=other, endpoint=plain_endpoint("plain"))
    chosen = list(other.main_items().order_by("id")[:2])
    run.items.set(chosen)
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_change", args=[run.pk])).content.decode()
    options = item_options(page)
    assert set(options) == {str(i.pk) for i in other.main_items()}
    assert options[str(chosen[0].pk)].endswith(f"({chosen[0].truth}{', control' if chosen[0].is_control else ''})")
    for item in chosen:
        assert f'<option value="{item.pk}" selected>' in page


def test_run_form_refuses_items_of_another_study_by_name(admin_client, stub, imported_nv, belem_dir):
    other = other_study(belem_dir)
    endpoint = make_endpoint(stub)
    mine, foreign = items_of(imported_nv, 1)[0], items_of(other, 1)[0]
    response = admin_client.post(reverse("admin:elicitation_elicitationrun_add"), {
        "study": imported_nv.pk, "items": [mine.pk, foreign.pk], "endpoint": endpoint.pk, "mode": "greedy",
        "temperature": "0", "samples_per_item": "1", "top_logprobs": "20", "max_tokens": "8",
        "prompt_version": "belem-2shot-v1",
    })
    assert response.status_code == 200 and not ElicitationRun.objects.exists()
    errors = response.context["adminform"].form.errors["items"]
    assert errors == [f"not main items of nv: {foreign.key} (study other)"]
    # the foreign item stays visible (with its study) so that it can be taken out
    options = item_options(response.content.decode())
    assert options[str(foreign.pk)].startswith("other: ") and str(mine.pk) in options


def test_progress_json_carries_the_estimate_of_what_is_left(admin_client, stub, imported_nv):
    endpoint = make_endpoint(stub, price_prompt_per_1k="0.01")
    items = items_of(imported_nv, 3)
    run = create_run(imported_nv, endpoint, items=items)
    url = reverse("admin:elicitation_elicitationrun_progress", args=[run.pk])
    draft = admin_client.get(url).json()["estimate"]
    assert (draft["answers"], draft["requests"], draft["left_only"]) == (3, 3, False)
    start_run(run, queue=False)
    left = admin_client.get(url).json()["estimate"]
    assert (left["answers"], left["left_only"]) == (3, True) and left["cost_usd"] == draft["cost_usd"]
    # one answer arrives: the estimate polled by the page shrinks with it
    ModelResponse.objects.filter(run=run, item=items[0]).update(status=ModelResponse.Status.OK, value=50)
    after = admin_client.get(url).json()["estimate"]
    assert after["answers"] == 2 and after["prompt_tokens"] < left["prompt_tokens"]
    assert float(after["cost_usd"]) < float(left["cost_usd"])
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])).content.decode()
    assert '<span id="e-answers">2</span>' in page and 'id="run-estimate-left">' in page
    ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.COMPLETED)
    assert admin_client.get(url).json()["estimate"] is None


def test_item_answers_of_interval_and_pick_items(admin_client, stub):
    """Non-scale kinds: intervals show their mean bounds (no bins), picks their share per option."""
    from django.utils import timezone

    from families.bahaj.demo import load_overprecision_demo
    from families.sileo.demo import load_verbalisation_demo
    from surveys.models import Assignment, Participant, Response

    intervals = [{"lower": 10, "upper": 20}, {"lower": 20, "upper": 40}]
    for study, answers, reply in ((load_overprecision_demo().study, intervals, "10 to 20"),
                                  (load_verbalisation_demo().study, [{"choice": "A"}, {"choice": "B"}], "A")):
        item = items_of(study, 1)[0]
        for n, columns in enumerate(answers):
            p = Participant.objects.create(study=study, prolific_pid=f"{study.pk}PID{n}")
            a = Assignment.objects.create(participant=p, item=item, position=0)
            Response.objects.create(assignment=a, participant=p, item=item, created_at=timezone.now(), **columns)
        stub.queue(Reply.answer(reply))
        run = create_run(study, make_endpoint(stub, name=f"stub-{study.slug}"), items=[item], few_shot=False,
                         max_tokens=32)
        start_run(run, queue=False)
        run_sync(run)
        response = admin_client.get(reverse("admin:elicitation_item_answers", args=[item.pk]))
        assert response.status_code == 200
        if study.instrument == "interval_confidence":
            assert response.context["bins"] == [] and response.context["human_mean"] == "[15.0, 30.0]"
            assert response.context["model_mean"] == "[10.0, 20.0]" and "[10, 40]" not in response.content.decode()
            assert "[20, 40]" in response.content.decode()
        else:
            shares = {b["bin"][0]: (b["human_share"], b["model_share"]) for b in response.context["bins"]}
            assert shares == {"A": (0.5, 1.0), "B": (0.5, 0.0)}
            assert response.context["human_mean"] is None and response.context["category_name"] == "option"


def test_provenance_labels_come_from_the_prompt_sent(admin_client, stub, imported_nv):
    """A kind whose prompts show no demonstrations is labelled zero-shot with its own prompt version, even with
    few_shot on (the default); a Belem run keeps belem-2shot-v1 and its report name."""
    from analysis.agents import agent_name
    from families.bahaj.demo import load_overprecision_demo

    interval = load_overprecision_demo().study
    runs = {}
    for study in (interval, imported_nv):
        runs[study.instrument] = create_run(study, make_endpoint(stub, name=f"e-{study.slug}"),
                                            items=items_of(study, 1), max_tokens=32)
        assert runs[study.instrument].few_shot
    belem, bahaj = runs["speaker_belief"], runs["interval_confidence"]
    assert (belem.prompt_version, bahaj.prompt_version) == ("belem-2shot-v1", "bahaj-zero-shot-v1")
    assert agent_name(belem) == "e-nv (greedy)" and agent_name(bahaj) == f"e-{interval.slug} (greedy)"

    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[bahaj.pk])).content.decode()
    assert '<span id="run-shots">zero-shot</span>' in page and "demonstrations" not in page.split("run-shots")[1][:80]
    assert "belem-2shot-v1" not in page and "bahaj-zero-shot-v1" in page
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[belem.pk])).content.decode()
    assert "2-shot: with the study's 2 demonstrations" in page

    item = items_of(interval, 1)[0]
    page = admin_client.get(reverse("admin:elicitation_item_prompt", args=[item.pk])).content.decode()
    assert "Model prompt (zero-shot)" in page and "2-shot" not in page
    item = items_of(imported_nv, 1)[0]
    page = admin_client.get(reverse("admin:elicitation_item_prompt", args=[item.pk])).content.decode()
    assert "Model prompt (2-shot)" in page and "show the zero-shot prompt" in page
    page = admin_client.get(reverse("admin:elicitation_item_prompt", args=[item.pk]) + "?few_shot=0").content.decode()
    assert "Model prompt (zero-shot)" in page and "show the 2-shot prompt" in page


def test_existing_runs_get_the_version_of_the_prompt_they_sent(stub, imported_nv):
    """Migration elicitation 0009: runs stored with the old default belem-2shot-v1 get their prompt's version;
    a typed version and a Belem 2-shot run are left as they are; report names do not change."""
    import importlib

    from django.apps import apps

    from analysis.agents import agent_name
    from families.bahaj.demo import load_overprecision_demo

    migration = importlib.import_module("elicitation.migrations.0011_true_prompt_versions")
    interval = load_overprecision_demo().study
    runs = {name: create_run(study, make_endpoint(stub, name=name), items=items_of(study, 1), few_shot=few_shot,
                             max_tokens=32)
            for name, study, few_shot in (("bahaj", interval, True), ("belem", imported_nv, True),
                                          ("belem0", imported_nv, False), ("typed", interval, True))}
    ElicitationRun.objects.update(prompt_version="belem-2shot-v1")  # as runs were stored before
    ElicitationRun.objects.filter(pk=runs["typed"].pk).update(prompt_version="my-own-v2")
    names = {name: agent_name(ElicitationRun.objects.get(pk=run.pk)) for name, run in runs.items()}
    migration.true_versions(apps, None)
    versions = dict(ElicitationRun.objects.values_list("endpoint__name", "prompt_version"))
    assert versions == {"bahaj": "bahaj-zero-shot-v1", "belem": "belem-2shot-v1", "belem0": "belem-zero-shot-v1",
                        "typed": "my-own-v2"}
    assert {name: agent_name(ElicitationRun.objects.get(pk=run.pk)) for name, run in runs.items()} == names
