"""The Prolific participant flow through the Django test client (surveys/flow.py, surveys/views.py)."""
from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import IntegrityError
from django.test import Client
from django.urls import reverse

from private_services import answer_confirmed
from surveys.page_tokens import slot_token
from surveys import flow
from surveys.flow import Outcome, Step
from families.belem.instrument import EXPRESSIONS
from surveys.models import Assignment, Participant, Response, Study

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
OTHER_PID = "60aa2b3c4d5e6f7a8b9c0d99"


@pytest.fixture
def study(imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.consent_text = "CONSENT-TEXT: you may stop at any time."
    imported_nv.instructions = "STUDY-INSTRUCTIONS: read each sentence carefully."
    imported_nv.pledge_text = "PLEDGE-TEXT: I will answer honestly."
    imported_nv.save()
    return imported_nv


def link(study: Study, pid: str | None = PID, **extra: str) -> str:
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "abc123", "SESSION_ID": "sess42"} if pid is not None else {}
    params.update(extra)
    return f"/s/{study.slug}/?{urlencode(params)}"


def url(study: Study, step: str) -> str:
    return reverse(f"surveys:{step}", kwargs={"slug": study.slug})


def start(client: Client, study: Study, pid: str = PID) -> Participant:
    """Enter, consent, read the instructions and pledge: the participant is at their first question."""
    assert client.get(link(study, pid)).status_code == 302
    assert client.post(url(study, "consent"), {"step": "consent", "choice": "agree"}).status_code == 302
    assert client.post(url(study, "instructions"), {"step": "instructions"}).status_code == 302
    response = client.post(url(study, "pledge"), {"step": "pledge", "pledge": "on"})
    assert response.status_code == 302 and response["Location"] == url(study, "item")
    return Participant.objects.get(study=study, prolific_pid=pid)


def current_slot(participant: Participant) -> Assignment:
    participant.refresh_from_db()
    progress = flow.current_step(participant)
    assert progress.step == Step.ITEM
    return progress.slot


def answer(client: Client, study: Study, slot: Assignment, value, **extra):
    data = {"step": "item", "position": slot.position, "item": slot.item_id, "value": value,
            "client_time_ms": "1234", "token": slot_token(slot)} | extra
    return client.post(url(study, "item"), data)


def expected_value(slot: Assignment) -> int:
    """An attentive participant: higher answers for expressions earlier in the canonical order."""
    if slot.item.is_control:
        return 50
    return 100 - 5 * EXPRESSIONS.index(slot.item.expression)


def saved(response, slot: Assignment) -> bool:
    """Whether the reply to an answer for ``slot`` says it was saved: the next question's page, or the redirect
    after the last answer."""
    return answer_confirmed(response.status_code, response.content.decode(), slot.position,
                            response.get("Location", ""))


def answer_all(client: Client, study: Study, participant: Participant, value_of=expected_value):
    last = None
    while flow.current_step(participant).step == Step.ITEM:
        slot = current_slot(participant)
        client.get(url(study, "item"))
        last = answer(client, study, slot, value_of(slot))
        assert saved(last, slot)
        participant.refresh_from_db()
    return last


def page(response) -> str:
    return response.content.decode()


