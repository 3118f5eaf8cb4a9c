"""Compact admin list columns, so that the answer and run lists fit a laptop's 1280 px without scrolling sideways:
long texts shortened (the whole text in the cell's tooltip) and times written briefly."""
from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.html import format_html


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "…", the whole text as the cell's tooltip."""
    text = text or ""
    if len(text) <= limit:
        return text
    return format_html('<span title="{}">{}…</span>', text, text[: limit - 1])


def short_time(moment: datetime | None) -> str:
    """``2026-11-25 15:59`` in the current time zone (– when unset)."""
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "–"
