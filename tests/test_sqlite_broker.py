"""The embedded default broker (``config.sqlite_broker``): kombu's SQLAlchemy transport on a SQLite file, whose
worker takes its next message as soon as one is acknowledged when its prefetch is full (kombu's own slept the
transport's polling interval, 1 s, so a thread pool's threads waited for their next task)."""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from kombu import Connection, Consumer, Exchange, Producer, Queue

from config.sqlite_broker import Transport, install


@pytest.fixture
def broker(tmp_path):
    install()
    # a polling interval longer than the drain's timeout: only an acknowledgement can deliver in time
    with Connection(f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}", transport_options={"polling_interval": 30}) as conn:
        yield conn, tmp_path / "broker.sqlite3"


def test_the_default_broker_url_uses_this_transport(broker):
    conn, _ = broker
    assert isinstance(conn.transport, Transport)


def test_a_full_prefetch_takes_the_next_message_as_soon_as_one_is_acknowledged(broker):
    conn, path = broker
    queue = Queue("tasks", Exchange("tasks"), "tasks")
    producer = Producer(conn.channel(), exchange=queue.exchange, routing_key="tasks")
    producer.declare()
    queue(producer.channel).declare()
    for n in range(2):
        producer.publish({"n": n}, serializer="json")
    received: list = []
    consumer = Consumer(conn.channel(), [queue], callbacks=[lambda body, message: received.append(message)],
                        accept=["json"])
    consumer.qos(prefetch_count=1)  # a worker with one message per thread, all threads busy
    consumer.consume()
    conn.drain_events(timeout=5)
    assert [m.payload["n"] for m in received] == [0]
    threading.Timer(0.2, received[0].ack).start()  # the task ends
    started = time.monotonic()
    conn.drain_events(timeout=20)
    assert [m.payload["n"] for m in received] == [0, 1]
    # woken by the acknowledgement; kombu's loop slept min(polling interval, timeout) = 20 s first
    assert time.monotonic() - started < 10
    received[1].ack()
    with sqlite3.connect(path) as db:  # one write to the log per message, nothing synced per commit
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_queue_another_process_declared_at_the_same_moment_is_read_back(broker, monkeypatch):
    """kombu's lock against declaring a queue twice is per process: a worker and the web process declaring the
    same queue at once made the second fail on the queue name's unique constraint (IntegrityError)."""
    from sqlalchemy.orm import Query

    conn, path = broker
    with Connection(f"sqla+sqlite:///{path}") as other:  # the other process declares the queue first
        Queue("tasks", Exchange("tasks"), "tasks")(other.channel()).declare()
    misses = [None, None]  # both of this process's lookups ran before the other's commit
    real_first = Query.first
    monkeypatch.setattr(Query, "first", lambda self: misses.pop() if misses else real_first(self))
    channel = conn.channel()
    row = channel._get_or_create("tasks")
    assert row.name == "tasks" and not misses
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM kombu_queue WHERE name = 'tasks'").fetchone()[0] == 1
