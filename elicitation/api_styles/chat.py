"""The chat style: ``POST …/chat/completions`` with the prompt's messages (system, the demonstrations as user and
assistant turns, the question)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..outcomes import TokenLogprobs
from .base import ApiStyleAdapter, PromptContent, openai

if TYPE_CHECKING:
    from surveys.instruments import Prompt


class ChatStyle(ApiStyleAdapter):
    name = "chat"
    label = "chat completions"
    path = "chat/completions"
    content_key = "messages"

    def content(self, prompt: Prompt) -> PromptContent:
        return prompt.messages

    def probe_content(self) -> PromptContent:
        return [{"role": "user", "content": "Reply with OK."}]

    def top_logprobs_params(self, k: int) -> dict[str, Any]:
        return {"logprobs": True, "top_logprobs": k}

    def reply_type(self) -> type:
        return openai.types.chat.ChatCompletion

    def text(self, choice: Any) -> str | None:
        message = getattr(choice, "message", None)
        return getattr(message, "content", None) if message is not None else None

    def positions(self, choice: Any) -> list[TokenLogprobs] | None:
        logprobs = getattr(choice, "logprobs", None)
        content = getattr(logprobs, "content", None) if logprobs is not None else None
        if content is None:
            return None
        return [TokenLogprobs(p.token, float(p.logprob), [(t.token, float(t.logprob)) for t in (p.top_logprobs or [])])
                for p in content]
