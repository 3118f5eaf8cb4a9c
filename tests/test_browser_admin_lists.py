"""The admin's item and participant lists at a laptop's 1280 px: every column visible without scrolling
sideways (the list used to hide truth, ρ and "included" behind a scrollbar), ρ rounded; and the withdrawal
action clicked through as a researcher would."""
from __future__ import annotations

import random

import pytest
from django.urls import reverse

from surveys.models import Participant, Response, Withdrawal
from stub_openai import stub  # noqa: F401 (fixture)
from test_browser import admin_logged_in, browser, offline_page  # noqa: F401 (fixtures)
from test_pilot_withdrawal import finish

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def laptop(browser, live_server, django_user_model):  # noqa: F811
    hits: list[str] = []
    yield admin_logged_in(browser, live_server, django_user_model, hits, 1280, 800)
    assert hits == []


def visible_headers(page) -> list[str]:
    """Headers of the result table that lie inside the visible part of the page (left of the filters)."""
    return page.evaluate("""() => {
        const limit = document.querySelector('#changelist-filter')?.getBoundingClientRect().left ?? innerWidth;
        return [...document.querySelectorAll('#result_list thead th')]
            .filter(th => th.getBoundingClientRect().right <= limit + 1)
            .map(th => th.innerText.trim().toLowerCase());
    }""")


def assert_fits(page) -> None:
    scroll = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert scroll[0] <= scroll[1], f"the page scrolls sideways: {scroll}"
    box = page.evaluate("(() => { const r = document.querySelector('#changelist .results'); "
                        "return [r.scrollWidth, r.clientWidth]; })()")
    assert box[0] <= box[1], f"the table scrolls sideways inside its box: {box}"


def test_lists_fit_a_laptop_and_show_truth_and_rounded_rho(laptop, live_server, imported_nv):
    imported_nv.status = "live"
    imported_nv.save()
    participant = finish(imported_nv, "5f1a2b3c4d5e6f7a8b9c0d1e")
    Participant.objects.filter(pk=participant.pk).update(attention_rho=0.4199999999999999, attention_included=True)

    laptop.goto(live_server.url + reverse("admin:surveys_participant_changelist"))
    assert_fits(laptop)
    headers = visible_headers(laptop)
    assert {"live check (rho)", "analysis filter (rho)", "status", "answered / assigned"} <= set(headers), headers
    assert laptop.get_by_text("included (0.42)").is_visible()
    assert "0.41999" not in laptop.content()

    laptop.goto(live_server.url + reverse("admin:surveys_item_changelist"))
    assert_fits(laptop)
    assert {"truth", "label", "statement type"} <= set(visible_headers(laptop))


def test_withdrawing_a_participant_in_the_browser(laptop, live_server, imported_nv):
    imported_nv.status = "live"
    imported_nv.save()
    gone = finish(imported_nv, "5f1a2b3c4d5e6f7a8b9c0d1e")
    kept = finish(imported_nv, "60aa2b3c4d5e6f7a8b9c0d99", seed=2)
    laptop.goto(live_server.url + reverse("admin:surveys_participant_changelist"))
    laptop.locator(f"input[name=_selected_action][value='{gone.pk}']").check()
    laptop.select_option("select[name=action]", "withdraw")
    laptop.click("button[name=index], input[type=submit][value=Go], button:has-text('Go')")
    laptop.get_by_text("Withdraw participants at their request").first.wait_for()
    laptop.fill("#id_note", "asked by Prolific message")
    laptop.click("input[value='Yes, delete their data']")
    laptop.get_by_text("1 participant(s) removed with 30 answers").wait_for()
    assert list(Participant.objects.all()) == [kept]
    assert Response.objects.count() == 30
    assert Withdrawal.objects.get().note == "asked by Prolific message"


@pytest.fixture
def answered(imported_nv, stub):  # noqa: F811
    """A participant's answers and a finished model run with a long, unreadable answer among its answers."""
    from django.db import connection

    from elicitation.runs import create_run, run_sync, start_run
    from stub_openai import Reply, make_endpoint

    if connection.vendor == "postgresql":  # ids of six digits, as after a long suite (or a long-lived server)
        with connection.cursor() as cursor:
            for table in ("elicitation_modelresponse", "elicitation_elicitationrun", "surveys_response",
                          "surveys_participant"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 987654)")
    imported_nv.status = "live"
    imported_nv.save()
    finish(imported_nv, "5f1a2b3c4d5e6f7a8b9c0d1e")
    stub.queue(Reply.answer("I would say that it is about " + "very " * 40 + "likely, so 75"), Reply.answer("nonsense " * 30))
    stub.default = Reply.answer("80")
    run = create_run(imported_nv, make_endpoint(stub, name="a-rather-long-endpoint-name-for-gpu-box"),
                     items=imported_nv.main_items().order_by("id")[:4], name="pilot run with a long name")
    start_run(run, queue=False)
    run_sync(run)
    return imported_nv


@pytest.mark.parametrize("route", ["surveys_response_changelist", "elicitation_modelresponse_changelist",
                                   "elicitation_elicitationrun_changelist"])
def test_answer_and_run_lists_fit_a_laptop(laptop, live_server, answered, route, tmp_path):
    from test_browser_choice import keep_screenshots

    laptop.goto(live_server.url + reverse(f"admin:{route}"))
    laptop.screenshot(path=str(tmp_path / f"{route}-1280.png"), full_page=True)
    keep_screenshots(tmp_path)
    assert_fits(laptop)


def test_the_participant_list_fits_a_laptop_with_real_slugs_and_channel_ids(laptop, live_server, imported_nv):
    """As on a fresh clone after a walk (issue 23): a study slug of 18 letters, a mailing list's assigned ids, a
    declined participant; the list scrolled sideways by 43 px, hiding the analysis filter's column."""
    from surveys import flow
    from surveys.models import RecruitmentChannel

    Participant.objects.all().delete()
    imported_nv.slug, imported_nv.status = "demo-overprecision", "live"
    imported_nv.save()
    RecruitmentChannel.objects.create(study=imported_nv, name="list")
    finish(imported_nv, "5f1a2b3c4d5e6f7a8b9c0d1e")
    flow.record_consent(flow.enter(imported_nv, {"channel": "list"}), False)
    laptop.goto(live_server.url + reverse("admin:surveys_participant_changelist"))
    assert_fits(laptop)
    assert {"live check (rho)", "analysis filter (rho)", "answered / assigned"} <= set(visible_headers(laptop))
