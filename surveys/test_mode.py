"""Test participants: links for researchers to take a study themselves, live or still a draft, without creating
data that count.

A test link is the study link with ``test=<token>``, where the token is the study's slug signed with the
site's SECRET_KEY (``django.core.signing``, salt ``hedgelab.test-participant``): only the platform can make
one, a participant cannot forge or alter it, and a token for one study does not work for another. A new
participant who enters with a valid token is stored with ``is_test=True``: they go through the real flow,
but item balancing (surveys.assignment), the analysis tables, the attention filter and the exports leave
them out, and they can be removed (surveys.withdrawal.remove_test_participants). A bad token is refused
rather than silently ignored, so a broken test link never creates a real participant.
"""
from __future__ import annotations

import secrets
from typing import Mapping
from urllib.parse import urlencode

from django.core import signing

from .models import Study

TEST_PARAM = "test"
_SALT = "hedgelab.test-participant"


class BadTestToken(ValueError):
    """The ``test`` parameter is present but is not this study's signed token."""


def pilot_token(study: Study) -> str:
    """The signed marker of test links for ``study``."""
    return signing.Signer(salt=_SALT).sign(study.slug).rsplit(":", 1)[1]


def is_test_entry(study: Study, params: Mapping[str, str]) -> bool:
    """True when the link carries ``study``'s test token; BadTestToken when it carries another value."""
    token = (params.get(TEST_PARAM) or "").strip()
    if not token:
        return False
    try:
        signing.Signer(salt=_SALT).unsign(f"{study.slug}:{token}")
    except signing.BadSignature:
        raise BadTestToken(token) from None
    return True


#: The start of a test participant's PROLIFIC_PID, so that test links and test rows are told apart at a glance.
TEST_PID_PREFIX = "TEST"


def pilot_link(base: str, study: Study) -> str:
    """A test-participant link with fresh ids (24 and 12 characters, as Prolific's); its PROLIFIC_PID starts
    with ``TEST``. The signed ``test`` token, not the prefix, is what makes the participant a test one."""
    query = urlencode({"PROLIFIC_PID": TEST_PID_PREFIX + secrets.token_hex(10), "STUDY_ID": secrets.token_hex(12),
                       "SESSION_ID": secrets.token_hex(6), TEST_PARAM: pilot_token(study)})
    return f"{base.rstrip('/')}/s/{study.slug}/?{query}"