# --- the whole flow -------------------------------------------------------------------------------
def test_whole_flow_to_the_prolific_redirect(client, study, settings):
    settings.PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
    response = client.get(link(study))
    assert response.status_code == 302 and response["Location"] == url(study, "consent")
    participant = Participant.objects.get(prolific_pid=PID)
    assert (participant.prolific_study_id, participant.prolific_session_id) == ("abc123", "sess42")
    assert not participant.assignments.exists()

    consent = client.get(url(study, "consent"))
    assert "CONSENT-TEXT" in page(consent) and "csrfmiddlewaretoken" in page(consent)
    assert client.post(url(study, "consent"), {"step": "consent", "choice": "agree"})["Location"] == \
        url(study, "instructions")

    instructions = page(client.get(url(study, "instructions")))
    assert "In this experiment, you will be shown text" in instructions  # kind.intro()
    assert "STUDY-INSTRUCTIONS" in instructions
    demos = study.demonstrations()
    assert len(demos) == 2
    for n, demo in enumerate(demos, start=1):
        assert study.kind.sentence(demo).replace("'", "&#x27;") in instructions
        # rendered by the instrument's template with the demonstration's answer chosen
        assert re.search(rf'id="demo{n}-{int(demo.demo_answer)}" value="{int(demo.demo_answer)}" checked', instructions)
    assert instructions.count(" checked>") == 2
    assert client.post(url(study, "instructions"), {"step": "instructions"})["Location"] == url(study, "pledge")

    pledge_page = page(client.get(url(study, "pledge")))
    assert "PLEDGE-TEXT" in pledge_page
    refused = client.post(url(study, "pledge"), {"step": "pledge"})
    assert refused.status_code == 200 and "Please tick the box" in page(refused)
    assert not participant.assignments.exists()
    assert client.post(url(study, "pledge"), {"step": "pledge", "pledge": "on"})["Location"] == url(study, "item")

    participant.refresh_from_db()
    assert participant.consented_at and participant.instructions_read_at and participant.pledged_at
    total = participant.assignments.count()
    assert total == 14 * 2 + 2

    first = page(client.get(url(study, "item")))
    assert f"Question 1 of {total}" in first
    assert first.count('type="radio"') == 21 and " checked" not in first
    final = answer_all(client, study, participant)
    assert final["Location"] == url(study, "done")

    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED and participant.completed_at
    assert participant.passed_attention is True and participant.live_attention_rho > 0.9
    assert participant.completion_code == study.completion_code
    assert Response.objects.filter(participant=participant).count() == total
    values = {r.assignment_id: r.value for r in participant.responses.all()}
    for slot in participant.assignments.select_related("item"):
        assert values[slot.pk] == expected_value(slot)

    done = client.get(url(study, "done"))
    target = f"https://app.prolific.com/submissions/complete?cc={study.completion_code}"
    assert done.status_code == 200
    assert f'<meta http-equiv="refresh" content="2;url={target}">' in page(done)
    assert f'href="{target}"' in page(done) and study.completion_code in page(done)


def test_step_pages_redirect_to_the_current_step(client, study):
    client.get(link(study))
    for step in ("instructions", "pledge", "item", "done"):
        response = client.get(url(study, step))
        assert response.status_code == 302 and response["Location"] == url(study, "consent")


def test_a_stale_step_form_is_not_applied_twice(client, study):
    participant = start(client, study)
    pledged_at = participant.pledged_at
    again = client.post(url(study, "consent"), {"step": "consent", "choice": "agree"}, follow=True)
    assert "already submitted" in page(again)
    again = client.post(url(study, "pledge"), {"step": "pledge", "pledge": "on"})
    assert again["Location"] == url(study, "item")
    participant.refresh_from_db()
    assert participant.pledged_at == pledged_at
    assert participant.assignments.count() == 30


def test_forms_need_the_csrf_token(study):
    client = Client(enforce_csrf_checks=True)
    client.get(link(study))
    assert client.post(url(study, "consent"), {"step": "consent", "choice": "agree"}).status_code == 403
    assert Participant.objects.get(prolific_pid=PID).consented_at is None


# --- entry ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({}, "missing your Prolific ID"),
    ({"PROLIFIC_PID": ""}, "missing your Prolific ID"),
    ({"PROLIFIC_PID": "abc-123"}, "invalid Prolific ID"),
    ({"PROLIFIC_PID": "a" * 65}, "invalid Prolific ID"),
    ({"PROLIFIC_PID": "<script>alert(1)</script>"}, "invalid Prolific ID"),
    ({"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"}, "placeholder"),
    ({"PROLIFIC_PID": PID, "SESSION_ID": "{{%SESSION_ID%}}"}, "placeholder"),
    ({"PROLIFIC_PID": PID, "STUDY_ID": "not valid!"}, "invalid Prolific ID"),
])
def test_bad_entry_parameters_get_a_clear_page_and_create_nothing(client, study, params, message):
    response = client.get(f"/s/{study.slug}/?{urlencode(params)}")
    assert response.status_code == 400
    assert message in page(response)
    assert "<script>alert" not in page(response)
    assert not Participant.objects.exists()


