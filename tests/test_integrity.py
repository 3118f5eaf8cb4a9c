"""The database itself keeps answers whole (surveys migration 0003, elicitation migration 0003), whatever
code writes to it: no answer on another participant's slot or for another item, no new answer once a
participant completed (or returned, timed out, was screened out), no change to a saved answer, and no
change to a model answer once given. Runs on SQLite and, with DATABASE_URL, on PostgreSQL."""
from __future__ import annotations

import random

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys import flow
from surveys.assignment import assign
from surveys.models import Participant, Response

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(imported_nv):
    """Two participants with their slots drawn."""
    out = []
    for n in range(2):
        participant = Participant.objects.create(study=imported_nv, prolific_pid=f"PID{n}")
        out.append((participant, assign(participant, random.Random(n))))
    return out


def refused(match: str, **fields) -> None:
    with pytest.raises(IntegrityError, match=match), transaction.atomic():
        Response.objects.create(**fields)


def test_an_answer_must_be_for_its_own_slots_participant_and_item(people):
    (alice, alice_slots), (bob, bob_slots) = people
    slot = alice_slots[0]
    refused("own assignment", assignment=slot, participant=bob, item=slot.item, value=50)
    other_item = next(s.item for s in alice_slots if s.item_id != slot.item_id)
    refused("own assignment", assignment=slot, participant=alice, item=other_item, value=50)
    Response.objects.create(assignment=slot, participant=alice, item=slot.item, value=50)
    assert Response.objects.count() == 1


@pytest.mark.parametrize("status", [s for s in Participant.Status.values if s != "started"])
def test_no_new_answer_unless_the_participant_is_answering(people, status):
    (alice, slots), _ = people
    Response.objects.create(assignment=slots[0], participant=alice, item=slots[0].item, value=50)
    Participant.objects.filter(pk=alice.pk).update(status=status, completed_at=timezone.now(), declined_at=timezone.now())
    refused("not answering", assignment=slots[1], participant=alice, item=slots[1].item, value=60)
    assert Response.objects.count() == 1


def test_a_reinstated_participant_can_answer_again(people):
    (alice, slots), _ = people
    flow.mark_participants(Participant.objects.filter(pk=alice.pk), Participant.Status.RETURNED)
    refused("not answering", assignment=slots[0], participant=alice, item=slots[0].item, value=60)
    flow.reinstate_participants(Participant.objects.filter(pk=alice.pk))
    Response.objects.create(assignment=slots[0], participant=alice, item=slots[0].item, value=60)


def test_a_saved_answer_cannot_be_changed(people):
    (alice, slots), _ = people
    response = Response.objects.create(assignment=slots[0], participant=alice, item=slots[0].item, value=50, raw="50")
    for change in ({"value": 95}, {"raw": "95"}, {"item": slots[1].item}):
        with pytest.raises(IntegrityError, match="cannot be changed"), transaction.atomic():
            Response.objects.filter(pk=response.pk).update(**change)
    response.value = 95
    with pytest.raises(IntegrityError, match="cannot be changed"), transaction.atomic():
        response.save()
    unchanged = Response.objects.get(pk=response.pk)
    assert (unchanged.value, unchanged.raw, unchanged.item_id) == (50, "50", slots[0].item_id)
    unchanged.save()  # saving the same answer again changes nothing and is allowed
    Response.objects.filter(pk=response.pk).update(time_taken_ms=1234)  # timing is not the answer


def test_a_response_holds_an_answer_and_an_ordered_interval(people):
    """Typed answers (surveys migration 0005): at least one answer column, and lower <= upper."""
    (alice, slots), _ = people
    refused("response_has_an_answer", assignment=slots[0], participant=alice, item=slots[0].item, raw="")
    refused("response_interval_ordered", assignment=slots[0], participant=alice, item=slots[0].item,
            lower=18, upper=12)
    refused("response_has_an_answer", assignment=slots[0], participant=alice, item=slots[0].item, lower=12)
    Response.objects.create(assignment=slots[0], participant=alice, item=slots[0].item, lower=12, upper=18)
    Response.objects.create(assignment=slots[1], participant=alice, item=slots[1].item, choice="B")
    assert Response.objects.count() == 2


def test_no_typed_answer_column_of_a_saved_answer_can_be_changed(people):
    (alice, slots), _ = people
    interval = Response.objects.create(assignment=slots[0], participant=alice, item=slots[0].item, lower=1, upper=2)
    choice = Response.objects.create(assignment=slots[1], participant=alice, item=slots[1].item, choice="B")
    for pk, change in ((interval.pk, {"upper": 3}), (interval.pk, {"lower": 0}), (choice.pk, {"choice": "A"}),
                       (choice.pk, {"value": 5})):
        with pytest.raises(IntegrityError, match="cannot be changed"), transaction.atomic():
            Response.objects.filter(pk=pk).update(**change)
    assert Response.objects.get(pk=choice.pk).choice == "B"


def test_the_flow_still_completes_a_participant(people):
    """The last answer is saved while the participant is answering, then they are completed."""
    (alice, slots), _ = people
    Participant.objects.filter(pk=alice.pk).update(consented_at=timezone.now(), instructions_read_at=timezone.now(),
                                                   pledged_at=timezone.now())
    alice.refresh_from_db()
    for slot in slots:
        assert flow.submit_answer(alice, slot.position, slot.item_id, "50").outcome == flow.Outcome.SAVED
    alice.refresh_from_db()
    assert alice.status == Participant.Status.COMPLETED and alice.responses.count() == len(slots)


@pytest.fixture
def answered_row(imported_nv):
    endpoint = ModelEndpoint.objects.create(name="ep", base_url="http://127.0.0.1:9/v1", model="m")
    run = ElicitationRun.objects.create(study=imported_nv, endpoint=endpoint, status="running")
    item = imported_nv.main_items().first()
    pending = ModelResponse.objects.create(run=run, item=item, sample_index=0)
    return ModelResponse.objects.filter(pk=pending.pk)


@pytest.mark.parametrize("status", ["ok", "unparseable"])
def test_a_model_answer_once_given_cannot_be_overwritten(answered_row, status):
    assert answered_row.update(status=status, value=70 if status == "ok" else None, raw_output="70") == 1
    for change in ({"status": "pending"}, {"value": 10}, {"raw_output": "10"}, {"sample_index": 5},
                   {"distribution": {"10": 1.0}}, {"choice": "A"}, {"lower": 1, "upper": 2}):
        with pytest.raises(IntegrityError, match="answered model response cannot be changed"), transaction.atomic():
            answered_row.update(**change)
    row = answered_row.get()
    assert (row.status, row.raw_output) == (status, "70")
    answered_row.update(lease_owner="", lease_until=None)  # bookkeeping stays possible


def test_a_model_interval_is_ordered(answered_row):
    with pytest.raises(IntegrityError, match="interval_ordered"), transaction.atomic():
        answered_row.update(status="ok", lower=5, upper=4)


def test_pending_and_failed_model_rows_can_be_filled_in_and_retried(answered_row):
    answered_row.update(status="failed", error="HTTP 500")
    answered_row.update(status="pending")  # resume
    answered_row.update(status="ok", value=40, raw_output="40")
    assert answered_row.get().value == 40
