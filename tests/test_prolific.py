"""The Prolific integration against a local stub of Prolific's API (tests/stub_prolific.py): publishing,
reading submissions, approving / rejecting / requesting returns by the study's policy, giving the slots of
returned and timed-out participants back to the draw, the periodic task and the API routes."""
from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token

from prolific.models import ProlificStudy, Submission
from prolific.review import PublishError, publish, send_decisions, sync, sync_all
from prolific.tasks import sync_all_task
from stub_prolific import prolific  # noqa: F401 (fixture)
from surveys.assignment import assign, item_usage
from surveys.models import Participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(imported_nv):
    imported_nv.status = "live"
    imported_nv.save()
    return imported_nv


def participant(study, pid, status="started", passed=None) -> Participant:
    p = Participant.objects.create(study=study, prolific_pid=pid, pledged_at=timezone.now())
    assign(p)
    if status == "completed":
        Participant.objects.filter(pk=p.pk).update(status="completed", completed_at=timezone.now(),
                                                   passed_attention=passed, live_attention_rho=0.9 if passed else -0.1)
    p.refresh_from_db()
    return p


def published(study, prolific, **options) -> ProlificStudy:
    link = ProlificStudy.objects.create(study=study, places=40, reward_cents=200, **options)
    return publish(link)


def test_publish_sends_the_link_codes_and_places(live, prolific):
    link = published(live, prolific)
    remote = prolific.studies[link.prolific_id]
    assert remote["status"] == "ACTIVE" and link.prolific_status == "ACTIVE" and link.published_at
    assert remote["external_study_url"] == live.participant_link()
    assert "{{%PROLIFIC_PID%}}" in remote["external_study_url"]
    assert remote["prolific_id_option"] == "url_parameters"
    assert remote["total_available_places"] == 40 and remote["reward"] == 200
    codes = {c["code_type"]: c["code"] for c in remote["completion_codes"]}
    assert codes["COMPLETED"] == live.completion_code
    assert codes["FAILED_ATTENTION_CHECK"] == live.failed_attention_code
    assert all(c["actions"] == [{"action": "MANUALLY_REVIEW"}] for c in remote["completion_codes"])
    assert all(call.token == f"Token {prolific.token}" for call in prolific.calls)
    with pytest.raises(PublishError, match="already on Prolific"):
        publish(link)
    assert len(prolific.studies) == 1


def test_publish_refuses_a_study_participants_could_not_enter(imported_nv, prolific):
    link = ProlificStudy.objects.create(study=imported_nv)
    with pytest.raises(PublishError, match="set study nv live first"):
        publish(link)
    assert not prolific.calls and not ProlificStudy.objects.get().prolific_id


def test_without_a_token_nothing_is_sent_and_the_variable_is_named(live, prolific, monkeypatch):
    monkeypatch.delenv(django_settings.PROLIFIC_TOKEN_ENV)
    with pytest.raises(PublishError, match=django_settings.PROLIFIC_TOKEN_ENV):
        publish(ProlificStudy.objects.create(study=live))
    assert not prolific.calls
    assert not any("token" in f.name for f in ProlificStudy._meta.fields)  # never stored


def scenario(study, prolific, link):
    """Participants in every situation, and their submissions on the stub."""
    people = {
        "A": participant(study, "PIDA", "completed", passed=True),
        "B": participant(study, "PIDB", "completed", passed=False),
        "C": participant(study, "PIDC"),
        "D": participant(study, "PIDD"),
        "F": participant(study, "PIDF"),
    }
    subs = {
        "A": prolific.add_submission(link.prolific_id, "PIDA", study_code=study.completion_code),
        "B": prolific.add_submission(link.prolific_id, "PIDB", study_code=study.failed_attention_code),
        "C": prolific.add_submission(link.prolific_id, "PIDC", status="RETURNED"),
        "D": prolific.add_submission(link.prolific_id, "PIDD", status="TIMED-OUT"),
        "E": prolific.add_submission(link.prolific_id, "PIDE", study_code="NOCODE"),  # never entered here
        "F": prolific.add_submission(link.prolific_id, "PIDF", status="ACTIVE"),
    }
    return people, subs