def test_placeholder_pid_message_names_the_placeholder(client, study):
    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    assert response.status_code == 400
    assert "{{%PROLIFIC_PID%}}" in page(response) and "URL parameters" in page(response)


@pytest.mark.parametrize("status, message", [(Study.Status.DRAFT, "has not started yet"),
                                             (Study.Status.CLOSED, "is closed")])
def test_a_study_that_is_not_live_admits_nobody_new(client, study, status, message):
    study.status = status
    study.save()
    response = client.get(link(study))
    assert response.status_code == 403 and message in page(response)
    assert not Participant.objects.exists()


def test_a_live_study_without_items_admits_nobody(client, db):
    empty = Study.objects.create(slug="empty", title="Empty", status=Study.Status.LIVE)
    response = client.get(link(empty))
    assert response.status_code == 403 and "no questions yet" in page(response)
    assert not Participant.objects.exists()


def test_unknown_study_is_a_clear_404(client, db):
    response = client.get("/s/no-such-study/?PROLIFIC_PID=abc")
    assert response.status_code == 404 and "There is no study at this address" in page(response)


def test_closing_the_study_lets_started_participants_finish(client, study):
    participant = start(client, study)
    study.status = Study.Status.CLOSED
    study.save()
    other = Client()
    assert other.get(link(study, PID)).status_code == 302  # the same PID resumes
    assert answer_all(other, study, participant)["Location"] == url(study, "done")


def test_step_page_without_a_session_asks_for_the_prolific_link(client, study):
    response = client.get(url(study, "item"))
    assert response.status_code == 400 and "open the study again" in page(response)


def test_declining_consent_shows_the_return_page_and_records_only_the_decline(client, study):
    client.get(link(study))
    response = client.post(url(study, "consent"), {"step": "consent", "choice": "decline"})
    assert response.status_code == 200 and "Please return the study on Prolific" in page(response)
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.consented_at is None and not participant.assignments.exists()
    assert participant.status == Participant.Status.DECLINED and participant.declined_at is not None
    assert client.get(url(study, "instructions"))["Location"] == url(study, "consent")


# --- resume ---------------------------------------------------------------------------------------
def test_reload_and_new_tab_resume_at_the_same_question(client, study):
    participant = start(client, study)
    for _ in range(3):
        slot = current_slot(participant)
        client.get(url(study, "item"))
        answer(client, study, slot, 50)
    slot = current_slot(participant)
    first_view = page(client.get(url(study, "item")))
    shown = Assignment.objects.get(pk=slot.pk).first_shown_at
    assert shown is not None
    assert "Question 4 of 30" in first_view and f'name="item" value="{slot.item_id}"' in first_view
    reload = page(client.get(url(study, "item")))
    assert "Question 4 of 30" in reload and f'name="item" value="{slot.item_id}"' in reload
    assert Assignment.objects.get(pk=slot.pk).first_shown_at == shown  # a reload keeps the first time

    new_tab = Client()  # the Prolific link opened again, without the session cookie
    assert new_tab.get(link(study))["Location"] == url(study, "item")
    assert new_tab.get(url(study, "consent"))["Location"] == url(study, "item")
    assert f'name="item" value="{slot.item_id}"' in page(new_tab.get(url(study, "item")))
    assert Participant.objects.count() == 1 and participant.assignments.count() == 30
    assert participant.responses.count() == 3


def test_a_completed_pid_sees_its_code_again(client, study, settings):
    settings.PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
    participant = start(client, study)
    answer_all(client, study, participant)
    again = Client()
    response = again.get(link(study), follow=True)
    assert response.redirect_chain[-1][0] == url(study, "done")
    text = page(response)
    assert study.completion_code in text
    assert f'href="https://app.prolific.com/submissions/complete?cc={study.completion_code}"' in text
    assert 'http-equiv="refresh"' not in text  # no automatic redirect on a later visit
    assert Participant.objects.count() == 1


