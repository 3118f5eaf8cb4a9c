"""Endpoint slots beside a SQLite database file (``elicitation.limits_sqlite``): the leases of the database's slot
rows (at most ``max_concurrency`` holders, only the holder renews or releases, an expired lease is free again), in
a file of their own so that the main file gets no write per lease. Across worker processes and threads they are
exercised by tests/test_elicitation_worker.py and tests/test_elicitation_threads_pool.py (SQLite files there)."""
from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from elicitation import throttle
from elicitation.limits_sqlite import SQLiteLimits
from elicitation.models import EndpointSlot, ModelEndpoint

pytestmark = pytest.mark.django_db


def endpoint(slots: int = 2) -> ModelEndpoint:
    return ModelEndpoint.objects.create(name=f"e{slots}", base_url="http://127.0.0.1:9/v1", model="m",
                                        max_concurrency=slots)


def test_slots_are_leased_in_the_side_file_with_the_database_leases_rules(tmp_path):
    store, e = SQLiteLimits(tmp_path / "db.sqlite3-limits", throttle.DatabaseLimits()), endpoint(2)
    a, b = store.try_acquire_slot(e, "a", 30), store.try_acquire_slot(e, "b", 30)
    assert {a, b} == {0, 1}
    assert store.try_acquire_slot(e, "c", 30) is None  # both taken
    assert store.holders(e) == {"a", "b"}
    store.release_slot(e, a, "not-the-holder")
    assert store.try_acquire_slot(e, "c", 30) is None
    store.release_slot(e, a, "a")
    assert store.try_acquire_slot(e, "c", 30) == a
    with sqlite3.connect(tmp_path / "db.sqlite3-limits") as db:  # b's worker hung: its lease runs out
        db.execute("UPDATE slot SET expires = expires - 60 WHERE idx = ?", (b,))
    assert store.holders(e) == {"c"}
    assert store.try_acquire_slot(e, "d", 30) == b
    store.renew_slot(e, b, "b", 3600)  # b wakes up: no longer its slot
    store.release_slot(e, b, "b")
    assert store.holders(e) == {"c", "d"}
    store.release_all("c")
    assert store.holders(e) == {"d"}
    assert not EndpointSlot.objects.exists()  # nothing written to the main database


def test_a_new_endpoint_never_inherits_a_deleted_ones_leases(tmp_path):
    store, e = SQLiteLimits(tmp_path / "limits", throttle.DatabaseLimits()), endpoint(1)
    assert store.try_acquire_slot(e, "a", 30) == 0
    e.created_at += timedelta(seconds=1)  # the same id, reused by SQLite for a new endpoint
    assert store.try_acquire_slot(e, "b", 30) == 0


def test_a_raised_limit_adds_slots(tmp_path):
    store, e = SQLiteLimits(tmp_path / "limits", throttle.DatabaseLimits()), endpoint(1)
    assert store.try_acquire_slot(e, "a", 30) == 0 and store.try_acquire_slot(e, "b", 30) is None
    e.max_concurrency = 2
    assert store.try_acquire_slot(e, "b", 30) == 1


def test_the_store_is_chosen_by_the_database():
    """In memory (these tests' database) the slots stay rows of the database; a SQLite file gets the side file
    (the worker tests run on one)."""
    assert throttle.sqlite_file() is None
    assert isinstance(throttle.limits(), throttle.DatabaseLimits)