def test_automatic_policy_approves_rejects_and_frees_the_slots_of_returns(live, prolific):
    link = published(live, prolific, review_policy="automatic", failed_attention_action="reject")
    people, subs = scenario(live, prolific, link)
    assert sum(item_usage(live).values()) == 5 * 30
    result = sync(link)
    assert result.seen == 6 and result.new == 6 and not result.errors
    assert result.ended == {"returned": 1, "timed_out": 1}
    assert result.decided == {"approve": 1, "reject": 1, "review": 1} and result.sent == 2
    status = {k: prolific.submissions[v]["status"] for k, v in subs.items()}
    assert status == {"A": "APPROVED", "B": "REJECTED", "C": "RETURNED", "D": "TIMED-OUT",
                      "E": "AWAITING REVIEW", "F": "ACTIVE"}
    reject = dict(prolific.transitions())[subs["B"]]
    assert reject["rejection_category"] == "FAILED_CHECK" and reject["message"] == link.rejection_message.strip()
    # returned and timed-out participants hold no items any more: 3 participants' slots remain counted
    assert {p.prolific_pid: p.status for p in Participant.objects.all()} == {
        "PIDA": "completed", "PIDB": "completed", "PIDC": "returned", "PIDD": "timed_out", "PIDF": "started"}
    assert sum(item_usage(live).values()) == 3 * 30
    e = Submission.objects.get(participant_pid="PIDE")
    assert e.decision == "review" and e.state == "" and "no participant" in e.decision_reason
    # a second sync changes nothing and sends nothing again
    before = len(prolific.transitions())
    again = sync(link)
    assert again.new == 0 and again.sent == 0 and again.ended == {} and len(prolific.transitions()) == before
    assert Submission.objects.filter(state="sent").count() == 2


def test_queued_policy_waits_for_the_click_and_return_requests_carry_the_message(live, prolific):
    link = published(live, prolific, review_policy="queued", failed_attention_action="return",
                     rejection_message="Your answers did not pass the attention check; please return the study.")
    _, subs = scenario(live, prolific, link)
    result = sync(link)
    assert result.sent == 0 and not prolific.transitions()
    assert Submission.objects.filter(state="queued").count() == 2
    sent, failed = send_decisions(link.submissions.all())
    assert (sent, failed) == (2, 0)
    calls = dict(prolific.transitions())
    assert calls[subs["A"]] == {"action": "APPROVE"}
    assert calls[subs["B"]] == {"request_return_reasons": [link.rejection_message]}
    assert prolific.submissions[subs["B"]]["return_requested"]
    assert send_decisions(link.submissions.all()) == (0, 0)  # at most once


def test_a_failed_send_is_kept_and_retried_and_a_decision_made_on_prolific_meanwhile_is_skipped(live, prolific):
    link = published(live, prolific, review_policy="automatic")
    participant(live, "PIDA", "completed", passed=True)
    participant(live, "PIDB", "completed", passed=True)
    a = prolific.add_submission(link.prolific_id, "PIDA")
    b = prolific.add_submission(link.prolific_id, "PIDB")
    prolific.fail_next = 1  # Prolific is down when the listing is asked for
    result = sync(link)
    assert result.errors and "503" in result.errors[0] and "503" in ProlificStudy.objects.get().sync_error
    link.refresh_from_db()
    ok = sync(link)
    assert ok.sent == 2 and not ok.errors and link.sync_error == ""
    # an approval that fails once is retried at the next sync
    c = prolific.add_submission(link.prolific_id, "PIDC")
    participant(live, "PIDC", "completed", passed=True)
    original = prolific.route

    def flaky(method, path, query, body):
        if path.endswith(f"{c}/transition/") and not getattr(flaky, "done", False):
            flaky.done = True
            return 500, {"error": {"detail": "boom"}}
        return original(method, path, query, body)

    prolific.route = flaky
    first = sync(link)
    assert first.failed == 1 and Submission.objects.get(submission_id=c).state == "failed"
    second = sync(link)
    assert second.sent == 1 and prolific.submissions[c]["status"] == "APPROVED"
    # a queued decision whose submission was approved by hand on Prolific is not sent
    link.review_policy = "queued"
    link.save()
    participant(live, "PIDD", "completed", passed=True)
    d = prolific.add_submission(link.prolific_id, "PIDD")
    sync(link)
    prolific.set_status(d, "APPROVED")
    sync(link)
    assert Submission.objects.get(submission_id=d).state == "skipped"
    assert {a, b} <= {s for s, _ in prolific.transitions()}


