"""What people see in a real Chromium, which server-side tests cannot check: what is visible and where.

Found by trying the platform as a new researcher would (make run, participant, admin, model run):
the run page showed its "are the workers running?" warning and the Resume button on every run, because
the admin's CSS overrode the ``hidden`` attribute; the study page's buttons covered its heading; the
"please choose an answer" message stayed after an answer was chosen.
"""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from elicitation.models import ElicitationRun
from elicitation.runs import create_run, start_run
from stub_openai import make_endpoint, stub  # noqa: F401 (stub is a fixture)
from test_browser import admin_logged_in, browser, current_item, enter_study, live_study, offline_page  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def admin_page(browser, live_server, django_user_model):  # noqa: F811
    hits: list[str] = []
    yield admin_logged_in(browser, live_server, django_user_model, hits, 1400, 900)
    assert hits == []


def test_run_page_shows_the_stalled_warning_and_resume_only_for_a_stalled_run(admin_page, live_server, stub,  # noqa: F811
                                                                              imported_nv):
    run = create_run(imported_nv, make_endpoint(stub), items=imported_nv.main_items()[:2])
    url = live_server.url + reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])

    admin_page.goto(url)  # draft: nothing is wrong, nothing to resume
    assert admin_page.locator("#run-stalled").is_hidden()
    assert admin_page.locator("#resume-form").is_hidden()
    assert admin_page.get_by_role("button", name="Start run").is_visible()

    start_run(run, queue=False)  # queued nowhere, as if no worker were running
    admin_page.goto(url)
    assert admin_page.locator("#run-stalled").is_hidden()  # just started
    assert admin_page.locator("#resume-form").is_hidden()

    ElicitationRun.objects.filter(pk=run.pk).update(last_started_at=timezone.now() - timedelta(minutes=5))
    admin_page.goto(url)
    assert admin_page.locator("#run-stalled").is_visible()
    assert admin_page.get_by_role("button", name=re.compile("Resume")).is_visible()


def test_study_page_buttons_leave_the_heading_readable_and_nothing_scrolls_sideways(admin_page, live_server,
                                                                                    imported_nv):
    admin_page.goto(live_server.url + reverse("admin:surveys_study_change", args=[imported_nv.pk]))
    tools = admin_page.locator("#content .object-tools").bounding_box()
    for heading in ("#content h1", "#content h2"):
        box = admin_page.locator(heading).first.bounding_box()
        overlap = (min(box["y"] + box["height"], tools["y"] + tools["height"]) - max(box["y"], tools["y"]))
        assert overlap <= 0, f"the study page's buttons cover {heading}"
    assert admin_page.evaluate("document.documentElement.scrollWidth") <= 1400  # demonstrations fit


def test_the_study_page_with_a_channel_fits_a_laptop(browser, live_server, django_user_model, imported_nv):  # noqa: F811
    """A channel with its completion and return addresses: its table fits the study page at 1280 px (with the
    return URL column it scrolled sideways by 217 px on the walk of issue 23)."""
    from surveys.models import RecruitmentChannel

    RecruitmentChannel.objects.create(
        study=imported_nv, name="sona", id_param="id",
        completion_url="https://lab.sona-systems.com/webstudy_credit.aspx?experiment_id=12&survey_code={id}",
        return_url="https://lab.sona-systems.com/all_exp_participant.aspx")
    hits: list[str] = []
    page = admin_logged_in(browser, live_server, django_user_model, hits, 1280, 800)
    page.goto(live_server.url + reverse("admin:surveys_study_change", args=[imported_nv.pk]))
    group = page.locator("#channels-group")
    assert group.get_by_text("Return URL").is_visible()
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [1280, 1280]
    assert group.evaluate("g => g.querySelector('table').scrollWidth <= g.clientWidth")
    assert hits == []


@pytest.mark.parametrize("width", [1280, 375])
def test_an_items_answers_page_fits_a_phone_and_a_laptop(browser, live_server, django_user_model, imported_nv,  # noqa: F811
                                                         stub, width):  # noqa: F811
    """The per-item answers page with a person's and a model's answer: at 375 px its bars (200 px each) and the
    participant's id made it 637 px wide on the walk of issue 23; the bars now shrink and tables scroll alone."""
    from stub_openai import Reply
    from surveys.models import Response
    from test_pilot_withdrawal import finish

    imported_nv.status = "live"
    imported_nv.save()
    finish(imported_nv, "5f1a2b3c4d5e6f7a8b9c0d1e")
    item = Response.objects.order_by("pk").first().item
    stub.default = Reply.answer("70")
    run = create_run(imported_nv, make_endpoint(stub), items=[item])
    start_run(run, queue=False)
    from elicitation.runs import run_sync

    run_sync(run)
    hits: list[str] = []
    page = admin_logged_in(browser, live_server, django_user_model, hits, width, 740)
    page.goto(live_server.url + reverse("admin:elicitation_item_answers", args=[item.pk]))
    page.locator("#bin-shares").wait_for()
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [width, width]
    bars = page.locator("#bin-shares .share").evaluate_all("bars => bars.map(b => b.getBoundingClientRect().width)")
    assert max(bars) == pytest.approx(min(200, 0.18 * width), abs=1) and min(bars) == 0
    assert hits == []


def test_the_choose_an_answer_message_goes_once_an_answer_is_chosen(browser, live_server, live_study):  # noqa: F811
    hits: list[str] = []
    page = offline_page(browser, live_server, hits)
    enter_study(page, live_server, live_study.slug, query="")
    current_item(page)

    page.click("button:has-text('Next')")
    message = page.get_by_text("Please choose an answer before continuing.")
    assert message.is_visible()
    page.click("label[for=answer-40]")
    assert message.is_hidden()
    assert hits == []


@pytest.mark.parametrize("width,height", [(1280, 900), (375, 740)])
def test_the_declined_page_leads_back_to_prolific(browser, live_server, live_study, tmp_path, width, height):  # noqa: F811
    """A participant who declines consent gets a button back to Prolific, where the study is returned."""
    from test_browser import PID
    from test_browser_choice import keep_screenshots

    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": width, "height": height})
    page.goto(f"{live_server.url}/s/{live_study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
    page.get_by_role("button", name="I do not agree").click()
    page.get_by_role("heading", name="You chose not to take part").wait_for()
    link = page.get_by_role("link", name="Back to Prolific, to return the study")
    assert link.is_visible() and link.get_attribute("href") == "https://app.prolific.com/"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(tmp_path / f"declined-{width}.png"), full_page=True)
    link.click()
    page.wait_for_url("https://app.prolific.com/")
    assert hits == ["https://app.prolific.com/"]
    keep_screenshots(tmp_path)


@pytest.mark.parametrize("width", [1280, 375])
def test_the_report_page_fits_a_phone_and_a_laptop(browser, live_server, django_user_model, imported_nv, width):  # noqa: F811
    """The study's report page: its summary's labels (16rem wide beside their values) left the values 80 px at
    375 px, and the generation time ran 35 px past the screen on the walk of issue 32; at a phone's width
    the labels now stand above their values (the report's tables scroll alone)."""
    hits: list[str] = []
    page = admin_logged_in(browser, live_server, django_user_model, hits, width, 740)
    page.goto(live_server.url + reverse("admin:analysis_studyanalysis_report", args=[imported_nv.pk]))
    page.locator("#participation").wait_for()
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [width, width]
    assert hits == []
