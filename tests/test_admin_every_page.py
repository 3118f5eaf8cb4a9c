"""Every admin page — changelists, add and change forms, history, the custom admin views — opens for a study
of each item kind, with human and model answers, and for a models-only study (issue 23, point 1)."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import URLPattern, reverse
from django.utils import timezone

from elicitation.runs import create_run, run_sync, start_run
from generic_studies import FREE_TEXT, generic_study
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.demo.loader import load_demo
from surveys.designs import generate_items
from surveys.instruments import Answer, instrument_choices
from surveys.models import Assignment, Item, Participant, Response, Study

pytestmark = pytest.mark.django_db

# What the stub answers for each kind (a readable answer of its shape).
MODEL_ANSWERS = {"speaker_belief": "75", "wep_probability": "60", "wep_choice": "B",
                 "interval_confidence": "10 to 20", "verbalisation_choice": "A", "generic": "Because it says so."}
# GET-only pages that refuse GET by design (they act on POST).
POST_ONLY = {"analysis_studyanalysis_attention", "elicitation_elicitationrun_action"}


def human_answer(kind, item) -> Answer:
    """A valid answer of the item's shape, as a page would save it."""
    if kind.shape.name == "scale":
        return Answer(value=50)
    if kind.shape.name == "interval":
        return Answer(lower=1, upper=5)
    if kind.shape.name == "free_text":
        return Answer(free_text="Because it says so.")
    return Answer(choice=kind.options(item)[0].key)


def add_completed_participant(study: Study, items: list[Item]) -> None:
    participant = Participant.objects.create(study=study, prolific_pid=f"P{study.pk}every", started_at=timezone.now())
    for position, item in enumerate(items, start=1):
        answer = human_answer(study.kind, item)
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, raw=answer.text(),
                                time_taken_ms=900, **answer.columns())
    participant.status, participant.completed_at = Participant.Status.COMPLETED, timezone.now()
    participant.save(update_fields=["status", "completed_at"])


@pytest.fixture
def every_kind(stub):  # noqa: F811
    """The demos (speaker belief, intervals, verbalisations), Tang RQ2 (WEP choice) and a Chinese Tang RQ1
    study (WEP probability) with no human participant: a model run of 4 items each, and one completed
    participant on all but the Chinese study."""
    load_demo()
    rq2 = Study.objects.create(slug="tang-rq2", title="Tang RQ2", instrument="wep_choice", status=Study.Status.LIVE)
    generate_items(rq2, "tang-rq2", seed=1)
    zh = Study.objects.create(slug="tang-zh", title="Tang zh", instrument="wep_probability", language="zh-hans",
                              status=Study.Status.LIVE)
    generate_items(zh, "tang-rq1", settings="CNC", language="zh")
    generic_study("own", FREE_TEXT, items=4)  # a researcher's own study: free-text answers
    for study in Study.objects.all():
        items = list(study.main_items().order_by("id")[:4])
        stub.default = Reply.answer(MODEL_ANSWERS[study.instrument])
        run = create_run(study, make_endpoint(stub, name=f"stub-{study.slug}"), items=items, few_shot=False,
                         max_tokens=32)
        start_run(run, queue=False)
        assert run_sync(run).status == "completed"
        if study != zh:
            add_completed_participant(study, items)
    assert {s.instrument for s in Study.objects.all()} == {name for name, _ in instrument_choices()}
    return Study.objects.all()


def one_per_kind(queryset) -> list:
    """One object per item kind (the study's, or the object's own for studies), so that each kind's forms and
    inlines are opened."""
    picked: dict[str, object] = {}
    for obj in queryset.order_by("-pk"):
        study = obj if isinstance(obj, Study) else getattr(obj, "study", None)
        picked.setdefault(getattr(study, "instrument", ""), obj)
    return list(picked.values())


def admin_urls(user) -> list[str]:
    """Every GET page of every registered model admin, with real objects for the pages that take one."""
    request = RequestFactory().get("/admin/")
    request.user = user
    answered_items = Item.objects.filter(responses__isnull=False).distinct()
    urls = []
    for model, model_admin in admin.site._registry.items():
        for pattern in model_admin.get_urls():
            if not isinstance(pattern, URLPattern) or not pattern.name or pattern.name in POST_ONLY:
                continue
            name, params = pattern.name, set(pattern.pattern.regex.groupindex)
            if not params:
                if name.endswith("_add") and not model_admin.has_add_permission(request):
                    continue
                urls.append(reverse(f"admin:{name}"))
            elif params == {"item_id"}:
                urls += [reverse(f"admin:{name}", args=[i.pk]) for i in one_per_kind(answered_items)]
            elif params <= {"object_id", "fmt"}:
                for obj in one_per_kind(model_admin.get_queryset(request)):
                    if name.endswith("_delete") and not model_admin.has_delete_permission(request, obj):
                        continue
                    if "fmt" in params:  # an export (csv, parquet) or its codebook (csv, json, md)
                        from analysis.codebook import CODEBOOK_FORMATS
                        from analysis.exports import FORMATS
                        formats = CODEBOOK_FORMATS if "codebook" in name else FORMATS
                        urls += [reverse(f"admin:{name}", args=[obj.pk, fmt]) for fmt in formats]
                    else:
                        urls.append(reverse(f"admin:{name}", args=[obj.pk]))
            elif params == {"slug"}:  # a study's page by slug ("Run the declared agents")
                urls += [reverse(f"admin:{name}", args=[s.slug]) for s in one_per_kind(Study.objects.all())]
            elif params == {"id"}:  # a user's password form
                urls.append(reverse(f"admin:{name}", args=[user.pk]))
            else:
                pytest.fail(f"admin page {name} takes {params}: teach this test which objects to open it with")
    return urls


def test_every_admin_page_opens_for_every_kind(client, every_kind, django_user_model):
    user = django_user_model.objects.create_superuser("every", "every@example.org", "pw")
    client.force_login(user)
    urls = admin_urls(user)
    assert any("/item/" in u and u.endswith("/answers/") for u in urls)
    assert any(u.endswith("/report/") for u in urls) and any(u.endswith("/report.json") for u in urls)
    failures = []
    for url in urls:
        response = client.get(url, follow=True)
        if response.status_code != 200:
            failures.append(f"{response.status_code} {url}")
    assert not failures, "\n".join(failures)
