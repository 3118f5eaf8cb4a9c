"""The error the participant flow refuses a request with (surveys/flow.py and the checks it calls, such as
surveys/withdrawal.py, raise it; the views show it)."""
from __future__ import annotations


class FlowError(Exception):
    """A request the flow refuses; ``title`` and ``message`` are shown to the person, with ``status``."""

    status = 400

    def __init__(self, title: str, message: str, status: int | None = None):
        super().__init__(message)
        self.title = title
        self.message = message
        if status is not None:
            self.status = status
