"""Markup of the answer widgets that a template loop made slowly: the scale's radio buttons, built in one pass
(21 options rendered through ``{% for %}``/``{% with %}``/``{% if %}`` were a third of a question page's time)."""
from __future__ import annotations

from typing import Any, Sequence

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.simple_tag
def scale_options(options: Sequence[Any], name: str, prefix: str, selected: Any) -> SafeString:
    """One radio button and its label per option; the option equal to ``selected`` (unless it is None or
    empty) is checked. Values are written as ``str(option)``, everything escaped."""
    name, prefix = conditional_escape(name), conditional_escape(prefix)
    chosen = selected is not None and selected != ""
    parts = []
    for option in options:
        v = conditional_escape(str(option))
        checked = " checked" if chosen and option == selected else ""
        parts.append(f'<span class="sb-option"><input type="radio" name="{name}" data-answer autocomplete="off" '
                     f'id="{prefix}-{v}" value="{v}"{checked}><label for="{prefix}-{v}">{v}</label></span>')
    return mark_safe("\n    ".join(parts))
