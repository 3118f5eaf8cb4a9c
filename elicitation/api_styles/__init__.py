"""The API styles an endpoint can speak, one adapter each (``base.ApiStyleAdapter``), found by name.

``adapter_for(endpoint)`` (or a style's name) gives the adapter; ``styles()`` lists them in registration order
(the order of ``ModelEndpoint.api_style``'s choices). A new style is one module here with one subclass, registered
below (docs/reference/endpoints.md, "Adding an API style").
"""
from __future__ import annotations

from typing import Any

from .base import ApiStyleAdapter, MalformedResponse, PromptContent, Unsupported
from .chat import ChatStyle
from .completions import CompletionsStyle

__all__ = ["ApiStyleAdapter", "MalformedResponse", "PromptContent", "Unsupported", "adapter_for", "register",
           "styles"]
_STYLES: dict[str, ApiStyleAdapter] = {}
MAX_NAME = 12  # ModelEndpoint.api_style's and StoredPrompt.api_style's max_length


def register(adapter: ApiStyleAdapter) -> ApiStyleAdapter:
    """Make ``adapter`` the one for its ``name`` (ValueError if another adapter has that name, or if the name is
    longer than the 12 characters ``ModelEndpoint.api_style`` holds)."""
    if not adapter.name or len(adapter.name) > MAX_NAME:
        raise ValueError(f"API style name {adapter.name!r}: 1 to {MAX_NAME} characters")
    existing = _STYLES.get(adapter.name)
    if existing is not None and type(existing) is not type(adapter):
        raise ValueError(f"API style {adapter.name!r} is already registered ({type(existing).__name__})")
    _STYLES[adapter.name] = adapter
    return adapter


def styles() -> list[ApiStyleAdapter]:
    """Every registered style, in registration order."""
    return list(_STYLES.values())


def adapter_for(endpoint_or_style: Any) -> ApiStyleAdapter:
    """The adapter of an endpoint (anything with ``api_style``: a ModelEndpoint, a StoredPrompt) or of a style's
    name; ValueError naming the style and the known ones if there is none."""
    name = str(getattr(endpoint_or_style, "api_style", endpoint_or_style))
    try:
        return _STYLES[name]
    except KeyError:
        raise ValueError(f"unknown API style {name!r} (known: {', '.join(_STYLES)})") from None


register(ChatStyle())
register(CompletionsStyle())
