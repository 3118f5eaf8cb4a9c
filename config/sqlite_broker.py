"""The embedded default broker: kombu's SQLAlchemy transport (``sqla+sqlite:///…``) with a prompt hand-off.

kombu's virtual transports poll: when a worker holds as many unacknowledged messages as its prefetch allows
(acks late, one message per pool thread), its consumer loop cannot take another and sleeps the transport's
``polling_interval`` (1 s) before it looks again. A pool thread that finished its task then waits up to that long
for the next one, so a thread pool answering tasks of a few 200 ms requests sat idle for a third of the time.
Here an acknowledgement wakes the consumer at once; with a free place it still polls an empty queue every
``polling_interval``.

On a SQLite broker file each connection also runs in WAL mode with ``synchronous=NORMAL``: a message queued or
taken is one write to the log instead of a rollback journal created, synced and deleted. A power cut may lose
the last messages; the runs' rows in the main database are the truth and the periodic sweep
(``elicitation.sweep``) queues whatever no message stands for.

``config/celery.py`` makes this the transport of every ``sqla+`` URL (``config.broker_alias.install``).
"""
from __future__ import annotations

import socket
import threading
from queue import Empty
from time import monotonic, sleep
from typing import Any

from kombu.transport import sqlalchemy, virtual
from sqlalchemy import create_engine, event
from sqlalchemy.exc import IntegrityError

from .broker_alias import install  # noqa: F401 (``config.celery`` calls it without importing this module)

# How long the consumer waits, at most, for an acknowledgement before it looks at its queues again anyway.
ACK_WAIT_SECONDS = 1.0


class QoS(virtual.QoS):
    """Prefetch accounting that wakes the transport's consumer loop when a message is acknowledged or rejected."""

    def ack(self, delivery_tag: Any) -> None:
        super().ack(delivery_tag)
        self.channel.connection.room.set()

    def reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        super().reject(delivery_tag, requeue=requeue)
        self.channel.connection.room.set()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


# transport options that are kombu's, not create_engine()'s (kombu passes the others on to SQLAlchemy)
KOMBU_OPTIONS = {"queue_tablename", "message_tablename", "callback", "errback", "max_retries", "interval_start",
                 "interval_step", "interval_max", "retry_errors", "polling_interval"}


class Channel(sqlalchemy.Channel):
    QoS = QoS

    def _engine_from_config(self) -> Any:
        """kombu's engine, but ``polling_interval`` is accepted (kombu's passed it to create_engine, which
        refused it); on SQLite, each connection in WAL mode."""
        conninfo = self.connection.client
        engine = create_engine(conninfo.hostname, **{k: v for k, v in conninfo.transport_options.items()
                                                     if k not in KOMBU_OPTIONS})
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        return engine

    def _get_or_create(self, queue: str) -> Any:
        """kombu's, but safe across processes: its lock is per process, so when a worker and the web process
        declare the same queue at once the second INSERT fails on the queue name's unique constraint
        (IntegrityError, which kombu does not catch); then the queue the other process made is read back."""
        try:
            return super()._get_or_create(queue)
        except IntegrityError:
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()


class Transport(sqlalchemy.Transport):
    Channel = Channel

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        self.room = threading.Event()  # set by an acknowledgement: a consumer may take another message

    def _full(self) -> bool:
        """Every channel that consumes holds as many unacknowledged messages as its prefetch allows."""
        consuming = [channel for channel in self.channels if channel._consumers]
        return bool(consuming) and not any(channel.qos.can_consume() for channel in consuming)

    def drain_events(self, connection: Any, timeout: float | None = None) -> None:
        """Deliver one message; when none can be taken, wait for an acknowledgement if the prefetch is full,
        else for ``polling_interval`` (an empty queue). Raises ``socket.timeout`` after ``timeout`` seconds."""
        started = monotonic()
        while True:
            self.room.clear()  # before looking: an acknowledgement from now on wakes the wait below
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                pass
            left = None if timeout is None else timeout - (monotonic() - started)
            if left is not None and left <= 0:
                raise socket.timeout()
            if self._full():  # the pool is busy: the next message is wanted the moment a task is acknowledged
                self.room.wait(ACK_WAIT_SECONDS if left is None else min(ACK_WAIT_SECONDS, left))
            elif self.polling_interval:  # the queues are empty
                sleep(self.polling_interval if left is None else min(self.polling_interval, left))
