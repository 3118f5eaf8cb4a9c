"""The token a question page carries: which participant's which question (position and item) it was drawn for.

Every question is at the same URL (``/s/<slug>/question/``), so a browser that restores a form on Back, Forward
or reload could send one question's page for another. The page names its question in hidden fields and signs
them with this token; the participant view refuses a post whose token does not sign the position and item it
names for this participant (a page from another question, another participant or an older version of the page),
and surveys.flow.submit_answer refuses one that names another than the current question.
"""
from __future__ import annotations

from typing import Any

from django.utils.crypto import constant_time_compare, salted_hmac

SALT = "hedgelab.surveys.question-page"


def page_token(participant_id: int, position: int, item_id: int) -> str:
    """The token of the question page for ``participant_id``'s question at ``position`` showing ``item_id``."""
    return salted_hmac(SALT, f"{participant_id}:{position}:{item_id}", algorithm="sha256").hexdigest()[:32]


def token_matches(token: str, participant_id: int, position: int, item_id: int) -> bool:
    """Whether ``token`` (as posted) is the page token of that participant's question."""
    return bool(token) and constant_time_compare(token, page_token(participant_id, position, item_id))


def slot_token(slot: Any) -> str:
    """The page token of a participant's question (an ``Assignment``: participant, position and item)."""
    return page_token(slot.participant_id, slot.position, slot.item_id)
