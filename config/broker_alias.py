"""``sqla+`` broker URLs (the embedded default) name ``config.sqlite_broker``'s transport, by its dotted path:
kombu imports that module, and SQLAlchemy with it, only when a connection to such a broker is made, so a command
that sends no task does not pay for them."""
from __future__ import annotations

from kombu.transport import TRANSPORT_ALIASES, _transport_cache

SQLITE_TRANSPORT = "config.sqlite_broker:Transport"


def install() -> None:
    """Make ``config.sqlite_broker.Transport`` the transport of ``sqla+…`` broker URLs (the default one included)."""
    for alias in ("sqla", "sqlalchemy"):
        TRANSPORT_ALIASES[alias] = SQLITE_TRANSPORT
        _transport_cache.pop(alias, None)  # a class resolved before this call