# --- answers: bad and repeated submissions --------------------------------------------------------
@pytest.mark.parametrize("value, message", [
    ("", "Please choose an answer"),
    ("101", "from 0 to 100"),
    ("-5", "from 0 to 100"),
    ("7", "in steps of 5"),
    ("abc", "Please choose one of the answers"),
    ("nan", "from 0 to 100"),
    ("1e400", "from 0 to 100"),
    ("5" * 300, "from 0 to 100"),
    # float() takes these, the page never sends them: only its own values "0", "5", …, "100" are answers
    ("1e2", "from 0 to 100"),
    ("\u0665\u0660", "from 0 to 100"),  # Arabic-Indic 50
    ("1_0", "from 0 to 100"),
    (" 50.0 ", "from 0 to 100"),
    ("50.0", "from 0 to 100"),
    ("+50", "from 0 to 100"),
])
def test_a_bad_value_asks_the_same_question_again(client, study, value, message):
    participant = start(client, study)
    slot = current_slot(participant)
    response = answer(client, study, slot, value)
    assert response.status_code == 200
    text = page(response)
    assert message in text and 'role="alert"' in text
    assert f'name="item" value="{slot.item_id}"' in text and " checked" not in text
    assert not Response.objects.exists()
    assert saved(answer(client, study, slot, 35), slot)
    assert Response.objects.get().value == 35


