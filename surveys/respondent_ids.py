"""The respondent id: the salted hash that stands for a PROLIFIC_PID wherever a participant is named outside the
raw data (exports, the report, withdrawal records, the admin). Its one definition."""
from __future__ import annotations

import hashlib
import hmac

from django.conf import settings


def hashed_id(pid: str, salt: str | None = None) -> str:
    """HMAC-SHA256 of a PROLIFIC_PID keyed with the export salt, first 16 hex characters."""
    key = (settings.EXPORT_ID_SALT if salt is None else salt).encode()
    return hmac.new(key, pid.encode(), hashlib.sha256).hexdigest()[:16]
