"""Prolific's client as Prolific documents its API (tests/stub_prolific.py behaves so): lists paged by
``page`` / ``page_size`` without ``_links``, a repeated page, 429 back-off, Prolific's error body, the token
kept on Prolific's origin, one pooled connection across pages."""
from __future__ import annotations

import pytest

from prolific.client import ProlificClient, ProlificError
from prolific.models import ProlificStudy, Submission
from prolific.review import sync
from stub_prolific import StubProlific, prolific  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def remote_study(prolific) -> str:
    status, study = prolific.route("POST", "/api/v1/studies/", {}, {
        "name": "S", "description": "d", "external_study_url": "https://x/?p={{%PROLIFIC_PID%}}",
        "prolific_id_option": "url_parameters", "total_available_places": 100, "estimated_completion_time": 8,
        "reward": 200, "completion_codes": [{"code": "C1", "code_type": "COMPLETED",
                                             "actions": [{"action": "MANUALLY_REVIEW"}]}]})
    assert status == 201
    return study["id"]


@pytest.fixture
def linked(nv_study, prolific):
    """A study already on the stub, with 45 submissions (three pages of 20)."""
    sid = remote_study(prolific)
    for n in range(45):
        prolific.add_submission(sid, f"PID{n:03d}", status="ACTIVE")
    return ProlificStudy.objects.create(study=nv_study, prolific_id=sid, prolific_status="ACTIVE")


def listing_calls(prolific):
    return [c for c in prolific.calls if c.method == "GET" and c.path == "/api/v1/submissions/"]


def test_every_page_is_read_by_page_number_over_one_connection(linked, prolific):
    result = sync(linked)
    assert result.seen == 45 and not result.errors and Submission.objects.count() == 45
    calls = listing_calls(prolific)
    assert [(c.query["page"], c.query["page_size"]) for c in calls] == [(["1"], ["20"]), (["2"], ["20"]),
                                                                         (["3"], ["20"])]
    assert len({c.port for c in prolific.calls}) == 1  # one kept-alive connection for the whole sync


def test_a_repeated_page_stops_the_reading_and_says_so(linked, prolific):
    prolific.ignore_page = True  # answers page 1 whatever page is asked: a naive pager would loop
    result = sync(linked)
    assert result.seen == 20 and len(listing_calls(prolific)) == 2
    assert "repeated page 1" in result.errors[0] and "read 20 of the 45" in result.errors[0]
    linked.refresh_from_db()
    assert "read 20 of the 45" in linked.sync_error  # visible to the researcher, not silent


def test_429_is_retried_with_exponential_back_off_honouring_retry_after(linked, prolific, settings):
    settings.PROLIFIC_BACKOFF_SECONDS = 0.5
    waits = []
    prolific.rate_limit_next = 3
    with ProlificClient(sleep=waits.append) as client:
        assert len(client.submissions(linked.prolific_id).rows) == 45
    assert waits == [0.5, 1.0, 2.0]
    prolific.rate_limit_next, prolific.retry_after, waits[:] = 1, "7", []
    with ProlificClient(sleep=waits.append) as client:
        client.get_study(linked.prolific_id)
    assert waits == [7.0]
    # still throttled after every retry: Prolific's own words reach the researcher
    prolific.rate_limit_next = settings.PROLIFIC_MAX_RETRIES + 1
    with ProlificClient(sleep=waits.append) as client, pytest.raises(ProlificError) as caught:
        client.get_study(linked.prolific_id)
    assert caught.value.status == 429 and "Request was throttled." in str(caught.value)


def test_prolific_error_body_becomes_the_message(prolific, settings):
    with ProlificClient() as client:
        with pytest.raises(ProlificError) as caught:
            client.create_study({"name": "only a name"})
        assert caught.value.status == 400 and caught.value.code == "400000"
        assert "reward: This field is required." in str(caught.value) and "{" not in str(caught.value)
        sid = remote_study(prolific)
        sub = prolific.add_submission(sid, "P1")
        assert client.approve(sub)["status"] == "APPROVED"
        assert client.approve(sub)["status"] == "APPROVED"  # the same transition again is harmless
        with pytest.raises(ProlificError) as caught:
            client.reject(sub, "x" * 120, "FAILED_CHECK")
        assert caught.value.status == 422 and "submission is APPROVED, not AWAITING REVIEW" in str(caught.value)


def test_the_token_never_leaves_prolifics_origin(prolific, settings):
    sid = remote_study(prolific)
    with StubProlific() as elsewhere:
        prolific.redirect_next = f"{elsewhere.base_url}/api/v1/submissions/?study={sid}"
        with ProlificClient() as client, pytest.raises(ProlificError):
            client.submissions(sid)
        assert len(elsewhere.calls) == 1 and elsewhere.calls[0].token == ""  # followed, but without the token
        with ProlificClient() as client, pytest.raises(ProlificError, match="refusing to send the Prolific token"):
            client.request("GET", f"{elsewhere.base_url}/api/v1/studies/")
        assert len(elsewhere.calls) == 1