def test_periodic_task_is_scheduled_and_syncs_every_published_study(live, prolific):
    entry = django_settings.CELERY_BEAT_SCHEDULE["prolific-sync"]
    assert entry["task"] == "prolific.sync_all" == sync_all_task.name
    assert entry["schedule"] == django_settings.PROLIFIC_SYNC_SECONDS
    link = published(live, prolific, review_policy="automatic")
    ProlificStudy.objects.create(study=type(live).objects.create(slug="unpublished", title="U"))
    c = participant(live, "PIDC")
    prolific.add_submission(link.prolific_id, "PIDC", status="RETURNED")
    results = sync_all_task.apply().get()
    assert [r["study"] for r in results] == ["nv"] and results[0]["ended"] == {"returned": 1}
    c.refresh_from_db()
    assert c.status == "returned"
    assert sync_all()[0].new == 0


def test_api_routes_publish_sync_send_and_list(client, django_user_model, live, prolific):
    user = django_user_model.objects.create_superuser("boss", password="pw")
    auth = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=user).key}"}
    post = lambda url, data=None: client.post(url, data or {}, content_type="application/json", **auth)  # noqa: E731
    short = post("/api/prolific/studies/", {"study": "nv", "failed_attention_action": "reject",
                                            "rejection_message": "too short"})
    assert short.status_code == 400 and "rejection_message" in short.json()
    made = post("/api/prolific/studies/", {"study": "nv", "places": 12, "review_policy": "queued"})
    assert made.status_code == 201, made.json()
    published_ = post("/api/prolific/studies/nv/publish/")
    assert published_.status_code == 200 and published_.json()["prolific_status"] == "ACTIVE"
    assert post("/api/prolific/studies/nv/publish/").status_code == 409
    patch = lambda data: client.patch("/api/prolific/studies/nv/", data, content_type="application/json", **auth)  # noqa: E731
    assert patch({"places": 99}).status_code == 400  # sent at publication
    assert patch({"review_policy": "automatic"}).status_code == 200
    assert patch({"review_policy": "queued"}).status_code == 200
    prolific_id = published_.json()["prolific_id"]
    assert prolific.studies[prolific_id]["total_available_places"] == 12
    participant(live, "PIDA", "completed", passed=True)
    prolific.add_submission(prolific_id, "PIDA")
    synced = post("/api/prolific/studies/nv/sync/").json()
    assert synced["decided"] == {"approve": 1} and synced["sent"] == 0
    queued = client.get("/api/prolific/submissions/?study=nv&state=queued", **auth).json()
    assert queued["count"] == 1 and queued["results"][0]["participant_pid"] == "PIDA"
    assert post("/api/prolific/studies/nv/send/").json() == {"sent": 1, "failed": 0}
    assert [s["status"] for s in prolific.submissions.values()] == ["APPROVED"]
    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    token = Token.objects.create(user=viewer).key
    assert client.get("/api/prolific/submissions/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 403


@pytest.mark.parametrize("loader", ["overprecision", "sileo", "wep_choice", "tang_zh"])
def test_publish_asks_demonstrations_only_of_kinds_that_show_them(prolific, loader):
    """Intervals, verbalisations, WEP choice and a generated (Chinese) Tang RQ1 study show no worked examples:
    they are published without; a Belem study without its two demonstrations is refused, saying so."""
    from families.bahaj.demo import load_overprecision_demo
    from families.sileo.demo import load_verbalisation_demo
    from surveys.designs import generate_items
    from surveys.models import Study

    if loader == "overprecision":
        study = load_overprecision_demo().study
    elif loader == "sileo":
        study = load_verbalisation_demo().study
    else:
        study = Study.objects.create(slug=loader.replace("_", "-"), title=loader, status="live",
                                     instrument="wep_choice" if loader == "wep_choice" else "wep_probability")
        if loader == "wep_choice":
            generate_items(study, "tang-rq2", seed=1)
        else:
            generate_items(study, "tang-rq1", settings="CNC", language="zh")
    assert not study.demonstrations()
    link = published(study, prolific)
    assert link.prolific_status == "ACTIVE"


def test_publish_refuses_a_belem_study_without_its_demonstrations(live, prolific):
    live.items.filter(is_demonstration=True).first().delete()
    link = ProlificStudy.objects.create(study=live)
    with pytest.raises(PublishError, match="it needs 2 demonstrations .*, it has 1"):
        publish(link)
    assert not prolific.calls


def test_publish_sends_no_legacy_fields_and_reads_the_status_back(live, prolific):
    link = published(live, prolific)
    remote = prolific.studies[link.prolific_id]
    assert remote["filters"] == [] and "completion_option" not in remote
    # the transition answers PUBLISHING; the status stored is the one read back afterwards
    calls = [(c.method, c.path) for c in prolific.calls]
    assert calls[-2:] == [("POST", f"/api/v1/studies/{link.prolific_id}/transition/"),
                          ("GET", f"/api/v1/studies/{link.prolific_id}/")]
    assert link.prolific_status == "ACTIVE" == ProlificStudy.objects.get().prolific_status


def test_publish_checks_what_prolific_or_participants_would_trip_over(live, prolific, settings):
    settings.SITE_URL = "http://127.0.0.1:8000"
    live.failed_attention_code = live.completion_code
    live.save()
    link = ProlificStudy.objects.create(study=live, estimated_minutes=10, reward_cents=100,
                                        failed_attention_action="reject", rejection_message="too short",
                                        rejection_category="NOT_A_CATEGORY")
    with pytest.raises(PublishError) as caught:
        publish(link)
    message = str(caught.value)
    for words in ("600 per hour, under Prolific's minimum of 800", "pay at least 134",
                  "three different non-empty codes", "SITE_URL is http://127.0.0.1:8000",
                  "at least 100 characters", "'NOT_A_CATEGORY' is not one of Prolific's rejection categories"):
        assert words in message
    link.estimated_minutes = 0
    with pytest.raises(PublishError, match="at least 1 minute"):
        publish(link)
    assert not prolific.calls


def test_publishing_that_prolific_refuses_for_balance_says_why_and_can_be_retried(live, prolific):
    prolific.balance_cents = 100
    link = ProlificStudy.objects.create(study=live, places=40, reward_cents=200)
    with pytest.raises(PublishError, match="402, error 140201.*Insufficient balance"):
        publish(link)
    link.refresh_from_db()
    assert link.prolific_id and link.prolific_status == "UNPUBLISHED" and not link.published_at
    prolific.balance_cents = 10**6
    assert publish(link).prolific_status == "ACTIVE" and len(prolific.studies) == 1


def test_screened_out_frees_slots_processing_waits_and_final_statuses_skip(live, prolific):
    link = published(live, prolific, review_policy="queued")
    screened = participant(live, "PIDS")
    a = participant(live, "PIDA", "completed", passed=True)
    participant(live, "PIDB", "completed", passed=True)
    participant(live, "PIDR")
    subs = {"S": prolific.add_submission(link.prolific_id, "PIDS", status="SCREENED OUT"),
            "A": prolific.add_submission(link.prolific_id, "PIDA"),
            "B": prolific.add_submission(link.prolific_id, "PIDB"),
            "R": prolific.add_submission(link.prolific_id, "PIDR", status="RESERVED")}
    result = sync(link)
    assert result.ended == {"screened_out": 1} and result.decided == {"approve": 2}
    screened.refresh_from_db()
    assert screened.status == "screened_out" and sum(item_usage(live).values()) == 3 * 30
    assert Submission.objects.get(submission_id=subs["R"]).decision == ""
    prolific.set_status(subs["A"], "PROCESSING")  # Prolific is busy with it: the decision waits
    prolific.set_status(subs["B"], "PARTIALLY APPROVED")  # decided there: nothing to send
    sync(link)
    state = {k: Submission.objects.get(submission_id=v).state for k, v in subs.items()}
    assert state["A"] == "queued" and state["B"] == "skipped"
    prolific.set_status(subs["A"], "AWAITING REVIEW")
    sync(link)
    assert send_decisions(link.submissions.all()) == (1, 0)
    assert prolific.submissions[subs["A"]]["status"] == "APPROVED" and a.pk


def failed_and_asked_to_return(live, prolific, unreturned, completed_days_ago=0):
    link = published(live, prolific, review_policy="automatic", failed_attention_action="return",
                     unreturned_action=unreturned)
    participant(live, "PIDB", "completed", passed=False)
    completed = (timezone.now() - timezone.timedelta(days=completed_days_ago)).isoformat()
    sub = prolific.add_submission(link.prolific_id, "PIDB", completed_at=completed)
    first = sync(link)
    assert first.decided == {"return": 1} and first.sent == 1
    assert prolific.submissions[sub]["return_requested"] and prolific.submissions[sub]["status"] == "AWAITING REVIEW"
    return link, sub


def test_an_unreturned_participant_is_rejected_before_prolific_would_pay_them(live, prolific):
    link, sub = failed_and_asked_to_return(live, prolific, "reject")
    row = Submission.objects.get(submission_id=sub)
    assert row.return_requested_at and row.auto_approve_at == row.completed_at + timezone.timedelta(days=21)
    assert sync(link).sent == 0  # not due yet: the participant may still return
    Submission.objects.filter(pk=row.pk).update(return_requested_at=timezone.now() - timezone.timedelta(days=8))
    followed = sync(link)
    assert followed.decided == {"unreturned: reject": 1} and followed.sent == 1
    assert prolific.submissions[sub]["status"] == "REJECTED"
    assert [body.get("action") for _, body in prolific.transitions()] == [None, "REJECT"]
    assert sync(link).sent == 0


def test_an_unreturned_participant_near_the_auto_approval_becomes_a_dated_pending_decision(live, prolific,
                                                                                            admin_client):
    link, sub = failed_and_asked_to_return(live, prolific, "review", completed_days_ago=20)
    again = sync(link)  # the return was asked just now, but Prolific approves it tomorrow: decide now
    row = Submission.objects.get(submission_id=sub)
    assert again.decided == {"unreturned: review": 1} and again.sent == 0
    assert row.decision == "review" and row.state == ""
    assert f"Prolific approves (pays) it on {row.auto_approve_at:%Y-%m-%d}" in row.decision_reason
    page = admin_client.get("/admin/prolific/prolificstudy/").content.decode()
    assert f"1 (first on {timezone.localtime(row.auto_approve_at):%Y-%m-%d})" in page
    assert sync(link).decided == {}  # no second return request


def test_admin_queue_reject_refuses_what_prolific_would_refuse(live, prolific, admin_client):
    link = published(live, prolific, review_policy="queued")
    participant(live, "PIDA", "completed", passed=True)
    prolific.add_submission(link.prolific_id, "PIDA")
    sync(link)
    row = Submission.objects.get()
    ProlificStudy.objects.filter(pk=link.pk).update(rejection_message="Too short.")
    answer = admin_client.post("/admin/prolific/submission/", {"action": "reject_action",
                                                               "_selected_action": [row.pk]}, follow=True)
    assert "Prolific would refuse these rejections" in answer.content.decode()
    row.refresh_from_db()
    assert row.decision == "approve"
    ProlificStudy.objects.filter(pk=link.pk).update(rejection_message="x" * 100)
    admin_client.post("/admin/prolific/submission/", {"action": "reject_action", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.decision == "reject" and row.state == "queued"


def test_a_reward_prolific_refuses_is_reported_in_its_words(live, prolific, settings):
    settings.PROLIFIC_MIN_HOURLY_REWARD = 600  # a GBP workspace here, while Prolific wants 800 for this one
    link = ProlificStudy.objects.create(study=live, places=10, reward_cents=100, estimated_minutes=10)
    with pytest.raises(PublishError, match=r"400, error 140101\): The reward per hour \(600\) is below the minimum"):
        publish(link)
    link.refresh_from_db()
    assert link.prolific_status == "UNPUBLISHED" and not link.published_at
