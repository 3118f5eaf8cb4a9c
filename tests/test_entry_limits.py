"""Entry cannot be used to flood a study: new participants per client address are limited
(ENTRY_MAX_PER_CLIENT in ENTRY_WINDOW_SECONDS), and participants who pledge but never answer give their
items back after the study's idle timeout (Study.idle_timeout_minutes)."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from surveys import flow
from surveys.assignment import assign, item_usage
from surveys.models import Participant, Response, Study
from test_flow import link, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    return imported_nv


def test_one_address_cannot_create_unlimited_participants(study, settings):
    settings.ENTRY_MAX_PER_CLIENT = 5
    client = Client(REMOTE_ADDR="203.0.113.7")
    codes = [client.get(link(study, f"FLOOD{n:04d}")).status_code for n in range(8)]
    assert codes == [302] * 5 + [429] * 3
    assert Participant.objects.count() == 5
    refused = client.get(link(study, "FLOOD9999"))
    assert "Too many new participants" in refused.content.decode()
    # a participant who already exists may always come back; another address is not affected
    assert client.get(link(study, "FLOOD0001")).status_code == 302
    assert Client(REMOTE_ADDR="198.51.100.1").get(link(study, "OTHERNET1")).status_code == 302
    assert Participant.objects.count() == 6


def test_forged_forwarded_hops_do_not_escape_the_limit(study, settings):
    """Behind one proxy, only the hop it appended counts; the client's own hops change nothing."""
    settings.ENTRY_MAX_PER_CLIENT, settings.TRUSTED_PROXY_COUNT = 3, 1
    proxy = Client(REMOTE_ADDR="127.0.0.1")
    codes = [proxy.get(link(study, f"SPOOF{n:04d}"), HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.7").status_code
             for n in range(6)]
    assert codes == [302] * 3 + [429] * 3
    assert proxy.get(link(study, "OTHER0001"), HTTP_X_FORWARDED_FOR="203.0.113.8").status_code == 302


def pledged(study: Study, pid: str, minutes_ago: float) -> Participant:
    when = timezone.now() - timedelta(minutes=minutes_ago)
    participant = Participant.objects.create(study=study, prolific_pid=pid, consented_at=when,
                                             instructions_read_at=when, pledged_at=when)
    assign(participant, random.Random(1))
    return participant


def test_participants_who_never_answer_give_their_items_back_after_the_timeout(study):
    idle = pledged(study, "IDLE1", minutes_ago=61)
    answering = pledged(study, "SLOW1", minutes_ago=90)
    slot = answering.assignments.order_by("position").first()
    Response.objects.create(assignment=slot, participant=answering, item_id=slot.item_id, value=50)
    recent = pledged(study, "RECENT1", minutes_ago=59)
    assert sum(item_usage(study).values()) == 90
    study.idle_timeout_minutes = 60
    study.save()

    newcomer = pledged(study, "NEW1", minutes_ago=0)  # the next draw releases the idle participant's items
    idle.refresh_from_db()
    assert idle.status == Participant.Status.TIMED_OUT and idle.assignments.count() == 30  # kept, not counted
    for p in (answering, recent, newcomer):
        p.refresh_from_db()
        assert p.status == Participant.Status.STARTED, p.prolific_pid
    assert sum(item_usage(study).values()) == 90  # 3 × 30 held; the idle 30 given back
    assert flow.current_step(idle).step == flow.Step.ENDED


def test_without_a_timeout_nobody_is_released(study):
    idle = pledged(study, "IDLE2", minutes_ago=10_000)
    pledged(study, "NEW2", minutes_ago=0)
    idle.refresh_from_db()
    assert idle.status == Participant.Status.STARTED


def test_the_timeout_is_set_in_the_study_admin(admin_client, study):
    page = admin_client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert 'name="idle_timeout_minutes"' in page


def test_entry_through_the_pages_still_works(client, study):
    assert start(client, study).assignments.count() == 30
