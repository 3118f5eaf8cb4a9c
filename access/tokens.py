"""API tokens as staff see them: a prefix of the key, never the key (it is shown once, at creation)."""
from __future__ import annotations

PREFIX = 6


def key_prefix(key: str | None) -> str:
    """The first characters of a token key and an ellipsis: enough to tell tokens apart."""
    return f"{key[:PREFIX]}…" if key else "—"