def test_a_value_field_sent_twice_asks_again_instead_of_keeping_the_last(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    response = client.post(url(study, "item"), {"step": "item", "position": slot.position, "item": slot.item_id,
                                                "value": ["50", "70"], "token": slot_token(slot)})
    assert response.status_code == 200 and "Please give one answer only." in page(response)
    assert not Response.objects.exists()
    assert saved(answer(client, study, slot, 35), slot)


def test_missing_value_field_asks_again(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    response = client.post(url(study, "item"), {"step": "item", "position": slot.position, "item": slot.item_id,
                                                "token": slot_token(slot)})
    assert response.status_code == 200 and "Please choose an answer" in page(response)
    assert not Response.objects.exists()


def test_a_tampered_item_id_is_not_saved(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    other_item = study.main_items().exclude(pk=slot.item_id).first()
    response = answer(client, study, slot, 50, item=other_item.pk)
    assert response["Location"] == url(study, "item")
    assert "did not match your current question" in page(client.get(url(study, "item")))
    for bad in ("x", "", "-1"):
        response = answer(client, study, slot, 50, item=bad)
        assert response["Location"] == url(study, "item")
    assert not Response.objects.exists()
    assert current_slot(participant).pk == slot.pk


def test_only_the_current_slot_can_be_answered(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    later = participant.assignments.get(position=slot.position + 1)
    response = answer(client, study, later, 50)
    assert response["Location"] == url(study, "item")
    assert "in order" in page(client.get(url(study, "item")))
    missing = answer(client, study, slot, 50, position=999)
    assert missing["Location"] == url(study, "item")
    assert not Response.objects.exists()


def test_a_second_submission_of_the_same_item_changes_nothing(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    assert saved(answer(client, study, slot, 40), slot)
    second = answer(client, study, slot, 90)  # double click or a stale tab
    assert second["Location"] == url(study, "item")
    assert "already saved" in page(client.get(url(study, "item")))
    stored = Response.objects.get()
    assert (stored.assignment_id, stored.value) == (slot.pk, 40)
    assert current_slot(participant).position == slot.position + 1


def test_a_submission_after_completion_changes_nothing(client, study):
    participant = start(client, study)
    answer_all(client, study, participant)
    before = list(Response.objects.order_by("pk").values_list("pk", "value"))
    last = participant.assignments.order_by("-position").first()
    response = answer(client, study, last, 0)
    assert response["Location"] == url(study, "done")
    assert list(Response.objects.order_by("pk").values_list("pk", "value")) == before


def test_a_participant_cannot_post_to_another_participants_slot(study):
    alice, bob = Client(), Client()
    a = start(alice, study, PID)
    b = start(bob, study, OTHER_PID)
    target = current_slot(a)
    bob_slot = current_slot(b)
    if target.item_id == bob_slot.item_id:  # the same item by chance: take Alice's next one
        target = a.assignments.get(position=target.position + 1)
    response = answer(bob, study, target, 100)
    assert response["Location"] == url(study, "item")
    assert not Response.objects.exists()
    # and Bob's session can never reach Alice's slot by position: it is Bob's own position
    answer(bob, study, bob_slot, 25)
    assert list(Response.objects.values_list("participant_id", "value")) == [(b.pk, 25)]


def test_a_concurrent_save_of_the_same_slot_is_treated_as_already_answered(client, study, monkeypatch):
    """The constraint backs up the lock: if another request saves between the check and the insert,
    the IntegrityError is caught and the first answer stands."""
    participant = start(client, study)
    slot = current_slot(participant)
    real = flow.parse_client_ms

    def racing(raw):
        Response.objects.create(assignment=slot, participant=participant, item_id=slot.item_id, value=10)
        return real(raw)

    monkeypatch.setattr(flow, "parse_client_ms", racing)
    result = flow.submit_answer(participant, slot.position, slot.item_id, "90", "100")
    assert result.outcome == Outcome.ALREADY_ANSWERED
    assert list(Response.objects.values_list("value", flat=True)) == [10]


def test_database_refuses_a_second_response_for_a_slot(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    Response.objects.create(assignment=slot, participant=participant, item_id=slot.item_id, value=10)
    with pytest.raises(IntegrityError):
        Response.objects.create(assignment=slot, participant=participant, item_id=slot.item_id, value=20)


# --- time -----------------------------------------------------------------------------------------
def test_time_per_item_is_recorded(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    client.get(url(study, "item"))
    shown = Assignment.objects.get(pk=slot.pk).first_shown_at
    assert shown is not None
    reply = answer(client, study, slot, 55, client_time_ms="4321")
    stored = Response.objects.get()
    assert stored.client_time_ms == 4321
    assert stored.time_taken_ms == int((stored.created_at - shown).total_seconds() * 1000)
    # the reply is the next question: shown from then on (recorded with the answer), a reload keeps that time
    slot2 = current_slot(participant)
    assert f'name="position" value="{slot2.position}"' in page(reply)
    shown2 = Assignment.objects.get(pk=slot2.pk).first_shown_at
    assert shown2 is not None and stored.created_at <= shown2
    client.get(url(study, "item"))
    assert Assignment.objects.get(pk=slot2.pk).first_shown_at == shown2
    answer(client, study, slot2, 60, client_time_ms="-3")  # an implausible client time is dropped, not the answer
    assert Response.objects.get(assignment=slot2).client_time_ms is None
    slot3 = current_slot(participant)
    assert saved(answer(client, study, slot3, 65, client_time_ms="9" * 500), slot3)
    assert Response.objects.get(assignment=slot3).client_time_ms is None


@pytest.mark.parametrize("raw, expected", [("1500", 1500), ("12.6", 13), ("", None), ("abc", None),
                                           ("-1", None), ("inf", None), (str(10**12), None)])
def test_parse_client_ms(raw, expected):
    assert flow.parse_client_ms(raw) == expected


# --- completion and the live attention check ------------------------------------------------------
def test_an_inattentive_participant_gets_the_failed_attention_code(client, study, settings):
    settings.PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
    participant = start(client, study)
    answer_all(client, study, participant, value_of=lambda slot: 100 - expected_value(slot))
    participant.refresh_from_db()
    assert participant.passed_attention is False and participant.live_attention_rho < 0
    assert participant.completion_code == study.failed_attention_code != study.completion_code
    assert f"cc={study.failed_attention_code}" in page(client.get(url(study, "done")))


def test_constant_answers_make_rho_undefined_and_fail(client, study):
    participant = start(client, study)
    answer_all(client, study, participant, value_of=lambda slot: 50)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert participant.live_attention_rho is None and participant.passed_attention is False
    assert participant.completion_code == study.failed_attention_code


def test_the_threshold_is_the_studys(client, study):
    study.attention_threshold = 0.99
    study.save()
    participant = start(client, study)
    # attentive but with one expression out of place: rho is high but below 0.99
    def value_of(slot):
        if slot.item.expression == "almost certain":
            return 0
        return expected_value(slot)
    answer_all(client, study, participant, value_of=value_of)
    participant.refresh_from_db()
    assert 0.2 < participant.live_attention_rho < 0.99 and participant.passed_attention is False


def test_attention_rho_uses_the_canonical_order_and_ignores_controls():
    order = ["high", "mid", "low"]
    assert flow.attention_rho([90, 50, 10], ["high", "mid", "low"], order) == pytest.approx(1.0)
    assert flow.attention_rho([10, 50, 90], ["high", "mid", "low"], order) == pytest.approx(-1.0)
    assert flow.attention_rho([90, 0, 50, 10], ["high", "control", "mid", "low"], order) == pytest.approx(1.0)
    assert flow.attention_rho([50, 50, 50], ["high", "mid", "low"], order) is None
    assert flow.attention_rho([50], ["high"], order) is None
    assert not flow.passes_attention(None, 0.2)
    assert not flow.passes_attention(0.2, 0.2) and flow.passes_attention(0.21, 0.2)


def test_complete_is_idempotent(client, study):
    participant = start(client, study)
    answer_all(client, study, participant)
    participant.refresh_from_db()
    first = (participant.completed_at, participant.completion_code)
    study.completion_code = "CHANGED1"
    study.save()
    assert flow.complete(participant) == first[1]
    participant.refresh_from_db()
    assert (participant.completed_at, participant.completion_code) == first


# --- returned / timed out -------------------------------------------------------------------------
def test_a_returned_participant_who_comes_back_gets_a_clear_page(client, study):
    participant = start(client, study)
    slot = current_slot(participant)
    client.get(url(study, "item"))
    answer(client, study, slot, 50)
    assert flow.mark_participants(Participant.objects.filter(pk=participant.pk), "returned") == 1
    participant.refresh_from_db()
    assert participant.status == "returned" and participant.status_changed_at
    again = Client().get(link(study), follow=True)
    assert again.redirect_chain[-1][0] == url(study, "done")
    assert "You have returned this study" in page(again)
    assert answer(client, study, current_slot_after_return(participant), 50)["Location"] == url(study, "done")
    assert participant.assignments.count() == 30 and Response.objects.count() == 1


def current_slot_after_return(participant: Participant) -> Assignment:
    return participant.assignments.filter(response__isnull=True).order_by("position").first()


def test_timed_out_page_and_reinstating(client, study):
    participant = start(client, study)
    flow.mark_participants(Participant.objects.all(), Participant.Status.TIMED_OUT)
    assert "time allowed for this study ran out" in page(client.get(url(study, "done")))
    assert flow.reinstate_participants(Participant.objects.all()) == 1
    participant.refresh_from_db()
    assert participant.status == Participant.Status.STARTED
    assert client.get(url(study, "done"))["Location"] == url(study, "item")


def test_mark_participants_refuses_other_statuses(study):
    with pytest.raises(ValueError, match="not a status"):
        flow.mark_participants(Participant.objects.all(), Participant.Status.COMPLETED)


# --- preview --------------------------------------------------------------------------------------
@pytest.fixture
def staff_client(study):
    """A researcher who may preview ``study`` (its owner; tests/test_access_matrix.py covers the others)."""
    user = get_user_model().objects.create_user("researcher", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_study", "view_item"]))
    study.owner = user
    study.save(update_fields=["owner"])
    client = Client()
    client.force_login(user)
    return client


def test_preview_walks_the_flow_and_writes_nothing(staff_client, study):
    study.status = Study.Status.DRAFT  # works for draft studies
    study.save()
    preview = url(study, "preview")
    assert "CONSENT-TEXT" in page(staff_client.get(preview))
    assert "Preview" in page(staff_client.get(preview))
    staff_client.post(preview, {"step": "consent", "choice": "agree"})
    instructions = page(staff_client.get(preview))
    assert "STUDY-INSTRUCTIONS" in instructions and instructions.count(" checked>") == 2
    staff_client.post(preview, {"step": "instructions"})
    assert "Please tick the box" in page(staff_client.post(preview, {"step": "pledge"}))
    staff_client.post(preview, {"step": "pledge", "pledge": "on"})
    first = page(staff_client.get(preview))
    assert "Question 1 of 30" in first
    bad = staff_client.post(preview, {"step": "item", "position": 1, "item": 1, "value": "33"})
    assert "in steps of 5" in page(bad)
    for position in range(1, 31):
        text = page(staff_client.get(preview))
        assert f"Question {position} of 30" in text
        item_id = int(re.search(r'name="item" value="(\d+)"', text).group(1))
        staff_client.post(preview, {"step": "item", "position": position, "item": item_id, "value": "50"})
    summary = page(staff_client.get(preview))
    assert "Preview summary" in summary and study.failed_attention_code in summary  # constant answers fail
    assert "undefined" in summary
    assert (Participant.objects.count(), Assignment.objects.count(), Response.objects.count()) == (0, 0, 0)
    restarted = staff_client.get(preview + "?restart=1", follow=True)
    assert "Consent to take part" in page(restarted)


def test_preview_tells_the_researcher_what_keeps_participants_out(staff_client, study):
    notes = re.compile(r'<p class="preview-note">([^<]+)</p>')
    assert notes.findall(page(staff_client.get(url(study, "preview")))) == []  # live, items, two examples

    owner = Study.objects.get(pk=study.pk).owner
    empty = Study.objects.create(slug="empty", title="Empty", owner=owner)  # a draft without items or examples
    found = notes.findall(page(staff_client.get(url(empty, "preview"))))
    assert len(found) == 3
    assert "draft" in found[0] and "no items yet" in found[1] and "0 demonstrations" in found[2]
    staff_client.post(url(empty, "preview"), {"step": "consent", "choice": "agree"})
    assert len(notes.findall(page(staff_client.get(url(empty, "preview"))))) == 3  # on every step

    choice = Study.objects.create(slug="choice", title="Choice", instrument="wep_choice", owner=owner)  # no examples
    found = notes.findall(page(staff_client.get(url(choice, "preview"))))
    assert len(found) == 2 and not any("demonstration" in note for note in found)


def test_preview_needs_a_staff_login(client, study):
    response = client.get(url(study, "preview"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    user = get_user_model().objects.create_user("someone", password="pw", is_staff=False)
    client.force_login(user)
    assert client.get(url(study, "preview")).status_code == 302


@pytest.mark.django_db(transaction=True)
def test_simultaneous_submissions_of_one_slot_save_exactly_one_answer(imported_nv):
    """Several requests for the same slot at once (double click, two tabs): one answer, the rest refused."""
    import threading

    from django.db import connection

    if connection.vendor == "sqlite":
        pytest.skip("SQLite's in-memory test database reports 'table is locked' instead of waiting; "
                    "run with DATABASE_URL=postgres://... (CI does)")
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    participant = start(Client(), imported_nv)
    slot = current_slot(participant)
    outcomes: list[Outcome] = []
    barrier = threading.Barrier(4)

    def submit(value: int) -> None:
        try:
            barrier.wait()
            outcomes.append(flow.submit_answer(participant, slot.position, slot.item_id, str(value)).outcome)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(v,)) for v in (10, 20, 30, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == sorted([Outcome.SAVED] + [Outcome.ALREADY_ANSWERED] * 3)
    assert Response.objects.filter(assignment=slot).count() == 1
