"""The run form and the run page in a real Chromium: choosing the study makes the Items picker list that
study's items (what was typed stays), and the estimate of what is left follows the answers live."""
from __future__ import annotations

import pytest
from django.urls import reverse

from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import create_run, start_run
from stub_openai import make_endpoint, stub  # noqa: F401 (stub is a fixture)
from test_browser import browser  # noqa: F401 (fixture)
from test_browser_pages import admin_page  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_choosing_the_study_lists_its_items_and_keeps_what_was_typed(admin_page, live_server, stub,  # noqa: F811
                                                                     imported_nv, belem_dir):
    from surveys.importers import import_items
    from surveys.models import Study

    other = Study.objects.create(slug="other", title="Other")
    import_items(other, belem_dir / "verifiable.csv")
    endpoint = make_endpoint(stub)
    admin_page.goto(live_server.url + reverse("admin:elicitation_elicitationrun_add"))
    admin_page.fill("#id_name", "subset run")
    admin_page.uncheck("#id_few_shot")
    assert admin_page.locator("#id_items_from option").count() == 0
    with admin_page.expect_navigation():
        admin_page.select_option("#id_study", str(other.pk))
    assert admin_page.input_value("#id_name") == "subset run"
    assert not admin_page.is_checked("#id_few_shot")
    labels = admin_page.locator("#id_items_from option").all_inner_texts()
    assert len(labels) == other.main_items().count() and all(t.startswith("other: ") for t in labels)
    item = other.main_items().filter(is_control=False).order_by("id").first()
    admin_page.fill("#id_items_input", item.statement[:40])  # the picker's own search box
    admin_page.select_option("#id_items_from", str(item.pk))
    admin_page.click("#id_items_add")
    admin_page.select_option("#id_endpoint", str(endpoint.pk))
    with admin_page.expect_navigation():
        admin_page.click("input[name=_save]")
    run = ElicitationRun.objects.get()
    assert (run.study, list(run.items.all()), run.name, run.few_shot) == (other, [item], "subset run", False)


def test_estimate_of_what_is_left_follows_the_answers(admin_page, live_server, stub, imported_nv):  # noqa: F811
    items = list(imported_nv.main_items().filter(is_control=False).order_by("id")[:3])
    run = create_run(imported_nv, make_endpoint(stub), items=items)
    start_run(run, queue=False)
    admin_page.goto(live_server.url + reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk]))
    assert admin_page.inner_text("#e-answers") == "3"
    assert admin_page.locator("#run-estimate-left").is_visible()
    ModelResponse.objects.filter(run=run, item__in=items[:2]).update(status=ModelResponse.Status.OK, value=50)
    admin_page.wait_for_function("document.getElementById('e-answers').textContent === '1'", timeout=10_000)
    assert admin_page.inner_text("#f-done") == "2"
